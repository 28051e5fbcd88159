/**
 * A counting semaphore that keeps the client's own requests under glide's in-flight limit, so a
 * burst (a worker pool, `enqueueMany`) waits instead of failing with "Reached maximum inflight
 * requests".
 *
 * @module
 */

/** At most `permits` tasks run at once; the others wait in order. */
export class Limiter {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  /** A limiter with `permits` (≥ 1) slots. */
  constructor(permits: number) {
    this.#free = Math.max(1, Math.floor(permits));
  }

  /** Runs `task` when a slot is free and frees the slot when it settles. */
  run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) {
      this.#free--;
      return this.#settle(task);
    }
    return new Promise<void>((wake) => this.#waiting.push(wake)).then(() => this.#settle(task));
  }

  #settle<T>(task: () => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      running = task();
    } catch (e) {
      this.#release();
      return Promise.reject(e);
    }
    return running.finally(() => this.#release());
  }

  // Hands the slot to the next waiter, or frees it.
  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
