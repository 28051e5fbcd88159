/**
 * The shapes the client hands out and takes back: a claimed {@link Job}, a {@link JobRef} for
 * ack / retry / bury / extend, a {@link Settlement} for `settleMany`, and a queue's {@link Counts}.
 *
 * @module
 */
import type { JobId } from "../keyspace/mod.ts";
import type { ChildState } from "./flows.ts";

/**
 * A claimed job as settles need it: queue, id and the lease token of the claim. A settle with a
 * token that is not the job's current one (its lease ran out and another claim holds it, or it was
 * settled already) is refused with `LeaseLostError` and changes nothing.
 */
export interface JobRef {
  /** The job's id (`JOB…`). */
  readonly id: JobId;
  /** The queue it was claimed from. */
  readonly queue: string;
  /**
   * The lease token of this claim: no other claim of the job ever gets it (per queue, strictly
   * increasing). A handler may fence its own writes with it (keep the highest token seen per job).
   */
  readonly token: number;
}

/** A claimed job: its lease runs until acked, retried, buried, reaped, or extended. */
export interface Job<P> extends JobRef {
  /** The decoded payload. */
  readonly payload: P;
  /** How many times it has been claimed, this claim included (1 on the first). */
  readonly attempts: number;
  /** Its own handler time limit in ms (`enqueue`'s `timeoutMs`), when it was admitted with one. */
  readonly timeoutMs?: number;
  /** The deduplication key it was admitted under (`enqueue`'s `dedup.key`), if any. */
  readonly dedupKey?: string;
  /**
   * The W3C trace context (`traceparent`) of the span that admitted it, when its producer traced
   * (`connect`'s `tracing`): a worker's `process` span links to it.
   */
  readonly traceparent?: string;
  /** Its priority (`enqueue`'s `priority`), when not 0. */
  readonly priority?: number;
  /** Its lane (`enqueue`'s `lane`); undefined in the default lane. */
  readonly lane?: string;
  /** Its name (`enqueue`'s `name`), when it was admitted with one. */
  readonly name?: string;
  /**
   * The most attempts it gets (`enqueue`'s `attempts`, a flow step's `opts.attempts`), when it was
   * admitted with it: a worker buries it once that many failed, in place of its own `maxAttempts`.
   */
  readonly maxAttempts?: number;
}

/**
 * A job handed to a worker's handler: the claimed job, an `AbortSignal` that fires when its lease
 * is lost (an extension refused), it is cancelled (`EchoMQ.cancel`, from any process: the reason is
 * a `JobCancelledError`, within one heartbeat) or the worker is stopped with a deadline, its lease deadline, and
 * `progress`. `C` types its children's results when it is a flow's parent (`mq.queue<P, R, C>`).
 */
export interface WorkerJob<P, C = unknown> extends Job<P> {
  /** Fires when the job's lease is lost, it is cancelled (`EchoMQ.cancel`) or the worker stops with a deadline; `reason` says which. */
  readonly signal: AbortSignal;
  /**
   * When the job's lease runs out, on this process's monotonic clock (compare with
   * `performance.now()`): the claim's send time + `leaseMs`, moved on by each heartbeat. A lower
   * bound of the server's deadline (until CLAIM replies carry it).
   */
  readonly leaseUntil: number;
  /** Records the job's progress (any JSON value), token-checked: `LeaseLostError` when lost. */
  progress(value: unknown): Promise<void>;
  /**
   * Appends `line` to the job's log (`jobLogs`, the job page), token-checked: `LeaseLostError`
   * when lost. The newest 1000 lines of at most 1024 bytes are kept.
   */
  log(line: string): Promise<void>;
  /**
   * Throws a `RateLimitedError`: the job is handed back without spending an attempt and its lane
   * (the queue, for a job of the default lane) hands out nothing for `ms` (`throw` it, or call
   * it, from the handler).
   */
  rateLimited(ms: number): never;
  /** A flow parent's children (`mq.flow`) with their states and results; `[]` for a job that is no parent. */
  children(): Promise<ChildState<C>[]>;
}

/** How many ids each of a queue's sets holds. */
export interface Counts {
  /** Ready to claim. */
  readonly pending: number;
  /** Claimed, lease running. */
  readonly active: number;
  /** Delayed (scheduled or waiting for a retry). */
  readonly schedule: number;
  /** Buried after their last attempt. */
  readonly dead: number;
  /** Completed and kept with their results (the queue's retention: `retain`'s `completedMax`, `completedAgeMs`). */
  readonly completed: number;
  /**
   * Flow parents waiting for their children (the queue's `waiting` set: `getJob`'s state
   * `waiting-children`, BullMQ's `waiting-children` count).
   */
  readonly waitingChildren: number;
}

/**
 * One way to settle a claimed job, for `EchoMQ.settleMany`: ack it (with its `result`, any value
 * JSON carries, kept with the completed job while the queue keeps completed jobs; `undefined`:
 * none), retry it (due again in `delayMs`, with the failure `reason`; 0: ready now), bury it with
 * `reason`, or release it (a hand-back: back in pending, the attempt given back, not a failure).
 * A retry's or bury's `error` (what the handler threw) is kept on the row with its name, message
 * and stack among the job's newest 10 failed attempts (`getJob`'s `failures`; lib/client/failure.ts).
 */
export type Settlement =
  | { readonly kind: "ack"; readonly job: JobRef; readonly result?: unknown }
  | { readonly kind: "release"; readonly job: JobRef }
  | { readonly kind: "retry"; readonly job: JobRef; readonly delayMs: number; readonly reason?: string; readonly error?: unknown }
  | { readonly kind: "bury"; readonly job: JobRef; readonly reason: string; readonly error?: unknown };
