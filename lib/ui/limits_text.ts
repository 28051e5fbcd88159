/**
 * A queue's limits in words, for its page: "at most 5 active · 10 per 1 s (burst 1) · parked until
 * 2026-12-02 10:00:00 UTC", or "none".
 *
 * @module
 */
import type { QueueLimits } from "../client/mod.ts";
import { utcText } from "./relative.ts";

/** `ms` as the shortest of ms, s, min, h. */
function period(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** The limits as one line of text. */
export function limitsText(l: QueueLimits): string {
  const parts: string[] = [];
  if (l.concurrency !== null) parts.push(`at most ${l.concurrency} active`);
  if (l.rate !== null) parts.push(`${l.rate.max} per ${period(l.rate.perMs)} (burst ${l.rate.burst})`);
  if (l.parkedUntil !== null) parts.push(`parked until ${utcText(l.parkedUntil)}`);
  return parts.length === 0 ? "none" : parts.join(" · ");
}
