/**
 * A queue page's Events table (`#events`, lib/ui/queue_html.ts): the queue's latest events,
 * newest first — when (the entry id's time, UTC), the event, the job, and what it carries (attempt,
 * reason, progress, lane, until, the job it folded into, the scheduler). Read with each poll from
 * `GET /api/events` (one `XREVRANGE` on the server: the HTTP server never waits on the stream);
 * rendered again only when what it shows changed.
 *
 * @module
 */
import type { QueueEventItem } from "../../client/mod.ts";
import { EVENTS_SHOWN, type EventsReply } from "../json_api.ts";
import { utcText } from "../relative.ts";
import { eventDetails, eventTime } from "../event_text.ts";
import { $, el } from "./dom.ts";
import { getJson } from "./fetch_json.ts";
import { liveTable } from "./live_table.ts";

/** Wires queue `name`'s Events table; the refresh reads and renders it. */
export function eventsTable(name: string): () => Promise<void> {
  const table = liveTable($<HTMLTableElement>("events"));
  const heading = $("events-title");
  const range = $("events-range");

  const rowEl = (e: QueueEventItem): HTMLTableRowElement => {
    const ms = eventTime(e);
    const job = "jobId" in e ? el("code", {}, e.jobId) : document.createTextNode(e.type === "gap" ? "—" : "the queue");
    return el(
      "tr",
      { "data-type": e.type, "data-id": e.id },
      el("td", {}, el("time", { datetime: new Date(ms).toISOString() }, utcText(ms))),
      el("td", {}, e.type),
      el("td", {}, job),
      el("td", {}, eventDetails(e)),
    );
  };

  return async () => {
    const reply = await getJson<EventsReply>(`api/events?name=${encodeURIComponent(name)}`);
    if (!table.changed(JSON.stringify(reply.events.map((e) => e.id)))) return;
    range.textContent = reply.events.length === 0
      ? ""
      : `the latest ${reply.events.length}${reply.events.length === EVENTS_SHOWN ? "" : " (all kept)"}, newest first`;
    table.fill(reply.events.map(rowEl), "No events.", heading);
  };
}
