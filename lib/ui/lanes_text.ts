/**
 * A queue's lanes in words, for `emq lanes` and the dashboard's Lanes section: a lane's name (the
 * default lane as "(default lane)"), its limits in force as `limitsText` says them, and one line
 * per lane. No DOM, no client.
 *
 * @module
 */
import type { LaneInfo } from "../client/mod.ts";
import { limitsText } from "./limits_text.ts";

/** How the default lane (the jobs enqueued without a lane) is shown. */
export const DEFAULT_LANE_TEXT = "(default lane)";

/** A lane's name as shown: JSON-quoted, or {@link DEFAULT_LANE_TEXT}. */
export function laneName(l: LaneInfo): string {
  return l.name === null ? DEFAULT_LANE_TEXT : JSON.stringify(l.name);
}

/** A lane's limits in force and its park, as `limitsText` words them ("none" when none). */
export function laneLimitsText(l: LaneInfo, now: number = Date.now()): string {
  return limitsText({ concurrency: l.concurrency, rate: l.rate, parkedUntil: l.parkedUntil }, now);
}

/** One lane as one line: name, ready, active, limits, and paused when it is. */
export function laneText(l: LaneInfo, now: number = Date.now()): string {
  return `${laneName(l)}: ${l.ready} ready, ${l.active} active, limits: ${laneLimitsText(l, now)}${l.paused ? ", paused" : ""}`;
}
