/**
 * A queue's processed jobs (acked) and failed attempts (retried + buried) per minute over the
 * last hour, from the monotonic totals its `meta` keeps: the dashboard observes the totals whenever
 * it reads a queue's stats anyway (a page's polls, the sampler, `/metrics`' snapshot) and keeps,
 * per wall-clock minute, the first and the last observation. A minute's count is its last
 * observation minus the previous minute's last — consecutive minutes telescope, so the hour's sum
 * is exactly what the totals moved — or, for the first minute seen after a gap, what moved within
 * it. Minutes never observed have no count (a gap, not a zero). Times are the dashboard's clock,
 * passed in (`now`), so tests drive it with a fake one.
 *
 * @module
 */
import type { QueueStats } from "../client/mod.ts";
import type { MinutePoint, MinutesView } from "./json_api.ts";

/** One minute, ms. */
export const MINUTE_MS = 60_000;
/** Minutes a history covers: the current one and the 59 before it. */
export const HOUR_MINUTES = 60;

interface Totals {
  readonly processed: number;
  readonly failed: number;
}

interface Minute {
  readonly first: Totals;
  last: Totals;
}

/** The totals a minute's count is made of. */
function totalsOf(s: QueueStats): Totals {
  return { processed: s.acked, failed: s.retried + s.buried };
}

/** `b − a`, or `b` when the totals fell (the queue was dropped and made anew: counting again from 0). */
function moved(a: Totals, b: Totals): Totals {
  const d = (x: number, y: number): number => (y >= x ? y - x : y);
  return { processed: d(a.processed, b.processed), failed: d(a.failed, b.failed) };
}

/** The per-minute history of many queues. */
export class MinuteHistory {
  readonly #queues = new Map<string, { minutes: Map<number, Minute>; since: number }>();
  #swept = 0;

  /** Records `stats`' totals for `queue` as read at `now` (ms since the epoch). */
  observe(queue: string, stats: QueueStats, now: number): void {
    const m = Math.floor(now / MINUTE_MS);
    if (m !== this.#swept) this.#sweep(m);
    let q = this.#queues.get(queue);
    if (q === undefined) this.#queues.set(queue, q = { minutes: new Map(), since: now });
    const t = totalsOf(stats);
    const minute = q.minutes.get(m);
    if (minute === undefined) q.minutes.set(m, { first: t, last: t });
    else minute.last = t;
    // one minute before the hour is kept: the first minute of the window needs its predecessor
    for (const k of q.minutes.keys()) if (k < m - HOUR_MINUTES) q.minutes.delete(k);
  }

  /** Drops the queues not observed within the hour up to minute `m` (a queue dropped, a page long closed). */
  #sweep(m: number): void {
    this.#swept = m;
    for (const [queue, q] of this.#queues) {
      if (Math.max(...q.minutes.keys()) < m - HOUR_MINUTES) this.#queues.delete(queue);
    }
  }

  /** Whether `queue` was observed in `now`'s minute already. */
  seen(queue: string, now: number): boolean {
    return this.#queues.get(queue)?.minutes.has(Math.floor(now / MINUTE_MS)) ?? false;
  }

  /** `queue`'s counts per minute over the hour up to `now`, oldest first (the current minute so far last). */
  view(queue: string, now: number): MinutesView {
    const current = Math.floor(now / MINUTE_MS);
    const first = current - HOUR_MINUTES + 1;
    const kept = this.#queues.get(queue);
    // a queue last read before the window (not swept yet) is as unknown as one never read
    const q = kept !== undefined && Math.max(...kept.minutes.keys()) >= first - 1 ? kept : undefined;
    const points: MinutePoint[] = [];
    for (let m = first; q !== undefined && m <= current; m++) {
      const minute = q.minutes.get(m);
      if (minute === undefined) continue;
      const before = q.minutes.get(m - 1);
      const count = moved(before === undefined ? minute.first : before.last, minute.last);
      points.push({ t: m * MINUTE_MS, ...count });
    }
    const since = q === undefined ? null : Math.max(q.since, first * MINUTE_MS);
    return { start: first * MINUTE_MS, now, since, points };
  }
}
