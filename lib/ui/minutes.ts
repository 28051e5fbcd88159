/**
 * A queue's processed jobs (acked) and failed attempts (retried + buried) per minute over the
 * last hour, for its page's chart: read from the history the server keeps (`mq.metrics`, written
 * by the settles themselves in `emq:{q}:metrics`), so every dashboard process — restarted, new, or
 * one of many behind a load balancer — draws the same hour, and none keeps history of its own.
 *
 * @module
 */
import type { QueueMetrics } from "../client/mod.ts";
import type { MinutesView } from "./json_api.ts";

/** One minute, ms. */
export const MINUTE_MS = 60_000;
/** Minutes the chart covers: the current one and the 59 before it. */
export const HOUR_MINUTES = 60;

/** The chart's view of `m` (the last {@link HOUR_MINUTES} minutes, as `mq.metrics` read them at `now`). */
export function minutesView(m: Pick<QueueMetrics, "minutes" | "historyMinutes">, now: number): MinutesView {
  const start = m.minutes[0]?.at ?? Math.floor(now / MINUTE_MS) * MINUTE_MS - (HOUR_MINUTES - 1) * MINUTE_MS;
  return {
    start,
    now,
    since: m.historyMinutes === 0 ? null : start,
    points: m.minutes.map((x) => ({ t: x.at, processed: x.processed, failed: x.failed + x.retried })),
  };
}
