/**
 * The queue page's per-minute chart (lib/ui/minutes.ts: the server's history, `mq.metrics`, as the
 * chart's view; the chart's pieces in lib/ui/minute_chart.ts; the per-second sampling in
 * lib/ui/sampler.ts) on a fake clock: the hour's window, failed as retried + buried, the axes'
 * labels with their zone, the bars, the words and the empty states ("No traffic in the last hour",
 * a queue that keeps no history), and a closed page's queue sampled no more. No server, no sleep.
 */
import { describe, expect, test } from "bun:test";
import type { EchoMQ, MinuteCounts, QueueStats } from "../../client.ts";
import { minuteAxes, minuteBars, minuteLabel, minuteSummary } from "../../lib/ui/minute_chart.ts";
import { MINUTE_MS, minutesView } from "../../lib/ui/minutes.ts";
import { Sampler } from "../../lib/ui/sampler.ts";
import { latencyText, percentiles } from "../../lib/ui/latency_text.ts";
import { LATENCY_BOUNDS_MS } from "../../lib/wire/mod.ts";

/** 2026-12-02 09:00:00 UTC: a minute's start. */
const T0 = Date.UTC(2026, 11, 2, 9, 0, 0);
const stats = (acked: number): QueueStats => ({
  pending: 0,
  active: 0,
  schedule: 0,
  dead: 0,
  completed: 0,
  waitingChildren: 0,
  paused: false,
  createdAt: 1,
  enqueued: 0,
  acked,
  retried: 0,
  buried: 0,
  claims: 0,
  deadMax: 0,
  deadAgeMs: 0,
  completedMax: 0,
  completedAgeMs: 0,
  eventsMax: 0,
  historyMinutes: 1440,
  limits: { concurrency: null, rate: null, parkedUntil: null },
  lanes: 0,
} as QueueStats);
/** The hour from 09:00 as `mq.metrics` reads it, with `busy`'s counts (by minute) and zeros elsewhere. */
const hour = (busy: Record<number, Omit<MinuteCounts, "at">> = {}, historyMinutes = 1440) => ({
  historyMinutes,
  minutes: Array.from({ length: 60 }, (_, k) => Object.assign({ at: T0 + k * MINUTE_MS, processed: 0, failed: 0, retried: 0 }, busy[k])),
});

describe("the server's history as the chart's view", () => {
  test("every minute of the hour, failed as retried + buried; the words", () => {
    const v = minutesView(hour({ 0: { processed: 5, failed: 0, retried: 0 }, 1: { processed: 15, failed: 2, retried: 1 } }), T0 + 59 * MINUTE_MS + 500);
    expect(v.points.length).toBe(60);
    expect(v.points.slice(0, 2)).toEqual([
      { t: T0, processed: 5, failed: 0 },
      { t: T0 + MINUTE_MS, processed: 15, failed: 3 },
    ]);
    expect([v.start, v.since]).toEqual([T0, T0]);
    expect(minuteSummary(v)).toBe("20 processed and 3 failed in the last hour; busiest minute 09:01 UTC with 15 processed");
  });

  test("the empty states: no traffic in the last hour; a queue that keeps no history", () => {
    const idle = minutesView(hour(), T0 + 59 * MINUTE_MS);
    expect(minuteSummary(idle)).toBe("No traffic in the last hour");
    expect(minuteBars(idle, 360, 64)).toEqual([]);
    const off = minutesView(hour({}, 0), T0 + 59 * MINUTE_MS);
    expect(off.since).toBeNull();
    expect(minuteSummary(off)).toBe("Per minute: the queue keeps no history (retain's historyMinutes is 0)");
  });
});

describe("the chart's pieces", () => {
  const v = minutesView(
    hour({ 0: { processed: 40, failed: 0, retried: 2 }, 59: { processed: 8, failed: 3, retried: 0 } }),
    T0 + 59 * MINUTE_MS + 30_000, // 09:59:30: the window is 09:00 to 09:59
  );

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
  test("a page's queue is sampled while it is open, then no more", async () => {
    let now = T0 + 10_000;
    let reads = 0;
    const mq = { stats: async () => (reads++, stats(reads * 3)) } as unknown as EchoMQ<unknown>;
    const sampler = new Sampler(mq, 1000, 60, 30_000, () => now);
    try {
      sampler.record("q", stats(0)); // the page opened
      for (let s = 11; s <= 40; s++) {
        now = T0 + s * 1000;
        await sampler.tick();
      }
      expect(reads).toBe(30); // a read a second until 30 s after the page's last read
      expect(sampler.rate("q").length).toBeGreaterThan(10);
      now += 1000;
      await sampler.tick();
      expect(reads).toBe(30);
      expect(sampler.rate("q")).toEqual([]);
    } finally {
      sampler.close();
    }
  });
});

describe("latency percentiles", () => {
  const h = (counts: number[]) => ({ boundsMs: LATENCY_BOUNDS_MS, counts, count: counts.reduce((a, b) => a + b, 0), sumMs: 0 });
  test("each percentile is the bound of the bucket its rank falls in; past the last bound; none counted", () => {
    // 100 jobs: 60 within 10 ms, 35 within 1 s, 4 within 1 min, 1 past a day
    const counts = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
    for (const [i, n] of [[0, 60], [5, 35], [10, 4], [15, 1]] as const) counts[i] = n;
    expect(percentiles(h(counts))).toEqual({ count: 100, p50: 10, p95: 1000, p99: 60_000 });
    const tail = new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0);
    tail[15] = 3;
    expect(percentiles(h(tail))).toEqual({ count: 3, p50: Infinity, p95: Infinity, p99: Infinity });
    const none = percentiles(h(new Array<number>(LATENCY_BOUNDS_MS.length + 1).fill(0)));
    expect(latencyText(percentiles(h(counts)), none)).toBe(
      "Wait (ready → claimed): p50 ≤ 10 ms, p95 ≤ 1 s, p99 ≤ 1 min of 100 jobs; run (claimed → settled): no jobs yet",
    );
    expect(latencyText(percentiles(h(tail)), none)).toContain("p50 > 1 d");
  });
});
