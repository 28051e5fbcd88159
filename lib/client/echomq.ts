/**
 * The EchoMQ client: connect, then enqueue, schedule, claim, ack, retry, bury, extend, promote,
 * reap and count jobs of named queues, through the native module or the Lua twin (same replies,
 * same keyspace). Every call goes to the primary that owns the queue's slot; every call is built
 * from the wire spec (`lib/wire`).
 *
 * @module
 */
import { Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import {
  assertClientQueue,
  assertJobId,
  type CheckClientQueue as CheckQueue,
  type JobId,
  Keyspace,
  newJobId,
  splitQueueKey,
} from "../keyspace/mod.ts";
import { DEAD_AGE_DEFAULT_MS, DEAD_MAX_DEFAULT, MAX_BATCH, MAX_PROGRESS_BYTES, wireCall } from "../wire/mod.ts";
import { type Backend, selectBackend } from "./backend.ts";
import { admit, type BatchContext, chunk, type Claim, claimOnce, enqueueMany, settleMany } from "./batch.ts";
import { byteLength, type Codec, json, toWire } from "./codec.ts";
import { fields, JOB_STATES, type JobInfo, jobInfo, type JobState, queueStats, type QueueStats } from "./info.ts";
import { Connection } from "./connection.ts";
import { EchoMQError, PayloadDecodeError } from "./errors.ts";
import type { Counts, Job, JobRef, Settlement } from "./job.ts";
import {
  BATCH_COMMANDS,
  type ClaimManyOptions,
  type ClaimOptions,
  DEFAULT_MOVE_LIMIT,
  type EchoMQOptions,
  type EnqueueManyOptions,
  type EnqueueOptions,
  jobRef,
  type RetryOptions,
  waitFor,
  type When,
  wholeNumber,
} from "./options.ts";
import { type Handler, Worker, type WorkerClient, type WorkerOptions } from "./worker.ts";

const UTF8 = new TextDecoder();

function asBytes(x: GlideReturnType): Uint8Array {
  if (x instanceof Uint8Array) return x;
  if (typeof x === "string") return new TextEncoder().encode(x);
  return new Uint8Array(0);
}

/** Addresses already warned about, so that a process warns once per server. */
const warned = new Set<string>();

/**
 * Warns (once per server and process) when a primary's `maxmemory-policy` may evict keys: an
 * evicted row or set loses acknowledged jobs silently. Servers that refuse `CONFIG GET` (managed
 * services, restricted users) are not warned about.
 */
async function warnEviction(conn: Connection, warn: (message: string) => void): Promise<void> {
  const where = conn.options.addresses.map((a) => `${a.host}:${a.port ?? 6379}`).join(",");
  if (warned.has(where)) return;
  let policies: unknown[];
  try {
    policies = await conn.everyPrimary(["CONFIG", "GET", "maxmemory-policy"]);
  } catch {
    return;
  }
  // a reply is a map: a list of { key, value } (glide's record), pairs, or a plain object
  const policy = (reply: unknown): string | undefined => {
    const pairs: Array<[string, string]> = Array.isArray(reply)
      ? reply.every((e) => e !== null && typeof e === "object" && "key" in e)
        ? (reply as Array<{ key: unknown; value: unknown }>).map((e) => [String(e.key), String(e.value)])
        : reply.flatMap((x, i) => (i % 2 === 0 ? [[String(x), String(reply[i + 1])] as [string, string]] : []))
      : reply && typeof reply === "object"
      ? Object.entries(reply).map(([k, v]) => [k, String(v)])
      : [];
    return pairs.find(([k]) => k === "maxmemory-policy")?.[1];
  };
  const evicting = policies.map(policy).filter((p): p is string => p !== undefined && p !== "noeviction");
  if (evicting.length === 0) return;
  warned.add(where);
  warn(
    `[echomq] ${where}: maxmemory-policy is ${[...new Set(evicting)].join(", ")}, not noeviction: ` +
      "when memory fills the server may evict job rows and queues, and acknowledged jobs vanish " +
      "silently; set maxmemory-policy noeviction (admissions are then refused while workers drain)",
  );
}

/**
 * A connected EchoMQ client for payloads of type `P`.
 *
 * Calls on different queues are independent: nothing spanning queues is atomic. One call on one
 * queue is one command, atomic on the server (a batch of many jobs included).
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
      id: () => this.#id(),
      keyspace: (queue) => this.#keyspace(queue),
      encode: (payload) => this.codec.encode(payload),
      job: (ks, entry) => this.#job(ks, entry),
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
      await warnEviction(conn, options.warn ?? ((m) => console.warn(m)));
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
    assertClientQueue(queue);
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

  /**
   * Adds a job to the head of `queue`'s pending list and returns its id. A new id that collides
   * with an existing row is replaced by a fresh one; a caller's `id` that exists is refused with
   * `DuplicateIdError` (while that job's row exists: until it is acked, or removed). With
   * `durable`, resolves only once a replica acknowledged the write (see {@link EnqueueOptions.durable}).
   */
  async enqueue<const Q extends string>(queue: CheckQueue<Q>, payload: P, opts?: EnqueueOptions): Promise<JobId> {
    const ks = this.#keyspace(queue);
    const wait = waitFor("enqueue", opts?.durable);
    const given = opts?.id;
    if (given !== undefined) assertJobId(given);
    const job = { id: given ?? this.#id(), payload: toWire(this.codec.encode(payload)) };
    const [id] = await admit(this.#batch, "enqueue", ks, "ENQUEUE", [job], wait, given === undefined);
    return id!;
  }

  /**
   * Enqueues many jobs on one queue: one ENQUEUE command per {@link BATCH_COMMANDS} jobs (each
   * command atomic), a few commands in flight, the input read as it is sent (an iterable or async
   * iterable of any length). Ids are assigned before anything is sent; returns them in input order.
   * When a command fails, the others already sent finish and the call rejects with `BatchError`:
   * its `landed` ids are on the server (skip them when retrying), its `unsent` ids are not, and its
   * `unconfirmed` ids may be (a durable shortfall, a timeout: check before sending them again).
   * With `durable`, each command is followed by `WAIT`.
   */
  async enqueueMany<const Q extends string>(
    queue: CheckQueue<Q>,
    payloads: Iterable<P> | AsyncIterable<P>,
    opts?: EnqueueManyOptions,
  ): Promise<JobId[]> {
    const ks = this.#keyspace(queue);
    return await enqueueMany(this.#batch, ks, payloads, waitFor("enqueueMany", opts?.durable));
  }

  /**
   * Adds a job that becomes due at `when` (`{ at }` a Date or ms since epoch, or `{ delayMs }`
   * from now); a claim (or a worker) moves it to pending once due. Returns its id. With `durable`,
   * resolves only once a replica acknowledged the write.
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
    const wait = waitFor("schedule", opts?.durable);
    const given = opts?.id;
    if (given !== undefined) assertJobId(given);
    const job = { id: given ?? this.#id(), due_ms: due, payload: toWire(this.codec.encode(payload)) };
    const [id] = await admit(this.#batch, "schedule", ks, "SCHEDULE", [job], wait, given === undefined);
    return id!;
  }

  /**
   * Claims the next job of `queue` (FIFO) for `leaseMs`, or returns null when none is ready. A
   * payload the codec cannot decode raises {@link PayloadDecodeError} naming the (claimed) job.
   */
  async claim<const Q extends string>(queue: CheckQueue<Q>, opts: ClaimOptions): Promise<Job<P> | null> {
    const ks = this.#keyspace(queue);
    const leaseMs = wholeNumber("claim: leaseMs", "lease-ms", opts?.leaseMs, 1);
    const { jobs } = await claimOnce(this.#batch, this.#impl, ks, 1, leaseMs, 0);
    const job = jobs[0] ?? null;
    if (job instanceof PayloadDecodeError) throw job;
    return job;
  }

  /**
   * Claims up to `n` jobs of `queue` (FIFO) for `leaseMs` each, in one CLAIM (at most 10000).
   * Returns the claimed jobs in claim order — fewer than `n`, or none, when the queue runs dry. A
   * claimed job whose payload the codec cannot decode is returned as a {@link PayloadDecodeError}
   * in its place: it *is* claimed (lease running), so retry or bury it. With `blockMs` (module
   * backend), waits on the server that long for a job when none is ready.
   */
  async claimMany<const Q extends string>(
    queue: CheckQueue<Q>,
    n: number,
    opts: ClaimManyOptions,
  ): Promise<Array<Job<P> | PayloadDecodeError>> {
    const ks = this.#keyspace(queue);
    const count = wholeNumber("claimMany: n", "count", n, 1);
    if (count > MAX_BATCH) throw new EchoMQError("count", `claimMany: n must be at most ${MAX_BATCH}, got ${n}`);
    const leaseMs = wholeNumber("claimMany: leaseMs", "lease-ms", opts?.leaseMs, 1);
    const blockMs = opts?.blockMs === undefined ? 0 : wholeNumber("claimMany: blockMs", "options", opts.blockMs, 0);
    return (await claimOnce(this.#batch, this.#impl, ks, count, leaseMs, blockMs)).jobs;
  }

  /** A CLAIM reply's job entry `[id, payload, attempts, token]` (a decode failure as the error naming the job). */
  #job(ks: Keyspace, entry: GlideReturnType): Job<P> | PayloadDecodeError {
    if (!Array.isArray(entry) || entry.length !== 4) throw new Error(`EMQ.CLAIM: unexpected job ${String(entry)}`);
    const id = UTF8.decode(asBytes(entry[0]!)) as JobId;
    const attempts = Number(entry[2]);
    const token = Number(entry[3]);
    try {
      return { id, queue: ks.name, token, attempts, payload: this.codec.decode(asBytes(entry[1]!)) };
    } catch (e) {
      return new PayloadDecodeError(this.codec.name, { id, queue: ks.name, attempts, token }, e);
    }
  }

  /** Sends one settle of `job` and throws its refusal (a `LeaseLostError` when the lease is lost). */
  async #settle(s: Settlement): Promise<void> {
    this.#open();
    const [error] = await settleMany(this.#batch, [s]);
    if (error) throw error;
  }

  /** Acknowledges a claimed job: it leaves active and its row is deleted. */
  ack(job: JobRef): Promise<void> {
    return this.#settle({ kind: "ack", job });
  }

  /** Puts a claimed job back on the schedule, due in `delayMs`, with the failure `reason`. */
  retry(job: JobRef, opts: RetryOptions): Promise<void> {
    return this.#settle({ kind: "retry", job, delayMs: opts?.delayMs, reason: opts?.reason ?? "" });
  }

  /** Moves a claimed job to the dead set with `reason`. */
  bury(job: JobRef, reason: string): Promise<void> {
    return this.#settle({ kind: "bury", job, reason });
  }

  /**
   * Settles many claimed jobs — each an ack, a retry or a bury — with one command per queue and
   * kind (at most {@link BATCH_COMMANDS} jobs each) instead of one round trip per job. Resolves
   * with one entry per settlement, in order: `null` when it was applied, or the error that refused
   * it — a `LeaseLostError` when the job's lease is lost (the others are applied all the same), an
   * {@link EchoMQError} when the client refused it before the wire. Rejects only when a whole
   * command fails (connection lost, timeout): then some settlements may have been applied.
   */
  async settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>> {
    this.#open();
    return await settleMany(this.#batch, settlements);
  }

  /**
   * Extends the leases of claimed jobs (of one queue) to `leaseMs` from now, in one command. A job
   * whose lease is lost refuses the whole call with `LeaseLostError` naming every such job, and
   * nothing is extended.
   */
  async extend(jobs: JobRef | readonly JobRef[], leaseMs: number): Promise<void> {
    this.#open();
    const list = Array.isArray(jobs) ? jobs as readonly JobRef[] : [jobs as JobRef];
    if (list.length === 0) return;
    const lease = wholeNumber("extend: leaseMs", "lease-ms", leaseMs, 1);
    const ks = jobRef("extend", list[0]!, (q) => this.#keyspace(q));
    for (const job of list) {
      if (jobRef("extend", job, (q) => this.#keyspace(q)) !== ks) {
        throw new EchoMQError("job", "extend: every job must be of one queue");
      }
    }
    const call = wireCall("EXTEND", ks, { lease_ms: lease }, list.map((j) => ({ id: j.id, token: j.token })));
    const reply = await this.#impl.call(call);
    if (reply !== list.length) throw new Error(`EMQ.EXTEND: unexpected reply ${String(reply)}`);
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
    return (await this.#counted(this.#keyspace(queue)))[0];
  }

  /** The counts of a queue, and the replies of `extra` reads sent in the same atomic batch. */
  async #counted(ks: Keyspace, extra: string[][] = []): Promise<[Counts, GlideReturnType[]]> {
    const replies = await this.#conn.batch(
      [["LLEN", ks.pending], ["ZCARD", ks.active], ["ZCARD", ks.schedule], ["ZCARD", ks.dead], ...extra],
      ks.meta,
      true,
    );
    for (const r of replies) if (r instanceof Error) throw r;
    const [pending, active, schedule, dead] = replies.slice(0, 4).map(Number) as [number, number, number, number];
    return [{ pending, active, schedule, dead }, replies.slice(4) as GlideReturnType[]];
  }

  /** A job by id, as its row has it; `null` when there is no such job. */
  async getJob<const Q extends string>(queue: CheckQueue<Q>, id: string): Promise<JobInfo<P> | null> {
    const ks = this.#keyspace(queue);
    assertJobId(id);
    const row = await this.#conn.command(["HGETALL", ks.job(id)], ks.meta, Decoder.Bytes);
    return jobInfo(ks.name, id, fields(row), this.codec);
  }

  /**
   * One page of `queue`'s jobs in `state`, in the order the state is served: pending in claim
   * order, scheduled by due time, active by lease deadline, dead most recent first. `offset` ≥ 0,
   * `limit` 1 to 1000 (default 100). A page is read in two steps (the ids, then their rows): a job
   * that moved in between is left out.
   */
  async jobs<const Q extends string>(
    queue: CheckQueue<Q>,
    state: JobState,
    page: { offset?: number; limit?: number } = {},
  ): Promise<Array<JobInfo<P>>> {
    const ks = this.#keyspace(queue);
    if (!JOB_STATES.includes(state)) {
      throw new EchoMQError("options", `jobs: state must be one of ${JOB_STATES.join(", ")}, got ${JSON.stringify(state)}`);
    }
    const offset = wholeNumber("jobs: offset", "options", page.offset ?? 0, 0);
    const limit = wholeNumber("jobs: limit", "options", page.limit ?? 100, 1);
    if (limit > 1000) throw new EchoMQError("options", `jobs: limit must be an integer from 1 to 1000, got ${limit}`);
    const end = String(offset + limit - 1);
    const read = {
      pending: ["LRANGE", ks.pending, String(-(offset + limit)), String(-(offset + 1))],
      scheduled: ["ZRANGE", ks.schedule, String(offset), end],
      active: ["ZRANGE", ks.active, String(offset), end],
      dead: ["ZRANGE", ks.dead, String(offset), end, "REV"],
    }[state];
    let ids = ((await this.#conn.command(read, ks.meta)) as unknown[]).map(String) as JobId[];
    if (state === "pending") ids = ids.reverse(); // the tail is claimed first
    if (ids.length === 0) return [];
    const rows = await this.#conn.batch(ids.map((id) => ["HGETALL", ks.job(id)]), ks.meta, false, 0, Decoder.Bytes);
    return ids.flatMap((id, i) => {
      const r = rows[i];
      const info = r instanceof Error ? null : jobInfo(ks.name, id, fields(r!), this.codec);
      return info === null ? [] : [info];
    });
  }

  /**
   * Deletes a pending, scheduled or dead job: `true` when it was removed, `false` when there was no
   * such job. An active job is refused with `JobActiveError` (its worker holds it; remove it once it
   * is settled).
   */
  async remove<const Q extends string>(queue: CheckQueue<Q>, id: string): Promise<boolean> {
    const ks = this.#keyspace(queue);
    assertJobId(id);
    return (await this.#impl.call(wireCall("REMOVE", ks, {}, [{ id }]))) === 1;
  }

  /**
   * Moves dead jobs back to pending, each with a fresh attempt budget (lease tokens stay
   * monotonic): the `ids` given (each must be dead, else `JobNotDeadError` and none moves), or all
   * of them — at most `limit` — oldest first, a thousand per command. Returns how many moved.
   */
  async requeueDead<const Q extends string>(
    queue: CheckQueue<Q>,
    opts: { ids?: readonly string[]; limit?: number } = {},
  ): Promise<number> {
    const ks = this.#keyspace(queue);
    if (opts.ids !== undefined) {
      for (const id of opts.ids) assertJobId(id);
      let moved = 0;
      for (const run of chunk(opts.ids, BATCH_COMMANDS)) {
        moved += Number(await this.#impl.call(wireCall("REQUEUE", ks, { limit: run.length }, run.map((id) => ({ id })))));
      }
      return moved;
    }
    let left = opts.limit === undefined ? Infinity : wholeNumber("requeueDead: limit", "limit", opts.limit, 1);
    let moved = 0;
    while (left > 0) {
      const n = Number(await this.#impl.call(wireCall("REQUEUE", ks, { limit: Math.min(left, BATCH_COMMANDS) })));
      moved += n;
      left -= n;
      if (n < Math.min(left + n, BATCH_COMMANDS)) break;
    }
    return moved;
  }

  /**
   * Pauses `queue` on the server: every worker's claims hand out nothing (waiting ones keep
   * waiting) until `resume`; the queue still admits jobs. `true` when it was running.
   */
  async pause<const Q extends string>(queue: CheckQueue<Q>): Promise<boolean> {
    const ks = this.#keyspace(queue);
    return (await this.#impl.call(wireCall("PAUSE", ks, {}))) === 1;
  }

  /** Resumes a paused `queue`; waiting workers claim at once. `true` when it was paused. */
  async resume<const Q extends string>(queue: CheckQueue<Q>): Promise<boolean> {
    const ks = this.#keyspace(queue);
    return (await this.#impl.call(wireCall("RESUME", ks, {}))) === 1;
  }

  /** Whether `queue` is paused. */
  async isPaused<const Q extends string>(queue: CheckQueue<Q>): Promise<boolean> {
    const ks = this.#keyspace(queue);
    return String(await this.#conn.command(["HGET", ks.meta, "paused"], ks.meta)) === "1";
  }

  /**
   * Records a claimed job's progress (any JSON value, at most 64 KiB encoded), token-checked like a
   * settle: a lost lease is refused with `LeaseLostError`. `getJob` shows it.
   */
  async progress(job: JobRef, value: unknown): Promise<void> {
    this.#open();
    const ks = jobRef("progress", job, (q) => this.#keyspace(q));
    const encoded = JSON.stringify(value);
    if (encoded === undefined) throw new EchoMQError("options", "progress: the value has no JSON form");
    if (byteLength(encoded) > MAX_PROGRESS_BYTES) {
      throw new EchoMQError("options", `progress: the value exceeds ${MAX_PROGRESS_BYTES} bytes of JSON`);
    }
    await this.#impl.call(wireCall("PROGRESS", ks, {}, [{ id: job.id, token: job.token, value: encoded }]));
  }

  /**
   * Sets how many dead jobs `queue` keeps (`deadMax`, 0: no limit; default
   * {@link DEAD_MAX_DEFAULT}) and for how long (`deadAgeMs`, 0: no limit; default 30 days); the next
   * bury or claim trims the oldest past either limit.
   */
  async retain<const Q extends string>(queue: CheckQueue<Q>, opts: { deadMax?: number; deadAgeMs?: number }): Promise<void> {
    const ks = this.#keyspace(queue);
    const max = wholeNumber("retain: deadMax", "options", opts?.deadMax ?? DEAD_MAX_DEFAULT, 0);
    const age = wholeNumber("retain: deadAgeMs", "options", opts?.deadAgeMs ?? DEAD_AGE_DEFAULT_MS, 0);
    await this.#impl.call(wireCall("RETAIN", ks, { dead_max: max, dead_age_ms: age }));
  }

  /**
   * Deletes `queue` entirely — its jobs (pending, scheduled, dead) a thousand per command, then its
   * keys, `meta` included (it no longer shows in `queues()`). Refused with `JobActiveError` while a
   * worker holds one of its jobs (stop the workers first). Not atomic across commands: jobs
   * admitted meanwhile are deleted too. Returns how many jobs were deleted.
   */
  async drop<const Q extends string>(queue: CheckQueue<Q>): Promise<number> {
    const ks = this.#keyspace(queue);
    let deleted = 0;
    for (;;) {
      const n = Number(await this.#impl.call(wireCall("DROP", ks, { limit: BATCH_COMMANDS })));
      deleted += n;
      if (n < BATCH_COMMANDS) return deleted;
    }
  }

  /**
   * Every queue on the server, or on every primary of the cluster: the queues whose `meta` exists
   * (written on first use). Sorted.
   */
  async queues(): Promise<string[]> {
    this.#open();
    const keys = await this.#conn.scan("emq:{*}:meta", "hash");
    const names = new Set<string>();
    for (const key of keys) {
      const parts = splitQueueKey(key);
      if (parts !== null && parts.type === "meta") names.add(parts.queue);
    }
    return [...names].sort();
  }

  /** `queue`'s counts, paused state, totals (admitted, acked, retried, buried, claims) and retention, read atomically. */
  async stats<const Q extends string>(queue: CheckQueue<Q>): Promise<QueueStats> {
    const ks = this.#keyspace(queue);
    const [counts, [meta]] = await this.#counted(ks, [["HGETALL", ks.meta]]);
    return queueStats(counts, fields(meta!), {
      deadMax: DEAD_MAX_DEFAULT,
      deadAgeMs: DEAD_AGE_DEFAULT_MS,
    });
  }

  /**
   * What a worker needs of this client: claims on a connection of its own, settles, extensions —
   * the client `work` runs a {@link Worker} on. Wrap its methods to observe a worker (the
   * reliability suites record every claim and settle this way).
   */
  workerClient(): WorkerClient<P> {
    return {
      backend: this.backend,
      dedicated: async (queue, blockMs) => {
        const conn = await this.#conn.dedicated(blockMs);
        const impl = this.#impl.on(conn);
        const route = this.#keyspace(queue).meta;
        // the server's id of the connection this line waits on (the queue's node)
        let id: string;
        try {
          id = String(await conn.command(["CLIENT", "ID"], route));
        } catch (e) {
          conn.close();
          throw e;
        }
        return {
          unblock: async () => {
            await this.#conn.command(["CLIENT", "UNBLOCK", id], route);
          },
          claim: (queue, count, leaseMs, waitMs): Promise<Claim<P>> =>
            claimOnce(this.#batch, impl, this.#keyspace(queue), count, leaseMs, waitMs),
          wake: async (queue, timeoutMs) => {
            const ks = this.#keyspace(queue);
            await conn.command(["BZPOPMIN", ks.wake, String(timeoutMs / 1000)], ks.meta);
          },
          close: () => {
            impl.close();
            conn.close();
          },
        };
      },
      settleMany: (settlements) => this.settleMany(settlements),
      extend: (jobs, leaseMs) => this.extend(jobs, leaseMs),
      progress: (job, value) => this.progress(job, value),
      reap: (queue) => this.reap(queue),
    };
  }

  /**
   * Starts a worker on `queue`: it claims jobs (waiting on the server when none is ready), runs
   * `handler`, extends each running job's lease, acks on success, retries with backoff on a throw,
   * and buries after `maxAttempts`.
   */
  work<const Q extends string>(queue: CheckQueue<Q>, handler: Handler<P>, opts: WorkerOptions = {}): Worker<P> {
    this.#open();
    this.#keyspace(queue);
    const worker = new Worker<P>(this.workerClient(), queue as string, handler, opts, () => this.#workers.delete(worker));
    this.#workers.add(worker);
    return worker;
  }

  /**
   * Stops every worker of this client (letting in-flight jobs finish and settle), then
   * disconnects. Called from inside a handler, it resolves once the other jobs are settled; the
   * handler's own job settles when the handler returns, and the connection closes after that.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    const inside = Worker.current();
    await Promise.all([...this.#workers].map((w) => w.stop()));
    const finish = (): void => {
      this.#closed = true;
      this.#impl.close();
      this.#conn.close();
    };
    if (inside === null) finish();
    else void inside.then(finish);
  }
}
