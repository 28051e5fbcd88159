/**
 * The EchoMQ client: connect, then enqueue, schedule, claim, ack, retry, bury, promote, reap and
 * count jobs of named queues, through the native module or the Lua twin (same replies, same
 * keyspace). Every call goes to the primary that owns the queue's slot; every call is built from
 * the wire spec (`lib/wire`).
 *
 * @module
 */
import { Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import { assertJobId, assertValidQueue, type CheckQueue, type JobId, Keyspace, newJobId } from "../keyspace/mod.ts";
import { type WireCall, wireCall } from "../wire/mod.ts";
import { type Backend, selectBackend, type WaitFor } from "./backend.ts";
import { type BatchContext, claimMany, enqueueMany, expectOne, settleMany } from "./batch.ts";
import { type Codec, json, toWire } from "./codec.ts";
import { Connection } from "./connection.ts";
import { DuplicateIdError, EchoMQError, PayloadDecodeError } from "./errors.ts";
import type { Counts, Job, JobRef, Settlement } from "./job.ts";
import {
  type ClaimOptions,
  checkWait,
  DEFAULT_MOVE_LIMIT,
  type EchoMQOptions,
  type EnqueueManyOptions,
  type EnqueueOptions,
  jobRef,
  reasonText,
  type RetryOptions,
  waitFor,
  type When,
  wholeNumber,
} from "./options.ts";
import { type Handler, Worker, type WorkerOptions } from "./worker.ts";

const UTF8 = new TextDecoder();

function asBytes(x: GlideReturnType): Uint8Array {
  if (x instanceof Uint8Array) return x;
  if (typeof x === "string") return new TextEncoder().encode(x);
  return new Uint8Array(0);
}

/**
 * A connected EchoMQ client for payloads of type `P`.
 *
 * Calls on different queues are independent: nothing spanning queues is atomic (`enqueueMany`
 * is not atomic either — each job is enqueued on its own, and the result says which id each got).
 */
export class EchoMQ<P = unknown> {
  /** The backend in use after `auto` selection. */
  readonly backend: "module" | "scripts";
  /** The payload codec. */
  readonly codec: Codec<P>;
  readonly #conn: Connection;
  readonly #impl: Backend;
  readonly #newId: () => JobId;
  readonly #workers: Set<Worker<P>> = new Set();
  #closed = false;
  // Keys built once per queue name (bounded: cleared past 1024 names).
  readonly #keyspaces: Map<string, Keyspace> = new Map();

  readonly #batch: BatchContext<P>;

  private constructor(conn: Connection, impl: Backend, codec: Codec<P>, newId: () => JobId) {
    this.#conn = conn;
    this.#impl = impl;
    this.backend = impl.kind;
    this.codec = codec;
    this.#newId = newId;
    this.#batch = {
      impl,
      inflightLimit: conn.inflightLimit,
      id: () => this.#id(),
      keyspace: (queue) => this.#keyspace(queue),
      send: (what, queue, call, wait) => this.#send(what, queue, call, wait),
      claimed: (ks, reply) => this.#claimed(ks, reply),
      encode: (payload) => this.codec.encode(payload),
    };
  }

  /**
   * Connects to a standalone server or a cluster and picks the backend (`auto` by default: the
   * native module when every primary has it, else the Lua scripts).
   *
   * @example
   * ```ts
   * const mq = await EchoMQ.connect<{ to: string }>({ addresses: [{ host: "127.0.0.1", port: 6379 }] });
   * ```
   */
  static async connect<P = unknown>(options: EchoMQOptions<P>): Promise<EchoMQ<P>> {
    const conn = await Connection.open(options);
    try {
      const impl = await selectBackend(conn, options.backend ?? "auto");
      return new EchoMQ<P>(conn, impl, options.codec ?? json<P>(), options.newId ?? newJobId);
    } catch (e) {
      conn.close();
      throw e;
    }
  }

  /** True when connected to a cluster. */
  get cluster(): boolean {
    return this.#conn.cluster;
  }

  #keyspace(queue: unknown): Keyspace {
    this.#open();
    assertValidQueue(queue);
    let ks = this.#keyspaces.get(queue);
    if (ks === undefined) {
      if (this.#keyspaces.size >= 1024) this.#keyspaces.clear();
      ks = new Keyspace(queue);
      this.#keyspaces.set(queue, ks);
    }
    return ks;
  }

  #open(): void {
    if (this.#closed) throw new EchoMQError("closed", "the EchoMQ client is closed");
  }

  #id(): JobId {
    const id = this.#newId();
    assertJobId(id);
    return id;
  }

  /** Sends one admission call; with `wait`, followed by `WAIT` in the same batch and checked. */
  async #send(what: string, queue: string, call: WireCall, wait: WaitFor | undefined): Promise<void> {
    if (wait === undefined) {
      expectOne(call.verb, await this.#impl.call(call));
      return;
    }
    const [reply, acknowledged] = await this.#impl.callMany([call], wait);
    if (reply instanceof Error) throw reply;
    expectOne(call.verb, reply!);
    checkWait(what, queue, [call.args[0] as string], acknowledged, wait);
  }

  async #admit(
    what: string,
    ks: Keyspace,
    make: (id: JobId) => WireCall,
    opts: EnqueueOptions | undefined,
  ): Promise<JobId> {
    const wait = waitFor(what, opts?.durable);
    const given = opts?.id;
    if (given !== undefined) {
      assertJobId(given);
      await this.#send(what, ks.name, make(given), wait);
      return given;
    }
    let id = this.#id();
    try {
      await this.#send(what, ks.name, make(id), wait);
    } catch (e) {
      if (!(e instanceof DuplicateIdError)) throw e;
      id = this.#id(); // an id collision: retried once with a fresh id
      await this.#send(what, ks.name, make(id), wait);
    }
    return id;
  }

  /**
   * Adds a job to the head of `queue`'s pending list and returns its new id. A refusal of the id
   * as a duplicate (a collision) is retried once with a fresh id. With `durable`, resolves only
   * once a replica acknowledged the write (see {@link EnqueueOptions.durable}).
   */
  async enqueue<const Q extends string>(queue: CheckQueue<Q>, payload: P, opts?: EnqueueOptions): Promise<JobId> {
    const ks = this.#keyspace(queue);
    const wire = toWire(this.codec.encode(payload));
    return this.#admit("enqueue", ks, (id) => wireCall("ENQUEUE", ks, { id, payload: wire }), opts);
  }

  /**
   * Enqueues many jobs on one queue through non-atomic batches (at most {@link BATCH_COMMANDS}
   * jobs per batch; in-flight requests stay under the limit). Not atomic: on an error some jobs
   * may be enqueued and others not. Returns the ids in payload order. With `durable`, each batch
   * ends with `WAIT` and resolves only once a replica acknowledged it.
   */
  async enqueueMany<const Q extends string>(
    queue: CheckQueue<Q>,
    payloads: readonly P[],
    opts?: EnqueueManyOptions,
  ): Promise<JobId[]> {
    const ks = this.#keyspace(queue);
    return await enqueueMany(this.#batch, ks, payloads, waitFor("enqueueMany", opts?.durable));
  }

  /**
   * Adds a job that becomes due at `when` (`{ at }` a Date or ms since epoch, or `{ delayMs }`
   * from now); `promote` (or a worker) moves it to pending once due. Returns its id. With
   * `durable`, resolves only once a replica acknowledged the write.
   */
  async schedule<const Q extends string>(
    queue: CheckQueue<Q>,
    payload: P,
    when: When,
    opts?: EnqueueOptions,
  ): Promise<JobId> {
    const ks = this.#keyspace(queue);
    let due: number;
    if (when && "at" in when) {
      due = when.at instanceof Date ? when.at.getTime() : when.at;
      wholeNumber("schedule: at (ms since epoch)", "due-ms", due, 0);
    } else if (when && "delayMs" in when) {
      due = Date.now() + wholeNumber("schedule: delayMs", "delay-ms", when.delayMs, 0);
    } else {
      throw new EchoMQError("options", "schedule: when must be { at } or { delayMs }");
    }
    const wire = toWire(this.codec.encode(payload));
    return this.#admit("schedule", ks, (id) => wireCall("SCHEDULE", ks, { id, due_ms: due, payload: wire }), opts);
  }

  /**
   * Claims the next job of `queue` (FIFO) for `leaseMs`, or returns null when none is ready.
   * A payload the codec cannot decode raises {@link PayloadDecodeError} naming the (claimed) job.
   */
  async claim<const Q extends string>(queue: CheckQueue<Q>, opts: ClaimOptions): Promise<Job<P> | null> {
    const ks = this.#keyspace(queue);
    const leaseMs = wholeNumber("claim: leaseMs", "lease-ms", opts?.leaseMs, 1);
    const job = this.#claimed(ks, await this.#impl.call(wireCall("CLAIM", ks, { lease_ms: leaseMs }), Decoder.Bytes));
    if (job instanceof PayloadDecodeError) throw job;
    return job;
  }

  /**
   * Claims up to `n` jobs of `queue` (FIFO) for `leaseMs` each: `n` CLAIMs in one non-atomic
   * batch to the queue's primary (batches of at most {@link BATCH_COMMANDS}), one round trip for
   * all of them. Not atomic: each CLAIM is its own transition, and other clients' calls may run
   * between them. Returns the claimed jobs in claim order — fewer than `n`, or none, when the
   * queue runs dry. A claimed job whose payload the codec cannot decode is returned as a
   * {@link PayloadDecodeError} in its place: it *is* claimed (lease running), so retry or bury
   * it. A CLAIM the server refuses (e.g. fenced) rejects the call when nothing was claimed; when
   * some jobs were claimed they are returned (they hold leases) and the next call meets the
   * refusal again.
   */
  async claimMany<const Q extends string>(
    queue: CheckQueue<Q>,
    n: number,
    opts: ClaimOptions,
  ): Promise<Array<Job<P> | PayloadDecodeError>> {
    const ks = this.#keyspace(queue);
    const count = wholeNumber("claimMany: n", "limit", n, 1);
    const leaseMs = wholeNumber("claimMany: leaseMs", "lease-ms", opts?.leaseMs, 1);
    return await claimMany(this.#batch, ks, count, leaseMs);
  }

  /** A CLAIM reply as a job (null: nothing ready; a decode failure as the error naming the job). */
  #claimed(ks: Keyspace, reply: GlideReturnType): Job<P> | PayloadDecodeError | null {
    if (reply === null) return null;
    if (!Array.isArray(reply) || reply.length !== 3) throw new Error(`EMQ.CLAIM: unexpected reply ${String(reply)}`);
    const id = UTF8.decode(asBytes(reply[0]!)) as JobId;
    const attempts = Number(reply[2]);
    let payload: P;
    try {
      payload = this.codec.decode(asBytes(reply[1]!));
    } catch (e) {
      return new PayloadDecodeError(this.codec.name, { id, queue: ks.name, attempts }, e);
    }
    return { id, queue: ks.name, payload, attempts };
  }

  /** Acknowledges a claimed job: it leaves active and its row is deleted. */
  async ack(job: JobRef): Promise<void> {
    this.#open();
    const ks = jobRef("ack", job);
    expectOne("ACK", await this.#impl.call(wireCall("ACK", ks, { id: job.id })));
  }

  /** Puts a claimed job back on the schedule, due in `delayMs`, with the failure `reason`. */
  async retry(job: JobRef, opts: RetryOptions): Promise<void> {
    this.#open();
    const ks = jobRef("retry", job);
    const delay = wholeNumber("retry: delayMs", "delay-ms", opts?.delayMs, 1);
    const reason = reasonText("retry", opts?.reason ?? "");
    expectOne("RETRY", await this.#impl.call(wireCall("RETRY", ks, { id: job.id, delay_ms: delay, reason })));
  }

  /** Moves a claimed job to the dead set with `reason`. */
  async bury(job: JobRef, reason: string): Promise<void> {
    this.#open();
    const ks = jobRef("bury", job);
    const why = reasonText("bury", reason);
    expectOne("BURY", await this.#impl.call(wireCall("BURY", ks, { id: job.id, reason: why })));
  }

  /**
   * Settles many claimed jobs — each an ack, a retry or a bury — with one non-atomic batch per
   * queue (at most {@link BATCH_COMMANDS} calls each, sent at once) instead of one round trip per
   * job. Not atomic. Resolves with one entry per settlement, in order: `null` when it was applied,
   * or the error that refused it — a {@link JobNotActiveError} when the job is no longer active
   * (its lease ran out and it was reaped), an {@link EchoMQError} when the client refused it before
   * the wire; one refusal does not affect the others. Rejects only when a whole batch fails
   * (connection lost, timeout): then some settlements may have been applied and others not.
   */
  async settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>> {
    this.#open();
    return await settleMany(this.#batch, settlements);
  }

  /** Moves up to `limit` due scheduled jobs to pending; returns how many moved. */
  async promote<const Q extends string>(queue: CheckQueue<Q>, limit: number = DEFAULT_MOVE_LIMIT): Promise<number> {
    const ks = this.#keyspace(queue);
    const n = wholeNumber("promote: limit", "limit", limit, 1);
    return Number(await this.#impl.call(wireCall("PROMOTE", ks, { limit: n })));
  }

  /** Hands up to `limit` jobs whose lease expired back to pending (claimed next); returns the count. */
  async reap<const Q extends string>(queue: CheckQueue<Q>, limit: number = DEFAULT_MOVE_LIMIT): Promise<number> {
    const ks = this.#keyspace(queue);
    const n = wholeNumber("reap: limit", "limit", limit, 1);
    return Number(await this.#impl.call(wireCall("REAP", ks, { limit: n })));
  }

  /** The sizes of `queue`'s pending, active, schedule and dead sets, read atomically. */
  async counts<const Q extends string>(queue: CheckQueue<Q>): Promise<Counts> {
    const ks = this.#keyspace(queue);
    const replies = await this.#conn.batch(
      [["LLEN", ks.pending], ["ZCARD", ks.active], ["ZCARD", ks.schedule], ["ZCARD", ks.dead]],
      ks.pending,
      true,
    );
    for (const r of replies) if (r instanceof Error) throw r;
    const [pending, active, schedule, dead] = replies.map(Number) as [number, number, number, number];
    return { pending, active, schedule, dead };
  }

  /**
   * Starts a worker on `queue`: it claims jobs, runs `handler`, acks on success, retries with
   * backoff on a throw, buries after `maxAttempts`, and promotes and reaps on its own.
   */
  work<const Q extends string>(queue: CheckQueue<Q>, handler: Handler<P>, opts: WorkerOptions = {}): Worker<P> {
    this.#open();
    assertValidQueue(queue);
    const worker = new Worker<P>(this, queue as string, handler, opts, () => this.#workers.delete(worker));
    this.#workers.add(worker);
    return worker;
  }

  /** Stops every worker of this client (letting in-flight jobs finish), then disconnects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    // Workers settle their in-flight jobs (ack / retry / bury) before the client refuses calls.
    await Promise.all([...this.#workers].map((w) => w.stop()));
    this.#closed = true;
    this.#impl.close();
    this.#conn.close();
  }
}
