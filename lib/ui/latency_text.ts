/**
 * A queue's latency percentiles as the queue page shows them (both halves: the server computes
 * them from the histograms the settles keep, `mq.metrics`' latency; the browser writes the words):
 * each percentile is the upper bound of the bucket it falls in — "at most" — or past the last bound.
 *
 * @module
 */
import type { LatencyHistogram } from "../client/mod.ts";

/** A histogram's p50, p95 and p99 as bucket bounds, ms (`Infinity`: past the last bound); null when it counted none. */
export interface Percentiles {
  /** Jobs counted. */
  readonly count: number;
  /** The median's bucket bound, ms. */
  readonly p50: number | null;
  /** The 95th percentile's bucket bound, ms. */
  readonly p95: number | null;
  /** The 99th percentile's bucket bound, ms. */
  readonly p99: number | null;
}

/** The percentiles of `h`: the bound of the first bucket whose cumulative count reaches each rank. */
export function percentiles(h: LatencyHistogram): Percentiles {
  const at = (q: number): number | null => {
    if (h.count === 0) return null;
    const rank = Math.ceil(q * h.count);
    let seen = 0;
    for (let i = 0; i < h.counts.length; i++) {
      seen += h.counts[i]!;
      if (seen >= rank) return i < h.boundsMs.length ? h.boundsMs[i]! : Infinity;
    }
    return Infinity;
  };
  return { count: h.count, p50: at(0.5), p95: at(0.95), p99: at(0.99) };
}

/** A bound as words: `50 ms`, `2.5 s`, `5 min`, `1 h`, `1 d`, or past a day. */
function boundText(ms: number): string {
  if (ms === Infinity) return "> 1 d";
  if (ms < 1000) return `≤ ${ms} ms`;
  if (ms < 60_000) return `≤ ${ms / 1000} s`;
  if (ms < 3_600_000) return `≤ ${ms / 60_000} min`;
  if (ms < 86_400_000) return `≤ ${ms / 3_600_000} h`;
  return `≤ ${ms / 86_400_000} d`;
}

/** The page's line: `Wait (ready → claimed): p50 ≤ 50 ms, p95 ≤ 1 s, p99 ≤ 2.5 s of 1200 jobs; run (claimed → settled): …`. */
export function latencyText(wait: Percentiles, run: Percentiles): string {
  const one = (p: Percentiles): string =>
    p.count === 0 ? "no jobs yet" : `p50 ${boundText(p.p50!)}, p95 ${boundText(p.p95!)}, p99 ${boundText(p.p99!)} of ${p.count} jobs`;
  return `Wait (ready → claimed): ${one(wait)}; run (claimed → settled): ${one(run)}`;
}
