/**
 * A queue page's Workers table (`#workers`, lib/ui/queue_html.ts): each worker serving the queue
 * now — id, host, pid, concurrency, its client's name, when it started (UTC and how long ago), how
 * long its claim connection has been open and when it last claimed — or, when the dashboard's user
 * may not list clients, the reason in `#workers-note`. Rendered again only when what it shows
 * changed, so a screen reader hears only changes.
 *
 * @module
 */
import type { WorkerRow, WorkersReply } from "../json_api.ts";
import { durationText, relative, utcText } from "../relative.ts";
import { visible } from "../visible.ts";
import { $, el } from "./dom.ts";
import { getJson } from "./fetch_json.ts";
import { liveTable } from "./live_table.ts";

function rowEl(w: WorkerRow, now: number): HTMLTableRowElement {
  return el(
    "tr",
    { "data-worker": w.id },
    el("th", { scope: "row" }, el("code", {}, w.id)),
    el("td", { title: w.addr }, w.host === "" ? "—" : visible(w.host)),
    el("td", { class: "num" }, String(w.pid)),
    el("td", { class: "num" }, String(w.concurrency)),
    el("td", {}, w.app === "" ? "—" : visible(w.app)),
    el("td", {}, el("time", { datetime: new Date(w.startedAt).toISOString() }, `${utcText(w.startedAt)} (${relative(w.startedAt, now)})`)),
    el("td", {}, durationText(w.connectedMs)),
    el("td", {}, w.idleMs < 1000 ? "just now" : `${durationText(w.idleMs)} ago`),
  );
}

/** Wires queue `name`'s Workers table; the function it returns reads and renders it. */
export function workersTable(name: string): () => Promise<void> {
  const table = liveTable($<HTMLTableElement>("workers"));
  const heading = $("workers-title");
  const note = $("workers-note");
  return async () => {
    const reply = await getJson<WorkersReply>(`api/workers?name=${encodeURIComponent(name)}`);
    const now = Date.now();
    const rows = reply.workers.map((w) => rowEl(w, now));
    if (!table.changed(JSON.stringify([reply.unavailable ?? "", ...rows.map((r) => r.textContent)]))) return;
    note.hidden = reply.unavailable === undefined;
    note.textContent = reply.unavailable ?? "";
    const empty = reply.unavailable === undefined ? "No worker is serving this queue now." : "Worker list unavailable.";
    table.fill(rows, empty, heading);
  };
}
