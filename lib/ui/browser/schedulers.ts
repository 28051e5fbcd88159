/**
 * A queue page's Schedulers table (`#schedulers`, server/queue_html.ts): each scheduler's name,
 * spec, next and last run (UTC and how far from now), runs and missed-run policy, with a Remove
 * button; a note above it when a next run lies in the past (no worker of the queue fires it).
 * Rendered again only when what it shows changed, so focus stays.
 *
 * @module
 */
import { OVERDUE_MS, type RemoveSchedulerReply, type SchedulerRow, type SchedulersReply } from "../json_api.ts";
import { relative, utcText } from "../relative.ts";
import { visible } from "../visible.ts";
import type { Act } from "./actions.ts";
import { $, el } from "./dom.ts";
import { getJson, postJson } from "./fetch_json.ts";
import { liveTable } from "./live_table.ts";

/** A time cell's content: UTC and how far from now, or a dash. */
function when(ms: number | undefined, now: number): Node {
  if (ms === undefined) return document.createTextNode("—");
  return el("time", { datetime: new Date(ms).toISOString() }, `${utcText(ms)} (${relative(ms, now)})`);
}

/** The note for the schedulers whose next run is past, or null when none is. */
function overdueNote(late: readonly SchedulerRow[]): string | null {
  if (late.length === 0) return null;
  const names = late.map((s) => JSON.stringify(visible(s.name))).join(", ");
  return late.length === 1
    ? `The next run of ${names} is in the past: no worker of this queue is firing it (any running worker fires the queue's schedulers).`
    : `The next runs of ${names} are in the past: no worker of this queue is firing them (any running worker fires the queue's schedulers).`;
}

/** Wires queue `name`'s Schedulers table; the refresh reads and renders it, Remove runs through `act`. */
export function schedulersTable(name: string, act: Act): () => Promise<void> {
  const table = liveTable($<HTMLTableElement>("schedulers"));
  const heading = $("schedulers-title");
  const note = $("schedulers-overdue");

  const remove = (scheduler: string): void =>
    void act(async () => {
      const r = await postJson<RemoveSchedulerReply>("api/schedulers/remove", { name, scheduler });
      return r.removed ? `Removed scheduler ${visible(scheduler)}.` : `Scheduler ${visible(scheduler)} was gone already.`;
    });

  const rowEl = (s: SchedulerRow, now: number, late: boolean): HTMLTableRowElement => {
    const button = el("button", { type: "button", "aria-label": `Remove scheduler ${visible(s.name)}`, "data-key": `unschedule:${s.name}` }, "Remove");
    button.addEventListener("click", () => remove(s.name));
    return el(
      "tr",
      late ? { "data-overdue": "true" } : {},
      el("th", { scope: "row" }, el("code", {}, visible(s.name))),
      el("td", {}, s.spec),
      el("td", {}, when(s.nextRun, now), ...(late ? [" — past: no worker firing"] : [])),
      el("td", {}, when(s.lastRun, now)),
      el("td", { class: "num" }, String(s.runs)),
      el("td", {}, s.missed),
      el("td", {}, button),
    );
  };

  return async () => {
    const reply = await getJson<SchedulersReply>(`api/schedulers?name=${encodeURIComponent(name)}`);
    const now = Date.now();
    const late = reply.schedulers.filter((s) => s.nextRun < now - OVERDUE_MS);
    const rows = reply.schedulers.map((s) => rowEl(s, now, late.includes(s)));
    // what the table shows, relative times included: unchanged, it is left alone
    if (!table.changed(JSON.stringify(rows.map((r) => r.textContent)))) return;
    const text = overdueNote(late);
    note.hidden = text === null;
    note.textContent = text ?? "";
    table.fill(rows, "No schedulers.", heading);
  };
}
