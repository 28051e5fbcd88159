/**
 * The heartbeat: every `heartbeatMs` the leases of all running jobs are extended in one command;
 * a job whose extension is refused has lost its lease (another claim has it) or was cancelled
 * (`mq.cancel`: buried already): its signal aborts (with a `JobCancelledError` for a cancel) and it
 * is not settled here. And the maintenance of a saturated worker, which claims nothing:
 * every `maintenanceMs` it reaps expired leases itself, so that jobs of crashed workers do not
 * wait for a free slot.
 *
 * @module
 */
import { JobCancelledError, LeaseLostError } from "../errors.ts";
import { abortHeld, type Held, isRunning, move } from "./held.ts";
import type { ClaimLoop } from "./claim_loop.ts";
import type { Crew } from "./worker.ts";

/** The heartbeat and the maintenance of one worker (their timers start with it). */
export class Heartbeat<P> {
  readonly #crew: Crew<P>;
  readonly #loop: ClaimLoop<P>;
  readonly #beat: ReturnType<typeof setInterval>;
  readonly #maintenance: ReturnType<typeof setInterval>;

  constructor(crew: Crew<P>, loop: ClaimLoop<P>) {
    this.#crew = crew;
    this.#loop = loop;
    this.#beat = setInterval(() => void this.#extend(), crew.config.heartbeatMs);
    this.#maintenance = setInterval(() => void this.#maintain(), crew.config.maintenanceMs);
  }

  /** Stops the maintenance (a stop: no reaps from a worker that no longer claims). */
  stopMaintenance(): void {
    clearInterval(this.#maintenance);
  }

  /** Stops the heartbeat (every job held has left). */
  stop(): void {
    clearInterval(this.#beat);
  }

  /**
   * Marks the claims of `jobs` lost: their signals abort, they will not be settled here. A claim
   * whose settle went out meanwhile is not lost (the extension raced its own ack): the settle
   * decides. Reported once, for the claims really lost.
   */
  #lose(jobs: readonly Held<P>[], error: LeaseLostError | JobCancelledError): void {
    const slots = this.#crew.slots;
    const why = error instanceof JobCancelledError ? "cancelled" : "lease lost";
    let lost = 0;
    for (const held of jobs) {
      if (!slots.has(held) || !isRunning(held)) continue;
      move(held, "lost", why);
      lost++;
      held.span?.leaseLost(error);
      abortHeld(held, error);
    }
    this.#crew.counts.lost += lost;
    if (lost > 0) this.#crew.report(error);
  }

  /** Extends every running job's lease; lost (or cancelled) ones are dropped and the rest extended. */
  async #extend(): Promise<void> {
    const { client, config } = this.#crew;
    let list = [...this.#crew.slots.held.values()].filter(isRunning);
    while (list.length > 0) {
      const sentAt = performance.now();
      try {
        await client.extend(list.map((h) => h.job), config.leaseMs);
        for (const h of list) h.leaseUntil = Math.max(h.leaseUntil, sentAt + config.leaseMs);
        return;
      } catch (e) {
        if (!(e instanceof LeaseLostError || e instanceof JobCancelledError)) {
          this.#crew.report(e);
          return;
        }
        const lost = new Set(e.ids);
        this.#lose(list.filter((h) => lost.has(h.job.id)), e);
        const rest = list.filter((h) => !lost.has(h.job.id));
        if (rest.length === list.length) return;
        list = rest;
      }
    }
  }

  /** A worker with every slot busy claims nothing: it reaps expired leases itself now and then. */
  async #maintain(): Promise<void> {
    // Only a saturated worker (its claim loop waiting for a slot): a claim out on the server reaps
    // there, and a waiting one is answered when the first lease runs out.
    const crew = this.#crew;
    if (crew.stopping || !crew.slots.waiting || performance.now() - this.#loop.lastClaim < crew.config.maintenanceMs) return;
    try {
      await crew.client.reap(crew.queue);
    } catch (e) {
      crew.report(e);
    }
  }
}
