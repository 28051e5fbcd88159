/**
 * What every operation of the client works with: one {@link ClientContext}, owned by the `EchoMQ`
 * class. Each concept of the client is a file of functions over it (`batch.ts` the batch verbs,
 * `inspect.ts` the reads, `operations.ts` the queue operations, …), and the class is the facade
 * that checks its arguments and delegates; a new feature is a new file of such functions.
 *
 * @module
 */
import { assertClientQueue, assertJobId, type JobId, Keyspace, newJobId } from "../keyspace/mod.ts";
import { type Backend, selectBackend } from "./backend.ts";
import { byteLength, type Codec, json } from "./codec.ts";
import { Connection } from "./connection.ts";
import { EchoMQError } from "./errors.ts";
import { warnEviction } from "./eviction.ts";
import type { EchoMQOptions } from "./options.ts";
import { Tracing } from "./tracing.ts";

/** Queue names whose keys are kept built; past this many the cache starts again. */
const KEYSPACES_KEPT = 1024;
/**
 * Bytes of queue names (UTF-8) whose keys are kept built; past this the cache starts again, and
 * a longer name is never kept (each kept name holds a dozen keys that repeat it).
 */
const KEYSPACE_BYTES_KEPT = 1 << 20;

/**
 * Refuses, before connecting, a codec or a hook that is not one (from untyped code): found only at
 * the first call otherwise, as a bare `TypeError`.
 */
function checkHooks<P>(options: EchoMQOptions<P>): void {
  if (options === null || typeof options !== "object") return; // Connection.open names it
  const codec = options.codec as Partial<Codec<P>> | undefined;
  if (codec !== undefined && (codec === null || typeof codec !== "object" || typeof codec.encode !== "function" || typeof codec.decode !== "function")) {
    throw new EchoMQError("options", "connect: codec must be { name, encode(payload), decode(bytes) }");
  }
  for (const hook of ["newId", "warn"] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== "function") throw new EchoMQError("options", `connect: ${hook} must be a function`);
  }
}

/** A connected client's state: the connection, the backend, the codec, the id source, open or closed. */
export class ClientContext<P> {
  /** The connection: direct reads, atomic batches, scans, dedicated lines. */
  readonly conn: Connection;
  /** The backend the wire verbs go through. */
  readonly impl: Backend;
  /** The payload codec. */
  readonly codec: Codec<P>;
  /** OpenTelemetry tracing (`connect`'s `tracing`), or null: no span, no option on a row. */
  readonly tracing: Tracing | null;
  readonly #newId: () => JobId;
  // Keys built once per queue name (bounded: cleared past KEYSPACES_KEPT names or KEYSPACE_BYTES_KEPT bytes of names).
  readonly #keyspaces: Map<string, Keyspace> = new Map();
  #keyspaceBytes = 0;
  #spare: JobId | null = null;
  #closed = false;

  /** The state of a client on `conn` through `impl`. */
  constructor(conn: Connection, impl: Backend, codec: Codec<P>, newId: () => JobId, tracing: Tracing | null = null) {
    this.conn = conn;
    this.impl = impl;
    this.codec = codec;
    this.#newId = newId;
    this.tracing = tracing;
  }

  /**
   * Connects (see `EchoMQ.connect`): opens the connection, selects the backend and warns about
   * eviction; on a failure the connection is closed again.
   */
  static async connect<P>(options: EchoMQOptions<P>): Promise<ClientContext<P>> {
    checkHooks(options);
    const tracing = Tracing.from(options.tracing); // a malformed option refused before connecting
    const conn = await Connection.open(options);
    try {
      const impl = await selectBackend(conn, options.backend ?? "auto");
      await warnEviction(conn, options.warn ?? ((m) => console.warn(m)));
      return new ClientContext<P>(conn, impl, options.codec ?? json<P>(), options.newId ?? newJobId, tracing);
    } catch (e) {
      conn.close();
      throw e;
    }
  }

  /** True once {@link close} ran. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Refuses any call once the client is closed. */
  assertOpen(): void {
    if (this.#closed) throw new EchoMQError("closed", "the EchoMQ client is closed");
  }

  /** The keyspace of queue `queue`: refused when the client is closed or the name is not a queue name. */
  keyspace(queue: unknown): Keyspace {
    this.assertOpen();
    assertClientQueue(queue);
    const kept = this.#keyspaces.get(queue);
    if (kept !== undefined) return kept;
    const ks = new Keyspace(queue);
    const bytes = byteLength(queue);
    if (bytes > KEYSPACE_BYTES_KEPT) return ks;
    if (this.#keyspaces.size >= KEYSPACES_KEPT || this.#keyspaceBytes + bytes > KEYSPACE_BYTES_KEPT) {
      this.#keyspaces.clear();
      this.#keyspaceBytes = 0;
    }
    this.#keyspaces.set(queue, ks);
    this.#keyspaceBytes += bytes;
    return ks;
  }

  /** A new job id from the id source, checked (or the one {@link unused} gave back). */
  id(): JobId {
    const spare = this.#spare;
    if (spare !== null) {
      this.#spare = null;
      return spare;
    }
    const id = this.#newId();
    assertJobId(id);
    return id;
  }

  /**
   * Gives back an id that {@link id} made and nothing used, for the next call: `enqueueMany` draws
   * each job's id before reading its input (so that an id source that throws leaves that input
   * unread), and gives the last one back when the input has ended.
   */
  unused(id: JobId): void {
    this.#spare = id;
  }

  /** Closes the backend and the connection; every call after this is refused. */
  close(): void {
    this.#closed = true;
    this.impl.close();
    this.conn.close();
  }
}
