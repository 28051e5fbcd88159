/**
 * The Queues page (`/`): a table of the queues, a page of them at a time, with their counts and
 * state, rendered here with every piece of user data escaped; `/dashboard.js` keeps it live.
 *
 * @module
 */
import type { QueueRow } from "./json_api.ts";
import type { QueuesPage } from "./queue_rows.ts";
import { visible } from "./visible.ts";
import { badge, COLUMNS, frame, type PageOptions } from "./frame_html.ts";
import { esc } from "./responses.ts";

/** One row of the Queues table. */
export function queueRowHtml(r: QueueRow): string {
  const cells = COLUMNS.map(([k]) => `<td class="num" data-col="${k}" data-nonzero="${r[k] > 0}">${r[k]}</td>`).join("");
  return `<tr data-queue="${esc(encodeURIComponent(r.name))}"><th scope="row"><a class="qname" href="${esc(r.href)}">${esc(visible(r.name))}</a></th>` +
    `${cells}<td data-col="state">${badge(r.paused)}</td></tr>`;
}

/** The links to the pages before and after `page`, and which queues it shows. */
function pager(page: QueuesPage): string {
  if (page.total <= page.limit && page.offset === 0) return "";
  const at = (offset: number): string => `?offset=${offset}&amp;limit=${page.limit}`;
  const prev = page.offset > 0 ? `<a href="${at(Math.max(0, page.offset - page.limit))}" rel="prev">Previous</a>` : "";
  const next = page.offset + page.limit < page.total ? `<a href="${at(page.offset + page.limit)}" rel="next">Next</a>` : "";
  const last = Math.min(page.total, page.offset + page.limit);
  return `<div class="pager" role="group" aria-label="Queues pages">${prev}<output id="queues-range">${
    page.offset + 1
  }–${last} of ${page.total}</output>${next}</div>`;
}

/** The note on `meta` keys whose name is not UTF-8 (none: nothing). */
function unreadableNote(keys: readonly string[]): string {
  if (keys.length === 0) return "";
  const shown = keys.slice(0, 20).map((k) => `<code>${esc(k)}</code>`).join(", ");
  return `<p class="note" id="unreadable">${keys.length} queue(s) whose name is not UTF-8 text (no call can name them), escaped: ${shown}${
    keys.length > 20 ? ", …" : ""
  }</p>`;
}

/** The Queues page with `page`'s rows in its table (`unreadable`: the names shown apart). */
export function queuesHtml(page: QueuesPage, unreadable: readonly string[] = [], options: PageOptions = {}): string {
  const rows = page.rows;
  const head = COLUMNS.map(([, label]) => `<th scope="col" class="num">${label}</th>`).join("");
  const body = rows.length === 0
    ? `<tr class="empty"><td colspan="${COLUMNS.length + 2}">No queues on the server yet (a queue appears with its first job).</td></tr>`
    : rows.map(queueRowHtml).join("\n");
  const data = { page: "queues", "poll-ms": String(options.pollMs ?? 1000), offset: String(page.offset), limit: String(page.limit) };
  return frame(
    "EchoMQ — queues",
    "queues",
    data,
    `<section class="panel" aria-labelledby="queues-title">
<div class="bar"><h2 id="queues-title">Queues</h2><span class="updated" id="updated">updating every ${
      Math.round((options.pollMs ?? 1000) / 100) / 10
    } s</span></div>
<table id="queues" aria-labelledby="queues-title">
<thead><tr><th scope="col">Queue</th>${head}<th scope="col">State</th></tr></thead>
<tbody>
${body}
</tbody>
</table>
${pager(page)}${unreadableNote(unreadable)}${
      page.complete
        ? ""
        : `<p class="note" id="discovering">Still looking for queues: ${page.total} found so far (a keyspace this large takes a while to walk).</p>`
    }
</section>`,
    options,
  );
}
