/**
 * A queue's limits in words, for its page (rendered on the server, refreshed in the browser) and
 * `emq limit`: "at most 5 active · 10 per 1 s (burst 1) · parked until 2026-12-02 10:00:00.000 UTC
 * (in 20 s)", or "none". No DOM, no client.
 *
 * @module
 */
import type { QueueLimits } from "../client/mod.ts";
import { relative, utcText } from "./relative.ts";

/** `ms` as the shortest of ms, s, min, h. */
export function periodText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** The limits as one line of text; a park's end also as far from `now` (the reader's clock). */
export function limitsText(l: QueueLimits, now: number = Date.now()): string {
  const parts: string[] = [];
  if (l.concurrency !== null) parts.push(`at most ${l.concurrency} active`);
  if (l.rate !== null) parts.push(`${l.rate.max} per ${periodText(l.rate.perMs)} (burst ${l.rate.burst})`);
  if (l.parkedUntil !== null) parts.push(`parked until ${utcText(l.parkedUntil)} (${relative(l.parkedUntil, now)})`);
  return parts.length === 0 ? "none" : parts.join(" · ");
}
