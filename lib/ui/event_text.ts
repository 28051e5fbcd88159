/**
 * An event as the dashboard writes it — shared by the queue page's Events table (the browser
 * script, browser/events.ts) and a job's page (job_events_html.ts, rendered on the server):
 * when it happened (its entry id's time), and what it carries besides its type and job, as one
 * line of text.
 *
 * @module
 */
import type { QueueEventItem } from "../client/mod.ts";
import { utcText } from "./relative.ts";
import { visible } from "./visible.ts";

/** When an event happened: its entry id's time, ms since the epoch (the server's clock). */
export function eventTime(e: QueueEventItem): number {
  return Number(e.id.split("-")[0]);
}

/** `text` cut to 200 characters (an ellipsis says so). */
const cut = (text: string): string => text.length > 200 ? `${text.slice(0, 199)}…` : text;

/** What an event carries besides its type and job, as one line of text. */
export function eventDetails(e: QueueEventItem): string {
  const r = e as unknown as Record<string, unknown>;
  const parts: string[] = [];
  if (e.type === "gap") return `entries after ${e.from} were trimmed unread; the oldest kept is ${e.first ?? "none"}`;
  if (r.attempts !== undefined) parts.push(`attempt ${String(r.attempts)}`);
  if (r.reason !== undefined) parts.push(`reason ${JSON.stringify(visible(String(r.reason)))}`);
  if (r.progress !== undefined) parts.push(`progress ${JSON.stringify(r.progress)}`);
  if (r.result !== undefined) parts.push(`result ${cut(visible(JSON.stringify(r.result) ?? String(r.result)))}`);
  if (r.resultInRow === true) parts.push("result on the job's row (over 1024 bytes)");
  if (r.lane !== undefined) parts.push(`lane ${JSON.stringify(visible(String(r.lane)))}`);
  if (r.into !== undefined) parts.push(`into ${String(r.into)}`);
  if (r.name !== undefined) parts.push(`scheduler ${JSON.stringify(visible(String(r.name)))}`);
  if (r.until !== undefined) parts.push(`until ${utcText(Number(r.until))}`);
  return parts.join(", ");
}
