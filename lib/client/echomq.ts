/**
 * The EchoMQ client: connect, then enqueue, schedule, claim, ack, retry, bury, promote, reap and
 * count jobs of named queues, through the native module or the Lua twin (same replies, same
 * keyspace). Every call goes to the primary that owns the queue's slot.
 *
 * @module
 */
import { Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import { assertJobId, assertValidQueue, type CheckQueue, type JobId, Keyspace, newJobId } from "../../mod.ts";
import { type Backend, selectBackend, type WaitFor } from "./backend.ts";
import { byteLength, type Codec, json, toWire } from "./codec.ts";
import { Connection, type ConnectionOptions } from "./connection.ts";
import { DuplicateIdError, DurabilityError, EchoMQError, PayloadDecodeError } from "./errors.ts";
import type { Counts, Job, JobRef, Settlement } from "./job.ts";
import {
  ackCall,
  buryCall,
  claimCall,
  enqueueCall,
  promoteCall,
  reapCall,
  retryCall,
  scheduleCall,
  type WireCall,
} from "./wire.ts";
import { type Handler, Worker, type WorkerOptions } from "./worker.ts";

/** Options of {@link EchoMQ.connect}: the connection, the payload codec and the id source. */
export interface EchoMQOptions<P = unknown> extends ConnectionOptions {
  /** How payloads become bytes (default {@link json}). */
  codec?: Codec<P>;
  /** Where new job ids come from (default `newJobId` from `mod.ts`); must return valid JOB ids. */
  newId?: () => JobId;
}

/** What a `durable` write asks for: how many replicas must acknowledge it, and how long to wait. */
export interface DurableOptions {
  /** Replicas that must acknowledge the write (default 1). */
  replicas?: number;
  /** Milliseconds to wait for them (default {@link DEFAULT_DURABLE_TIMEOUT_MS}, at most one hour). */
  timeoutMs?: number;
}

/** Options of {@link EchoMQ.enqueueMany}. */
export interface EnqueueManyOptions {
  /**
   * Resolve only once at least one replica (or `replicas`) acknowledged every job: each batch ends
   * with `WAIT`, as for {@link EnqueueOptions.durable}. A shortfall rejects with
   * {@link DurabilityError} naming that batch's ids.
   */
  durable?: boolean | DurableOptions;
}

/** Options of {@link EchoMQ.enqueue} and {@link EchoMQ.schedule}. */
export interface EnqueueOptions extends EnqueueManyOptions {
  /**
   * Use this id instead of a new one: an idempotent enqueue. A second enqueue with the same id is
   * refused with {@link DuplicateIdError} (and is not retried with another id).
   */
  id?: JobId;
  /**
   * Resolve only once at least one replica (or `replicas`) acknowledged the write: the verb and
   * `WAIT <replicas> <timeoutMs>` go to the queue's primary in one ordered non-atomic batch, on
   * the one connection glide keeps to that node, so the `WAIT` covers the write. Fewer replicas
   * within the timeout rejects with {@link DurabilityError} (the job *is* on the primary). While
   * `WAIT` blocks, this client's other calls to that node queue behind it. In a cluster, a write
   * redirected by `MOVED` (a slot being migrated) is not covered by the `WAIT`, which stays on
   * the node first asked.
   */
  durable?: boolean | DurableOptions;
}

/** When a scheduled job becomes due: an absolute time, or a delay from now (client clock). */
export type When = { at: Date | number } | { delayMs: number };

/** Options of {@link EchoMQ.claim}. */
export interface ClaimOptions {
  /** The lease: after this many ms without ack / retry / bury, `reap` hands the job out again. */
  leaseMs: number;
}

/** Options of {@link EchoMQ.retry}. */
export interface RetryOptions {
  /** Milliseconds until the job is due again (≥ 1). */
  delayMs: number;
  /** Why it failed, kept on the row (at most 4096 bytes; default empty). */
  reason?: string;
}

/** Default `limit` of {@link EchoMQ.promote} and {@link EchoMQ.reap}. */
export const DEFAULT_MOVE_LIMIT = 1000;
/** Largest number the wire accepts: 15 decimal digits. */
export const MAX_WIRE_NUMBER = 999_999_999_999_999;
/** Commands per `enqueueMany` batch (one in-flight request each). */
export const BATCH_COMMANDS = 1000;
/** Payload bytes per `enqueueMany` batch (a batch is cut earlier when it would exceed this). */
export const BATCH_BYTES: number = 8 * 1024 * 1024;
/** Default `timeoutMs` of a `durable` write. */
export const DEFAULT_DURABLE_TIMEOUT_MS = 1000;

function wholeNumber(what: string, rule: EchoMQError["rule"], value: unknown, min: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > MAX_WIRE_NUMBER) {
    throw new EchoMQError(
      rule,
      `${what} must be an integer from ${min} to ${MAX_WIRE_NUMBER} (wire-4 number gate), got ${String(value)}`,
    );
  }
  return value;
}

function waitFor(what: string, durable: boolean | DurableOptions | undefined): WaitFor | undefined {
  if (durable === undefined || durable === false) return undefined;
  if (durable === true) return { replicas: 1, timeoutMs: DEFAULT_DURABLE_TIMEOUT_MS };
  if (durable === null || typeof durable !== "object") {
    throw new EchoMQError("durable", `${what}: durable must be true, false or { replicas?, timeoutMs? }`);
  }
  const replicas = durable.replicas ?? 1;
  const timeoutMs = durable.timeoutMs ?? DEFAULT_DURABLE_TIMEOUT_MS;
  if (!Number.isSafeInteger(replicas) || replicas < 1 || replicas > 1000) {
    throw new EchoMQError("durable", `${what}: durable.replicas must be an integer from 1 to 1000, got ${String(replicas)}`);
  }
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 3_600_000) {
    throw new EchoMQError(
      "durable",
      `${what}: durable.timeoutMs must be an integer from 1 to 3600000 (WAIT 0 would block forever), got ${
        String(timeoutMs)
      }`,
    );
  }
  return { replicas, timeoutMs };
}

/** Throws {@link DurabilityError} unless `reply` (a `WAIT`'s) counts enough replicas. */
function checkWait(what: string, queue: string, ids: readonly string[], reply: unknown, wait: WaitFor): void {
  if (reply instanceof Error) throw new DurabilityError(what, queue, ids, 0, wait, reply);
  const acknowledged = Number(reply);
  if (!Number.isFinite(acknowledged)) {
    throw new DurabilityError(what, queue, ids, 0, wait, new Error(`unexpected WAIT reply ${String(reply)}`));
  }
  if (acknowledged < wait.replicas) throw new DurabilityError(what, queue, ids, acknowledged, wait);
}

function reasonText(what: string, reason: unknown): string {
  if (typeof reason !== "string") throw new EchoMQError("reason", `${what}: reason must be a string`);
  if (byteLength(reason) > 4096) {
    throw new EchoMQError("reason", `${what}: reason exceeds 4096 bytes (wire-4 reason gate)`);
  }
  return reason;
}

function jobRef(what: string, job: JobRef, keyspace?: (queue: string) => Keyspace): Keyspace {
  if (job === null || typeof job !== "object") {
    throw new EchoMQError("job", `${what}: expected a job { id, queue }, got ${String(job)}`);
  }
  assertValidQueue(job.queue);
  assertJobId(job.id);
  return keyspace ? keyspace(job.queue) : new Keyspace(job.queue);
}

/** The wire call of one settlement, with the same checks as ack / retry / bury. */
function settleCall(s: Settlement, keyspace: (queue: string) => Keyspace): WireCall {
  if (s === null || typeof s !== "object") throw new EchoMQError("job", `settleMany: expected a settlement, got ${String(s)}`);
  switch (s.kind) {
    case "ack":
      return ackCall(jobRef("ack", s.job, keyspace), s.job.id);
    case "retry": {
      const ks = jobRef("retry", s.job, keyspace);
      const delay = wholeNumber("retry: delayMs", "delay-ms", s.delayMs, 1);
      return retryCall(ks, s.job.id, delay, reasonText("retry", s.reason ?? ""));
    }
    case "bury":
      return buryCall(jobRef("bury", s.job, keyspace), s.job.id, reasonText("bury", s.reason));
    default:
      throw new EchoMQError("options", `settleMany: kind must be ack, retry or bury, got ${String((s as { kind: unknown }).kind)}`);
  }
}

function expectOne(verb: string, reply: GlideReturnType): void {
  if (reply !== 1) throw new Error(`EMQ.${verb}: unexpected reply ${String(reply)}`);
}

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

  private constructor(conn: Connection, impl: Backend, codec: Codec<P>, newId: () => JobId) {
    this.#conn = conn;
    this.#impl = impl;
    this.backend = impl.kind;
    this.codec = codec;
    this.#newId = newId;
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
    return this.#admit("enqueue", ks, (id) => enqueueCall(ks, id, wire), opts);
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
    const wait = waitFor("enqueueMany", opts?.durable);
    const calls = payloads.map((p) => enqueueCall(ks, this.#id(), toWire(this.codec.encode(p))));
    const chunks: Array<{ start: number; calls: WireCall[] }> = [];
    let start = 0;
    let bytes = 0;
    for (let i = 0; i < calls.length; i++) {
      const size = byteLength(calls[i]!.args[1] as string | Uint8Array);
      if (i > start && (i - start >= BATCH_COMMANDS || bytes + size > BATCH_BYTES)) {
        chunks.push({ start, calls: calls.slice(start, i) });
        start = i;
        bytes = 0;
      }
      bytes += size;
    }
    if (start < calls.length) chunks.push({ start, calls: calls.slice(start) });
    const ids = calls.map((c) => c.args[0] as JobId);
    let next = 0;
    const runners = Math.max(1, Math.min(8, this.#conn.inflightLimit - 1, chunks.length));
    const run = async (): Promise<void> => {
      while (next < chunks.length) {
        const chunk = chunks[next++]!;
        const replies = await this.#impl.callMany(chunk.calls, wait);
        for (let j = 0; j < chunk.calls.length; j++) {
          const r = replies[j];
          if (r === 1) continue;
          if (r instanceof DuplicateIdError) {
            const at = chunk.start + j;
            const id = this.#id();
            await this.#send("enqueueMany", ks.name, enqueueCall(ks, id, chunk.calls[j]!.args[1]!), wait);
            ids[at] = id;
            continue;
          }
          if (r instanceof Error) throw r;
          expectOne("ENQUEUE", r!);
        }
        if (wait !== undefined) {
          checkWait("enqueueMany", ks.name, chunk.calls.map((c) => c.args[0] as string), replies[chunk.calls.length], wait);
        }
      }
    };
    await Promise.all(Array.from({ length: runners }, run));
    return ids;
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
    return this.#admit("schedule", ks, (id) => scheduleCall(ks, id, due, wire), opts);
  }

  /**
   * Claims the next job of `queue` (FIFO) for `leaseMs`, or returns null when none is ready.
   * A payload the codec cannot decode raises {@link PayloadDecodeError} naming the (claimed) job.
   */
  async claim<const Q extends string>(queue: CheckQueue<Q>, opts: ClaimOptions): Promise<Job<P> | null> {
    const ks = this.#keyspace(queue);
    const leaseMs = wholeNumber("claim: leaseMs", "lease-ms", opts?.leaseMs, 1);
    const job = this.#claimed(ks, await this.#impl.call(claimCall(ks, leaseMs), Decoder.Bytes));
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
    const out: Array<Job<P> | PayloadDecodeError> = [];
    let refused: unknown = null;
    for (let left = count; left > 0 && refused === null;) {
      const size = Math.min(left, BATCH_COMMANDS);
      left -= size;
      const call = claimCall(ks, leaseMs);
      const replies = await this.#impl.callMany(Array.from({ length: size }, () => call), undefined, Decoder.Bytes);
      let empty = false;
      // Every reply is read, not only those before the first null: another client's enqueue can
      // land between two CLAIMs of the batch, and a job claimed after a null holds a lease too.
      for (const reply of replies) {
        if (reply === null) {
          empty = true;
          continue;
        }
        if (reply instanceof Error) {
          refused ??= reply;
          continue;
        }
        try {
          const job = this.#claimed(ks, reply);
          if (job !== null) out.push(job);
        } catch (e) {
          refused ??= e;
        }
      }
      if (empty) break;
    }
    if (refused !== null && out.length === 0) throw refused;
    return out;
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
    expectOne("ACK", await this.#impl.call(ackCall(ks, job.id)));
  }

  /** Puts a claimed job back on the schedule, due in `delayMs`, with the failure `reason`. */
  async retry(job: JobRef, opts: RetryOptions): Promise<void> {
    this.#open();
    const ks = jobRef("retry", job);
    const delay = wholeNumber("retry: delayMs", "delay-ms", opts?.delayMs, 1);
    const reason = reasonText("retry", opts?.reason ?? "");
    expectOne("RETRY", await this.#impl.call(retryCall(ks, job.id, delay, reason)));
  }

  /** Moves a claimed job to the dead set with `reason`. */
  async bury(job: JobRef, reason: string): Promise<void> {
    this.#open();
    const ks = jobRef("bury", job);
    const why = reasonText("bury", reason);
    expectOne("BURY", await this.#impl.call(buryCall(ks, job.id, why)));
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
    const out: Array<Error | null> = new Array(settlements.length).fill(null);
    const byQueue = new Map<string, Array<{ at: number; call: WireCall }>>();
    const keyspace = (queue: string): Keyspace => this.#keyspace(queue);
    settlements.forEach((s, at) => {
      try {
        const call = settleCall(s, keyspace);
        const list = byQueue.get(call.keys[1]!);
        if (list) list.push({ at, call });
        else byQueue.set(call.keys[1]!, [{ at, call }]);
      } catch (e) {
        out[at] = e instanceof Error ? e : new Error(String(e));
      }
    });
    const chunks: Array<Array<{ at: number; call: WireCall }>> = [];
    for (const list of byQueue.values()) {
      for (let i = 0; i < list.length; i += BATCH_COMMANDS) chunks.push(list.slice(i, i + BATCH_COMMANDS));
    }
    await Promise.all(chunks.map(async (chunk) => {
      const replies = await this.#impl.callMany(chunk.map((c) => c.call));
      chunk.forEach(({ at, call }, i) => {
        const r = replies[i];
        if (r instanceof Error) out[at] = r;
        else if (r !== 1) out[at] = new Error(`EMQ.${call.verb}: unexpected reply ${String(r)}`);
      });
    }));
    return out;
  }

  /** Moves up to `limit` due scheduled jobs to pending; returns how many moved. */
  async promote<const Q extends string>(queue: CheckQueue<Q>, limit: number = DEFAULT_MOVE_LIMIT): Promise<number> {
    const ks = this.#keyspace(queue);
    const n = wholeNumber("promote: limit", "limit", limit, 1);
    return Number(await this.#impl.call(promoteCall(ks, n)));
  }

  /** Hands up to `limit` jobs whose lease expired back to pending (claimed next); returns the count. */
  async reap<const Q extends string>(queue: CheckQueue<Q>, limit: number = DEFAULT_MOVE_LIMIT): Promise<number> {
    const ks = this.#keyspace(queue);
    const n = wholeNumber("reap: limit", "limit", limit, 1);
    return Number(await this.#impl.call(reapCall(ks, n)));
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
