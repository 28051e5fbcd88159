/**
 * The answer of the queue page's search box to text that is not a job id (`job?q=…&id=<text>`,
 * `mq.findJobs`): the jobs whose dedup key or name is the text or whose payload holds it, each
 * linking to its page; how many rows the bounded scan read, and a link that goes on from where it
 * stopped. Every piece of user data escaped.
 *
 * @module
 */
import type { FoundJobs } from "../client/mod.ts";
import { frame, type PageOptions } from "./frame_html.ts";
import { jobHref, queueHref } from "./json_api.ts";
import { esc } from "./responses.ts";
import { visible } from "./visible.ts";

/** The search's page for `text` in `queue`. */
export function findHtml(queue: string, text: string, found: FoundJobs<unknown>, options: PageOptions = {}): string {
  const rows = found.jobs.map((j) =>
    `<tr><th scope="row"><a href="${esc(jobHref(j.queue, j.id))}"><code>${esc(j.id)}</code></a>${
      j.name === undefined ? "" : ` <span class="jobname">${esc(visible(j.name))}</span>`
    }</th><td>${esc(j.state)}</td><td class="payload">${esc(visible((JSON.stringify(j.payload) ?? "").slice(0, 200)))}</td></tr>`
  );
  const empty = `<tr class="empty"><td colspan="3">No job matched among the rows scanned.</td></tr>`;
  const more = found.cursor === null
    ? "the end of the queue."
    : `<a id="find-more" href="job?q=${esc(encodeURIComponent(encodeURIComponent(queue)))}&amp;id=${esc(encodeURIComponent(text))}&amp;cursor=${
      esc(encodeURIComponent(found.cursor))
    }">go on</a>.`;
  const name = esc(visible(queue));
  return frame(
    `EchoMQ — find ${text}`,
    "queue",
    { page: "find", queue: encodeURIComponent(queue) },
    `<nav class="crumbs" aria-label="Breadcrumb"><a href="./">Queues</a> / <a href="${
      esc(queueHref(queue))
    }" class="qname">${name}</a> / <span aria-current="page">find</span></nav>
<section class="panel" aria-labelledby="find-title">
<h2 id="find-title"><span class="kind">Jobs matching</span> <code>${esc(visible(text))}</code></h2>
<p class="note" id="find-scope">Its id, dedup key or name, or text in its payload: ${found.scanned} row${found.scanned === 1 ? "" : "s"} scanned; ${more}</p>
<table id="found"><thead><tr><th scope="col">Job</th><th scope="col">State</th><th scope="col">Payload</th></tr></thead>
<tbody>${rows.length === 0 ? empty : rows.join("\n")}</tbody></table>
</section>`,
    options,
  );
}
