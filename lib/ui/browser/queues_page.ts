/**
 * The Queues page in the browser: its page of the table (the body's `data-offset` and
 * `data-limit`) kept live. A row is made once per
 * queue and its numbers and badge updated in place; when queues come or go, the rows are put in
 * the server's order, focus kept, and the change announced.
 *
 * @module
 */
import { COUNTED_STATES, type QueueRow, type QueuesReply } from "../json_api.ts";
import { visible } from "../visible.ts";
import { showBadge } from "./badge.ts";
import { $, el, setNumber } from "./dom.ts";
import { getJson } from "./fetch_json.ts";
import { focusedKey, restoreFocus } from "./focus.ts";
import { poll } from "./poll.ts";
import { announce } from "./status.ts";

/** A new row for queue `q` (its cells are filled by {@link fill}). */
function row(q: QueueRow): HTMLTableRowElement {
  const tr = el("tr", { "data-queue": encodeURIComponent(q.name) });
  tr.append(el("th", { scope: "row" }, el("a", { class: "qname", href: q.href, "data-key": `queue:${q.href}` }, visible(q.name))));
  for (const c of COUNTED_STATES) tr.append(el("td", { class: "num", "data-col": c }));
  tr.append(el("td", { "data-col": "state" }));
  return tr;
}

/** Shows `q`'s counts and state in its row. */
function fill(tr: HTMLTableRowElement, q: QueueRow): void {
  for (const c of COUNTED_STATES) setNumber(tr.querySelector<HTMLElement>(`td[data-col="${c}"]`)!, q[c]);
  showBadge(tr.querySelector<HTMLElement>('td[data-col="state"]')!, q.paused);
}

/** Says which queues came and went since the table had rows (`before`: their names). */
function announceChanges(before: ReadonlySet<string>, queues: readonly QueueRow[], hadRows: boolean): void {
  const added = queues.filter((q) => !before.has(q.name)).map((q) => visible(q.name));
  const gone = [...before].filter((n) => !queues.some((q) => q.name === n)).map(visible);
  if (hadRows && (added.length > 0 || gone.length > 0)) {
    announce([added.length ? `New: ${added.join(", ")}.` : "", gone.length ? `Gone: ${gone.join(", ")}.` : ""].join(" ").trim());
  }
}

/** Puts one row per queue in `tbody`, in the server's order, reusing the rows it has. */
function arrange(tbody: HTMLTableSectionElement, queues: readonly QueueRow[]): void {
  // data-queue holds the name percent-encoded: an attribute's CR would be read back as LF
  const rows = Array.from(tbody.rows).filter((r) => r.dataset.queue !== undefined);
  const nameOf = (r: HTMLTableRowElement): string => decodeURIComponent(r.dataset.queue!);
  const same = rows.length === queues.length && rows.every((r, i) => nameOf(r) === queues[i]!.name);
  if (same) return;
  const before = new Set(rows.map(nameOf));
  const focus = focusedKey(tbody);
  const byName = new Map(rows.map((r) => [nameOf(r), r]));
  const next = queues.map((q) => byName.get(q.name) ?? row(q));
  if (next.length === 0) {
    next.push(
      el(
        "tr",
        { class: "empty" },
        el("td", { colspan: String(COUNTED_STATES.length + 2) }, "No queues on the server yet (a queue appears with its first job)."),
      ),
    );
  }
  tbody.replaceChildren(...next);
  restoreFocus(tbody, focus, $("queues-title"));
  announceChanges(before, queues, rows.length > 0);
}

/** Makes the page live. */
export function queuesPage(): void {
  const tbody = $<HTMLTableElement>("queues").tBodies[0]!;
  const { offset = "0", limit = "100" } = document.body.dataset;
  poll(async () => {
    const { queues } = await getJson<QueuesReply>(`api/queues?offset=${encodeURIComponent(offset)}&limit=${encodeURIComponent(limit)}`);
    arrange(tbody, queues);
    queues.forEach((q, i) => fill(tbody.rows[i]!, q));
  });
}
