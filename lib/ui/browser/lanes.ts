/**
 * A queue page's Lanes table (`#lanes`, lib/ui/queue_html.ts): its busiest lanes — ready, active,
 * the limits in force with any park, paused or not — each named lane with a Pause or Resume
 * button (`POST api/pause` / `api/resume` with its `lane`; the default lane is paused with the
 * queue). Rendered again only when what it shows changed, so focus stays.
 *
 * @module
 */
import type { LaneInfo } from "../../client/mod.ts";
import type { LanesReply, PauseReply } from "../json_api.ts";
import { DEFAULT_LANE_TEXT, laneLimitsText } from "../lanes_text.ts";
import { visible } from "../visible.ts";
import type { Act } from "./actions.ts";
import { $, el } from "./dom.ts";
import { getJson, postJson } from "./fetch_json.ts";
import { liveTable } from "./live_table.ts";

/** Wires queue `name`'s Lanes table; the refresh reads and renders it, Pause and Resume run through `act`. */
export function lanesTable(name: string, act: Act): () => Promise<void> {
  const table = liveTable($<HTMLTableElement>("lanes"));
  const heading = $("lanes-title");
  const range = $("lanes-range");

  const toggle = (lane: string, paused: boolean): void =>
    void act(async () => {
      const r = await postJson<PauseReply>(paused ? "api/resume" : "api/pause", { name, lane });
      const shown = visible(lane);
      if (!r.changed) return paused ? `Lane ${shown} was not paused.` : `Lane ${shown} was paused already.`;
      return paused ? `Resumed lane ${shown}.` : `Paused lane ${shown}: its jobs wait, the other lanes are served.`;
    });

  const rowEl = (l: LaneInfo, now: number): HTMLTableRowElement => {
    const action = l.name === null ? "—" : (() => {
      const lane = l.name;
      const button = el("button", {
        type: "button",
        "aria-label": `${l.paused ? "Resume" : "Pause"} lane ${visible(lane)}`,
        "data-key": `lane:${lane}`,
      }, l.paused ? "Resume" : "Pause");
      button.addEventListener("click", () => toggle(lane, l.paused));
      return button;
    })();
    return el(
      "tr",
      { "data-lane": l.name ?? "" },
      el("th", { scope: "row" }, l.name === null ? DEFAULT_LANE_TEXT : el("code", {}, visible(l.name))),
      el("td", { class: "num" }, String(l.ready)),
      el("td", { class: "num" }, String(l.active)),
      el("td", {}, laneLimitsText(l, now)),
      el("td", {}, l.paused ? "paused" : "running"),
      el("td", {}, action),
    );
  };

  return async () => {
    const reply = await getJson<LanesReply>(`api/lanes?name=${encodeURIComponent(name)}`);
    const now = Date.now();
    const rows = reply.lanes.map((l) => rowEl(l, now));
    const said = reply.total === 0 ? "" : `${reply.lanes.length} busiest of ${reply.total}`;
    if (!table.changed(JSON.stringify([said, ...rows.map((r) => r.textContent)]))) return;
    range.textContent = said;
    table.fill(rows, "No lanes: every job is in the default lane.", heading);
  };
}
