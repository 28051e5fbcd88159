/**
 * A job's page (`job?q=…&id=…`): everything its row holds — state, attempts, lease token, lease
 * deadline, progress, a completed job's result and finish time, every timestamp (UTC, with how long ago or ahead, the server's render time),
 * the trace context its producer left (traceparent), the full failure reason and the failed attempts (each folded: its
 * name and message, opened its stack), its log (the newest 1000 lines), the payload pretty-printed, its events
 * among the queue's newest (job_events_html.ts) — and its actions: Delete (not while a
 * worker holds it), for a dead job Retry now (REQUEUE), for a scheduled one Run now (RUN: a retry
 * waiting on its backoff, or a delayed job). Every piece of user data escaped.
 *
 * @module
 */
import type { FailedAttempt, JobEvents, JobInfo, JobLogs } from "../client/mod.ts";
import { parseTraceparent } from "../client/tracing.ts";
import { frame, type PageOptions } from "./frame_html.ts";
import { queueHref } from "./json_api.ts";
import { timeHtml } from "./relative.ts";
import { jobEventsHtml } from "./job_events_html.ts";
import { logCountText } from "./log_text.ts";
import { flowHtml } from "./flow_html.ts";
import { esc } from "./responses.ts";
import { visible } from "./visible.ts";

/**
 * The W3C trace context the producer's `send` span left on the row (a client with `tracing`): the
 * traceparent as stored, and its trace id apart — what a tracing backend is searched by.
 */
export function traceHtml(traceparent: string | undefined): string {
  if (traceparent === undefined) return "—";
  const ctx = parseTraceparent(traceparent);
  const stored = `<code id="job-traceparent">${esc(visible(traceparent))}</code>`;
  return ctx === undefined ? `${stored} (not a W3C traceparent)` : `trace id <code id="job-trace-id">${ctx.traceId}</code> (traceparent ${stored})`;
}

/**
 * The job's failed attempts (the newest 10 its row keeps), newest first, each folded: its summary
 * the attempt, when, name and message; opened, the stack.
 */
function failuresHtml(failures: readonly FailedAttempt[], now: number): string {
  if (failures.length === 0) return "";
  const items = [...failures].reverse().map((f) => {
    const what = `${f.name === "" ? "" : `${esc(visible(f.name))}: `}${esc(visible(f.message))}`;
    const attempt = f.attempt === undefined ? "Attempt ?" : `Attempt ${f.attempt}`;
    const cut = f.truncated ? ' <span class="kind">(cut to 8 KiB)</span>' : "";
    return `<details class="failure"><summary>${attempt} · ${f.at > 0 ? timeHtml(f.at, now) : "—"} · <span class="reason">${what}</span>${cut}</summary>
<pre>${esc(f.stack ?? "(no stack)")}</pre></details>`;
  });
  return `<h3>Failed attempts <span class="kind">(the newest ${failures.length}, newest first)</span></h3>
<div id="job-failures">${items.join("\n")}</div>`;
}

/**
 * The job's log (`job.log` lines, the newest 1000 its row keeps), oldest first; or why it could not
 * be read. `live`: the job runs, so the page polls for new lines (browser/job_log.ts).
 */
function logsHtml(logs: JobLogs | Error, live: boolean): string {
  if (logs instanceof Error) return `<h3>Log</h3>\n<p class="note" id="job-log">The log could not be read: ${esc(logs.message)}</p>`;
  return `<h3>Log<span class="kind" id="job-log-count">${logCountText(logs.total, logs.lines.length)}</span></h3>
<pre id="job-log"${live ? ' data-live="true"' : ""}>${logs.lines.length === 0 ? "—" : esc(logs.lines.map(visible).join("\n"))}</pre>`;
}

/** JSON text of `value`, indented; `undefined` as a dash. */
function pretty(value: unknown): string {
  return value === undefined ? "—" : (JSON.stringify(value, null, 2) ?? String(value));
}

/**
 * Job `j`'s page (`now`: the render time, for the relative times), with its events as `events`
 * found them, or why they could not be read (none given: the section is left out).
 */
export function jobHtml(j: JobInfo<unknown>, now: number, options: PageOptions = {}, events?: JobEvents | Error, logs?: JobLogs | Error): string {
  const facts: Array<[string, string]> = [
    ["State", esc(j.state)],
    ["Attempts", String(j.attempts)],
    // the row keeps its last claim's token (the next claim's is greater): held only while active
    ["Lease token", j.token === undefined ? "—" : j.state === "active" ? String(j.token) : `— (its last claim's was ${j.token})`],
    ["Created", timeHtml(j.createdAt, now)],
    ["Due", timeHtml(j.dueAt, now)],
    ["Lease until", timeHtml(j.leaseUntil, now)],
    ["Buried", timeHtml(j.buriedAt, now)],
    ["Finished", timeHtml(j.finishedAt, now)],
    ["Priority", j.priority === undefined ? "0 (the most urgent)" : String(j.priority)],
    ["Time limit", j.timeoutMs === undefined ? "— (the worker's)" : `${j.timeoutMs} ms`],
    ["Dedup key", j.dedupKey === undefined ? "—" : `<code>${esc(visible(j.dedupKey))}</code>`],
    ["Scheduler", j.scheduler === undefined ? "—" : `<code>${esc(visible(j.scheduler))}</code> (run ${timeHtml(j.tickAt, now)})`],
    ["Name", j.name === undefined ? "—" : `<code id="job-name">${esc(visible(j.name))}</code>`],
    ["Trace", traceHtml(j.traceparent)],
  ];
  const name = esc(visible(j.queue));
  const actions = [
    j.state === "active" ? "" : `<button type="button" id="job-delete" class="danger">Delete</button>`,
    j.state === "dead" ? `<button type="button" id="job-retry">Retry now</button>` : "",
    j.state === "scheduled" ? `<button type="button" id="job-run">Run now</button>` : "",
    ["pending", "scheduled", "active", "waiting-children"].includes(j.state) ? `<button type="button" id="job-cancel" class="danger">Cancel</button>` : "",
  ].join("");
  return frame(
    `EchoMQ — ${j.id}`,
    "queue",
    { page: "job", queue: encodeURIComponent(j.queue), job: j.id, "poll-ms": String(options.pollMs ?? 1000) },
    `<nav class="crumbs" aria-label="Breadcrumb"><a href="./">Queues</a> / <a href="${
      esc(queueHref(j.queue))
    }" class="qname">${name}</a> / <span aria-current="page"><code>${esc(j.id)}</code></span></nav>
<section class="panel job" aria-labelledby="job-title">
<div class="bar"><h2 id="job-title"><span class="kind">Job</span> <code>${
      esc(j.id)
    }</code></h2><div class="controls" role="group" aria-label="Job actions">${actions}</div></div>
<dl aria-label="Facts">${facts.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join("")}</dl>
<h3>Failure reason</h3>
<pre id="job-reason">${j.reason === undefined ? "—" : esc(j.reason)}</pre>
${failuresHtml(j.failures ?? [], now)}
<h3>Result</h3>
<pre id="job-result">${j.state === "completed" ? esc(pretty(j.result)) : "—"}</pre>
${logs === undefined ? "" : logsHtml(logs, j.state === "active")}
<h3>Progress</h3>
<pre id="job-progress">${esc(pretty(j.progress))}</pre>
<h3>Payload</h3>
<pre id="job-payload"${j.payloadError === undefined ? "" : ' data-error="true"'}>${
      esc(j.payloadError === undefined ? pretty(j.payload) : `cannot decode: ${j.payloadError}`)
    }</pre>
${flowHtml(j)}
${events === undefined ? "" : jobEventsHtml(j.id, events, now)}
</section>`,
    options,
  );
}
