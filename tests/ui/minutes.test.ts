/**
 * The queue page's per-minute history (lib/ui/minutes.ts, the chart's pieces in
 * lib/ui/minute_chart.ts, the sampling in lib/ui/sampler.ts) on a fake clock: counts per wall-clock
 * minute from the totals (consecutive minutes telescope, a gap is no zero, a queue made anew counts
 * from 0), the hour's window, the axes' labels with their zone, the bars, the words and the empty
 * state ("No traffic in the last hour"), and a closed page's queue read once a minute for an hour,
 * then forgotten. No server, no sleep: the clock is a variable.
 */
import { describe, expect, test } from "bun:test";
import type { EchoMQ, QueueStats } from "../../client.ts";
import { minuteAxes, minuteBars, minuteLabel, minuteSummary } from "../../lib/ui/minute_chart.ts";
import { MINUTE_MS, MinuteHistory } from "../../lib/ui/minutes.ts";
import { Sampler } from "../../lib/ui/sampler.ts";

/** 2026-12-02 09:00:00 UTC: a minute's start. */
const T0 = Date.UTC(2026, 11, 2, 9, 0, 0);
const stats = (acked: number, retried = 0, buried = 0): QueueStats => ({
  pending: 0,
  active: 0,
  schedule: 0,
  dead: 0,
  completed: 0,
  paused: false,
  createdAt: 1,
  enqueued: 0,
  acked,
  retried,
  buried,
  claims: 0,
  deadMax: 0,
  deadAgeMs: 0,
  completedMax: 0,
  completedAgeMs: 0,
  eventsMax: 0,
  limits: { concurrency: null, rate: null, parkedUntil: null },
  lanes: 0,
});

describe("MinuteHistory", () => {
  test("a minute counts what the totals moved since the minute before's last reading", () => {
    const h = new MinuteHistory();
    h.observe("q", stats(100), T0 + 5_000); // the first reading: the baseline
    h.observe("q", stats(105), T0 + 50_000);
    h.observe("q", stats(112, 1), T0 + 65_000);
    h.observe("q", stats(120, 1, 2), T0 + 119_000);
    const v = h.view("q", T0 + 119_500);
    expect(v.points).toEqual([
      { t: T0, processed: 5, failed: 0 },
      { t: T0 + MINUTE_MS, processed: 15, failed: 3 },
    ]);
    expect(v.since).toBe(T0 + 5_000);
    expect(v.start).toBe(T0 + MINUTE_MS - 59 * MINUTE_MS);
    expect(minuteSummary(v)).toBe("20 processed and 3 failed since 09:00 UTC (sampled from then); busiest minute 09:01 UTC with 15 processed");
  });

  test("a minute not read is a gap, not a zero; after it, a minute counts only what moved within it", () => {
    const h = new MinuteHistory();
    h.observe("q", stats(0), T0);
    h.observe("q", stats(10), T0 + 59_000);
    h.observe("q", stats(40), T0 + 3 * MINUTE_MS + 1_000); // minutes 1 and 2 unread
    h.observe("q", stats(44), T0 + 3 * MINUTE_MS + 30_000);
    expect(h.view("q", T0 + 3 * MINUTE_MS + 31_000).points).toEqual([
      { t: T0, processed: 10, failed: 0 },
      { t: T0 + 3 * MINUTE_MS, processed: 4, failed: 0 },
    ]);
  });

  test("totals that fall (the queue dropped and made anew) count from zero", () => {
    const h = new MinuteHistory();
    h.observe("q", stats(500, 9), T0);
    h.observe("q", stats(3), T0 + 30_000);
    expect(h.view("q", T0 + 31_000).points).toEqual([{ t: T0, processed: 3, failed: 0 }]);
  });

  test("the window is the last 60 minutes; older ones go, and a queue read no more within the hour is forgotten", () => {
    const h = new MinuteHistory();
    h.observe("old", stats(1), T0);
    for (let m = 0; m <= 90; m++) h.observe("q", stats(m * 2), T0 + m * MINUTE_MS + 1_000);
    const now = T0 + 90 * MINUTE_MS + 2_000;
    const v = h.view("q", now);
    expect(v.points.length).toBe(60);
    expect(v.points[0]).toEqual({ t: T0 + 31 * MINUTE_MS, processed: 2, failed: 0 });
    expect(v.points.at(-1)).toEqual({ t: T0 + 90 * MINUTE_MS, processed: 2, failed: 0 });
    expect(v.since).toBe(v.start); // read before the window: the whole hour is known
    expect(minuteSummary(v)).toBe("120 processed and 0 failed in the last hour; busiest minute 09:31 UTC with 2 processed");
    expect(h.view("old", now)).toEqual({ start: v.start, now, since: null, points: [] }); // swept
    expect(h.seen("q", now)).toBe(true);
    expect(h.seen("q", now + MINUTE_MS)).toBe(false);
  });

  test("the empty state: no traffic in the last hour, or since the first reading when that is later", () => {
    const h = new MinuteHistory();
    const none = h.view("q", T0);
    expect(minuteSummary(none)).toBe("Per minute: no samples yet");
    h.observe("q", stats(7), T0 + 20_000);
    h.observe("q", stats(7), T0 + 80_000);
    expect(minuteSummary(h.view("q", T0 + 90_000))).toBe("No traffic since 09:00 UTC (sampled from then)");
    for (let m = 2; m <= 61; m++) h.observe("q", stats(7), T0 + m * MINUTE_MS);
    const idle = h.view("q", T0 + 61 * MINUTE_MS + 5_000);
    expect(minuteSummary(idle)).toBe("No traffic in the last hour");
    expect(minuteBars(idle, 360, 64)).toEqual([]);
  });
});

describe("the chart's pieces", () => {
  const h = new MinuteHistory();
  const now = T0 + 59 * MINUTE_MS + 30_000; // 09:59:30: the window is 09:00 to 09:59
  h.observe("q", stats(0), T0 + 1_000);
  h.observe("q", stats(40, 2), T0 + 50_000);
  h.observe("q", stats(52, 2, 5), T0 + 59 * MINUTE_MS + 1_000); // after a gap: counts within its minute
  h.observe("q", stats(60, 2, 8), T0 + 59 * MINUTE_MS + 10_000);
  const v = h.view("q", now);

  test("axes: y up to the peak per minute, x in UTC with its zone", () => {
    expect(minuteAxes(v)).toEqual({ top: "40/min", start: "09:00 UTC", middle: "09:30 UTC", end: "09:59 UTC" });
    expect(minuteLabel(Date.UTC(2026, 0, 1, 23, 5, 59))).toBe("23:05 UTC");
  });

  test("bars: each minute's slot, processed then failed, on one scale; zeros draw nothing", () => {
    expect(minuteBars(v, 360, 64)).toEqual([
      { kind: "processed", x: 0, y: 0, width: 3, height: 64, t: T0, count: 40 },
      { kind: "failed", x: 3, y: 60.8, width: 3, height: 3.2, t: T0, count: 2 },
      { kind: "processed", x: 354, y: 51.2, width: 3, height: 12.8, t: T0 + 59 * MINUTE_MS, count: 8 },
      { kind: "failed", x: 357, y: 59.2, width: 3, height: 4.8, t: T0 + 59 * MINUTE_MS, count: 3 },
    ]);
  });
});

describe("Sampler on a fake clock", () => {
  test("a closed page's queue is read once a minute for an hour, then no more", async () => {
    let now = T0 + 10_000;
    let reads = 0;
    let acked = 0;
    const mq = { stats: async () => (reads++, stats(acked)) } as unknown as EchoMQ<unknown>;
    const sampler = new Sampler(mq, 1000, 60, 30_000, () => now);
    try {
      sampler.record("q", stats(acked)); // the page opened
      // ticks every 10 s for 61 minutes; the page closed from the start (30 s later)
      const perMinute = new Map<number, number>();
      for (let s = 10; s <= 61 * 60 + 10; s += 10) {
        now = T0 + s * 1000;
        acked += 3;
        const before = reads;
        await sampler.tick();
        const m = Math.floor(now / MINUTE_MS);
        perMinute.set(m, (perMinute.get(m) ?? 0) + reads - before);
      }
      // first half-minute: a read a tick (the page's per-second series); then one a minute
      const counts = [...perMinute.values()];
      expect(counts.slice(1, 60).every((n) => n === 1)).toBe(true);
      expect(counts.at(-1)).toBe(0); // an hour after the page closed: forgotten
      const v = sampler.minutes("q");
      expect(v.points.length).toBeGreaterThanOrEqual(58);
      // a minute read once counts what moved since the minute before: 6 ticks of 3
      expect(v.points.slice(1, -1).every((p) => p.processed === 18)).toBe(true);
    } finally {
      sampler.close();
    }
  });
});
