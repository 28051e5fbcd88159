/**
 * The worker's own errors: what a handler throws to decide its job's settle
 * ({@link UnrecoverableError}: bury now; {@link RetryError}: retry after the handler's delay), and
 * what the worker reports to `onError` about itself ({@link WorkerStalledError}: its claim loop
 * or a settle made no progress; {@link LeaseExpiredError}: a claimed job's lease ran out before
 * its handler could start).
 *
 * @module
 */
import { EchoMQError } from "../errors.ts";

/**
 * Thrown by a handler: the job fails for good. The worker buries it at once, with this error as
 * the reason, whatever attempts are left (BullMQ's name for the same thing).
 *
 * @example
 * ```ts
 * import { UnrecoverableError } from "../../../client.ts";
 * const handler = (job: { payload: { to: string } }) => {
 *   if (!job.payload.to.includes("@")) throw new UnrecoverableError(`not an address: ${job.payload.to}`);
 * };
 * ```
 */
export class UnrecoverableError extends Error {
  /** Builds the error. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "UnrecoverableError";
  }
}

/**
 * Thrown by a handler: the attempt failed, and the job is due again in `retryDelayMs` instead of
 * what the worker's `backoff` says (a rate-limited API's `Retry-After`, say). Any thrown error
 * with a `retryDelayMs` property (ms ≥ 0; 0: ready now) does the same: this class is one such
 * error. On the last attempt the job is buried as usual.
 */
export class RetryError extends Error {
  /** Milliseconds until the job is due again. */
  readonly retryDelayMs: number;
  /** Builds the error; `delayMs` is the delay before the next attempt. */
  constructor(message: string, options: { delayMs: number; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "RetryError";
    this.retryDelayMs = options.delayMs;
  }
}

/**
 * Thrown by a handler: a remote service said "slow down" (HTTP 429, a `Retry-After`). The job is
 * handed back (pending again, the attempt given back: no retry is spent) and the job's lane — the
 * queue, for a job of the default lane — is parked for `ms`: no worker of any process claims from
 * it until then (`mq.penalize`), while the queue's other lanes are served. `job.rateLimited(ms)`
 * throws it.
 *
 * @example
 * ```ts
 * import { RateLimitedError } from "../../../client.ts";
 * const handler = async (job: { payload: { url: string } }) => {
 *   const res = await fetch(job.payload.url);
 *   if (res.status === 429) throw new RateLimitedError(Number(res.headers.get("retry-after") ?? 1) * 1000);
 * };
 * ```
 */
export class RateLimitedError extends Error {
  /** How long the job's lane (or the queue) hands out nothing, in ms. */
  readonly ms: number;
  /** Builds the error for a park of `ms` (1 ms to a day). */
  constructor(ms: number, message: string = `rate limited for ${ms} ms`) {
    super(message);
    this.name = "RateLimitedError";
    this.ms = ms;
  }
}

/** The delay a thrown value asks for (`retryDelayMs`, a number ≥ 0), or null. */
export function askedDelay(e: unknown): number | null {
  if (e === null || typeof e !== "object" || !("retryDelayMs" in e)) return null;
  const ms = (e as { retryDelayMs: unknown }).retryDelayMs;
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/**
 * What a running job's `signal` aborts with when its handler runs longer than the worker's
 * `timeoutMs`: the attempt fails with the reason `timed out after <ms> ms` (this error's message)
 * and follows the retry and backoff policy. A handler that ignores the signal cannot settle the
 * job any more (the retry took it: its settle is refused as a lost lease).
 */
export class JobTimeoutError extends Error {
  /** The limit that ran out, in ms. */
  readonly timeoutMs: number;
  /** Builds the error for a limit of `timeoutMs`. */
  constructor(timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`);
    this.name = "JobTimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Reported through `onError` (once per attempt) when a job's handler ignores its signal at its
 * time limit (still running a turn of the event loop after the abort): the attempt failed then
 * (`JobTimeoutError`), and the handler's slot stays taken until it returns — a new handler never
 * runs beside it past `concurrency`. Its outcome, when it comes, is ignored. Counted in the
 * worker's `overdue`. (A `JobTimeoutError`: of the same limit.)
 */
export class JobOverdueError extends JobTimeoutError {
  /** The job, as claimed. */
  readonly job: { readonly id: string; readonly queue: string; readonly token: number };
  /** Builds the error for `job`, past its limit of `timeoutMs`. */
  constructor(job: { id: string; queue: string; token: number }, timeoutMs: number) {
    super(timeoutMs);
    this.name = "JobOverdueError";
    this.message = `worker ${JSON.stringify(job.queue)}: the handler of ${job.id} (token ${job.token}) still runs after its time ` +
      `limit of ${timeoutMs} ms: the attempt failed, and its slot stays taken until the handler returns`;
    this.job = { id: job.id, queue: job.queue, token: job.token };
  }
}

/**
 * A worker's claim loop, or one of its settles, made no progress for too long (a call that never
 * came back, a connection that cannot be made): the worker says so here instead of sitting
 * "running", drops what is stuck (the claim connection is made again; stuck settles are given up,
 * their jobs' leases run out on the server) and carries on. Reported through `onError`.
 */
export class WorkerStalledError extends EchoMQError {
  /** The queue of the worker. */
  readonly queue: string;
  /** Milliseconds without progress. */
  readonly stalledMs: number;
  /** Builds the error. */
  constructor(queue: string, stalledMs: number, what: string) {
    super("connection", `worker ${JSON.stringify(queue)}: no progress for ${stalledMs} ms: ${what}`);
    this.name = "WorkerStalledError";
    this.queue = queue;
    this.stalledMs = stalledMs;
  }
}

/**
 * A claimed job whose lease had already run out by the worker's monotonic clock when its handler
 * was about to start (the process was paused, or too busy to read the claim in time): another
 * claim has it or will have it, so its handler is not started and the worker does not settle it.
 * Reported through `onError`; counted in the worker's `lost`.
 */
export class LeaseExpiredError extends EchoMQError {
  /** The job, as claimed. */
  readonly job: { readonly id: string; readonly queue: string; readonly token: number };
  /** How long ago the lease ran out (at least), in ms. */
  readonly lateMs: number;
  /** Builds the error. */
  constructor(job: { id: string; queue: string; token: number }, lateMs: number) {
    super(
      "lease-ms",
      `worker ${JSON.stringify(job.queue)}: ${job.id} (token ${job.token}) not started: its lease ran out ` +
        `${Math.round(lateMs)} ms before the worker could start it (paused or too busy); another claim has it or will`,
    );
    this.name = "LeaseExpiredError";
    this.job = { id: job.id, queue: job.queue, token: job.token };
    this.lateMs = lateMs;
  }
}

/**
 * A sandboxed processor's thread or process died while it ran a job (it exited, aborted, ran out
 * of memory, or died of an uncaught error): that job's attempt fails with this error, whose
 * message says how it died (the attempt's reason), and the pool starts another sandbox for the
 * next job.
 */
export class SandboxCrashError extends Error {
  /** The kind of sandbox: a worker thread or a child process. */
  readonly sandbox: "thread" | "process";
  /** How it died, e.g. `exited with code 3`, `was killed by SIGABRT`, `ran out of memory (limit 64 MB)`. */
  readonly how: string;
  /** Builds the error. */
  constructor(sandbox: "thread" | "process", how: string) {
    super(`the sandbox ${sandbox} running the job ${how}`);
    this.name = "SandboxCrashError";
    this.sandbox = sandbox;
    this.how = how;
  }
}
