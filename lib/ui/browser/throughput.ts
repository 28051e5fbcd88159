/**
 * A queue page's throughput: acked jobs and failed attempts per second (the server's samples,
 * `QueueReply.rate`) as two lines of one chart (`#spark`, a 320×56 box, both on one scale: the
 * peak of either) with labelled axes, and in words (`#spark-desc`, its accessible description).
 *
 * @module
 */
import type { RatePoint } from "../json_api.ts";
import { $ } from "./dom.ts";

/** A throughput figure in words: `0`, `0.5`, `12`, `1.2k`. */
export function perSecText(x: number): string {
  if (x >= 10_000) return `${Math.round(x / 1000)}k`;
  if (x >= 1000) return `${(x / 1000).toFixed(1)}k`;
  if (x >= 10) return String(Math.round(x));
  return String(Math.round(x * 10) / 10);
}

/** The samples of the last `span` ms (or all, when they cover less). */
function lastSpan(rate: readonly RatePoint[], span: number): readonly RatePoint[] {
  const end = rate.length === 0 ? 0 : rate[rate.length - 1]!.t;
  return rate.filter((p) => p.t >= end - span);
}

/** The top of the chart's scale: the highest rate of either line, at least 1. */
function peakOf(shown: readonly RatePoint[]): number {
  return Math.max(1, ...shown.map((p) => Math.max(p.perSec, p.failedPerSec)));
}

/**
 * A line's polyline points in a `width`×`height` box: time on x (the newest point at the right
 * edge; the last `span` ms, or all the samples when they cover less), the rate `of` each sample on
 * y from 0 up to the peak of both lines. Empty for fewer than two points.
 */
export function sparkPoints(
  rate: readonly RatePoint[],
  width: number,
  height: number,
  span = 60_000,
  of: (p: RatePoint) => number = (p) => p.perSec,
): string {
  const shown = lastSpan(rate, span);
  if (shown.length < 2) return "";
  const start = shown[0]!.t;
  const end = shown[shown.length - 1]!.t;
  const peak = peakOf(shown);
  const pad = 2;
  return shown
    .map((p) => {
      const x = ((p.t - start) / (end - start)) * width;
      const y = height - pad - (of(p) / peak) * (height - 2 * pad);
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(" ");
}

/** What the sparkline says in words (its accessible description). */
export function rateSummary(rate: readonly RatePoint[]): string {
  if (rate.length === 0) return "Throughput: no samples yet";
  const now = rate[rate.length - 1]!.perSec;
  const peak = Math.max(...rate.map((p) => p.perSec));
  const seconds = rate.length < 2 ? 0 : Math.round((rate[rate.length - 1]!.t - rate[0]!.t) / 1000);
  const failed = rate[rate.length - 1]!.failedPerSec;
  return `Throughput: ${perSecText(now)} acked/s now, peak ${perSecText(peak)}/s over the last ${seconds} s; ${perSecText(failed)} failed/s now`;
}

/** The axes' labels of the shown samples: the peak (top of y) and how far back x starts. */
export function axisLabels(rate: readonly RatePoint[], span = 60_000): { peak: string; start: string } {
  const shown = lastSpan(rate, span);
  if (shown.length < 2) return { peak: "0/s", start: "—" };
  return { peak: `${perSecText(peakOf(shown))}/s`, start: `${Math.round((shown[shown.length - 1]!.t - shown[0]!.t) / 1000)} s ago` };
}

/** The page's sparkline, its axes and its words; the function it returns draws a rate. */
export function throughput(): (rate: readonly RatePoint[]) => void {
  const acked = $("spark").querySelector("polyline.acked")!;
  const failed = $("spark").querySelector("polyline.failed")!;
  const desc = $("spark-desc");
  const peak = $("spark-peak");
  const start = $("spark-start");
  return (rate) => {
    acked.setAttribute("points", sparkPoints(rate, 320, 56));
    failed.setAttribute("points", sparkPoints(rate, 320, 56, 60_000, (p) => p.failedPerSec));
    const axes = axisLabels(rate);
    if (peak.textContent !== axes.peak) peak.textContent = axes.peak;
    if (start.textContent !== axes.start) start.textContent = axes.start;
    const summary = rateSummary(rate);
    if (desc.textContent !== summary) desc.textContent = summary;
  };
}
