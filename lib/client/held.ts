/**
 * A job a worker holds (claimed, not yet settled) and the view of it its handler gets. Made once
 * per claimed job on a busy worker's hottest path, so what most jobs never use — the abort
 * signal, the promise a stop waits on — is made on first use, and the handler's view is a class
 * (its getters and methods on the prototype, not closures made per job).
 *
 * @module
 */
import { EchoMQError } from "./errors.ts";
import type { Job, JobRef, WorkerJob } from "./job.ts";
import type { ProcessSpan } from "./tracing.ts";
import { RateLimitedError } from "./worker_errors.ts";

/** A job a worker holds: claimed and not yet settled. */
export interface Held<P> {
  readonly job: Job<P>;
  /**
   * Its key in the worker's map: the job's id, or the claim key (`<id> <token>`) when another
   * claim of the job held that already (the id alone is hashed once per string, and most jobs are
   * held once).
   */
  readonly key: string;
  /** Its handler's signal, made when the handler first reads `job.signal` (see {@link signalOf}). */
  controller: AbortController | null;
  /** Why it was aborted, when that happened before its signal was made. */
  abortedBy?: { readonly reason: unknown };
  /** The lease's end on the monotonic clock (`performance.now()`), a lower bound of the server's. */
  leaseUntil: number;
  /** Its lease was lost: it is not settled. */
  lost: boolean;
  /** Its settle is queued or in flight: the heartbeat leaves it alone. */
  settling: boolean;
  /** Its handler settled it through the client: the worker does not. */
  own: boolean;
  /** Its handler ran past its time limit: the attempt failed then, the handler's outcome is ignored. */
  timedOut: boolean;
  /** Its `process` span (tracing on), ended when the job leaves the worker. */
  span: ProcessSpan | null;
  /** Its time limit's timer, cleared when it leaves the worker. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Resolves once it left the worker; made on first use ({@link doneOf}). */
  done: Promise<void> | null;
  /** Resolves {@link done} once made. */
  resolve: (() => void) | null;
  /** It left the worker (settled, or given up). */
  left: boolean;
}

/** A new record of `job`, held under `key`, its lease running until `leaseUntil`. */
export function hold<P>(job: Job<P>, key: string, leaseUntil: number): Held<P> {
  return {
    job,
    key,
    controller: null,
    leaseUntil,
    lost: false,
    settling: false,
    own: false,
    timedOut: false,
    span: null,
    timer: undefined,
    done: null,
    resolve: null,
    left: false,
  };
}

/** `held`'s abort signal, made on first use (aborted already if `held` was). */
export function signalOf(held: Held<unknown>): AbortSignal {
  if (held.controller === null) {
    held.controller = new AbortController();
    if (held.abortedBy !== undefined) held.controller.abort(held.abortedBy.reason);
  }
  return held.controller.signal;
}

/** Aborts `held`'s signal with `reason` (the first abort wins, as AbortController's does). */
export function abortHeld(held: Held<unknown>, reason: unknown): void {
  if (held.controller !== null) held.controller.abort(reason);
  else held.abortedBy ??= { reason };
}

/** A promise that resolves once `held` left the worker (the same one on every call). */
export function doneOf(held: Held<unknown>): Promise<void> {
  if (held.done === null) {
    held.done = held.left ? Promise.resolve() : new Promise<void>((resolve) => (held.resolve = resolve));
  }
  return held.done;
}

/** `held` left the worker: its time limit's timer cleared, its {@link doneOf} resolved. */
export function leave(held: Held<unknown>): void {
  held.left = true;
  if (held.timer !== undefined) clearTimeout(held.timer);
  held.resolve?.();
}

/**
 * The job a handler gets: the claimed job's fields (those a job may lack only when it has them),
 * its signal and lease read from its record when asked, and `progress`.
 */
export class HeldJob<P> implements WorkerJob<P> {
  readonly id: Job<P>["id"];
  readonly queue: string;
  readonly token: number;
  readonly attempts: number;
  readonly payload: P;
  declare readonly timeoutMs?: number;
  declare readonly dedupKey?: string;
  declare readonly traceparent?: string;
  declare readonly priority?: number;
  declare readonly lane?: string;
  declare readonly name?: string;
  readonly #held: Held<P>;
  readonly #progress: (job: JobRef, value: unknown) => Promise<void>;
  readonly #log: ((job: JobRef, line: string) => Promise<void>) | undefined;

  /** The view of `held`; `progress` records a job's progress (the worker's client). */
  constructor(held: Held<P>, progress: (job: JobRef, value: unknown) => Promise<void>, log?: (job: JobRef, line: string) => Promise<void>) {
    const job = held.job;
    this.id = job.id;
    this.queue = job.queue;
    this.token = job.token;
    this.attempts = job.attempts;
    this.payload = job.payload;
    // (assigned only when present: a job without a lane has no `lane` key, as the claimed job)
    const self = this as { -readonly [K in keyof Job<P>]: Job<P>[K] };
    if (job.timeoutMs !== undefined) self.timeoutMs = job.timeoutMs;
    if (job.dedupKey !== undefined) self.dedupKey = job.dedupKey;
    if (job.traceparent !== undefined) self.traceparent = job.traceparent;
    if (job.priority !== undefined) self.priority = job.priority;
    if (job.lane !== undefined) self.lane = job.lane;
    if (job.name !== undefined) self.name = job.name;
    this.#held = held;
    this.#progress = progress;
    this.#log = log;
  }

  /** Fires when the job's lease is lost or the worker stops with a deadline; `reason` says which. */
  get signal(): AbortSignal {
    return signalOf(this.#held);
  }

  /** When the job's lease runs out, on this process's monotonic clock (moved on by each heartbeat). */
  get leaseUntil(): number {
    return this.#held.leaseUntil;
  }

  /** Records the job's progress (any JSON value), token-checked: `LeaseLostError` when lost. */
  progress(value: unknown): Promise<void> {
    return this.#progress(this.#held.job, value);
  }

  /** Appends a line to the job's log (`EchoMQ.log`), token-checked: `LeaseLostError` when lost. */
  log(line: string): Promise<void> {
    if (this.#log === undefined) return Promise.reject(new EchoMQError("options", "log: this worker's client cannot write job logs"));
    return this.#log(this.#held.job, line);
  }

  /** Throws a `RateLimitedError`: the job is handed back and its lane (or queue) held for `ms`. */
  rateLimited(ms: number): never {
    throw new RateLimitedError(ms);
  }
}
