/**
 * A failed attempt's error as a job's row keeps it (issue 37.1): the client encodes what was
 * thrown — its name, message and stack, the attempt and the time — as one JSON text of at most
 * {@link MAX_ERROR_BYTES} bytes (the stack cut first, then the message; `truncated` says so), and
 * the settle that records the failure (RETRY, BURY, SETTLE) writes it among the newest
 * {@link FAILURES_KEPT} of the row (`failure:0` … `failure:9`, `failures` counting them). Read
 * back oldest first by {@link failuresOf}.
 *
 * @module
 */
import { FAILURES_KEPT, MAX_ERROR_BYTES, ROW } from "../wire/mod.ts";
import { byteLength } from "./codec.ts";

/** One failed attempt, as `getJob` returns it. */
export interface FailedAttempt {
  /** The attempt that failed (1 on the first claim); absent when the sender did not know it. */
  readonly attempt?: number;
  /** When it failed, ms since the epoch (the failing worker's clock). */
  readonly at: number;
  /** The error's name (`TypeError`, …); for a thrown value that is not an `Error`, its type. */
  readonly name: string;
  /** The error's message (for a thrown value that is not an `Error`, the value as text). */
  readonly message: string;
  /** The stack as the runtime wrote it, if the error had one. */
  readonly stack?: string;
  /** True when the message or the stack was cut to fit the row's bound. */
  readonly truncated?: true;
}

/** Longest name kept (a name is a word; a huge custom one is cut). */
const MAX_NAME_CHARS = 200;

/** `text`'s first `n` UTF-16 units, one less when that would split a surrogate pair. */
function prefix(text: string, n: number): string {
  const c = text.charCodeAt(n - 1);
  return text.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

/**
 * The longest prefix of `text` (by binary search on its length) for which `encode` fits within
 * {@link MAX_ERROR_BYTES}; `null` when even the empty one does not.
 */
function longestFitting(text: string, encode: (t: string) => string): string | null {
  const fits = (t: string): boolean => byteLength(encode(t)) <= MAX_ERROR_BYTES;
  if (!fits("")) return null;
  let [lo, hi] = [0, text.length]; // fits(prefix(lo)), and not fits(text) when hi is its length
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (fits(prefix(text, mid))) lo = mid;
    else hi = mid;
  }
  return prefix(text, lo);
}

/**
 * The row's text of a failure of `attempt` with `error` (whatever a handler threw), at `at`: JSON
 * of a {@link FailedAttempt}, at most {@link MAX_ERROR_BYTES} bytes — when longer, the stack is cut
 * to the longest prefix that fits, then (a huge message) the message, and `truncated` is set.
 */
export function failureText(error: unknown, attempt?: number, at: number = Date.now()): string {
  let name: string, message: string, stack: string | undefined;
  try {
    const isError = error instanceof Error;
    name = isError ? String(error.name) : error === null ? "null" : typeof error;
    message = isError ? String(error.message) : String(error);
    stack = isError && typeof error.stack === "string" ? error.stack : undefined;
  } catch {
    // a getter that throws, a value without a text form: the failure is still recorded
    [name, message, stack] = ["Error", "(the thrown value could not be read)", undefined];
  }
  if (name.length > MAX_NAME_CHARS) name = prefix(name, MAX_NAME_CHARS);
  const encode = (m: string, s: string | undefined, truncated: boolean): string =>
    JSON.stringify({
      ...(attempt === undefined ? {} : { attempt }),
      at,
      name,
      message: m,
      ...(s === undefined ? {} : { stack: s }),
      ...(truncated ? { truncated: true } : {}),
    });
  const whole = encode(message, stack, false);
  if (byteLength(whole) <= MAX_ERROR_BYTES) return whole;
  const cutStack = stack === undefined ? null : longestFitting(stack, (s) => encode(message, s, true));
  if (cutStack !== null) return encode(message, cutStack, true);
  // the message alone is past the bound (the name is at most 200 characters: it always fits)
  return encode(longestFitting(message, (m) => encode(m, stack === undefined ? undefined : "", true))!, stack === undefined ? undefined : "", true);
}

/** The failed attempts a row keeps, oldest first (the newest {@link FAILURES_KEPT}); none: `[]`. */
export function failuresOf(row: ReadonlyMap<string, Uint8Array>): FailedAttempt[] {
  const n = Number(new TextDecoder().decode(row.get(ROW.failures) ?? new Uint8Array(0)));
  if (!Number.isSafeInteger(n) || n <= 0) return [];
  const out: FailedAttempt[] = [];
  for (let i = Math.max(0, n - FAILURES_KEPT); i < n; i++) {
    const raw = row.get(`${ROW.failure}:${i % FAILURES_KEPT}`);
    if (raw === undefined) continue;
    const text = new TextDecoder().decode(raw);
    try {
      const r = JSON.parse(text) as FailedAttempt;
      if (r !== null && typeof r === "object" && typeof r.message === "string") {
        out.push(r);
        continue;
      }
    } catch {
      // not the client's JSON: shown as sent
    }
    out.push({ at: 0, name: "", message: text });
  }
  return out;
}
