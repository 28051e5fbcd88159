/**
 * A queue's page, `/queues/<name>`: its counts, throughput, pause and resume, its limits (a form
 * sets them), the workers serving it, its busiest lanes (pause and resume each), its dead, active,
 * pending, scheduled and completed jobs (with their results) page by page, with requeue, and — on
 * a selection of the dead, scheduled and completed jobs of a page — requeue, run now and delete, and its schedulers, with remove. Rendered here as the stats have it, every
 * piece of user data escaped; `/dashboard.js` fills the tables in, keeps it live and runs the
 * actions through the JSON API.
 *
 * @module
 */
import type { QueueStats } from "../client/mod.ts";
import { DEFAULT_PAGE_SIZE, type ListedState, TOTALS } from "./json_api.ts";
import { visible } from "./visible.ts";
import { badge, capitalized, COLUMNS, frame, type PageOptions } from "./frame_html.ts";
import { countsView, queueExists } from "./queue_rows.ts";
import { esc } from "./responses.ts";
import { limitsHtml } from "./limits_html.ts";

/** What each listed state's table is called and shows. */
export const STATE_TABLES: Readonly<Record<ListedState, { readonly title: string; readonly columns: readonly string[] }>> = {
  active: { title: "Active jobs", columns: ["Job", "Lease until", "Attempts", "Token", "Progress", "Payload", "Action"] },
  dead: { title: "Dead jobs", columns: ["Job", "Buried", "Attempts", "Reason", "Payload", "Action"] },
  pending: { title: "Pending jobs", columns: ["#", "Job", "Attempts", "Created", "Payload"] },
  scheduled: { title: "Scheduled jobs", columns: ["Job", "Due", "Attempts", "Last failure", "Payload"] },
  completed: { title: "Completed jobs", columns: ["Job", "Finished", "Attempts", "Result", "Payload"] },
};

/**
 * The order the job tables appear in: dead first (what an operator acts on), active (what runs now),
 * pending, scheduled, then completed (what is done, with its result).
 */
export const TABLE_ORDER: readonly ListedState[] = ["dead", "active", "pending", "scheduled", "completed"];

/**
 * The actions on a selection of a state's jobs (`data-bulk` names the action; disabled until a job
 * is selected): each one POST naming the selected ids, one verb call.
 */
export const BULK_ACTIONS: Readonly<Partial<Record<ListedState, ReadonlyArray<{ readonly action: "run" | "requeue" | "remove"; readonly label: string }>>>> = {
  dead: [{ action: "requeue", label: "Requeue selected" }, { action: "remove", label: "Delete selected" }],
  scheduled: [{ action: "run", label: "Run selected now" }, { action: "remove", label: "Delete selected" }],
  completed: [{ action: "remove", label: "Delete selected" }],
};

function jobsSection(state: ListedState): string {
  const t = STATE_TABLES[state];
  const bulk = BULK_ACTIONS[state] ?? [];
  // a selectable table: the Job header holds the page's select-all box, each row's header its own box
  const selectAll = bulk.length === 0
    ? ""
    : `<input type="checkbox" class="select" data-select-all="${state}" aria-label="Select every ${state} job of this page"> `;
  const cols = t.columns.map((c) => `<th scope="col"${c === "#" || c === "Attempts" ? ' class="num"' : ""}>${c === "Job" ? selectAll : ""}${c}</th>`).join("");
  const all = state === "dead" ? `<button type="button" id="requeue-all" class="danger">Requeue all</button>` : "";
  const actions = bulk.map((b) =>
    `<button type="button" data-bulk="${b.action}" data-state="${state}"${b.action === "remove" ? ' class="danger"' : ""} disabled>${b.label}</button>`
  ).join("");
  const controls = all + actions === "" ? "" : `<div class="controls" role="group" aria-label="${t.title}: actions">${actions}${all}</div>`;
  return `<section class="panel" aria-labelledby="${state}-title" id="${state}-section">
<div class="bar"><h2 id="${state}-title" tabindex="-1">${t.title}</h2>${controls}</div>
<table id="jobs-${state}" aria-labelledby="${state}-title">
<thead><tr>${cols}</tr></thead>
<tbody><tr class="empty"><td colspan="${t.columns.length}">Loading…</td></tr></tbody>
</table>
<div class="pager" role="group" aria-label="${t.title} pages">
<button type="button" data-pager="prev" disabled>Previous</button>
<output id="${state}-range" aria-live="polite"></output>
<button type="button" data-pager="next" disabled>Next</button>
</div>
</section>`;
}

/** The columns of the Schedulers table. */
export const SCHEDULER_COLUMNS = ["Scheduler", "Spec", "Next run", "Last run", "Runs", "Missed", "Action"] as const;

/** The columns of the Events table. */
export const EVENT_COLUMNS = ["When", "Event", "Job", "Details"] as const;

/** The columns of the Lanes table. */
export const LANE_COLUMNS = ["Lane", "Ready", "Active", "Limits", "State", "Action"] as const;

/** The columns of the Workers table. */
export const WORKER_COLUMNS = ["Worker", "Host", "PID", "Concurrency", "App", "Started", "Connected", "Last claim"] as const;

/**
 * The section of the table `#<id>` headed `title`, its body a row saying `Loading…` (the script
 * fills it in from the JSON API): the `numeric` columns right-aligned, and when asked an output
 * `#<id>-range` beside the heading or a hidden note `#<note>` above the table.
 */
function tableSection(
  id: string,
  title: string,
  columns: readonly string[],
  { numeric = [], range = false, note }: { numeric?: readonly string[]; range?: boolean; note?: string } = {},
): string {
  const cols = columns.map((c) => `<th scope="col"${numeric.includes(c) ? ' class="num"' : ""}>${c}</th>`).join("");
  const output = range ? `<output id="${id}-range"></output>` : "";
  const hidden = note === undefined ? "" : `\n<p id="${note}" class="note" hidden></p>`;
  return `<section class="panel" aria-labelledby="${id}-title" id="${id}-section">
<div class="bar"><h2 id="${id}-title" tabindex="-1">${title}</h2>${output}</div>${hidden}
<table id="${id}" aria-labelledby="${id}-title">
<thead><tr>${cols}</tr></thead>
<tbody><tr class="empty"><td colspan="${columns.length}">Loading…</td></tr></tbody>
</table>
</section>`;
}

/** A queue's page, its counts and state as `stats` has them (the script fills the rest in). */
export function queueHtml(name: string, stats: QueueStats, options: PageOptions & { limit?: number } = {}): string {
  const counts = countsView(stats);
  const cards = COLUMNS.map(([k, label]) => `<div><dt>${label}</dt><dd id="count-${k}" data-nonzero="${counts[k] > 0}">${counts[k]}</dd></div>`).join("");
  const totals = TOTALS.map((k) => `<div><dt>${capitalized(k)}</dt><dd id="total-${k}">${stats[k]}</dd></div>`).join("");
  const exists = queueExists(stats);
  const label = esc(visible(name));
  return frame(
    `emq ui — ${visible(name)}`,
    "queue",
    {
      page: "queue",
      queue: encodeURIComponent(name), // as text, an attribute's CR would come back LF (another queue)
      limit: String(options.limit ?? DEFAULT_PAGE_SIZE),
      "poll-ms": String(options.pollMs ?? 1000),
    },
    `<nav class="crumbs" aria-label="Breadcrumb"><a href="./">Queues</a> / <span aria-current="page" class="qname">${label}</span></nav>
<section class="panel" aria-labelledby="queue-title">
<h2 id="queue-title"><span class="kind">Queue</span> <span class="qname">${label}</span></h2>
<p id="missing" class="note"${exists ? " hidden" : ""}>No such queue on the server yet: it appears with its first job.</p>
<div class="summary">
<form class="search" action="job" method="get" role="search" aria-label="Find a job">
<input type="hidden" name="q" value="${esc(encodeURIComponent(name))}">
<label for="find-id">Job id</label> <input id="find-id" name="id" type="search" required spellcheck="false" autocapitalize="off" placeholder="JOB…, a name, a dedup key, payload text">
<button type="submit">Find</button>
</form>
<dl class="counts" id="counts" aria-label="Counts" aria-live="polite">${cards}</dl>
<p class="note" id="oldest">Oldest pending: —</p>
<p class="note" id="latency">Wait and run: —</p>
<p class="note" id="flows">Flows: —</p>
<div class="controls" role="group" aria-label="Claims">
<span class="label" id="state-label">Claims</span>
<output id="state" aria-labelledby="state-label" aria-live="polite">${badge(stats.paused)}</output>
<button type="button" id="pause"${stats.paused ? " disabled" : ""}>Pause</button>
<button type="button" id="resume"${stats.paused ? "" : " disabled"}>Resume</button>
</div>
${limitsHtml(stats.limits)}
</div>
<div class="throughput">
<figure>
<figcaption id="spark-title">Throughput and failures, per second (last 60 s)</figcaption>
<div class="spark-axes"><span id="spark-peak" class="axis y">0/s</span><svg id="spark" role="img" aria-labelledby="spark-title" aria-describedby="spark-desc" viewBox="0 0 320 56" preserveAspectRatio="none"><polyline class="acked" points=""/><polyline class="failed" points=""/></svg><span class="axis y0">0</span></div>
<div class="legend" aria-hidden="true"><span class="acked">acked</span> <span class="failed">failed (retried or buried)</span></div>
<div class="axis x" aria-hidden="true"><span id="spark-start">—</span><span>now</span></div>
<p id="spark-desc">Throughput: no samples yet</p>
</figure>
<figure id="minutes-figure">
<figcaption id="minutes-title">Processed and failed per minute, last hour</figcaption>
<div class="spark-axes"><span id="minutes-peak" class="axis y">1/min</span><svg id="minutes" role="img" aria-labelledby="minutes-title" aria-describedby="minutes-desc" viewBox="0 0 360 64" preserveAspectRatio="none"></svg><span class="axis y0">0</span></div>
<div class="legend" aria-hidden="true"><span class="acked">processed</span> <span class="failed">failed (retried or buried)</span></div>
<div class="axis x minutes-x" aria-hidden="true"><span id="minutes-start">—</span><span id="minutes-middle">—</span><span id="minutes-end">—</span></div>
<p id="minutes-desc">Per minute: no samples yet</p>
</figure>
<dl class="totals" aria-label="Totals">${totals}</dl>
</div>
</section>
${tableSection("workers", "Workers", WORKER_COLUMNS, { numeric: ["PID", "Concurrency"], note: "workers-note" })}
${tableSection("lanes", "Lanes", LANE_COLUMNS, { numeric: ["Ready", "Active"], range: true })}
${TABLE_ORDER.map(jobsSection).join("\n")}
${tableSection("schedulers", "Schedulers", SCHEDULER_COLUMNS, { numeric: ["Runs"], note: "schedulers-overdue" })}
${tableSection("events", "Events", EVENT_COLUMNS, { range: true })}`,
    options,
  );
}
