/**
 * A job as a row of its state's table: active (its lease deadline, attempts, lease token,
 * progress, a Cancel button), pending (its position, attempts, when created), scheduled (when due, the last failure),
 * dead (when buried, the reason, a Requeue button) or completed (when finished, its result, cut); its id links to its page, after its
 * selection box when its table has one, and its name (if any) follows the id. Times show the
 * local clock and how far from now, the full time with its zone as their title. Every piece of
 * server data is text, never markup.
 *
 * @module
 */
import type { JobRow, ListedState } from "../json_api.ts";
import { relative } from "../relative.ts";
import { visible } from "../visible.ts";
import { el } from "./dom.ts";
import type { Selection } from "./selection.ts";

/** A time: `hh:mm:ss` today, else `yyyy-mm-dd hh:mm`, then how far from now; the full time with its zone as its title. */
function timeEl(ms: number | undefined): Node {
  if (ms === undefined || ms <= 0) return document.createTextNode("—");
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  const today = new Date().toDateString() === d.toDateString();
  const text = today
    ? `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
    : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return el("time", { datetime: d.toISOString(), title: d.toString() }, `${text} (${relative(ms, Date.now())})`);
}

const cell = (text: string, cls?: string, attrs: Record<string, string> = {}): HTMLTableCellElement =>
  el("td", { ...(cls ? { class: cls } : {}), ...attrs }, text);

/** What a row's buttons do: a dead job's Requeue, an active job's Cancel. */
export interface RowActions {
  /** Requeues the dead job `id`. */
  requeue(id: string): void;
  /** Cancels the active job `id` (`mq.cancel`). */
  cancel(id: string): void;
}

/**
 * Job `j`, number `position` (from 1) of its state, as a row; a dead one's button calls
 * `on.requeue`, an active one's `on.cancel`; with `select`, its header holds its selection box.
 */
export function jobRowEl(
  state: ListedState,
  j: JobRow,
  position: number,
  on: RowActions,
  select?: Selection,
): HTMLTableRowElement {
  const tr = el("tr", { "data-id": j.id });
  const id = el("th", { scope: "row" }, el("a", { href: j.href, "data-key": `job:${j.id}` }, el("code", {}, j.id)));
  if (select !== undefined) id.prepend(select.box(j.id), " ");
  if (j.name !== undefined) id.append(" ", el("span", { class: "jobname" }, visible(j.name)));
  const payload = cell(j.payload, "payload", j.payloadError ? { "data-error": "true" } : {});
  const attempts = cell(String(j.attempts), "num");
  const reason = (): HTMLTableCellElement => cell(j.reason === undefined ? "—" : visible(j.reason), "reason");
  if (state === "active") {
    const button = el("button", { type: "button", class: "danger", "aria-label": `Cancel ${j.id}`, "data-key": `cancel:${j.id}` }, "Cancel");
    button.addEventListener("click", () => on.cancel(j.id));
    tr.append(
      id,
      el("td", {}, timeEl(j.leaseUntil)),
      attempts,
      cell(j.token === undefined ? "—" : String(j.token), "num"),
      cell(j.progress ?? "—", "payload"),
      payload,
      el("td", {}, button),
    );
  } else if (state === "pending") {
    tr.append(cell(String(position), "num"), id, attempts, el("td", {}, timeEl(j.createdAt)), payload);
  } else if (state === "scheduled") {
    tr.append(id, el("td", {}, timeEl(j.dueAt)), attempts, reason(), payload);
  } else if (state === "completed") {
    tr.append(id, el("td", {}, timeEl(j.finishedAt)), attempts, cell(j.result === undefined ? "—" : visible(j.result), "payload"), payload);
  } else {
    const button = el("button", { type: "button", "aria-label": `Requeue ${j.id}`, "data-key": `requeue:${j.id}` }, "Requeue");
    button.addEventListener("click", () => on.requeue(j.id));
    tr.append(id, el("td", {}, timeEl(j.buriedAt)), attempts, reason(), payload, el("td", {}, button));
  }
  return tr;
}
