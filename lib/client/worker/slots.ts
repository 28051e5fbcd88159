/**
 * The jobs a worker holds, by key, and what they leave of its slots: a job's slot frees when its
 * handler is done and its settle queued (the next claim goes out while that settle is in flight),
 * and a handler past its time limit keeps its slot until it returns. The moves that change these
 * counts (settling, leaving) go through here; the others are `move` (held.ts).
 *
 * @module
 */
import type { JobRef } from "../job.ts";
import { type Held, move, type Why } from "./held.ts";

/**
 * A claim's key among the jobs held, when the job's id is taken already by another claim of it:
 * id and token. The same worker may hold one job twice — its lease ran out and this worker claimed
 * it again — and the two claims must stay apart. (A job id has no space: the two kinds of key never meet.)
 */
const claimKey = (job: JobRef): string => `${job.id} ${job.token}`;

/** The jobs a worker holds and its free slots. */
export class Slots<P> {
  /** The jobs held, by {@link Held.key}. */
  readonly held: Map<string, Held<P>> = new Map();
  /** Handlers past their time limit, still running: their jobs left or are settling, their slots did not. */
  readonly overdue: Set<Held<P>> = new Set();
  /** How many jobs are held under a {@link claimKey} (another claim of their job held already). */
  #keyedByClaim = 0;
  /** How many are settling (handler done, settle queued or in flight). */
  #settling = 0;
  /** Wakes the claim loop when a slot frees. */
  #waiter: (() => void) | null = null;
  readonly #concurrency: number;

  constructor(concurrency: number) {
    this.#concurrency = concurrency;
  }

  /** Held jobs whose handlers are not done (settling ones are). */
  get busy(): number {
    return this.held.size - this.#settling;
  }

  /**
   * Free slots, but `asked` (slots calls in flight ask for). Jobs held — running, or settling —
   * stay below twice the concurrency.
   */
  free(asked: number): number {
    const running = this.held.size - this.#settling + this.overdue.size;
    return Math.min(this.#concurrency - running, 2 * this.#concurrency - this.held.size) - asked;
  }

  /** The claim loop waits for a slot (see {@link wait}). */
  get waiting(): boolean {
    return this.#waiter !== null;
  }

  /** Resolves at the next {@link freed}. */
  wait(): Promise<void> {
    return new Promise<void>((wake) => (this.#waiter = wake));
  }

  /** A slot may have freed (or settles wait): wakes the claim loop. */
  freed(): void {
    const wake = this.#waiter;
    this.#waiter = null;
    wake?.();
  }

  /**
   * The record of `job` to hold under its id, or under its claim key when another claim of the job
   * holds the id; or, the same claim held already (a failover lost its record, and the server
   * handed out the same token), that record.
   */
  find(job: JobRef): { key: string; twin: Held<P> | undefined } {
    let key: string = job.id;
    let twin = this.held.get(key);
    if (twin !== undefined ? twin.job.token !== job.token : this.#keyedByClaim > 0) {
      // another claim of this job is held under its id, or may be held under its claim key
      const other = this.held.get(claimKey(job));
      if (twin !== undefined) key = claimKey(job);
      twin = other;
    }
    return { key, twin };
  }

  /** Holds `held` (its key from {@link find}). */
  add(held: Held<P>): void {
    this.held.set(held.key, held);
    if (held.key !== held.job.id) this.#keyedByClaim++;
  }

  /** Whether `held` is still held (not released, nor replaced). */
  has(held: Held<unknown>): boolean {
    return this.held.get(held.key) === held;
  }

  /** `held` (running) is settling from now on, `why`: its slot frees. */
  settling(held: Held<P>, why: Why): void {
    move(held, "settling", why);
    this.#settling++;
    this.freed();
  }

  /** The job leaves this worker: its slot frees (a job that left already stays so). */
  release(held: Held<P>): void {
    if (held.state === "left") return;
    if (this.has(held)) {
      this.held.delete(held.key);
      if (held.key !== held.job.id) this.#keyedByClaim--;
      if (held.state === "settling") this.#settling--;
    }
    move(held, "left");
    held.span?.end();
    this.freed();
  }
}
