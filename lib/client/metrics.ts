/**
 * A queue's history (`EchoMQ.metrics`): what its settles did per minute — jobs completed (ACK),
 * buried (BURY: failed for good) and retried (RETRY) — as the server keeps it in `emq:{q}:metrics`
 * (docs/WIRE.md, "History"), written by the settles themselves, so every process reads the same
 * minutes and none keeps history of its own. The newest `historyMinutes` (`retain`; default 1440,
 * a day; 0: off) are kept.
 *
 * @module
 */
import type { Keyspace } from "../keyspace/mod.ts";
import { HISTORY, HISTORY_MINUTE_MS, HISTORY_MINUTES_DEFAULT, LATENCY_BOUNDS_MS, MAX_HISTORY_MINUTES, META } from "../wire/mod.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import { integerIn, refuse } from "./options.ts";

/** One minute of a queue's history. */
export interface MinuteCounts {
  /** The minute's start, ms since the epoch (the server's clock). */
  readonly at: number;
  /** Jobs completed (acked) in the minute. */
  readonly processed: number;
  /** Jobs buried (failed for good: attempts spent, or buried by their handler) in the minute. */
  readonly failed: number;
  /** Failed attempts retried in the minute. */
  readonly retried: number;
}

/**
 * A latency histogram the server keeps (cumulative since the queue's history began): a count per
 * bucket — jobs at most `boundsMs[i]` and above the bound before, the last bucket past every bound —
 * their total and the sum of their ms.
 */
export interface LatencyHistogram {
  /** The buckets' upper bounds, ms (`LATENCY_BOUNDS_MS`). */
  readonly boundsMs: readonly number[];
  /** Jobs per bucket, one more than `boundsMs` (the last: past every bound). */
  readonly counts: readonly number[];
  /** Jobs counted. */
  readonly count: number;
  /** Their ms, summed. */
  readonly sumMs: number;
}

/** A queue's history as `EchoMQ.metrics` reads it. */
export interface QueueMetrics {
  /** The minutes asked for, oldest first, the current one (so far) last; a minute without a settle counts zeros. */
  readonly minutes: readonly MinuteCounts[];
  /** The minutes of history the queue keeps (`retain`'s `historyMinutes`; 0: none kept, every count is 0). */
  readonly historyMinutes: number;
  /**
   * Wait time (admitted or due → claimed) and run time (claimed → settled, its claim's time from its
   * token) of the jobs the queue's ACKs, RETRYs and BURYs settled, as histograms.
   */
  readonly latency: { readonly wait: LatencyHistogram; readonly run: LatencyHistogram };
}

/** The options of `EchoMQ.metrics`. */
export interface MetricsOptions {
  /** How many minutes, up to now, to read: 1 to 10080 (default 60). */
  readonly minutes?: number;
}

/** A stored minute `<acked> <buried> <retried>` (else zeros, as the verbs read it). */
export function minuteCounts(v: unknown): [number, number, number] {
  const text = v instanceof Uint8Array ? new TextDecoder().decode(v) : v === null || v === undefined ? "" : String(v);
  const m = /^(\d{1,15}) (\d{1,15}) (\d{1,15})$/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [0, 0, 0];
}

/** A stored histogram (`<c0> … <c15> <sum>`; else zeros, as the verbs read it). */
export function histogramOf(v: unknown): LatencyHistogram {
  const text = v instanceof Uint8Array ? new TextDecoder().decode(v) : v === null || v === undefined ? "" : String(v);
  const parts = text.split(" ");
  const ok = parts.length === LATENCY_BOUNDS_MS.length + 2 && parts.every((p) => /^\d{1,15}$/.test(p));
  const n = ok ? parts.map(Number) : new Array<number>(LATENCY_BOUNDS_MS.length + 2).fill(0);
  const counts = n.slice(0, -1);
  return { boundsMs: LATENCY_BOUNDS_MS, counts, count: counts.reduce((a, b) => a + b, 0), sumMs: n[n.length - 1]! };
}

/** See `EchoMQ.metrics`: the server's time, then one HMGET of the minutes, the histograms and `meta`'s setting. */
export async function metrics<P>(c: ClientContext<P>, ks: Keyspace, opts: MetricsOptions = {}): Promise<QueueMetrics> {
  if (opts === null || typeof opts !== "object") throw new EchoMQError("options", "metrics: options must be an object");
  const n = integerIn("metrics: minutes", opts.minutes ?? 60, 1, MAX_HISTORY_MINUTES, refuse("options"));
  const [s, us] = (await c.conn.command(["TIME"], ks.meta)) as unknown[];
  const now = Number(String(s)) * 1000 + Math.floor(Number(String(us)) / 1000);
  const current = Math.floor(now / HISTORY_MINUTE_MS);
  const fields = Array.from({ length: n }, (_, i) => String(current - n + 1 + i));
  const [values, setting] = await Promise.all([
    c.conn.command(["HMGET", ks.metrics, ...fields, HISTORY.wait, HISTORY.run], ks.meta) as Promise<unknown[]>,
    c.conn.command(["HGET", ks.meta, META.history_minutes], ks.meta),
  ]);
  const kept = setting === null || setting === undefined ? HISTORY_MINUTES_DEFAULT : Number(String(setting));
  return {
    historyMinutes: Number.isSafeInteger(kept) ? kept : HISTORY_MINUTES_DEFAULT,
    latency: { wait: histogramOf(values[n]), run: histogramOf(values[n + 1]) },
    minutes: fields.map((f, i) => {
      const [processed, failed, retried] = minuteCounts(values[i]);
      return { at: Number(f) * HISTORY_MINUTE_MS, processed, failed, retried };
    }),
  };
}
