/**
 * The per-minute chart of a queue's page as both halves draw it (no DOM, no client): bars of
 * processed jobs and failed attempts for each minute of the last hour (minutes.ts), the axes'
 * labels — counts per minute on y, UTC times on x — and the chart in words, its empty state
 * included.
 *
 * @module
 */
import type { MinutesView } from "./json_api.ts";
import { HOUR_MINUTES, MINUTE_MS } from "./minutes.ts";

/** A minute's start as the x axis writes it: `09:36 UTC`. */
export function minuteLabel(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 16)} UTC`;
}

/** The highest count of either series, at least 1: the top of the y axis. */
function peakOf(v: MinutesView): number {
  return Math.max(1, ...v.points.map((p) => Math.max(p.processed, p.failed)));
}

/** The axes' labels: the top of y (per minute), and x's first, middle and current minute. */
export function minuteAxes(v: MinutesView): { top: string; start: string; middle: string; end: string } {
  return {
    top: `${peakOf(v)}/min`,
    start: minuteLabel(v.start),
    middle: minuteLabel(v.start + (HOUR_MINUTES / 2) * MINUTE_MS),
    end: minuteLabel(v.start + (HOUR_MINUTES - 1) * MINUTE_MS),
  };
}

/** One bar: its box in the chart's coordinates, and which series it draws. */
export interface MinuteBar {
  readonly kind: "processed" | "failed";
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
  /** The minute it counts, ms. */
  readonly t: number;
  readonly count: number;
}

/**
 * The bars in a `width`×`height` box: the hour's 60 minutes side by side, each slot a processed
 * bar then a failed one, heights on one scale (the peak of both). A zero draws no bar.
 */
export function minuteBars(v: MinutesView, width: number, height: number): MinuteBar[] {
  const slot = width / HOUR_MINUTES;
  const peak = peakOf(v);
  const bars: MinuteBar[] = [];
  for (const p of v.points) {
    const i = Math.round((p.t - v.start) / MINUTE_MS);
    if (i < 0 || i >= HOUR_MINUTES) continue;
    for (const [k, kind] of (["processed", "failed"] as const).entries()) {
      const count = p[kind];
      if (count <= 0) continue;
      const h = Math.max(1, (count / peak) * height);
      bars.push({ kind, x: i * slot + k * (slot / 2), y: height - h, width: slot / 2, height: h, t: p.t, count });
    }
  }
  return bars;
}

/** The chart in words (its accessible description, and the empty state). */
export function minuteSummary(v: MinutesView): string {
  if (v.since === null) return "Per minute: the queue keeps no history (retain's historyMinutes is 0)";
  const processed = v.points.reduce((n, p) => n + p.processed, 0);
  const failed = v.points.reduce((n, p) => n + p.failed, 0);
  const span = v.since <= v.start ? "in the last hour" : `since ${minuteLabel(v.since)}`;
  if (processed === 0 && failed === 0) return `No traffic ${span}`;
  const busiest = v.points.reduce((a, b) => (b.processed > a.processed ? b : a));
  return `${processed} processed and ${failed} failed ${span}; busiest minute ${minuteLabel(busiest.t)} with ${busiest.processed} processed`;
}
