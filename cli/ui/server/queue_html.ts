/**
 * The dashboard's pages: `/queues` (a table of every queue with its counts and state) and
 * `/queues/<name>` (one queue: counts, throughput, pause and resume, its pending, scheduled and
 * dead jobs page by page, requeue). Plain HTML rendered here with every piece of user data
 * escaped; `/dashboard.js` (page/dashboard.ts, bundled) keeps them live and runs the actions
 * through the JSON API (api.ts).
 *
 * @module
 */
import type { EchoMQ, QueueStats } from "../../client.ts";
import { allStats, ApiError, failure, queueName, queueRow, type Sampler } from "./api.ts";
import { esc, STYLE } from "./page.ts";
import { DEFAULT_PAGE_SIZE, type ListedState, type QueueRow, shown } from "./page/api.ts";
import type { Route } from "./server.ts";

/** How the pages behave. */
export interface PageOptions {
  /** How often a page polls the API, ms (default 1000). */
  readonly pollMs?: number;
}

const DASHBOARD_STYLE = `
main { max-width: 76rem; }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .35rem 1.5rem; }
header nav { display: flex; gap: 1rem; }
header nav a { color: var(--accent); text-decoration: none; padding: .15rem .1rem; border-bottom: 2px solid transparent; }
header nav a[aria-current="page"] { color: var(--ink); border-bottom-color: var(--accent); font-weight: 600; }
header nav a:hover { text-decoration: underline; }
.skip { position: absolute; left: -999px; top: .5rem; background: var(--card); padding: .4rem .7rem; border-radius: 6px; }
.skip:focus { left: .5rem; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.panel + .panel { margin-top: 1.25rem; }
.crumbs { margin: 0 0 .6rem; color: var(--muted); font-size: .93rem; }
.crumbs a { color: var(--accent); }
.qname { font-family: var(--mono); font-size: 1.05em; overflow-wrap: anywhere; }
.kind { color: var(--muted); font-weight: 500; }
table { border-collapse: collapse; width: 100%; font-size: .93rem; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
tbody th { font-weight: 500; }
tbody tr:hover { background: var(--bg); }
.num { text-align: right; font-variant-numeric: tabular-nums; font-family: var(--mono); }
td.num[data-nonzero="true"][data-col="dead"] { color: var(--no); font-weight: 700; }
a { color: var(--accent); }
.badge { display: inline-block; font-size: .8rem; font-weight: 600; padding: .05rem .5rem; border-radius: 999px;
  border: 1px solid var(--line); color: var(--muted); }
.badge[data-paused="true"] { color: var(--no); border-color: var(--no); background: var(--no-bg); }
.badge[data-paused="false"] { color: var(--ok); border-color: var(--ok); background: var(--ok-bg); }
.summary { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: center; justify-content: space-between; margin: .5rem 0 1rem; }
.counts { display: grid; grid-template-columns: repeat(4, minmax(6.5rem, 1fr)); gap: .75rem; margin: 0; }
.counts > div { border: 1px solid var(--line); border-radius: 8px; padding: .5rem .8rem; background: var(--bg); }
.counts dt { font-size: .8rem; color: var(--muted); font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
.counts dd { margin: 0; font: 600 1.5rem/1.3 var(--mono); font-variant-numeric: tabular-nums; }
.counts dd[data-nonzero="true"]#count-dead { color: var(--no); }
.controls { display: flex; gap: .6rem; align-items: center; }
.controls .label { font-size: .85rem; font-weight: 600; color: var(--muted); }
button:disabled { opacity: .45; cursor: default; border-color: var(--line); color: var(--muted); background: transparent; }
button.danger { border-color: var(--no); color: var(--no); }
.throughput { display: flex; flex-wrap: wrap; gap: 1rem 2rem; align-items: center; margin: 0; }
.throughput figure { margin: 0; }
.throughput figcaption { font-size: .85rem; font-weight: 600; color: var(--muted); }
#spark { width: 320px; height: 56px; display: block; border-bottom: 1px solid var(--line); }
#spark polyline { fill: none; stroke: var(--accent); stroke-width: 2; stroke-linejoin: round; }
#spark-desc { margin: .2rem 0 0; font-size: .85rem; color: var(--muted); }
.totals { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; margin: 0; font-size: .93rem; }
.totals div { display: flex; gap: .4rem; }
.totals dt { color: var(--muted); }
.totals dd { margin: 0; font-family: var(--mono); font-variant-numeric: tabular-nums; }
.bar { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; margin-bottom: .5rem; }
.bar h2 { margin: 0; }
.pager { display: flex; gap: .75rem; align-items: center; justify-content: flex-end; margin-top: .6rem; font-size: .93rem; }
.pager output { color: var(--muted); font-variant-numeric: tabular-nums; min-width: 9rem; text-align: center; }
.payload, .reason { font-family: var(--mono); font-size: .85rem; overflow-wrap: anywhere; }
.reason { color: var(--no); }
.payload[data-error="true"] { color: var(--no); font-style: italic; }
tbody th code { white-space: nowrap; }
.empty td { color: var(--muted); font-style: italic; }
.status:empty { display: none; }
.status { margin: 1rem 0 0; padding: .55rem .85rem; border-radius: 6px; background: var(--note-bg); font-size: .93rem; }
.status[data-kind="error"] { color: var(--no); background: var(--no-bg); }
.updated { color: var(--muted); font-size: .85rem; }
`;

/** The page frame: head, header with the navigation, main. */
function frame(title: string, current: "queues" | "queue", body: Record<string, string>, main: string): string {
  const data = Object.entries(body).map(([k, v]) => ` data-${k}="${esc(v)}"`).join("");
  const link = (href: string, text: string, here: boolean) => `<a href="${href}"${here ? ' aria-current="page"' : ""}>${text}</a>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="icon" href="data:,">
<style>${STYLE}${DASHBOARD_STYLE}</style>
<script type="module" src="/dashboard.js"></script>
</head>
<body${data}>
<a class="skip" href="#main">Skip to content</a>
<header>
<h1>EchoMQ</h1>
<nav aria-label="emq ui">${link("/", "Key panel", false)} ${link("/queues", "Queues", current === "queues")} ${
    link("/metrics", "Metrics", false)
  }</nav>
</header>
<main id="main">
${main}
<p id="status" class="status" role="status" aria-live="polite"></p>
</main>
</body>
</html>
`;
}

const COLUMNS = [
  ["pending", "Pending"],
  ["active", "Active"],
  ["scheduled", "Scheduled"],
  ["dead", "Dead"],
] as const;

/** A paused / running badge (the page script renders the same). */
function badge(paused: boolean): string {
  return `<span class="badge" data-paused="${paused}">${paused ? "paused" : "running"}</span>`;
}

/** One row of the Queues table. */
export function queueRowHtml(r: QueueRow): string {
  const cells = COLUMNS.map(([k]) => `<td class="num" data-col="${k}" data-nonzero="${r[k] > 0}">${r[k]}</td>`).join("");
  return `<tr data-queue="${esc(r.name)}"><th scope="row"><a class="qname" href="${esc(r.href)}">${esc(shown(r.name))}</a></th>` +
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
</section>`);
}

/** What each listed state's table is called and shows. */
export const STATE_TABLES: Readonly<Record<ListedState, { readonly title: string; readonly columns: readonly string[] }>> = {
  dead: { title: "Dead jobs", columns: ["Job", "Buried", "Attempts", "Reason", "Payload", "Action"] },
  pending: { title: "Pending jobs", columns: ["#", "Job", "Attempts", "Created", "Payload"] },
  scheduled: { title: "Scheduled jobs", columns: ["Job", "Due", "Attempts", "Last failure", "Payload"] },
};

/** The order the job tables appear in: dead first (what an operator acts on), then pending, scheduled. */
export const TABLE_ORDER: readonly ListedState[] = ["dead", "pending", "scheduled"];

function jobsSection(state: ListedState): string {
  const t = STATE_TABLES[state];
  const cols = t.columns.map((c) => `<th scope="col"${c === "#" || c === "Attempts" ? ' class="num"' : ""}>${c}</th>`).join("");
  const all = state === "dead" ? `<button type="button" id="requeue-all" class="danger">Requeue all</button>` : "";
  return `<section class="panel" aria-labelledby="${state}-title" id="${state}-section">
<div class="bar"><h2 id="${state}-title" tabindex="-1">${t.title}</h2>${all}</div>
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

/** A queue's page, its counts and state as `stats` has them (the script fills the rest in). */
export function queueHtml(name: string, stats: QueueStats, options: PageOptions & { limit?: number } = {}): string {
  const counts = { pending: stats.pending, active: stats.active, scheduled: stats.schedule, dead: stats.dead };
  const cards = COLUMNS.map(([k, label]) =>
    `<div><dt>${label}</dt><dd id="count-${k}" data-nonzero="${counts[k] > 0}">${counts[k]}</dd></div>`
  ).join("");
  const totals = (["enqueued", "acked", "retried", "buried", "claims"] as const).map((k) =>
    `<div><dt>${k[0]!.toUpperCase()}${k.slice(1)}</dt><dd id="total-${k}">${stats[k]}</dd></div>`
  ).join("");
  const exists = stats.createdAt > 0 || stats.pending + stats.active + stats.schedule + stats.dead > 0;
  const label = esc(shown(name));
  return frame(`emq ui — ${shown(name)}`, "queue", {
    page: "queue",
    queue: name,
    limit: String(options.limit ?? DEFAULT_PAGE_SIZE),
    "poll-ms": String(options.pollMs ?? 1000),
  }, `<nav class="crumbs" aria-label="Breadcrumb"><a href="/queues">Queues</a> / <span aria-current="page" class="qname">${label}</span></nav>
<section class="panel" aria-labelledby="queue-title">
<h2 id="queue-title"><span class="kind">Queue</span> <span class="qname">${label}</span></h2>
<p id="missing" class="note"${exists ? " hidden" : ""}>No such queue on the server yet: it appears with its first job.</p>
<div class="summary">
<dl class="counts" id="counts" aria-label="Counts" aria-live="polite">${cards}</dl>
<div class="controls" role="group" aria-label="Claims">
<span class="label" id="state-label">Claims</span>
<output id="state" aria-labelledby="state-label" aria-live="polite">${badge(stats.paused)}</output>
<button type="button" id="pause"${stats.paused ? " disabled" : ""}>Pause</button>
<button type="button" id="resume"${stats.paused ? "" : " disabled"}>Resume</button>
</div>
</div>
<div class="throughput">
<figure>
<figcaption id="spark-title">Throughput, acked/s (last 60 s)</figcaption>
<svg id="spark" role="img" aria-labelledby="spark-title" aria-describedby="spark-desc" viewBox="0 0 320 56" preserveAspectRatio="none"><polyline points=""/></svg>
<p id="spark-desc">Throughput: no samples yet</p>
</figure>
<dl class="totals" aria-label="Totals">${totals}</dl>
</div>
</section>
${TABLE_ORDER.map(jobsSection).join("\n")}`);
}

function html(text: string, status = 200): Response {
  return new Response(text, { status, headers: { "content-type": "text/html; charset=utf-8" } });
}

function problem(status: number, text: string): Response {
  return html(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>emq ui — ${status}</title></head>` +
    `<body><main><h1>${status}</h1><p>${esc(text)}</p><p><a href="/queues">Queues</a></p></main></body></html>`, status);
}

/** The name in `/queues/<name>` (one percent-encoded segment; a raw `/` is part of the name too). */
export function nameFromPath(path: string): string {
  try {
    return decodeURIComponent(path.slice("/queues/".length));
  } catch {
    throw new ApiError(400, "the queue name in the address is not percent-encoded text");
  }
}

/** The pages' routes (the script's is added by the caller: it is built once). */
export function pageRoutes(mq: EchoMQ<unknown>, sampler: Sampler, options: PageOptions = {}): Route[] {
  const queuePage = async (request: Request, raw: string | null): Promise<Response> => {
    try {
      const name = queueName(raw);
      const limitText = new URL(request.url).searchParams.get("limit");
      const limit = limitText !== null && /^\d+$/.test(limitText) && +limitText >= 1 && +limitText <= 100 ? +limitText : undefined;
      const stats = await mq.stats(name);
      sampler.record(name, stats);
      return html(queueHtml(name, stats, { ...options, ...(limit ? { limit } : {}) }));
    } catch (e) {
      const f = failure(e);
      return problem(f.status, f.text);
    }
  };
  return [
    {
      path: "/queues",
      handle: async () => {
        try {
          return html(queuesHtml((await allStats(mq)).map(([n, s]) => queueRow(n, s)), options));
        } catch (e) {
          const f = failure(e);
          return problem(f.status, f.text);
        }
      },
    },
    {
      // `/queues/?name=…`: the names a path segment cannot hold ("", ".", "..").
      path: "/queues/",
      handle: (request) => {
        const name = new URL(request.url).searchParams.get("name");
        if (name === null) return new Response(null, { status: 303, headers: { location: "/queues" } });
        return queuePage(request, name);
      },
    },
    {
      path: "/queues/",
      prefix: true,
      handle: (request) => {
        let name: string;
        try {
          name = nameFromPath(new URL(request.url).pathname);
        } catch (e) {
          return problem(400, (e as Error).message);
        }
        return queuePage(request, name);
      },
    },
  ];
}
