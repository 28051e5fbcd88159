/**
 * The EchoMQ backend of BullMQ 6 (`IQueueBackend`): a BullMQ `Queue`, `Worker`, `Job` or
 * `QueueEvents` built with it keeps its jobs in EchoMQ's keyspace (`emq:{<queue>}:…`, one slot per
 * queue) through EchoMQ's verbs, on the native module or the Lua twin. This class is the facade:
 * each operation delegates to the file of its concept (`admit.ts`, `claims.ts`, `reads.ts`,
 * `queue_ops.ts`, `blocking.ts`) or is refused by name (`refused.ts`); docs/design/bullmq.md maps
 * every operation.
 *
 * @module
 */
import { EventEmitter } from "node:events";
import type {
  DependenciesOpts,
  IQueueBackend,
  JobJson,
  JobProgress,
  JobsOptions,
  JobState as BullJobState,
  JobType,
  KeepJobs,
  KeysMap,
  MinimalJob,
  MoveToDelayedOpts,
  MoveToWaitingChildrenOpts,
  ParentKeyOpts,
  RepeatableOptions,
  RetryJobOpts,
  RetryOptions,
  StreamReadRaw,
} from "bullmq";
import { settleMany } from "../client/batch.ts";
import { joinRelay, type Relay } from "../client/relay.ts";
import type { ClientContext } from "../client/context.ts";
import type { Keyspace } from "../keyspace/mod.ts";
import * as admit from "./admit.ts";
import { EventsWait, JobWait } from "./blocking.ts";
import * as claims from "./claims.ts";
import * as flows from "./flows.ts";
import { Locks } from "./locks.ts";
import * as metrics from "./metrics.ts";
import * as ops from "./queue_ops.ts";
import * as reads from "./reads.ts";
import * as schedulers from "./schedulers.ts";
import { refuse, WHY } from "./refused.ts";
import type { Scope } from "./scope.ts";
import type { SharedClient } from "./shared.ts";

/** BullMQ's names of a queue's keys, as its own backend builds them (`QueueKeys`): what `keys` answers. */
const KEY_TYPES = [
  "",
  "active",
  "wait",
  "waiting-children",
  "paused",
  "id",
  "delayed",
  "prioritized",
  "stalled-check",
  "completed",
  "failed",
  "stalled",
  "repeat",
  "limiter",
  "meta",
  "events",
  "pc",
  "marker",
  "de",
] as const;

/** How a backend was made: its factory's connection, the queue, BullMQ's options for it. */
export interface BackendParts {
  /** The factory's shared connection. */
  readonly shared: SharedClient;
  /** BullMQ's queue name. */
  readonly name: string;
  /** BullMQ's key prefix (`bull` by default). */
  readonly prefix: string;
  /** The EchoMQ queue it maps to. */
  readonly queue: string;
  /** The lease of a claim (BullMQ's `lockDuration`). */
  readonly lockMs: number;
  /** Whether this backend owns a reference to the connection (a `forQueue` sibling does not). */
  readonly owns: boolean;
  /** Whether it reads events (`QueueEvents`). */
  readonly blocking: boolean;
  /** A worker's `limiter` (BullMQ's rate limit of the queue): set as the queue's LIMIT on its first claim. */
  readonly limiter?: { readonly max: number; readonly duration: number };
  /** The factory's queue naming, for `forQueue`. */
  readonly queueOf: (name: string, prefix: string) => string;
}

/** One BullMQ queue on EchoMQ. */
export class EchoMQQueueBackend extends EventEmitter implements IQueueBackend {
  readonly #p: BackendParts;
  readonly #s: Scope;
  readonly #wait: JobWait;
  readonly #events: EventsWait;
  readonly #firer: schedulers.Firer;
  #relay: Promise<Relay> | undefined;
  #closing: Promise<void> | undefined;
  #ready: Promise<void> | undefined;
  #limited: Promise<void> | undefined;

  /** A backend of `parts`. */
  constructor(parts: BackendParts) {
    super();
    this.#p = parts;
    if (parts.owns) parts.shared.acquire();
    let opened: Promise<{ c: ClientContext<unknown>; ks: Keyspace }> | null = null;
    this.#s = {
      queue: parts.queue,
      lockMs: parts.lockMs,
      locks: new Locks(),
      on: () => {
        if (this.#closing !== undefined && !parts.owns) return parts.shared.get().then((c) => ({ c, ks: c.keyspace(parts.queue) }));
        return opened ??= parts.shared.get().then((c) => ({ c, ks: c.keyspace(parts.queue) }));
      },
    };
    this.#wait = new JobWait(this.#s);
    this.#events = new EventsWait(this.#s, this.qualifiedName + ":events");
    // a claiming backend (a Worker's) fires the queue's due schedulers; failures go to the Worker's `error`
    this.#firer = new schedulers.Firer(this.#s, (e) => this.#report(e));
  }

  // ---- lifecycle ----

  /** Resolves once the connection is open (and emits `ready`). */
  waitUntilReady(): Promise<void> {
    // a FlowProducer's backend has no queue (its name is ''): only the connection
    const open = this.#p.queue === "" ? this.#p.shared.get() : this.#s.on();
    return this.#ready ??= open.then(async () => {
      if (this.#p.blocking) await this.#events.mark();
      this.emit("ready");
    });
  }

  /** Closes: jobs still held are released (their attempt given back), waits end, the connection is let go. */
  close(force?: boolean): Promise<void> {
    void force;
    return this.#closing ??= (async () => {
      // the jobs held, and one a wait claimed that no fetch took: handed back, their attempt given back
      const refs = this.#s.locks.all().map((h) => h.ref);
      this.#s.locks.clear();
      await this.#firer.stop();
      await (await this.#relay?.catch(() => undefined))?.stop();
      for (const job of this.#wait.kept?.jobs ?? []) if (!(job instanceof Error)) refs.push(job);
      this.#wait.kept = null;
      if (refs.length > 0) {
        const { c } = await this.#s.on();
        await settleMany(c, refs.map((job) => ({ kind: "release" as const, job }))).catch(() => undefined);
      }
      await this.#wait.interrupt();
      await this.#wait.close();
      await this.#events.close();
      if (this.#p.owns) await this.#p.shared.release();
      this.emit("close");
    })();
  }

  /**
   * A claiming backend (a `Worker`'s) serves its queue as EchoMQ's worker does: it fires the due job
   * schedulers and relays the queue's outbox (a flow's children in other queues, their outcomes back).
   */
  #serve(): void {
    this.#firer.start();
    this.#relay ??= this.#s.on().then(({ c }) => joinRelay(c, this.#p.queue, { onError: (e) => this.#report(e) }));
  }

  /** A background failure, to the `Worker`'s `error` event when it listens. */
  #report(e: unknown): void {
    if (this.listenerCount("error") > 0) this.emit("error", e);
  }

  /** Truthy once {@link close} began. */
  get closing(): Promise<void> | undefined {
    return this.#closing;
  }

  /** Ends the blocking waits (the connection stays until {@link close}). */
  async disconnect(): Promise<void> {
    await this.#wait.interrupt();
    await this.#events.close();
  }

  /** A no-op: EchoMQ names its connections itself (a worker's claim line carries its identity). */
  async setName(name: string): Promise<void> {
    void name;
  }

  /** The shortest wait a worker may ask for, seconds. */
  get minimumBlockTimeout(): number {
    return 0.001;
  }

  /** The longest wait a worker asks for, seconds (BullMQ's Redis default). */
  get maximumBlockTimeout(): number {
    return 10;
  }

  // ---- identity ----

  /** A sibling on queue `queueName` sharing this backend's connection. */
  forQueue(queueName: string, prefix?: string): IQueueBackend {
    const p = prefix ?? this.#p.prefix;
    const { limiter: _, ...parts } = this.#p;
    return new EchoMQQueueBackend({ ...parts, name: queueName, prefix: p, queue: this.#p.queueOf(queueName, p), owns: false, blocking: false });
  }

  /** BullMQ's qualified name, `<prefix>:<queue>`. */
  get qualifiedName(): string {
    return `${this.#p.prefix}:${this.#p.name}`;
  }

  /** BullMQ's key names of the queue (names only: EchoMQ's keys are `emq:{<queue>}:…`). */
  get keys(): KeysMap {
    return Object.fromEntries(KEY_TYPES.map((t) => [t, t === "" ? `${this.qualifiedName}:` : `${this.qualifiedName}:${t}`])) as KeysMap;
  }

  /** `<qualifiedName>:<type>`, as BullMQ builds it (a job's is its parent reference). */
  toKey(type: string): string {
    return `${this.qualifiedName}:${type}`;
  }

  /** The inverse of {@link toKey} for a job: `<prefix>:<queue>:<id>`. */
  parseNodeKey(key: string): { prefix: string; queueName: string; id: string } {
    const last = key.lastIndexOf(":");
    const first = key.indexOf(":");
    return { prefix: key.slice(0, first), queueName: key.slice(first + 1, last), id: key.slice(last + 1) };
  }

  /** BullMQ's client name of the queue. */
  clientName(suffix = ""): string {
    return `${this.#p.prefix}:${btoa(this.#p.name)}${suffix}`;
  }

  // ---- adding ----

  /** ENQUEUE (or SCHEDULE, delayed) of one job: its id. */
  addJob(job: JobJson, jobId: string, parentKeyOpts?: ParentKeyOpts): Promise<string> {
    return admit.addJob(this.#s, job, jobId, parentKeyOpts);
  }

  /** The jobs' admissions, together: their ids in order. */
  addJobs(entries: { job: JobJson; jobId: string; parentKeyOpts?: ParentKeyOpts }[]): Promise<string[]> {
    return admit.addJobs(this.#s, entries);
  }

  /** A tree of depth 1 as one FLOW on the parent's queue (a lone job: an add); deeper trees refused. */
  addFlow(entries: flows.FlowEntry[]): Promise<[Error | null, string | number][]> {
    return flows.addFlow(entries, this.#p.queueOf, (queue) => this.#scopeOf(queue), (s, job, id) => admit.addJob(s, job, id));
  }

  /** A scope on EchoMQ queue `queue` (this one's, or a flow's other queue), for admissions. */
  #scopeOf(queue: string): Scope {
    if (queue === this.#p.queue) return this.#s;
    return { queue, lockMs: this.#p.lockMs, locks: new Locks(), on: () => this.#p.shared.get().then((c) => ({ c, ks: c.keyspace(queue) })) };
  }

  /** SCHEDULER of the template (an upsert); a run due now fired at once: its job's id and delay. */
  addJobScheduler(
    jobSchedulerId: string,
    nextMillis: number,
    templateData: string,
    templateOpts: JobsOptions,
    opts: RepeatableOptions,
    delayedJobOpts: JobsOptions,
  ): Promise<[string, number]> {
    void delayedJobOpts;
    return schedulers.addJobScheduler(this.#s, jobSchedulerId, nextMillis, templateData, templateOpts, opts as schedulers.BullRepeat);
  }

  // ---- the worker's path ----

  /** CLAIM of one job for `lockDuration`, held under `token` (a job a wait claimed first). */
  async moveToActive(token: string, name?: string): Promise<any[]> {
    if (name) this.#s.workerName = name; // the fetches after a settle (fetchNext) claim for it too
    if (this.#closing === undefined) this.#serve();
    if (this.#p.limiter !== undefined) await (this.#limited ??= ops.setLimiter(this.#s, this.#p.limiter));
    const kept = this.#wait.kept;
    this.#wait.kept = null;
    if (kept !== null) return await claims.nextOf(this.#s, kept, token);
    return await claims.moveToActive(this.#s, token);
  }

  /** ACK with the return value. */
  moveToCompleted<T = any, R = any, N extends string = string>(
    job: MinimalJob<T, R, N>,
    returnValue: R,
    removeOnComplete: boolean | number | KeepJobs,
    token: string,
    fetchNext: boolean,
  ): Promise<{ result: void | any[]; finishedOn: number }> {
    return claims.moveToCompleted(this.#s, job.id!, returnValue, removeOnComplete, token, fetchNext && this.#closing === undefined);
  }

  /** BURY with the reason and the stack. */
  moveToFailed<T = any, R = any, N extends string = string>(
    job: MinimalJob<T, R, N>,
    failedReason: string,
    removeOnFail: boolean | number | KeepJobs,
    token: string,
    fetchNext: boolean,
    fieldsToUpdate?: Record<string, any>,
  ): Promise<{ result: void | any[]; finishedOn: number }> {
    return claims.moveToFailed(this.#s, job.id!, failedReason, removeOnFail, token, fetchNext && this.#closing === undefined, fieldsToUpdate);
  }

  /** RETRY due at `timestamp + delay` of a held job. */
  moveToDelayed(jobId: string, timestamp: number, delay: number, token?: string, opts?: MoveToDelayedOpts): Promise<void | any[]> {
    return claims.moveToDelayed(this.#s, jobId, timestamp, delay, token, opts as { fieldsToUpdate?: Record<string, unknown>; fetchNext?: boolean });
  }

  /** Refused: flows are not mapped yet. */
  moveToWaitingChildren(jobId: string, token: string, opts?: MoveToWaitingChildrenOpts): Promise<boolean> {
    void [jobId, token, opts];
    return Promise.reject(refused("moveToWaitingChildren", WHY.flows));
  }

  /** RELEASE: back to pending, the attempt given back. */
  moveJobFromActiveToWait(jobId: string, token?: string): Promise<number> {
    return claims.release(this.#s, jobId, token);
  }

  /** RETRY with no delay of a held job (LIFO or not: EchoMQ puts it at the head of pending). */
  retryJob(jobId: string, lifo: boolean, token?: string, opts?: RetryJobOpts): Promise<void> {
    void lifo;
    return claims.retryJob(this.#s, jobId, token, (opts as { fieldsToUpdate?: Record<string, unknown> } | undefined)?.fieldsToUpdate);
  }

  /** REQUEUE of a failed job, its attempts kept unless `opts` resets them; a completed one is refused. */
  retryFinishedJob<T = any, R = any, N extends string = string>(job: MinimalJob<T, R, N>, state: "failed" | "completed", opts?: RetryOptions): Promise<void> {
    return ops.retryFinished(this.#s, job.id!, state, opts?.resetAttemptsMade === true || opts?.resetAttemptsStarted === true);
  }

  /** RUN of one delayed job. */
  promote(jobId: string): Promise<void> {
    return ops.promote(this.#s, jobId);
  }

  /** REAP of expired leases: the ids moved back to wait. */
  moveStalledJobsToWait(): Promise<string[]> {
    return ops.reapStalled(this.#s);
  }

  /** REQUEUE of failed jobs (with `timestamp`: failed at or before it; completed: refused). */
  retryFinishedJobs(state?: "completed" | "failed", count?: number, timestamp?: number): Promise<number> {
    return ops.retryFinishedMany(this.#s, state ?? "failed", count, timestamp);
  }

  /** RUN of delayed jobs. */
  promoteJobs(count?: number): Promise<number> {
    return ops.promoteJobs(this.#s, count);
  }

  /** PAUSE or RESUME. */
  pause(pause: boolean): Promise<void> {
    return ops.pause(this.#s, pause);
  }

  /** REMOVE of the waiting (and delayed) jobs. */
  drain(delayed: boolean): Promise<void> {
    return ops.drain(this.#s, delayed);
  }

  /** REMOVE of a state's jobs older than `timestamp`. */
  cleanJobsByState(state: string, timestamp: number, limit?: number): Promise<string[]> {
    return ops.clean(this.#s, state, timestamp, limit);
  }

  /** DROP (refused while a job is active). */
  obliterate(opts: { force: boolean; count: number }): Promise<number> {
    return ops.obliterate(this.#s, opts.force);
  }

  /** 0: EchoMQ writes a row and its state's set in one command, so no row is orphaned. */
  async removeOrphanedJobs(count?: number, limit?: number): Promise<number> {
    void [count, limit];
    return 0;
  }

  /** EXTEND of one held job: 1 extended, 0 not. */
  async extendLock(jobId: string, token: string, duration: number): Promise<number> {
    return (await claims.extendLocks(this.#s, [jobId], [token], duration)).length === 0 ? 1 : 0;
  }

  /** EXTEND of held jobs: the ids not extended. */
  extendLocks(jobIds: string[], tokens: string[], duration: number): Promise<string[]> {
    return claims.extendLocks(this.#s, jobIds, tokens, duration);
  }

  /** Refused: no verb replaces a payload. */
  updateData<T = any, R = any, N extends string = string>(job: MinimalJob<T, R, N>, data: T): Promise<void> {
    void [job, data];
    return Promise.reject(refused("updateData", WHY.noVerb));
  }

  /** PROGRESS of a held job. */
  updateProgress(jobId: string, progress: JobProgress): Promise<void> {
    return claims.updateProgress(this.#s, jobId, progress);
  }

  /** LOG of a held job: its count of lines (EchoMQ keeps the newest 1000, whatever `keepLogs`). */
  addLog(jobId: string, logRow: string, keepLogs?: number): Promise<number> {
    void keepLogs;
    return claims.addLog(this.#s, jobId, logRow);
  }

  /** Refused: no verb clears a log (it goes with its row). */
  clearLogs(jobId: string, keepLogs?: number): Promise<void> {
    void [jobId, keepLogs];
    return Promise.reject(refused("clearLogs", "no EchoMQ verb clears a job's log (it goes with the job's row)"));
  }

  /** Refused: no verb changes a delayed job's due time. */
  changeDelay(jobId: string, delay: number): Promise<void> {
    void [jobId, delay];
    return Promise.reject(refused("changeDelay", WHY.noVerb));
  }

  /** Refused: no verb changes a waiting job's priority. */
  changePriority(jobId: string, priority?: number, lifo?: boolean): Promise<void> {
    void [jobId, priority, lifo];
    return Promise.reject(refused("changePriority", WHY.noVerb));
  }

  /** REMOVE: 1 removed (or not there), 0 held by a worker. */
  remove(jobId: string, removeChildren: boolean): Promise<number> {
    return ops.removeJob(this.#s, jobId, removeChildren);
  }

  /** Refused: flows are not mapped yet. */
  removeUnprocessedChildren(jobId: string): Promise<void> {
    void jobId;
    return Promise.reject(refused("removeUnprocessedChildren", WHY.flows));
  }

  /** Refused: flows are not mapped yet. */
  removeChildDependency(jobId: string, parentKey: string): Promise<boolean> {
    void [jobId, parentKey];
    return Promise.reject(refused("removeChildDependency", WHY.flows));
  }

  /** Refused: no verb lets a deduplication key go early. */
  removeDeduplicationKey(deduplicationId: string, jobId: string): Promise<number> {
    void [deduplicationId, jobId];
    return Promise.reject(refused("removeDeduplicationKey", WHY.dedupKeys));
  }

  /** Refused: no verb lets a deduplication key go early. */
  deleteDeduplicationKey(deduplicationId: string): Promise<number> {
    void deduplicationId;
    return Promise.reject(refused("deleteDeduplicationKey", WHY.dedupKeys));
  }

  /** null: EchoMQ fires a scheduler's runs itself (TICK), so BullMQ's worker has no next run to add. */
  async updateJobSchedulerNextMillis(): Promise<string | null> {
    return null;
  }

  /** UNSCHEDULE: 0 removed, 1 there was none (its jobs already admitted stay). */
  removeJobScheduler(jobSchedulerId: string): Promise<number> {
    return schedulers.removeJobScheduler(this.#s, jobSchedulerId);
  }

  /** The scheduler's fields (BullMQ's) and its next run. */
  getJobScheduler(id: string): Promise<[any, string | null]> {
    return schedulers.getJobScheduler(this.#s, id);
  }

  /** Whether the queue has a scheduler of that id. */
  isJobScheduler(id: string): Promise<boolean> {
    return schedulers.isJobScheduler(this.#s, id);
  }

  /** The scheduler's fields, as BullMQ names them ({} when there is none). */
  getJobSchedulerData(key: string): Promise<Record<string, string>> {
    return schedulers.getJobSchedulerData(this.#s, key);
  }

  /** `[id, next, …]` of the schedulers by next run. */
  getJobSchedulersRange(start: number, end: number, asc: boolean): Promise<string[]> {
    return schedulers.getJobSchedulersRange(this.#s, start, end, asc);
  }

  /** How many schedulers the queue has. */
  getJobSchedulersCount(): Promise<number> {
    return schedulers.getJobSchedulersCount(this.#s);
  }

  // ---- reads ----

  /** The job's state from its row. */
  getState(jobId: string): Promise<BullJobState | "unknown"> {
    return reads.getState(this.#s, jobId);
  }

  /** 1 completed, 2 failed, 0 not finished, -1 no such job (with the result or reason when asked). */
  isFinished(jobId: string, returnValue?: boolean): Promise<number | [number, string]> {
    return reads.isFinished(this.#s, jobId, returnValue, this.toKey(jobId));
  }

  /** Whether the queue's concurrency limit is reached. */
  isMaxed(): Promise<boolean> {
    return reads.isMaxed(this.#s);
  }

  /** Whether the job is in `state`. */
  async isJobInState(state: string, jobId: string): Promise<boolean> {
    const now = await reads.getState(this.#s, jobId);
    return now === (state === "wait" ? "waiting" : state);
  }

  /** The job from its row, or undefined. */
  getJobData(jobId: string): Promise<JobJson | undefined> {
    return reads.getJobData(this.#s, jobId);
  }

  /** The BullMQ id of the job holding a deduplication id. */
  getDeduplicationJobId(deduplicationId: string): Promise<string | null> {
    return reads.getDeduplicationJobId(this.#s, deduplicationId);
  }

  /** A page of the job's log. */
  getJobLogs(jobId: string, start: number, end: number, asc: boolean): Promise<{ logs: string[]; count: number }> {
    return reads.getJobLogs(this.#s, jobId, start, end, asc);
  }

  /** How long the queue stays parked by a worker's `rateLimit`. */
  getRateLimitTtl(maxJobs?: number): Promise<number> {
    return reads.getRateLimitTtl(this.#s, maxJobs);
  }

  /** Counts by state, read atomically. */
  getCounts(types: JobType[], delayedTimestamp?: number): Promise<number[]> {
    return reads.getCounts(this.#s, types, delayedTimestamp);
  }

  /** Ready jobs per priority. */
  getCountsPerPriority(priorities: number[]): Promise<number[]> {
    return reads.getCountsPerPriority(this.#s, priorities);
  }

  /** Ids per state, in BullMQ's order. */
  getRanges(types: JobType[], start?: number, end?: number, asc?: boolean): Promise<[string][]> {
    return reads.getRanges(this.#s, types, start ?? 0, end ?? -1, asc ?? false) as unknown as Promise<[string][]>;
  }

  /** A parent's children per dependency type, from the fan-in on its row. */
  getDependencyCounts(jobId: string, types: string[]): Promise<number[]> {
    return flows.getDependencyCounts(this.#s, jobId, types);
  }

  /** A parent's children by set, under BullMQ's keys. */
  getDependencies(jobId: string, opts: DependenciesOpts): Promise<Record<string, never>> {
    return flows.getDependencies(this.#s, jobId, opts as Parameters<typeof flows.getDependencies>[2]) as Promise<Record<string, never>>;
  }

  /** Each completed child's key → its result (JSON). */
  getProcessedChildrenValues(jobId: string): Promise<Record<string, string>> {
    return flows.getProcessedChildrenValues(this.#s, jobId);
  }

  /** Each ignored child's key → its failure reason. */
  getIgnoredChildrenFailures(jobId: string): Promise<Record<string, string>> {
    return flows.getIgnoredChildrenFailures(this.#s, jobId);
  }

  /** The per-minute history of acks (`completed`) or burials (`failed`), newest minute first. */
  getMetrics(type: "completed" | "failed", start?: number, end?: number): Promise<[string[], string[], number]> {
    return metrics.getMetrics(this.#s, type, start ?? 0, end ?? -1);
  }

  /** No client list: EchoMQ lists its workers itself (`mq.workers`), under names BullMQ does not parse. */
  async getClientList(): Promise<string[]> {
    return [];
  }

  /** Refused: BullMQ's key pagination is of keys EchoMQ does not keep. */
  paginate(key: string, opts: { start: number; end: number; fetchJobs?: boolean }): Promise<never> {
    void [key, opts];
    return Promise.reject(refused("paginate", WHY.paginate));
  }

  // ---- queue meta, limits, events ----

  /** BullMQ's meta fields (and the LIMIT, RETAIN they set). */
  setQueueMeta(values: Record<string, string | number>): Promise<number> {
    return ops.setMeta(this.#s, values);
  }

  /** One meta field. */
  async getQueueMetaField(field: string): Promise<string | null> {
    return (await ops.getMeta(this.#s, [field]))[0] ?? null;
  }

  /** Meta fields, in order. */
  getQueueMetaFields(fields: string[]): Promise<(string | null)[]> {
    return ops.getMeta(this.#s, fields);
  }

  /** Every meta field BullMQ set (and `paused`). */
  getQueueMeta(): Promise<Record<string, string>> {
    return ops.getAllMeta(this.#s);
  }

  /** Meta fields deleted. */
  removeQueueMetaFields(fields: string[]): Promise<number> {
    return ops.removeMeta(this.#s, fields);
  }

  /** Whether a meta field is set. */
  async hasQueueMetaField(field: string): Promise<boolean> {
    return (await ops.getMeta(this.#s, [field]))[0] !== null;
  }

  /** PENALIZE: the queue hands out nothing for `expireTimeMs`. */
  setRateLimit(expireTimeMs: number): Promise<void> {
    return ops.setRateLimit(this.#s, expireTimeMs);
  }

  /** Refused: a park runs to its end. */
  removeRateLimitKey(): Promise<number> {
    return Promise.reject(refused("removeRateLimitKey", "an EchoMQ park (PENALIZE) runs to its end; no verb ends it early"));
  }

  /** 0: EchoMQ never had BullMQ's deprecated priority key. */
  async removeDeprecatedPriorityKey(): Promise<number> {
    return 0;
  }

  /** Refused: the events' bound is the queue's retention (`opts.maxLenEvents`, RETAIN), not a one-off trim. */
  trimEvents(maxLength: number): Promise<number> {
    void maxLength;
    return Promise.reject(
      refused("trimEvents", "EchoMQ bounds the events stream by the queue's retention (RETAIN's events_max); set it with the queue's `streams.events.maxLen`"),
    );
  }

  /** Refused: events are written by the transitions only. */
  publishEvent(fields: Record<string, string | number>, maxEvents: number): Promise<string> {
    void [fields, maxEvents];
    return Promise.reject(refused("publishEvent", WHY.events));
  }

  /** XREAD of the queue's events after `id`, as BullMQ's events. */
  readEvents(id: string, blockTimeout: number): Promise<StreamReadRaw> {
    return this.#events.read(id, blockTimeout);
  }

  /** A worker's wait for a job. */
  waitForJob(blockTimeout: number): Promise<{ member: string; score: number } | null> {
    return this.#wait.wait(blockTimeout);
  }

  /** Ends a wait in progress. */
  disconnectBlocking(wait?: boolean): Promise<void> {
    void wait;
    return this.#wait.interrupt();
  }

  /** The next wait opens its line again when it must. */
  async reconnectBlocking(): Promise<void> {}
}

/** The refusal of `operation` for `why`, as an error (for a rejected promise). */
function refused(operation: string, why: string): Error {
  try {
    refuse(operation, why);
  } catch (e) {
    return e as Error;
  }
}
