/**
 * A job log's heading note as the job page shows it (both halves: the server renders it, the
 * browser writes it again as new lines arrive): how many lines were logged, and how many of the
 * oldest the row wrote over (it keeps the newest 1000).
 *
 * @module
 */

/** ` (3 lines)`, ` (1500 lines, the oldest 500 written over)`; empty for a job that logged nothing. */
export function logCountText(total: number, kept: number): string {
  if (total === 0) return "";
  const dropped = total - kept;
  return ` (${total} line${total === 1 ? "" : "s"}${dropped > 0 ? `, the oldest ${dropped} written over` : ""})`;
}
