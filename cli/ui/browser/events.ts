/**
 * A queue page's Events table (`#events`, lib/ui/queue_html.ts): the queue's latest events,
 * newest first — when (the entry id's time, UTC), the event, the job, and what it carries (attempt,
 * reason, progress, lane, until, the job it folded into, the scheduler). Read with each poll from
 * `GET /api/events` (one `XREVRANGE` on the server: the HTTP server never waits on the stream);
 * rendered again only when what it shows changed.
 *
 * @module
 */
import type { QueueEventItem } from "../../../lib/client/mod.ts";
import { EVENTS_SHOWN, type EventsReply } from "../../../lib/ui/json_api.ts";
import { utcText } from "../../../lib/ui/relative.ts";
import { visible } from "../../../lib/ui/visible.ts";
import { $, el } from "./dom.ts";
import { getJson } from "./fetch_json.ts";
import { liveTable } from "./live_table.ts";

/** What an event carries besides its type and job, as one line of text. */
export function eventDetails(e: QueueEventItem): string {
  const r = e as unknown as Record<string, unknown>;
  const parts: string[] = [];
  if (e.type === "gap") return `entries after ${e.from} were trimmed unread; the oldest kept is ${e.first ?? "none"}`;
  if (r.attempts !== undefined) parts.push(`attempt ${String(r.attempts)}`);
  if (r.reason !== undefined) parts.push(`reason ${JSON.stringify(visible(String(r.reason)))}`);
  if (r.progress !== undefined) parts.push(`progress ${JSON.stringify(r.progress)}`);
  if (r.lane !== undefined) parts.push(`lane ${JSON.stringify(visible(String(r.lane)))}`);
  if (r.into !== undefined) parts.push(`into ${String(r.into)}`);
  if (r.name !== undefined) parts.push(`scheduler ${JSON.stringify(visible(String(r.name)))}`);
  if (r.until !== undefined) parts.push(`until ${utcText(Number(r.until))}`);
  return parts.join(", ");
}

/** Wires queue `name`'s Events table; the refresh reads and renders it. */
export function eventsTable(name: string): () => Promise<void> {
  const table = liveTable($<HTMLTableElement>("events"));
  const heading = $("events-title");
  const range = $("events-range");

  const rowEl = (e: QueueEventItem): HTMLTableRowElement => {
    const ms = Number(e.id.split("-")[0]);
    const job = "jobId" in e ? el("code", {}, e.jobId) : document.createTextNode(e.type === "gap" ? "—" : "the queue");
    return el("tr", { "data-type": e.type, "data-id": e.id },
      el("td", {}, el("time", { datetime: new Date(ms).toISOString() }, utcText(ms))),
      el("td", {}, e.type),
      el("td", {}, job),
      el("td", {}, eventDetails(e)));
  };

  return async () => {
    const reply = await getJson<EventsReply>(`api/events?name=${encodeURIComponent(name)}`);
    if (!table.changed(JSON.stringify(reply.events.map((e) => e.id)))) return;
    range.textContent = reply.events.length === 0 ? "" : `the latest ${reply.events.length}${reply.events.length === EVENTS_SHOWN ? "" : " (all kept)"}, newest first`;
    table.fill(reply.events.map(rowEl), "No events.", heading);
  };
}
