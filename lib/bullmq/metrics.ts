/**
 * BullMQ's `getMetrics` on EchoMQ's per-minute history (`emq:{q}:metrics`, written by the settles
 * themselves: docs/WIRE.md, "History"): `completed` is what ACKs completed, `failed` what BURYs
 * buried. BullMQ's series is a list of per-minute counts, newest first; here it runs from the
 * server's current minute back to the oldest minute the history still holds (its `first`, bounded by
 * the queue's `historyMinutes`), a minute without a settle counting 0. `meta.count` is `meta`'s total
 * (`acked` or `buried`), kept whether or not the history is on.
 *
 * @module
 */
import { minuteCounts } from "../client/metrics.ts";
import { HISTORY, HISTORY_MINUTE_MS, HISTORY_MINUTES_DEFAULT, META } from "../wire/mod.ts";
import type { Scope } from "./scope.ts";

/** A reply as a safe non-negative integer, else `fallback`. */
function int(v: unknown, fallback: number): number {
  if (v === null || v === undefined) return fallback;
  const n = Number(String(v));
  return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/** Redis' LRANGE bounds of `start`…`end` over a list of `n`: the first and last index, or null when empty. */
export function lrange(n: number, start: number, end: number): [number, number] | null {
  const first = Math.max(0, start < 0 ? n + start : start);
  const last = Math.min(n - 1, end < 0 ? n + end : end);
  return first > last ? null : [first, last];
}

/**
 * BullMQ's `getMetrics(type, start, end)`: `[[count, prevTS, prevCount], points, numPoints]` —
 * `points` the per-minute counts of `start`…`end` (0 the current minute), `numPoints` the length of
 * the whole series (as BullMQ's LLEN). `prevTS` and `prevCount` are BullMQ's collection marks, which
 * EchoMQ has no use for: `0`.
 */
export async function getMetrics(s: Scope, type: "completed" | "failed", start: number, end: number): Promise<[string[], string[], number]> {
  const { c, ks } = await s.on();
  const total = type === "failed" ? META.buried : META.acked;
  const replies = await c.conn.batch(
    [["TIME"], ["HGET", ks.metrics, HISTORY.first], ["HMGET", ks.meta, total, META.history_minutes]],
    ks.meta,
    true,
  );
  for (const r of replies) if (r instanceof Error) throw r;
  const [time, first, meta] = replies as [unknown[], unknown, unknown[]];
  const now = Math.floor((Number(String(time[0])) * 1000 + Math.floor(Number(String(time[1])) / 1000)) / HISTORY_MINUTE_MS);
  const kept = int(meta[1], HISTORY_MINUTES_DEFAULT);
  const oldest = Math.max(int(first, now + 1), now - kept + 1);
  const n = Math.max(0, now - oldest + 1);
  const slice = lrange(n, Math.trunc(start), Math.trunc(end));
  const count = String(int(meta[0], 0));
  if (slice === null) return [[count, "0", "0"], [], n];
  const fields = Array.from({ length: slice[1] - slice[0] + 1 }, (_, i) => String(now - slice[0] - i));
  const values = (await c.conn.command(["HMGET", ks.metrics, ...fields], ks.meta)) as unknown[];
  const at = type === "failed" ? 1 : 0;
  return [[count, "0", "0"], values.map((v) => String(minuteCounts(v)[at])), n];
}
