/**
 * Backoff helpers for a worker's `backoff` option: {@link exponential} (doubling, capped, with
 * jitter) and {@link fixed}. A handler may still throw a `RetryError` with its own `delayMs`, which
 * overrides either for that attempt.
 *
 * @module
 */
import { MAX_WIRE_NUMBER } from "../wire/mod.ts";
import { EchoMQError } from "./errors.ts";

/** Options of {@link exponential}. */
export interface ExponentialOptions {
  /** The first retry's delay, in ms (default 1000). */
  readonly baseMs?: number;
  /** The longest delay, in ms (default 3600000). */
  readonly maxMs?: number;
  /**
   * The fraction of each delay drawn at random (0 to 1, default 0): with 0.5, a 4 s delay is
   * anywhere from 2 s to 4 s, so that jobs failing together do not retry together.
   */
  readonly jitter?: number;
}

function ms(what: string, value: unknown, fallback: number): number {
  const v = value === undefined ? fallback : value;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1 || v > MAX_WIRE_NUMBER) {
    throw new EchoMQError("options", `${what} must be an integer of ms from 1 to ${MAX_WIRE_NUMBER}, got ${String(value)}`);
  }
  return v;
}

/**
 * baseMs · 2^(attempts−1), at most maxMs, less a random part of up to `jitter` of it; never below
 * 1 ms. `exponential()` is the worker's default (1 s, 2 s, 4 s … 1 h).
 *
 * @example
 * ```ts
 * import { exponential } from "../../client.ts";
 * const backoff = exponential({ baseMs: 200, maxMs: 60_000, jitter: 0.5 });
 * // mq.work("mail", handler, { backoff });
 * ```
 */
export function exponential(opts: ExponentialOptions = {}): (attempts: number) => number {
  const base = ms("exponential: baseMs", opts.baseMs, 1000);
  const max = ms("exponential: maxMs", opts.maxMs, 3_600_000);
  const jitter = opts.jitter ?? 0;
  if (typeof jitter !== "number" || !(jitter >= 0 && jitter <= 1)) {
    throw new EchoMQError("options", `exponential: jitter must be a number from 0 to 1, got ${String(opts.jitter)}`);
  }
  return (attempts: number): number => {
    const delay = Math.min(max, base * 2 ** Math.max(0, attempts - 1));
    return Math.max(1, Math.round(delay * (1 - jitter * Math.random())));
  };
}

/** The same delay before every retry, in ms. */
export function fixed(delayMs: number): () => number {
  const d = ms("fixed: delayMs", delayMs, 0);
  return (): number => d;
}
