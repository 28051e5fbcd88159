/**
 * The runner: takes each claimed job — drops one whose lease ran out before it could start, holds
 * the rest — and runs its handler inside the job's context (its `process` span, the async context
 * `stop()` and `ownSettle` read), under its time limit. A handler's outcome goes to the settler.
 * What a handler gets is built in one place, {@link Runner.context} and `HeldJob` (held.ts).
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { PayloadDecodeError } from "../errors.ts";
import type { ChildState } from "../flows.ts";
import type { Job, JobRef, Settlement } from "../job.ts";
import { JobOverdueError, JobTimeoutError, LeaseExpiredError } from "./worker_errors.ts";
import { abortHeld, doneOf, type Held, HeldJob, hold, mayOwn, move } from "./held.ts";
import type { Settler } from "./settler.ts";
import type { Crew, Handler } from "./worker.ts";
import { nextMacrotask } from "./timing.ts";

/** What a running handler's async context knows: its job's settle promise, and its own settles. */
interface Running {
  readonly done: Promise<void>;
  /** `job` is the handler's own and it settles it now: the worker will not; returns the counter. */
  settles(job: JobRef, kind: Settlement["kind"]): ((error: unknown) => void) | null;
}

/** A running handler's {@link Running}: its job's record, and who counts a settle it makes itself. */
class HandlerContext implements Running {
  readonly #held: Held<unknown>;
  readonly #counted: (kind: Settlement["kind"], error: unknown) => void;

  constructor(held: Held<unknown>, counted: (kind: Settlement["kind"], error: unknown) => void) {
    this.#held = held;
    this.#counted = counted;
  }

  get done(): Promise<void> {
    return doneOf(this.#held);
  }

  settles(ref: JobRef, kind: Settlement["kind"]): ((error: unknown) => void) | null {
    const held = this.#held;
    if (ref.id !== held.job.id || ref.token !== held.job.token || !mayOwn(held)) return null;
    move(held, "own", "own");
    held.span?.settling(kind);
    return (error) => {
      if (error !== null && error !== undefined) held.span?.settleFailed(kind, error);
      this.#counted(kind, error);
    };
  }
}

/** The job whose handler is running, for `stop()` / `close()` called from inside a handler. */
const running = new AsyncLocalStorage<Running>();

/**
 * Called by the client before it sends a settle of `job` (`ack`, `retry`, `bury`, `settleMany`):
 * when the caller is the handler of that very claim, its worker leaves the job alone from now on
 * (no heartbeat, no settle of its own) and counts the outcome. Returns the function to call with
 * the settle's outcome (`null` when applied), or null when the caller is no such handler.
 */
export function ownSettle(job: JobRef, kind: Settlement["kind"]): ((error: unknown) => void) | null {
  return running.getStore()?.settles(job, kind) ?? null;
}

/** Inside a handler: a promise that resolves once that handler's job is settled; else null. */
export function currentJobDone(): Promise<void> | null {
  return running.getStore()?.done ?? null;
}

/** Starts the handlers of claimed jobs. */
export class Runner<P> {
  readonly #crew: Crew<P>;
  readonly #settler: Settler<P>;
  readonly #handler: Handler<P>;
  /** A job's `progress`, through the client (one function for every job). */
  readonly #progress: (job: JobRef, value: unknown) => Promise<void>;
  /** A flow parent's children, through the client (one function for every job). */
  readonly #children: (job: JobRef) => Promise<ChildState[]>;
  /** A job's `log`, through the client, when it has one. */
  readonly #log: ((job: JobRef, line: string) => Promise<void>) | undefined;
  /** Counts a settle a handler made itself (one function for every job). */
  readonly #ownSettled: (kind: Settlement["kind"], error: unknown) => void;

  constructor(crew: Crew<P>, settler: Settler<P>, handler: Handler<P>) {
    this.#crew = crew;
    this.#settler = settler;
    this.#handler = handler;
    this.#progress = (job, value) => crew.client.progress(job, value);
    const client = crew.client;
    this.#log = client.log === undefined ? undefined : (job, line) => client.log!(job, line);
    this.#children = (job) =>
      client.children === undefined ? Promise.reject(new TypeError("worker: this client reads no flow children")) : client.children(job.queue, job.id);
    this.#ownSettled = (kind, error) => settler.ownSettled(kind, error);
  }

  /** Takes the jobs one call claimed, whose leases run until `leaseUntil` (see {@link start}). */
  startAll(jobs: ReadonlyArray<Job<P> | PayloadDecodeError>, leaseUntil: number): void {
    if (jobs.length === 0) return;
    // one clock read for the batch: the jobs start one after another, and a lease running out
    // during that loop is caught by the next heartbeat or settle
    const now = performance.now();
    for (const job of jobs) this.start(job, leaseUntil, now);
  }

  /**
   * Takes a claimed job: runs its handler, or (an undecodable payload) fails the attempt. A job
   * whose lease has run out by the monotonic clock (`now`) is not started: another claim has it.
   */
  start(claimed: Job<P> | PayloadDecodeError, leaseUntil: number, now: number): void {
    const job: Job<P> = claimed instanceof PayloadDecodeError ? { ...claimed.job, payload: undefined as P } : claimed;
    const crew = this.#crew;
    const late = now - leaseUntil;
    if (late >= 0) {
      crew.counts.lost++;
      crew.report(new LeaseExpiredError(job, late));
      return;
    }
    const { key, twin } = crew.slots.find(job);
    if (twin !== undefined) {
      // the same claim again (a failover lost its record, and the server handed out the same
      // token): the handler already running settles it
      twin.leaseUntil = Math.max(twin.leaseUntil, leaseUntil);
      return;
    }
    const held = hold(job, key, leaseUntil);
    crew.slots.add(held);
    if (claimed instanceof PayloadDecodeError) {
      crew.report(claimed);
      this.#settler.settle(held, claimed);
      return;
    }
    // the job's own limit (enqueue's timeoutMs) wins over the worker's
    const limit = job.timeoutMs ?? crew.config.timeoutMs;
    if (limit !== null) held.timer = setTimeout(() => this.#timeUp(held, limit), limit);
    const tracing = crew.client.tracing ?? null;
    if (tracing !== null) held.span = tracing.process(job);
    this.#run(held);
  }

  /** Runs `held`'s handler in its context; its outcome goes to the settler. */
  #run(held: Held<P>): void {
    const view = this.context(held);
    const context = new HandlerContext(held, this.#ownSettled);
    const span = held.span;
    const settler = this.#settler;
    let result: unknown;
    try {
      result = running.run(context, () => span === null ? this.#handler(view) : span.run(() => this.#handler(view)));
    } catch (e) {
      settler.finished(held, e);
      return;
    }
    if (
      result === null || (typeof result !== "object" && typeof result !== "function") ||
      typeof (result as { then?: unknown }).then !== "function"
    ) {
      settler.finished(held, null, result);
      return;
    }
    // Promise.resolve: a thenable whose `then` throws rejects instead of escaping
    Promise.resolve(result as PromiseLike<unknown>).then(
      (value) => settler.finished(held, null, value),
      (e: unknown) => settler.finished(held, e),
    );
  }

  /** What the handler of `held` gets: the job's view (held.ts). */
  context(held: Held<P>): HeldJob<P> {
    return new HeldJob(held, this.#progress, this.#children, this.#log);
  }

  /**
   * `held`'s time limit ran out while its handler runs: its signal aborts and the attempt fails
   * now; the handler keeps its slot until it returns. One that has not returned a turn of the
   * event loop after the abort ignores its signal: reported once, counted.
   */
  #timeUp(held: Held<P>, limit: number): void {
    if (held.state !== "running") return;
    const timeout = new JobTimeoutError(limit);
    abortHeld(held, timeout);
    const slots = this.#crew.slots;
    slots.overdue.add(held);
    this.#settler.settle(held, timeout, undefined, "timed out");
    nextMacrotask(() => {
      if (!slots.overdue.has(held)) return;
      this.#crew.counts.overdue++;
      this.#crew.report(new JobOverdueError(held.job, limit));
    });
  }
}
