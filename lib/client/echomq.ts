/**
 * The EchoMQ client: connect, then enqueue, schedule, claim, ack, retry, bury, extend, promote,
 * reap and count jobs of named queues, through the native module or the Lua twin (same replies,
 * same keyspace). Every call goes to the primary that owns the queue's slot; every call is built
 * from the wire spec (`lib/wire`). The class is the facade: each method checks its arguments and
 * delegates to the file of its concept, a function over the client's {@link ClientContext}.
 *
 * @module
 */
import { assertJobId, type CheckClientQueue as CheckQueue, type CheckLane, type CheckName, type JobId } from "../keyspace/mod.ts";
import type { COMPLETED_MAX_DEFAULT, DEAD_MAX_DEFAULT, EVENTS_MAX_DEFAULT } from "../wire/mod.ts";
import * as batch from "./batch.ts";
import type { Admitted } from "./batch.ts";
import type { Codec } from "./codec.ts";
import { ClientContext } from "./context.ts";
import { EchoMQError, type JobFailedError, type JobNotFoundError, type PayloadDecodeError, type ResultTimeoutError } from "./errors.ts";
import { closeReaders, events, type EventsOptions } from "./event_reader.ts";
import type { QueueEventItem } from "./events.ts";
import { JOB_EVENTS_SCAN, type JobEvents, jobEvents, MAX_JOB_EVENTS_SCAN, recentEvents } from "./recent_events.ts";
import { enqueueAndWait, type EnqueueReply, type EnqueueWait, type EnqueueWaitOptions, type WaitOption, waits } from "./enqueue_wait.ts";
import * as flows from "./flows.ts";
import type { AddChildrenOptions, ChildState, FlowChild, FlowNode, FlowParent, FlowSpec } from "./flows.ts";
import { flowOf, type FlowTree } from "./flow_tree.ts";
import { type FlowStats, flowStats } from "./flow_stats.ts";
import * as inspect from "./inspect.ts";
import type { QueueScanPage } from "./inspect.ts";
import type { JobInfo, JobState, QueueStats } from "./info.ts";
import type { Counts, Job, JobRef, Settlement } from "./job.ts";
import * as lanes from "./lanes.ts";
import * as logs from "./logs.ts";
import * as search from "./search.ts";
import type { FindOptions, FindQuery, FoundJobs } from "./search.ts";
import type { JobLogs } from "./logs.ts";
import type { LanePage } from "./lanes.ts";
import * as leases from "./leases.ts";
import * as limits from "./limits.ts";
import type { LimitOptions, LimitTarget, QueueLimits } from "./limits.ts";
import { cancel as cancelJob, type CancelOptions, type CancelOutcome } from "./cancel.ts";
import { metrics as readMetrics, type MetricsOptions, type QueueMetrics } from "./metrics.ts";
import * as operations from "./operations.ts";
import type { RemoveOptions, RequeueOptions, Retention } from "./operations.ts";
import {
  BATCH_COMMANDS,
  type ClaimManyOptions,
  type ClaimOptions,
  DEFAULT_MOVE_LIMIT,
  dueMs,
  type EchoMQOptions,
  type EnqueueManyOptions,
  type EnqueueOptions,
  integerIn,
  refuse,
  type RetryOptions,
  waitFor,
  type When,
} from "./options.ts";
import { type Handler, ownSettle, type StopOptions, Worker, type WorkerClient, type WorkerOptions } from "./worker/worker.ts";
import { workerClient } from "./worker/worker_client.ts";
import { type WorkerInfo, workers as listWorkers } from "./workers.ts";
import type { Decoded, JsonPayload, Payload, PayloadKind } from "./payload.ts";
import { Queue } from "./queue.ts";
import type { RepeatSpec } from "./repeat.ts";
import { type Relay, relay, relayOnce, type RelayOptions } from "./relay.ts";
import { result, type ResultOptions } from "./result.ts";
import * as schedulers from "./schedulers.ts";
import type { SchedulerInfo, SchedulerOptions } from "./schedulers.ts";

/**
 * A connected EchoMQ client for payloads of type `P`: with the default JSON codec (`K` "json"),
 * a payload is checked by {@link JsonPayload} and comes back as JSON gives it ({@link Decoded});
 * with a codec of your own (`K` "codec"), payloads are the codec's type. `queue<Q>(name)` gives a
 * handle typed by that queue's own payload, so one client serves queues of different types.
 *
 * Calls on different queues are independent: nothing spanning queues is atomic. One call on one
 * queue is one command, atomic on the server (a batch of many jobs included).
 */
export class EchoMQ<P = unknown, K extends PayloadKind = "json"> {
  /** The backend in use after `auto` selection. */
  readonly backend: "module" | "scripts";
  /** The payload codec. */
  readonly codec: Codec<P>;
  readonly #c: ClientContext<P>;
  readonly #workers: Set<Worker<unknown>> = new Set();

  private constructor(c: ClientContext<P>) {
    this.#c = c;
    this.backend = c.impl.kind;
    this.codec = c.codec;
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
  static connect<P = unknown>(options: EchoMQOptions<P> & { codec?: undefined }): Promise<EchoMQ<P, "json">>;
  /** With a codec of your own: payloads of the codec's type, in and out. */
  static connect<P>(options: EchoMQOptions<P> & { codec: Codec<P> }): Promise<EchoMQ<P, "codec">>;
  /** Options passed on whole, whose codec the compiler does not know: typed as with JSON. */
  static connect<P>(options: EchoMQOptions<P>): Promise<EchoMQ<P>>;
  static async connect<P>(options: EchoMQOptions<P>): Promise<EchoMQ<P, PayloadKind>> {
    return new EchoMQ<P, PayloadKind>(await ClientContext.connect(options));
  }

  /**
   * A handle on one queue, typed by that queue's payload `Q` (with the JSON codec, checked and
   * decoded as JSON) and its results `R`: its handler must return an `R`, and `result` and
   * `enqueue` with `wait` give it back as JSON does (`unknown` when `R` is not given). For a flow's
   * parent, `C` types its children's results (`job.children()`, `children`, `getJob`), as JSON gives
   * them back. Its methods are this client's, with the queue filled in.
   *
   * @example
   * ```ts
   * const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: 6379 }] });
   * const mail = mq.queue<{ to: string }>("mail");
   * const bills = mq.queue<{ amount: number; at: Date }, { paid: boolean }>("bills");
   * await mail.enqueue({ to: "ada@example.com" });
   * bills.work((job) => ({ paid: job.payload.at.slice(0, 10) !== "" })); // a Date comes back a string
   * const { result } = await bills.enqueue({ amount: 12, at: new Date() }, { wait: true });
   * console.log(result.paid); // a boolean
   * const days = mq.queue<{ month: string }, { paid: number }, { paid: boolean }>("days"); // a flow's parent
   * days.work(async (job) => ({ paid: (await job.children()).filter((k) => k.result?.paid).length }));
   * ```
   */
  queue<Q = P, R = unknown, C = unknown, const N extends string = string>(name: CheckQueue<N>): Queue<Q, K, R, C> {
    this.#c.keyspace(name);
    return new Queue<Q, K, R, C>(this as unknown as EchoMQ<Q, K>, name as string);
  }

  /** True when connected to a cluster. */
  get cluster(): boolean {
    return this.#c.conn.cluster;
  }

  /**
   * Adds a job to the head of `queue`'s pending list and returns its id. A new id that collides
   * with an existing row is replaced by a fresh one; a caller's `id` that exists is refused with
   * `DuplicateIdError` (while that job's row exists: until it is removed, or acked when its queue keeps
   * no completed jobs — else until the retention of completed jobs deletes it). With
   * `durable`, resolves only once a replica acknowledged the write (see {@link EnqueueOptions.durable}).
   * With `dedup`, a held key admits nothing and the holder's id is returned ({@link submit} says
   * which happened); `timeoutMs` limits this job's handler. Calls made while others to the same
   * queue are in flight go as one command (each still answered, and refused, for itself).
   *
   * With `wait` (`true`, or `{ timeoutMs?, signal? }` as {@link result} takes them) it resolves
   * with `{ id, result }` once the job completed instead ({@link EnqueueReply}: the return type
   * follows the option), or rejects as `result()` does — {@link JobFailedError} when the job died,
   * {@link ResultTimeoutError} past `timeoutMs`, the signal's reason on an abort (the job goes on;
   * an aborted signal admits nothing). The events stream's position is read *before* the job is
   * sent, so a job that completes at once is not missed, even on a queue that keeps no completed
   * jobs (`completedMax` 0: `result` is then `undefined`).
   *
   * @example
   * ```ts ignore
   * const id = await mq.enqueue("resize", { url }); // a JobId
   * const { result } = await mq.enqueue("resize", { url }, { wait: { timeoutMs: 30_000 } });
   * ```
   */
  async enqueue<
    const Q extends string,
    const L extends string = string,
    W extends EnqueueWait | false | undefined = undefined,
    const D extends string = string,
  >(
    queue: CheckQueue<Q>,
    payload: Payload<P, K>,
    opts?: EnqueueOptions<L, D> & WaitOption<W>,
  ): Promise<EnqueueReply<W>> {
    const ks = this.#c.keyspace(queue);
    if (waits(opts)) return await enqueueAndWait(this.#c, ks, payload as P, opts as EnqueueWaitOptions) as EnqueueReply<W>;
    return (await batch.admitOne(this.#c, ks, payload as P, undefined, opts as EnqueueOptions<L> | undefined)).id as EnqueueReply<W>;
  }

  /**
   * Admits a job as `enqueue` does — or, with `at` / `delayMs`, as `schedule` does — and says what
   * became of it: `{ id, outcome }`, `outcome` `"admitted"` (a new job, `id` its own),
   * `"deduplicated"` (its `dedup` key is held: nothing admitted, `id` the holder's) or
   * `"debounced"` (the waiting holder took its payload, and from a schedule its due time).
   *
   * @example
   * ```ts
   * const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: 6379 }] });
   * const first = await mq.submit("mail", { to: "ada" }, { dedup: { key: "welcome:ada" } });
   * const again = await mq.submit("mail", { to: "ada" }, { dedup: { key: "welcome:ada" } });
   * again.outcome; // "deduplicated", and again.id === first.id
   * ```
   */
  async submit<const Q extends string, const L extends string = string, const D extends string = string>(
    queue: CheckQueue<Q>,
    payload: Payload<P, K>,
    opts?: EnqueueOptions<L, D> & Partial<When>,
  ): Promise<Admitted> {
    const timed = opts !== undefined && opts !== null && ("at" in opts || "delayMs" in opts);
    const due = timed ? dueMs(opts as When) : undefined;
    return await batch.admitOne(this.#c, this.#c.keyspace(queue), payload as P, due, opts as EnqueueOptions<L> | undefined, "submit");
  }

  /**
   * Enqueues many jobs on one queue: one ENQUEUE command per {@link BATCH_COMMANDS} jobs (each
   * command atomic), a few commands in flight (the first alone), the input read as it is sent (an
   * iterable or async iterable of any length, read with `next()` only). The jobs are admitted in
   * input order, except that a command resent during a resharding or a failover lands after the
   * ones sent behind it. Ids are assigned before anything is sent; returns them in input order. At the first failure — a command refused or without a reply, a
   * payload the codec cannot encode, an input that throws — nothing more is read or sent, the
   * commands already sent finish, and the call rejects with a `BatchError` that accounts for every
   * input: those read are in `landed` (on the server: skip them), `unsent` (not: send them again)
   * or `unconfirmed` (maybe: send them again with their ids, a `DuplicateIdError` meaning it was
   * there), each with its input index and payload; the inputs from `unreadFrom` on were never
   * read, and the input is not closed, so the same generator (or `array.slice(unreadFrom)`)
   * continues from there. With `durable`, each command is followed by `WAIT`. `lane`,
   * `priority` and `name` are one value for every job or a function of each payload and its index.
   *
   * @example
   * ```ts ignore
   * await mq.enqueueMany("mail", orders, { lane: (order) => order.tenant });
   * ```
   */
  async enqueueMany<const Q extends string, const L extends string = string>(
    queue: CheckQueue<Q>,
    payloads: Iterable<Payload<P, K>> | AsyncIterable<Payload<P, K>>,
    opts?: EnqueueManyOptions<Payload<P, K>, L>,
  ): Promise<JobId[]> {
    return await batch.enqueueMany(
      this.#c,
      this.#c.keyspace(queue),
      payloads as Iterable<P>,
      waitFor("enqueueMany", opts?.durable),
      opts as EnqueueManyOptions<P> | undefined,
    );
  }

  /**
   * Adds a job that becomes due at `when` (`{ at }` a Date or ms since epoch, or `{ delayMs }`
   * from now); a claim (or a worker) moves it to pending once due. Returns its id. With `durable`,
   * resolves only once a replica acknowledged the write.
   */
  async schedule<const Q extends string, const L extends string = string, const D extends string = string>(
    queue: CheckQueue<Q>,
    payload: Payload<P, K>,
    when: When,
    opts?: EnqueueOptions<L, D>,
  ): Promise<JobId> {
    return (await batch.admitOne(this.#c, this.#c.keyspace(queue), payload as P, dueMs(when), opts as EnqueueOptions<L> | undefined)).id;
  }

  /**
   * Claims the next job of `queue` (FIFO) for `leaseMs`, or returns null when none is ready. A
   * payload the codec cannot decode raises {@link PayloadDecodeError} naming the (claimed) job.
   */
  async claim<const Q extends string>(queue: CheckQueue<Q>, opts: ClaimOptions): Promise<Job<Decoded<P, K>> | null> {
    return (await batch.claimOne(this.#c, this.#c.keyspace(queue), opts)) as Job<Decoded<P, K>> | null;
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
  ): Promise<Array<Job<Decoded<P, K>> | PayloadDecodeError>> {
    return (await batch.claimMany(this.#c, this.#c.keyspace(queue), n, opts)) as Array<Job<Decoded<P, K>> | PayloadDecodeError>;
  }

  /**
   * Sends one settle of `job` and throws its refusal (a `LeaseLostError` when the lease is lost).
   * From inside the handler of that claim, the worker running it is told first: it will not settle
   * the job again.
   */
  async #settle(s: Settlement): Promise<void> {
    this.#c.assertOpen();
    const own = ownSettle(s.job, s.kind);
    let error: Error | null;
    try {
      [error = null] = await batch.settleMany(this.#c, [s]);
    } catch (e) {
      own?.(e);
      throw e;
    }
    own?.(error);
    if (error) throw error;
  }

  /**
   * Acknowledges a claimed job: it leaves active and completes. While the queue keeps completed
   * jobs (`retain`'s `completedMax`, default {@link COMPLETED_MAX_DEFAULT}; `completedAgeMs`,
   * default a day) it stays, state `completed`, with `result` (any value JSON carries, as
   * `JSON.stringify` writes it; `undefined`: none) and its finish time, in the same atomic command;
   * with `completedMax` 0 its row is deleted and the result dropped. A result whose JSON passes
   * `MAX_PAYLOAD_BYTES` is refused before the wire with `ResultTooLargeError` (the job stays
   * active). A handler may settle its own job (`ack`, `retry`, `bury`): its worker then leaves the
   * job to it.
   */
  ack(job: JobRef, result?: unknown): Promise<void> {
    return this.#settle(result === undefined ? { kind: "ack", job } : { kind: "ack", job, result });
  }

  /**
   * Puts a claimed job back on the schedule, due in `delayMs`, with the failure `reason` (and
   * `error`, kept with its stack among the job's failed attempts); a `delayMs` of 0 puts it
   * straight back in pending (ready now).
   */
  retry(job: JobRef, opts: RetryOptions): Promise<void> {
    const error = opts?.error;
    return this.#settle({ kind: "retry", job, delayMs: opts?.delayMs, reason: opts?.reason ?? "", ...(error === undefined ? {} : { error }) });
  }

  /**
   * Moves a claimed job to the dead set with `reason`; `opts.error` (what failed) is kept with its
   * stack among the job's failed attempts.
   */
  bury(job: JobRef, reason: string, opts?: { error?: unknown }): Promise<void> {
    const error = opts?.error;
    return this.#settle(error === undefined ? { kind: "bury", job, reason } : { kind: "bury", job, reason, error });
  }

  /**
   * Hands a claimed job back: it goes back to pending (claimed next) and the attempt its claim
   * counted is given back — not a failure (no reason, not counted as a retry). A worker's stop at
   * its deadline (`stop({ timeoutMs })`, `handleSignals`, `close({ timeoutMs })`) does this.
   */
  release(job: JobRef): Promise<void> {
    return this.#settle({ kind: "release", job });
  }

  /**
   * Settles many claimed jobs — each an ack (with its `result`, as `ack` takes it), a retry, a bury
   * or a release — with one command per queue and
   * kind (at most {@link BATCH_COMMANDS} jobs each) instead of one round trip per job. Resolves
   * with one entry per settlement, in order: `null` when it was applied, or the error that refused
   * it — a `LeaseLostError` when the job's lease is lost, a `DuplicateIdError` for a settlement
   * given twice (the first is applied), an {@link EchoMQError} when the client refused it before
   * the wire (a `ResultTooLargeError` for an ack whose result is too large); the others are
   * applied all the same. It does not reject for what happens on the
   * wire: a command without a reply in time (`RequestTimeoutError`) or whose connection broke
   * (`ConnectionError`) gives that error to each of its settlements, which may have been applied.
   */
  async settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>> {
    this.#c.assertOpen();
    if (!Array.isArray(settlements)) throw new EchoMQError("options", "settleMany: settlements must be an array");
    const own = settlements.map((s) => (s !== null && typeof s === "object" ? ownSettle(s.job, s.kind) : null));
    let results: Array<Error | null>;
    try {
      results = await batch.settleMany(this.#c, settlements);
    } catch (e) {
      for (const o of own) o?.(e);
      throw e;
    }
    own.forEach((o, i) => o?.(results[i] ?? null));
    return results;
  }

  /**
   * Extends the leases of claimed jobs (of one queue) to `leaseMs` from now, in one command. A job
   * whose lease is lost refuses the whole call with `LeaseLostError` naming every such job, and
   * nothing is extended.
   */
  async extend(jobs: JobRef | readonly JobRef[], leaseMs: number): Promise<void> {
    this.#c.assertOpen();
    await leases.extend(this.#c, jobs, leaseMs);
  }

  /** Moves up to `limit` due scheduled jobs to pending; returns how many moved. */
  async promote<const Q extends string>(queue: CheckQueue<Q>, limit: number = DEFAULT_MOVE_LIMIT): Promise<number> {
    return await operations.moveDue(this.#c, "PROMOTE", this.#c.keyspace(queue), limit);
  }

  /** Hands up to `limit` jobs whose lease expired back to pending (claimed next); returns the count. */
  async reap<const Q extends string>(queue: CheckQueue<Q>, limit: number = DEFAULT_MOVE_LIMIT): Promise<number> {
    return await operations.moveDue(this.#c, "REAP", this.#c.keyspace(queue), limit);
  }

  /**
   * The sizes of `queue`'s pending, active, schedule, dead and completed sets and of its flow
   * parents waiting for their children (`waitingChildren`), read atomically.
   */
  async counts<const Q extends string>(queue: CheckQueue<Q>): Promise<Counts> {
    return await inspect.counts(this.#c, this.#c.keyspace(queue));
  }

  /** A job by id, as its row has it; `null` when there is no such job. */
  async getJob<const Q extends string>(queue: CheckQueue<Q>, id: string): Promise<JobInfo<Decoded<P, K>> | null> {
    return (await inspect.getJob(this.#c, this.#c.keyspace(queue), id)) as JobInfo<Decoded<P, K>> | null;
  }

  /**
   * One page of `queue`'s jobs in `state`, in the order the state is served: pending in claim
   * order, scheduled by due time, active by lease deadline, dead and completed most recent first
   * (a completed job with its `result` and `finishedAt`). `offset` ≥ 0,
   * `limit` 1 to 1000 (default 100). A page is read in two steps (the ids, then their rows): a job
   * that moved in between is left out.
   */
  async jobs<const Q extends string>(
    queue: CheckQueue<Q>,
    state: JobState,
    page: { offset?: number; limit?: number } = {},
  ): Promise<Array<JobInfo<Decoded<P, K>>>> {
    return (await inspect.jobs(this.#c, this.#c.keyspace(queue), state, page)) as Array<JobInfo<Decoded<P, K>>>;
  }

  /**
   * Adds a flow (docs/design/flows.md): a parent that becomes claimable once every child has
   * finished, the children in any queue (on any primary of a cluster). A child's `onFailure` says
   * what its failure (buried) does: `"fail"` (default) buries the parent at once with a reason naming
   * the child and cancels its children not yet started, `"ignore"` counts it as finished, `"remove"`
   * too without keeping its reason, `"continue"` lets the parent run at once. Each step (the
   * parent, a child) may carry `opts`: its lane, priority, attempts, name and time limit, applied
   * when the job is made (the parent's lane and priority once it becomes claimable). The whole tree
   * is checked before any wire (an `EchoMQError` of rule `flow`, `options`, `payload` or a
   * `KeyspaceError`); children's ids derive from the parent's id and their place. Children in other
   * queues are made by a relay (a worker of the parent's queue, or {@link relay}). At most
   * {@link flows.MAX_FLOW_CHILDREN} children per call and parent, 8 levels. With `open: true` more
   * may come ({@link addChildren}) until {@link seal}.
   */
  async flow<const Q extends string>(spec: FlowSpec<P> & { queue: CheckQueue<Q> }): Promise<FlowNode> {
    return await flows.flow(this.#c, spec);
  }

  /**
   * Adds children to an open parent (`flow({ …, open: true })`) that is still waiting: 1 to
   * {@link flows.MAX_FLOW_CHILDREN} per call, checked as `flow`'s before any wire, at most
   * 100,000 per parent; their ids derive from the parent's id and their places, which follow its
   * children so far (read first). Refused (`WireError`, rule `not-open`) when the parent is sealed,
   * gone or no longer waiting; `flow-place` when another call added children between the read and
   * this one (call again); `fan-in` past 100,000. Returns the children's ids. With `durable`, resolves
   * only once a replica has them (as `flow`'s `durable`).
   */
  async addChildren(parent: FlowParent, children: readonly FlowChild[], opts?: AddChildrenOptions): Promise<FlowNode[]> {
    return await flows.addChildren(this.#c, parent, children, opts);
  }

  /**
   * Seals an open parent: no more children come, and it runs once every child has finished (at
   * once when they all have). True when it sealed; false when there was nothing to seal (sealed
   * already — a one-shot `flow` is —, gone, or no parent).
   */
  async seal(parent: FlowParent): Promise<boolean> {
    return await flows.seal(this.#c, parent);
  }

  /**
   * The whole flow job `id` of `queue` belongs to (any of its jobs: the tree starts at its root
   * parent), each job with its state, result or reason; null when the job is not there. Reads only,
   * one `getJob` per job: not one snapshot of the tree.
   */
  async flowOf<const Q extends string>(queue: CheckQueue<Q>, id: string): Promise<FlowTree | null> {
    return await flowOf(this.#c, this.#c.keyspace(queue), id);
  }

  /**
   * `queue`'s side of its flows: its parents waiting for children, its outbox's length, and the
   * relay lag (how long its oldest entry no relay holds has waited). Plain reads.
   */
  async flowStats<const Q extends string>(queue: CheckQueue<Q>): Promise<FlowStats> {
    return await flowStats(this.#c, this.#c.keyspace(queue));
  }

  /**
   * The children of parent `id` (a flow's parent) with their states, results and reasons, in their
   * order; results `unknown` (a handle typed by its children's results, `mq.queue<P, R, C>`, types them).
   */
  async children<const Q extends string>(queue: CheckQueue<Q>, id: string): Promise<ChildState[]> {
    return await flows.children(this.#c, this.#c.keyspace(queue), id);
  }

  /**
   * Relays the outboxes of `queues` until stopped: flows' entries applied in their destination
   * queues. Workers will do this for the queues they serve; call it for queues nobody works.
   */
  relay(queues: readonly string[], opts?: RelayOptions): Relay {
    this.#c.assertOpen();
    return relay(this.#c, queues, opts);
  }

  /** One relay round over `queues` (see {@link relay}): the entries acknowledged. */
  async relayOnce(queues: readonly string[], opts?: RelayOptions): Promise<number> {
    this.#c.assertOpen();
    return await relayOnce(this.#c, queues, opts);
  }

  /**
   * The queue's history per minute, as the server keeps it (written by the settles themselves: any
   * process, restarted or new, reads the same minutes): jobs completed (`processed`), buried
   * (`failed`) and retried in each of the last `minutes` (default 60, at most 10080), oldest first,
   * the current minute so far last. A queue keeps `retain`'s `historyMinutes` (default 1440, a day;
   * 0: off). `latency` has the queue's wait-time (admitted or due → claimed) and run-time (claimed →
   * settled) histograms, counted by the same settles.
   *
   * @example
   * ```ts
   * const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: 6379 }] });
   * const { minutes } = await mq.metrics("mail", { minutes: 1440 });
   * const failedToday = minutes.reduce((n, m) => n + m.failed, 0);
   * ```
   */
  async metrics<const Q extends string>(queue: CheckQueue<Q>, opts?: MetricsOptions): Promise<QueueMetrics> {
    this.#c.assertOpen();
    return await readMetrics(this.#c, this.#c.keyspace(queue), opts);
  }

  /**
   * Cancels a job from any process: a job that waits (pending or scheduled) is buried now with the
   * reason `cancelled` (or `cancelled: <reason>`); a running one is buried now too, never retried, and
   * its handler's `job.signal` aborts with a `JobCancelledError` within one heartbeat of its worker,
   * wherever that runs (its late settle is refused as for a lost lease). A job that finished meanwhile
   * answers `finished`, an unknown id `missing`: neither is an error. A `cancelled` event is written.
   *
   * @example
   * ```ts
   * const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: 6379 }] });
   * const id = await mq.enqueue("exports", { account: 42 });
   * const outcome = await mq.cancel("exports", id, { reason: "customer asked" });
   * // "cancelled" | "aborting" | "finished" | "missing"
   * ```
   */
  async cancel<const Q extends string>(queue: CheckQueue<Q>, id: string, opts?: CancelOptions): Promise<CancelOutcome> {
    return await cancelJob(this.#c, this.#c.keyspace(queue), id, opts);
  }

  /**
   * Deletes a pending, scheduled, dead or completed job: `true` when it was removed, `false` when there was no
   * such job. An active job is refused with `JobActiveError` (its worker holds it; remove it once it
   * is settled).
   */
  async remove<const Q extends string>(queue: CheckQueue<Q>, id: string): Promise<boolean> {
    return await operations.remove(this.#c, this.#c.keyspace(queue), id);
  }

  /**
   * Deletes pending, scheduled, dead or completed jobs, all of `ids` in one atomic command per thousand;
   * returns how many were removed (an id with no job counts 0). An active job is refused with
   * `JobActiveError`, and then none of its command's jobs is removed. With `{ clean: true }` each
   * command's event is one `cleaned` entry in place of `removed` (wire 17).
   */
  async removeMany<const Q extends string>(
    queue: CheckQueue<Q>,
    ids: readonly string[],
    opts: RemoveOptions = {},
  ): Promise<number> {
    return await operations.removeMany(this.#c, this.#c.keyspace(queue), ids, opts);
  }

  /**
   * Runs scheduled jobs now: each of `ids` moves from the schedule to the head of pending, due now,
   * as if its time had come (a retry waiting on its backoff keeps its attempts). Each id must be
   * scheduled, else `JobNotScheduledError` names every one that is not and none moves; one atomic
   * command per thousand ids. Returns how many moved.
   */
  async runNow<const Q extends string>(queue: CheckQueue<Q>, ids: readonly string[]): Promise<number> {
    return await operations.runNow(this.#c, this.#c.keyspace(queue), ids);
  }

  /**
   * Moves dead jobs back to pending, each with a fresh attempt budget (lease tokens stay
   * monotonic): the `ids` given (each must be dead, else `JobNotDeadError` and none moves), or all
   * of them — at most `limit` — oldest first, a thousand per command. With `keepAttempts` each keeps
   * its attempts, which its next claim counts on (wire 17). Returns how many moved.
   */
  async requeueDead<const Q extends string>(
    queue: CheckQueue<Q>,
    opts: RequeueOptions = {},
  ): Promise<number> {
    return await operations.requeueDead(this.#c, this.#c.keyspace(queue), opts);
  }

  /**
   * Pauses `queue` on the server: every worker's claims hand out nothing (waiting ones keep
   * waiting) until `resume`; the queue still admits jobs. `true` when it was running. With
   * `{ lane }`, pauses that lane only: claims serve the queue's other lanes meanwhile.
   */
  async pause<const Q extends string, const L extends string = string>(
    queue: CheckQueue<Q>,
    opts?: { lane?: CheckLane<L> },
  ): Promise<boolean> {
    return await operations.setPaused(this.#c, "PAUSE", this.#c.keyspace(queue), opts?.lane);
  }

  /**
   * Resumes a paused `queue` (or, with `{ lane }`, that lane); waiting workers claim at once.
   * `true` when it was paused.
   */
  async resume<const Q extends string, const L extends string = string>(
    queue: CheckQueue<Q>,
    opts?: { lane?: CheckLane<L> },
  ): Promise<boolean> {
    return await operations.setPaused(this.#c, "RESUME", this.#c.keyspace(queue), opts?.lane);
  }

  /**
   * A page of `queue`'s lanes, busiest (most ready jobs) first, and how many it has: each lane's
   * backlog, held jobs, pause, limits in force (its own or every lane's default) and park. The
   * default lane shows as `name: null` once it has a state. `offset` ≥ 0, `limit` 1 to 1000
   * (default 100).
   */
  async lanes<const Q extends string>(queue: CheckQueue<Q>, page: { offset?: number; limit?: number } = {}): Promise<LanePage> {
    return await lanes.lanes(this.#c, this.#c.keyspace(queue), page);
  }

  /** Whether `queue` is paused. */
  async isPaused<const Q extends string>(queue: CheckQueue<Q>): Promise<boolean> {
    return await inspect.isPaused(this.#c, this.#c.keyspace(queue));
  }

  /**
   * Sets `queue`'s limits, which every claim of every worker of every process obeys on the server:
   * `concurrency`, the most jobs active at once; `rate`, at most `max` claims per `perMs` on average
   * and `burst` (default 1) at once — the generic cell-rate algorithm, exact, with no window edge
   * that lets 2× through. A field left out keeps its limit, `null` removes it; a bad value is an
   * `EchoMQError` (rule `limit`) naming it, before any wire. Returns the limits now in force.
   * With `{ lane }` the limits are that lane's own (`lane: null`: the default lane's); with
   * `{ perLane: true }`, the default of every lane without its own. A lane's limits hold within
   * the queue's.
   *
   * @example
   * ```ts ignore
   * await mq.limit("emails", { concurrency: 5, rate: { max: 10, perMs: 1000 } });
   * await mq.limit("emails", { rate: null }); // concurrency 5 stays
   * await mq.limit("emails", { concurrency: 1 }, { perLane: true }); // one at a time per tenant
   * await mq.limit("emails", { concurrency: 3 }, { lane: "acme" }); // but acme three
   * ```
   */
  async limit<const Q extends string, const L extends string = string>(
    queue: CheckQueue<Q>,
    opts: LimitOptions,
    target?: LimitTarget<L>,
  ): Promise<QueueLimits> {
    return await limits.limit(this.#c, this.#c.keyspace(queue), opts, target as LimitTarget | undefined);
  }

  /**
   * `queue`'s limits (`limit`) and its park (`penalize`), as the server holds them; with a
   * target, that lane's own limits and park, or every lane's default.
   */
  async limits<const Q extends string, const L extends string = string>(
    queue: CheckQueue<Q>,
    target?: LimitTarget<L>,
  ): Promise<QueueLimits> {
    return await limits.limits(this.#c, this.#c.keyspace(queue), target as LimitTarget | undefined);
  }

  /**
   * Parks `queue` — or, with `{ lane }`, that lane only — for `ms`: claims hand out nothing of it
   * until then (a remote service said "slow down"; a handler throws `RateLimitedError` for the
   * same from inside, which parks its job's lane). A longer park in force is kept. Returns when
   * the park ends (ms since the epoch, server clock).
   */
  async penalize<const Q extends string, const L extends string = string>(
    queue: CheckQueue<Q>,
    ms: number,
    opts?: { lane?: CheckLane<L> },
  ): Promise<number> {
    return await limits.penalize(this.#c, this.#c.keyspace(queue), ms, opts?.lane);
  }

  /**
   * Records a claimed job's progress (any JSON value, at most 64 KiB encoded), token-checked like a
   * settle: a lost lease is refused with `LeaseLostError`. `getJob` shows it.
   */
  async progress(job: JobRef, value: unknown): Promise<void> {
    this.#c.assertOpen();
    await leases.progress(this.#c, job, value);
  }

  /**
   * Appends `line` to a claimed job's log (a handler's `job.log`), token-checked like a settle: a
   * lost lease is refused with `LeaseLostError`, nothing logged. The job keeps its newest 1000
   * lines of at most 1024 bytes each (a longer line is cut), and loses them with its row.
   */
  async log(job: JobRef, line: string): Promise<void> {
    this.#c.assertOpen();
    await logs.appendLog(this.#c, job, line);
  }

  /**
   * Finds `queue`'s jobs: a string matches a job whose id, dedup key or name is it, or whose
   * payload's JSON text contains it (`{ id, dedupKey, name, payload }`: every field given must
   * match). An id or a dedup key is one read; a name or a payload is a scan of the queue's jobs
   * (pending, scheduled, active, dead, completed), at most `scan` rows per call (default 1,000, at
   * most 10,000): the answer says how many it `scanned`, and its `cursor` (`null`: the end) goes on.
   */
  async findJobs<const Q extends string>(queue: CheckQueue<Q>, query: FindQuery, opts?: FindOptions): Promise<FoundJobs<Decoded<P, K>>> {
    return (await search.findJobs(this.#c, this.#c.keyspace(queue), query, opts)) as FoundJobs<Decoded<P, K>>;
  }

  /** A job's log, oldest line first: its newest 1000 lines, and how many it logged in all. */
  async jobLogs<const Q extends string>(queue: CheckQueue<Q>, id: string): Promise<JobLogs> {
    return await logs.jobLogs(this.#c, this.#c.keyspace(queue), id);
  }

  /**
   * Sets `queue`'s retention and applies it at once: how many dead jobs it keeps (`deadMax`, 0: no
   * limit; default {@link DEAD_MAX_DEFAULT}) and for how long (`deadAgeMs`, 0: no limit; default
   * 30 days); how many completed jobs it keeps with their results (`completedMax`, default
   * {@link COMPLETED_MAX_DEFAULT}; **0: none**, an ack deletes the job) and for how long
   * (`completedAgeMs`, 0: no limit; default a day); how many entries its events stream keeps
   * (`eventsMax`, default {@link EVENTS_MAX_DEFAULT}; 0: no events written, the stream deleted);
   * how many minutes of per-minute history it keeps (`historyMinutes`, up to 10080; default 1440;
   * 0: none written, the history deleted: `metrics`). A setting left out keeps the value in force (read from the queue first; its default when never
   * set). The oldest dead and completed jobs past the limits are deleted now, a thousand of each
   * per command until none is left past them (later acks, buries and claims keep trimming).
   * Returns how many dead and completed jobs it deleted. Two `retain` calls racing each leave all
   * six settings of one of them (never a mix the user did not write) — the settings are written
   * whole, each call's as it read them.
   *
   * @example
   * ```ts ignore
   * await mq.retain("emails", { completedMax: 0 }); // keep no completed job: acks delete them
   * await mq.retain("emails", { completedMax: 10_000, completedAgeMs: 7 * 86_400_000 });
   * ```
   */
  async retain<const Q extends string>(queue: CheckQueue<Q>, opts: Partial<Retention>): Promise<number> {
    return await operations.retain(this.#c, this.#c.keyspace(queue), opts);
  }

  /** `queue`'s retention in force (see {@link retain}): each setting as stored, or its default. */
  async retention<const Q extends string>(queue: CheckQueue<Q>): Promise<Retention> {
    return await operations.retention(this.#c, this.#c.keyspace(queue));
  }

  /**
   * Deletes `queue` entirely — its schedulers, its jobs (pending, scheduled, dead, completed) a thousand per
   * command, then its keys, `meta` included (it no longer shows in `queues()`). Refused with `JobActiveError` while a
   * worker holds one of its jobs (stop the workers first). Not atomic across commands: jobs
   * admitted meanwhile are deleted too. Returns how many schedulers and jobs were deleted.
   */
  async drop<const Q extends string>(queue: CheckQueue<Q>): Promise<number> {
    return await operations.drop(this.#c, this.#c.keyspace(queue));
  }

  /**
   * Makes or updates scheduler `name` of `queue` (repeatable jobs): every `everyMs` ms, or on a cron
   * pattern in time zone `tz` (IANA, default UTC; DST as croner computes it). Its jobs carry
   * `payload`; workers of the queue fire it (no leader) and the server admits exactly one job per
   * run, however many workers race. Upserting the same spec again changes only the payload and
   * the missed-tick policy (its next run stays: safe on every process start); another spec takes
   * effect from its own next run. Returns the next run in force (a `Date`; times are this machine's
   * clock when computed here). Bad input is a `SchedulerOptionError` naming the option, before
   * anything is sent. `lane`, `priority` and `timeoutMs` are the options of every job it admits,
   * checked as `enqueue`'s (a bad one is an `EchoMQError` (`options`) before anything is sent):
   * `upsertScheduler(q, "report", { everyMs: 3600_000 }, { payload, lane: tenant })` puts a
   * tenant's repeatable job in the tenant's lane. An upsert replaces them, as it does the payload.
   */
  async upsertScheduler<const Q extends string, const L extends string = string, const N extends string = string>(
    queue: CheckQueue<Q>,
    name: CheckName<N, "scheduler name">,
    spec: RepeatSpec,
    opts: SchedulerOptions<Payload<P, K>, L>,
  ): Promise<Date> {
    return await schedulers.upsertScheduler(this.#c, this.#c.keyspace(queue), name, spec, opts as unknown as SchedulerOptions<P>);
  }

  /**
   * `queue`'s schedulers, soonest first: name, spec, next run, last run, runs, policy, payload, and
   * the lane, priority and time limit of its jobs when set.
   */
  async schedulers<const Q extends string>(queue: CheckQueue<Q>): Promise<Array<SchedulerInfo<Decoded<P, K>>>> {
    return (await schedulers.schedulers(this.#c, this.#c.keyspace(queue))) as Array<SchedulerInfo<Decoded<P, K>>>;
  }

  /** Deletes scheduler `name` of `queue` (its jobs already admitted stay): `true` when it existed. */
  async removeScheduler<const Q extends string, const N extends string = string>(
    queue: CheckQueue<Q>,
    name: CheckName<N, "scheduler name">,
  ): Promise<boolean> {
    return await schedulers.removeScheduler(this.#c, this.#c.keyspace(queue), name);
  }

  /**
   * Every queue on the server, or on every primary of the cluster: the queues whose `meta` exists
   * (written on first use). Sorted. A walk of the whole keyspace (SCAN): for a page that asks
   * often, or a keyspace of millions of jobs, keep the names yourself with {@link scanQueues}. A
   * `meta` whose name is not UTF-8 is left out (scanQueues reports it).
   */
  async queues(): Promise<string[]> {
    this.#c.assertOpen();
    return await inspect.queues(this.#c);
  }

  /**
   * Queue discovery a step at a time: each page is one SCAN step (about `count` keys examined,
   * default 1000) over every primary in turn, so the caller sets the pace — the dashboard walks
   * the keyspace in the background at a bounded rate and answers from what it found. A name may
   * show on more than one page; `meta` keys whose name is not UTF-8 come as `unreadable`, escaped.
   *
   * @example
   * ```ts
   * const mq = await EchoMQ.connect({ url: "valkey://127.0.0.1:6379" });
   * const names = new Set<string>();
   * for await (const page of mq.scanQueues({ count: 500 })) {
   *   for (const n of page.names) names.add(n);
   *   await new Promise((r) => setTimeout(r, 10)); // at most 100 steps a second
   * }
   * ```
   */
  scanQueues(opts: { count?: number } = {}): AsyncGenerator<QueueScanPage, void, undefined> {
    this.#c.assertOpen();
    const count = integerIn("scanQueues: count", opts.count ?? 1000, 1, 100_000, refuse("options"));
    return inspect.scanQueues(this.#c, count);
  }

  /**
   * `queue`'s counts (with its flow parents waiting for their children, `waitingChildren`), paused
   * state, totals (admitted, acked, retried, buried, claims) and retention, read atomically.
   */
  async stats<const Q extends string>(queue: CheckQueue<Q>): Promise<QueueStats> {
    return await inspect.stats(this.#c, this.#c.keyspace(queue));
  }

  /**
   * The workers connected to the server (every primary of a cluster), by queue, then oldest
   * first; only `queue`'s when given. Each worker names its claim connection after itself (id,
   * queue, concurrency, host, pid, start, and this client's `clientName` as its app), so this is
   * one `CLIENT LIST` per primary and shows only workers alive now: a stopped or crashed worker's
   * connection is gone. Needs `+client|list` (else a `WireError` of rule `noperm`).
   */
  async workers<const Q extends string>(queue?: CheckQueue<Q>): Promise<WorkerInfo[]> {
    this.#c.assertOpen();
    if (queue !== undefined) this.#c.keyspace(queue);
    return await listWorkers(this.#c as ClientContext<unknown>, queue);
  }

  /**
   * What a worker needs of this client: claims on a connection of its own, settles, extensions —
   * the client `work` runs a {@link Worker} on. Wrap its methods to observe a worker (the
   * reliability suites record every claim and settle this way).
   */
  workerClient(): WorkerClient<P> {
    return workerClient(this.#c, this);
  }

  /**
   * Starts a worker on `queue`: it claims jobs (waiting on the server when none is ready), runs
   * `handler`, extends each running job's lease, acks on success — with the handler's return value
   * as the job's result (`JSON.stringify`; `undefined`: none), kept with the completed job while
   * the queue keeps completed jobs (`retain`) — retries with backoff on a throw, and buries after
   * `maxAttempts`. A result whose JSON passes `MAX_PAYLOAD_BYTES` fails the attempt as a throw would
   * (`ResultTooLargeError`). Given a processor module's URL instead of a function, its default
   * export runs in a pool of worker threads or child processes (`sandbox`, `memoryLimitMb`): a
   * sandbox that crashes fails only its job's attempt (`SandboxCrashError`).
   *
   * @example
   * ```ts ignore
   * mq.work("thumbs", async (job) => ({ url: await render(job.payload) }));
   * // later: (await mq.getJob("thumbs", id))?.result → { url: "…" }
   * ```
   */
  work<const Q extends string, R = unknown>(
    queue: CheckQueue<Q>,
    handler: Handler<Decoded<P, K>, R> | URL,
    opts: WorkerOptions = {},
  ): Worker<Decoded<P, K>> {
    this.#c.assertOpen();
    this.#c.keyspace(queue);
    const worker: Worker<P> = new Worker<P>(
      this.workerClient(),
      queue as string,
      handler as Handler<P> | URL,
      opts,
      () => this.#workers.delete(worker as unknown as Worker<unknown>),
    );
    this.#workers.add(worker as unknown as Worker<unknown>);
    return worker as unknown as Worker<Decoded<P, K>>;
  }

  /**
   * `queue`'s events, as they happen: one item per job of each entry of the queue's events stream
   * (written by the server in the same command as the transition, so none is missed and none is
   * made up), `{ id, type, jobId?, attempts?, into?, reason?, progress?, lane?, until?, name? }`
   * typed by `type` ({@link QueueEventItem}). From `"now"` (default), `"start"` (the oldest entry
   * kept: the stream keeps the last 10,000 by default, `retain`'s `eventsMax`) or an id: an item's
   * `id` resumes exactly after it. When entries after the starting point were trimmed before they
   * were read, the first item is `{ type: "gap", from, first }`. One reader per queue per client
   * (`XREAD BLOCK` on a connection of its own) serves every iterator and `result()` of the queue;
   * it reads on from its last id after a reconnect or failover. Each iterator holds at most 10,000
   * unread items: a consumer that slow reads on from the stream (a gap when it trimmed them
   * meanwhile). `break`, the `signal` or `close()` ends the iteration.
   *
   * @example
   * ```ts ignore
   * for await (const e of mq.events("mail", { from: "start" })) {
   *   if (e.type === "dead") console.log(e.jobId, e.reason);
   * }
   * ```
   */
  events<const Q extends string>(queue: CheckQueue<Q>, opts: EventsOptions = {}): AsyncIterable<QueueEventItem> {
    return events(this.#c, this.#c.keyspace(queue), opts);
  }

  /**
   * The latest `limit` events of `queue` (default 50, at most 1000), newest first: one read of the
   * stream (`XREVRANGE`), no wait — what the dashboard's events tail shows. Items as
   * {@link events} yields them.
   */
  async recentEvents<const Q extends string>(queue: CheckQueue<Q>, opts: { limit?: number } = {}): Promise<QueueEventItem[]> {
    const ks = this.#c.keyspace(queue);
    const limit = integerIn("recentEvents: limit", opts?.limit ?? 50, 1, 1000, refuse("options"));
    return await recentEvents(this.#c.conn, ks, limit);
  }

  /**
   * Job `id`'s events among the newest `scan` entries of `queue`'s events stream (default
   * {@link JOB_EVENTS_SCAN}, at most {@link MAX_JOB_EVENTS_SCAN}), newest first: the items naming
   * the job, and the `deduplicated` items of calls that folded into it. One read (`XREVRANGE`), no
   * wait, and bounded: older entries are not searched — `searched` says how many were, `complete`
   * whether that was every entry the stream keeps. What a job's page in the dashboard lists.
   *
   * @example
   * ```ts ignore
   * const { events, complete } = await mq.jobEvents("mail", id);
   * for (const e of events) console.log(e.id, e.type);
   * ```
   */
  async jobEvents<const Q extends string>(queue: CheckQueue<Q>, id: string, opts: { scan?: number } = {}): Promise<JobEvents> {
    const ks = this.#c.keyspace(queue);
    assertJobId(id);
    const scan = integerIn("jobEvents: scan", opts?.scan ?? JOB_EVENTS_SCAN, 1, MAX_JOB_EVENTS_SCAN, refuse("options"));
    return await jobEvents(this.#c.conn, ks, id, scan);
  }

  /**
   * The result of job `id` of `queue`, once it finished: what its handler returned (JSON, parsed;
   * `undefined` when it returned nothing, or when the queue keeps no completed jobs). A dead job
   * rejects with {@link JobFailedError} (its reason); a job that does not exist, or is removed
   * while waited for, with {@link JobNotFoundError}. A job not finished yet is waited for on the
   * server, through the queue's events reader (no polling; a queue whose events are off,
   * `eventsMax` 0, is polled, every 50 ms backing off to every second): `timeoutMs` ends the wait
   * with {@link ResultTimeoutError}, `signal` with its reason.
   *
   * @example
   * ```ts ignore
   * const id = await mq.enqueue("resize", { url });
   * const thumb = await mq.result("resize", id, { timeoutMs: 30_000 });
   * ```
   */
  async result<const Q extends string>(queue: CheckQueue<Q>, id: string, opts: ResultOptions = {}): Promise<unknown> {
    return await result(this.#c, this.#c.keyspace(queue), id, opts);
  }

  /**
   * Stops every worker of this client (letting in-flight jobs finish and settle), then
   * disconnects. With `timeoutMs`, handlers still running then are given up as `stop({ timeoutMs })`
   * does (signals aborted, jobs handed back), so `close` returns even when a handler never does.
   * Called from inside a handler, it resolves once the other jobs are settled; the handler's own
   * job settles when the handler returns, and the connection closes after that.
   */
  async close(opts: StopOptions = {}): Promise<void> {
    if (this.#c.closed) return;
    const inside = Worker.current();
    await Promise.all([closeReaders(this.#c), ...[...this.#workers].map((w) => w.stop(opts))]);
    if (inside === null) this.#c.close();
    else void inside.then(() => this.#c.close());
  }
}
