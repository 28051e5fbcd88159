/**
 * A job a worker holds (claimed, not yet settled) and the view of it its handler gets. Made once
 * per claimed job on a busy worker's hottest path, so what most jobs never use — the abort
 * signal, the promise a stop waits on — is made on first use, and the handler's view is a class
 * (its getters and methods on the prototype, not closures made per job).
 *
 * @module
 */
import { EchoMQError } from "../errors.ts";
import type { ChildState } from "../flows.ts";
import type { Job, JobRef, WorkerJob } from "../job.ts";
import type { ProcessSpan } from "../tracing.ts";
import { RateLimitedError } from "./worker_errors.ts";

/**
 * Where a held job is in its life (docs/design/worker.md draws it):
 * - `running`: its handler runs; the heartbeat extends its lease, its time limit may fire.
 * - `own`: its handler settles it itself (`mq.ack(job)` …): the worker neither extends nor settles it.
 * - `settling`: its settle is queued or in flight (`why` says which settle and why).
 * - `lost`: its lease was lost (an extension refused): its signal aborted, it is not settled.
 * - `left`: it left the worker (settled, dropped, or given up); its slot is free.
 */
export type JobState = "running" | "own" | "settling" | "lost" | "left";

/**
 * Why a job left `running`: `done` (acked), `failed` (retry or bury), `timed out` (its time limit:
 * retry or bury, and its handler still runs), `rate limited` (handed back after a park),
 * `stopped` (handed back at a stop's deadline: its handler's outcome is ignored), `own` (its
 * handler settles it), `lease lost`, `cancelled` (`EchoMQ.cancel`: buried already).
 */
export type Why = "done" | "failed" | "timed out" | "rate limited" | "stopped" | "own" | "lease lost" | "cancelled";

/** The moves a held job may make: every transition of {@link JobState}, written once. */
const MOVES: { readonly [S in JobState]: readonly JobState[] } = {
  running: ["settling", "own", "lost"],
  own: ["own", "left"],
  settling: ["left"],
  lost: ["left"],
  left: [],
};

/** A job a worker holds: claimed and not yet settled. */
export interface Held<P> {
  readonly job: Job<P>;
  /**
   * Its key in the worker's map: the job's id, or the claim key (`<id> <token>`) when another
   * claim of the job held that already (the id alone is hashed once per string, and most jobs are
   * held once).
   */
  readonly key: string;
  /** Where it is in its life; changed only by {@link move}. */
  state: JobState;
  /** Why it left `running` (null while it runs); kept when it leaves. */
  why: Why | null;
  /** Its handler's signal, made when the handler first reads `job.signal` (see {@link signalOf}). */
  controller: AbortController | null;
  /** Why it was aborted, when that happened before its signal was made. */
  abortedBy?: { readonly reason: unknown };
  /** The lease's end on the monotonic clock (`performance.now()`), a lower bound of the server's. */
  leaseUntil: number;
  /** Its `process` span (tracing on), ended when the job leaves the worker. */
  span: ProcessSpan | null;
  /** Its time limit's timer, cleared when it leaves the worker. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Resolves once it left the worker; made on first use ({@link doneOf}). */
  done: Promise<void> | null;
  /** Resolves {@link done} once made. */
  resolve: (() => void) | null;
}

/** A new record of `job`, held under `key`, its lease running until `leaseUntil`. */
export function hold<P>(job: Job<P>, key: string, leaseUntil: number): Held<P> {
  return { job, key, state: "running", why: null, controller: null, leaseUntil, span: null, timer: undefined, done: null, resolve: null };
}

/**
 * Moves `held` to `state` (`why`: why it left `running`, kept after). A move the diagram does not
 * have is a bug of the worker's: it throws. Leaving clears the time limit's timer and resolves
 * {@link doneOf}.
 */
export function move(held: Held<unknown>, state: JobState, why: Why | null = held.why): void {
  if (!MOVES[held.state].includes(state)) throw new Error(`worker: a held job cannot move from ${held.state} to ${state}`);
  held.state = state;
  held.why = why;
  if (state !== "left") return;
  if (held.timer !== undefined) clearTimeout(held.timer);
  held.resolve?.();
}

/** Its handler's outcome counts: it runs, not settled by anyone yet. */
export const isRunning = (held: Held<unknown>): boolean => held.state === "running";

/** Its handler may still settle it itself (running, or settling it already). */
export const mayOwn = (held: Held<unknown>): boolean => held.state === "running" || held.state === "own";

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
    held.done = held.state === "left" ? Promise.resolve() : new Promise<void>((resolve) => (held.resolve = resolve));
  }
  return held.done;
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
  readonly #children: (job: JobRef) => Promise<ChildState[]>;
  readonly #log: ((job: JobRef, line: string) => Promise<void>) | undefined;

  /**
   * The view of `held`, through the worker's client: `progress` records a job's progress,
   * `children` reads a flow parent's children, `log` appends to its log.
   */
  constructor(
    held: Held<P>,
    progress: (job: JobRef, value: unknown) => Promise<void>,
    children: (job: JobRef) => Promise<ChildState[]>,
    log?: (job: JobRef, line: string) => Promise<void>,
  ) {
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
    this.#children = children;
    this.#log = log;
  }

  /** Fires when the job's lease is lost, it is cancelled (`EchoMQ.cancel`) or the worker stops with a deadline; `reason` says which. */
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

  /** A flow parent's children with their states and results (`[]` for a job that is no parent). */
  children(): Promise<ChildState[]> {
    return this.#children(this.#held.job);
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
