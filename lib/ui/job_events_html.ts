/**
 * A job's events on its page (job_html.ts): the entries of its queue's events stream that concern
 * it (`EchoMQ.jobEvents`: naming it, or a call deduplicated into it), newest first — when, the
 * event, what it carries (attempt, reason, progress, until …, as the queue page's Events table
 * writes it: event_text.ts). The search is bounded, and the page says so: only the newest entries
 * are read, and the note names how many ("among the last 2,000 of the queue: older entries are
 * not searched"), or that they were all the stream keeps. Every piece of user data escaped.
 *
 * @module
 */
import type { JobEvent, JobEvents } from "../client/mod.ts";
import { eventDetails, eventTime } from "./event_text.ts";
import { timeHtml } from "./relative.ts";
import { esc } from "./responses.ts";

/** The columns of a job's Events table. */
export const JOB_EVENT_COLUMNS = ["When", "Event", "Details"] as const;

/** A count as the page writes it: `2,000`. */
const count = (n: number): string => n.toLocaleString("en-US");

/** What the search covered, as the note above the table says it. */
export function jobEventsScope(found: JobEvents): string {
  if (found.complete) {
    return found.searched === 0
      ? "The queue's events stream is empty (nothing written yet, trimmed, or events are off for the queue)."
      : `Events of this job among all ${count(found.searched)} entries the queue's events stream keeps, newest first.`;
  }
  return `Events of this job among the last ${count(found.searched)} of the queue, newest first: older entries are not searched.`;
}

/** What one event of job `id` carries; a call deduplicated into it names the id it gave. */
function details(id: string, e: JobEvent): string {
  if (e.jobId !== id) return `${e.jobId} folded into this job`;
  return eventDetails(e);
}

/**
 * The Events section of job `id`'s page: the note, then the table (an empty state when none was
 * found). `found` an error: the events could not be read (an ACL user without `+xrevrange`), and
 * the section says why — the rest of the page does not depend on it.
 */
export function jobEventsHtml(id: string, found: JobEvents | Error, now: number): string {
  const cols = JOB_EVENT_COLUMNS.map((c) => `<th scope="col">${c}</th>`).join("");
  const failed = found instanceof Error;
  const rows = failed
    ? []
    : found.events.map((e) =>
      `<tr data-type="${esc(e.type)}" data-id="${esc(e.id)}"><td>${timeHtml(eventTime(e), now)}</td><td>${esc(e.type)}</td><td>${esc(details(id, e))}</td></tr>`
    );
  const none = failed
    ? "Events unavailable."
    : found.searched === 0
    ? "No events."
    : `No events of this job among ${found.complete ? "them" : "those entries"}.`;
  if (rows.length === 0) rows.push(`<tr class="empty"><td colspan="${JOB_EVENT_COLUMNS.length}">${none}</td></tr>`);
  const scope = failed ? `The queue's events could not be read: ${found.message}` : jobEventsScope(found);
  return `<h3 id="job-events-title">Events</h3>
<p class="note" id="job-events-scope">${esc(scope)}</p>
<table id="job-events" aria-labelledby="job-events-title">
<thead><tr>${cols}</tr></thead>
<tbody>${rows.join("")}</tbody>
</table>`;
}
