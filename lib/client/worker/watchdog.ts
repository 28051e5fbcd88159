/**
 * The watchdog: a claim loop step (other than waiting for a slot) or a settle that has lasted
 * longer than the worker's `stallMs` (a claim, a wait or a settle: plus the client's patience) is
 * reported (`WorkerStalledError`), then undone — the claim connection is closed (the call on it
 * fails, and the loop makes a new one), a stuck settle is given up (its jobs' leases run out on
 * the server). A settle out for `stallMs` already frees its jobs' slots. So a worker never sits
 * "running" without working.
 *
 * @module
 */
import type { Held } from "./held.ts";
import type { ClaimLoop } from "./claim_loop.ts";
import type { Settler } from "./settler.ts";
import type { Crew } from "./worker.ts";
import { WorkerStalledError } from "./worker_errors.ts";

/** The watchdog of one worker (its timer starts with it). */
export class Watchdog<P> {
  readonly #crew: Crew<P>;
  readonly #loop: ClaimLoop<P>;
  readonly #settler: Settler<P>;
  readonly #everyMs: number;
  readonly #timer: ReturnType<typeof setInterval>;
  #last = performance.now();

  constructor(crew: Crew<P>, loop: ClaimLoop<P>, settler: Settler<P>) {
    this.#crew = crew;
    this.#loop = loop;
    this.#settler = settler;
    this.#everyMs = Math.max(100, Math.floor(crew.config.stallMs / 4));
    this.#timer = setInterval(() => this.#watch(), this.#everyMs);
  }

  /** Stops the watchdog (every job held has left). */
  stop(): void {
    clearInterval(this.#timer);
  }

  #watch(): void {
    const { config, slots } = this.#crew;
    const loop = this.#loop;
    const now = performance.now();
    // A tick that comes late says the whole process was paused (SIGSTOP, a suspended machine) or
    // starved: that time is nobody's stall. It is taken off, and pending replies read first.
    const paused = now - this.#last - 2 * this.#everyMs;
    this.#last = now;
    if (paused > 0) {
      loop.stepSince += paused;
      for (const f of this.#settler.flushing) f.since += paused;
      return;
    }
    const stalled = now - loop.stepSince;
    const closes = loop.step === "waiting for a CLAIM reply" || loop.step === "waiting for a SETTLE reply" ||
      loop.step === "waiting for a job";
    const limit = closes ? config.callStallMs : config.stallMs;
    if (!this.#crew.stopping && loop.step !== "waiting for a free slot" && stalled > limit * (loop.stallReports + 1)) {
      loop.stallReports++;
      this.#crew.report(
        new WorkerStalledError(
          this.#crew.queue,
          Math.round(stalled),
          `the claim loop is ${loop.step}${closes ? " (its connection is made again)" : ""}`,
        ),
      );
      if (closes) loop.abandon();
    }
    for (const f of this.#settler.flushing) {
      // a slow settle (a connection retrying a redirection, or a stale one) must not keep the
      // claim loop from claiming: its jobs' slots free, and its outcome is still counted
      if (!f.freed && now - f.since > config.stallMs) {
        f.freed = true;
        for (const q of f.batch) {
          if (slots.has(q.held)) slots.release(q.held as Held<P>);
        }
      }
      if (f.givenUp || now - f.since <= config.callStallMs) continue;
      f.givenUp = true;
      f.end();
      const n = f.batch.length;
      this.#crew.report(
        new WorkerStalledError(
          this.#crew.queue,
          Math.round(now - f.since),
          `a settle of ${n} job${n === 1 ? " has" : "s have"} not come back (given up: the lease runs out on the server)`,
        ),
      );
    }
  }
}
