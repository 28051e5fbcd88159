/**
 * How far a time is from now, in words, and a time in UTC, as both halves of the dashboard write
 * them (the job page on the server, the tables in the browser, `emq inspect`). No DOM, no client.
 *
 * @module
 */

/** A length of time in words: `0 s`, `12 s`, `5 min`, `3 h`, `2 d` (whole units, rounded down). */
export function durationText(ms: number): string {
  const a = Math.abs(ms);
  const [n, unit] = a < 60_000 ? [a / 1000, "s"] : a < 3_600_000 ? [a / 60_000, "min"] : a < 86_400_000 ? [a / 3_600_000, "h"] : [a / 86_400_000, "d"];
  return `${Math.floor(n)} ${unit}`;
}

/** `ms` as far from `now` in words: `in 5 min`, `3 h ago`, `just now` (whole units, rounded down). */
export function relative(ms: number, now: number): string {
  const d = ms - now;
  if (Math.abs(d) < 1000) return "just now";
  const text = durationText(d);
  return d > 0 ? `in ${text}` : `${text} ago`;
}

/** `ms` in UTC to the millisecond: `2026-12-02 02:15:48.123 UTC`. */
export function utcText(ms: number): string {
  return new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
}

/** A time as a page shows it: UTC to the millisecond, and how far from now (HTML; a dash for none). */
export function timeHtml(ms: number | undefined, now: number): string {
  if (ms === undefined || ms <= 0) return "—";
  return `<time datetime="${new Date(ms).toISOString()}">${utcText(ms)}</time> (${relative(ms, now)})`;
}
