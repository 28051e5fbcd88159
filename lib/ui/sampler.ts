/**
 * The throughput a queue's page draws: the `acked` and failure (`retried` + `buried`) totals of
 * every watched queue sampled at an interval, kept as a short series, read as per second. A queue
 * whose page closed is sampled no more (its per-minute history is the server's: minutes.ts).
 *
 * @module
 */
import type { EchoMQ, QueueStats } from "../client/mod.ts";
import type { RatePoint } from "./json_api.ts";

interface Series {
  samples: Array<{ t: number; acked: number; failed: number }>;
  watchedAt: number;
}

/**
 * Samples the `acked` and failure totals of the queues a page watches (asked for within the last
 * `forgetMs`), every `everyMs`, keeping the last `keep` samples: the throughput sparkline.
 */
export class Sampler {
  readonly #mq: EchoMQ<unknown>;
  readonly #every: number;
  readonly #keep: number;
  readonly #forget: number;
  readonly #series = new Map<string, Series>();
  readonly #clock: () => number;
  readonly #timer: ReturnType<typeof setInterval>;
  #busy = false;

  /**
   * Starts sampling (nothing is read until a queue is watched). `clock` is the wall clock the
   * samples are timed by (tests pass a fake one).
   */
  constructor(mq: EchoMQ<unknown>, everyMs = 1000, keep = 60, forgetMs = 30_000, clock: () => number = Date.now) {
    this.#mq = mq;
    this.#every = everyMs;
    this.#keep = keep;
    this.#forget = forgetMs;
    this.#clock = clock;
    this.#timer = setInterval(() => void this.#tick(), everyMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** The interval between samples, ms. */
  get everyMs(): number {
    return this.#every;
  }

  /** Marks `queue` watched (sampled from now on) and records `stats` if a sample is due. */
  record(queue: string, stats: QueueStats, now: number = this.#clock()): void {
    let s = this.#series.get(queue);
    if (s === undefined) this.#series.set(queue, s = { samples: [], watchedAt: now });
    s.watchedAt = now;
    const last = s.samples[s.samples.length - 1];
    if (last !== undefined && now - last.t < this.#every / 2) return;
    s.samples.push({ t: now, acked: stats.acked, failed: stats.retried + stats.buried });
    if (s.samples.length > this.#keep + 1) s.samples.splice(0, s.samples.length - this.#keep - 1);
  }

  /** Samples due now: the queues whose page is open. */
  tick(): Promise<void> {
    return this.#tick();
  }

  /** `queue`'s acked jobs and failed attempts per second between consecutive samples, oldest first. */
  rate(queue: string): RatePoint[] {
    const s = this.#series.get(queue)?.samples ?? [];
    const out: RatePoint[] = [];
    for (let i = 1; i < s.length; i++) {
      const dt = (s[i]!.t - s[i - 1]!.t) / 1000;
      // a difference below 0: the queue was made anew
      const per = (d: number): number => (dt > 0 && d > 0 ? d / dt : 0);
      out.push({ t: s[i]!.t, perSec: per(s[i]!.acked - s[i - 1]!.acked), failedPerSec: per(s[i]!.failed - s[i - 1]!.failed) });
    }
    return out;
  }

  async #tick(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const now = this.#clock();
      for (const [queue, s] of this.#series) {
        if (now - s.watchedAt > this.#forget) {
          // its page closed: no samples (the series starts again when it opens)
          this.#series.delete(queue);
          continue;
        }
        try {
          const stats = await this.#mq.stats(queue);
          const watchedAt = s.watchedAt;
          this.record(queue, stats, this.#clock());
          s.watchedAt = watchedAt; // sampling is not watching
        } catch {
          // the next tick tries again; the page shows the error when its own read fails
        }
      }
    } finally {
      this.#busy = false;
    }
  }

  /** Stops sampling. */
  close(): void {
    clearInterval(this.#timer);
  }
}
