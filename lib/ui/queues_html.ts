/**
 * The `/queues` page: a table of every queue with its counts and state, rendered here with every
 * piece of user data escaped; `/dashboard.js` keeps it live.
 *
 * @module
 */
import type { QueueRow } from "./json_api.ts";
import { visible } from "./visible.ts";
import { badge, COLUMNS, frame, type PageOptions } from "./frame_html.ts";
import { esc } from "./responses.ts";

/** One row of the Queues table. */
export function queueRowHtml(r: QueueRow): string {
  const cells = COLUMNS.map(([k]) => `<td class="num" data-col="${k}" data-nonzero="${r[k] > 0}">${r[k]}</td>`).join("");
  return `<tr data-queue="${esc(encodeURIComponent(r.name))}"><th scope="row"><a class="qname" href="${esc(r.href)}">${esc(visible(r.name))}</a></th>` +
    `${cells}<td data-col="state">${badge(r.paused)}</td></tr>`;
}

/** The `/queues` page with `rows` in its table. */
export function queuesHtml(rows: readonly QueueRow[], options: PageOptions = {}): string {
  const head = COLUMNS.map(([, label]) => `<th scope="col" class="num">${label}</th>`).join("");
  const body = rows.length === 0
    ? `<tr class="empty"><td colspan="6">No queues on the server yet (a queue appears with its first job).</td></tr>`
    : rows.map(queueRowHtml).join("\n");
  return frame("emq ui — queues", "queues", { page: "queues", "poll-ms": String(options.pollMs ?? 1000) }, `<section class="panel" aria-labelledby="queues-title">
<div class="bar"><h2 id="queues-title">Queues</h2><span class="updated" id="updated">updating every ${
    Math.round((options.pollMs ?? 1000) / 100) / 10
  } s</span></div>
<table id="queues" aria-labelledby="queues-title">
<thead><tr><th scope="col">Queue</th>${head}<th scope="col">State</th></tr></thead>
<tbody>
${body}
</tbody>
</table>
</section>`, options);
}
