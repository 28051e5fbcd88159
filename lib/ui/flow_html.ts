/**
 * A job page's flow section (job_html.ts): its parent (a link to its page) when it is a flow's
 * child, and its children when it is a parent — a count per outcome, then the first
 * {@link CHILDREN_SHOWN} in their order, each a link to its page (where its live state is) with the
 * outcome its parent recorded (`unfinished` until it finishes) and its result or reason. Nothing for
 * a job outside every flow. Every piece of user data escaped.
 *
 * @module
 */
import type { ChildState, JobInfo } from "../client/mod.ts";
import { jobHref } from "./json_api.ts";
import { esc } from "./responses.ts";
import { visible } from "./visible.ts";

/** The most children the page lists (a fan-in may have 100,000: `emq flow` prints them all). */
export const CHILDREN_SHOWN = 100;

/** A link to job `id` of `queue`: the queue, then the id. */
function jobLink(queue: string, id: string): string {
  return `<a href="${esc(jobHref(queue, id))}"><span class="qname">${esc(visible(queue))}</span> / <code>${esc(id)}</code></a>`;
}

/** What a child's row of the table says after its outcome: its result, its result's length, or its reason. */
function detail(k: ChildState): string {
  if (k.reason !== undefined) return esc(visible(k.reason));
  if (k.resultBytes !== undefined) return `(a result of ${k.resultBytes} bytes: on the child's page)`;
  if ("result" in k) return esc(visible(JSON.stringify(k.result) ?? String(k.result)));
  return "—";
}

/** `j`'s flow section, or "" when it has neither a parent nor children. */
export function flowHtml(j: JobInfo<unknown>): string {
  const kids = j.children ?? [];
  if (j.parent === undefined && kids.length === 0) return "";
  const parent = j.parent === undefined
    ? ""
    : `<p id="job-parent">Parent: ${jobLink(j.parent.queue, j.parent.id)} <span class="kind">(it runs once its children have finished)</span></p>`;
  if (kids.length === 0) return `<h3>Flow</h3>\n${parent}`;
  const tally = new Map<string, number>();
  for (const k of kids) tally.set(k.state, (tally.get(k.state) ?? 0) + 1);
  const summary = [...tally].map(([state, n]) => `${n} ${state}`).join(", ");
  const shown = kids.slice(0, CHILDREN_SHOWN);
  const more = kids.length > shown.length ? ` <span class="kind">(the first ${shown.length}; <code>emq flow</code> prints them all)</span>` : "";
  const rows = shown.map((k, i) =>
    `<tr data-state="${esc(k.state)}"><td class="num">${i}</td><td>${jobLink(k.queue, k.id)}</td><td>${esc(k.state)}</td><td class="payload">${
      detail(k)
    }</td></tr>`
  );
  return `<h3>Flow</h3>
${parent}
<p id="job-children-summary">Children: ${kids.length} — ${esc(summary)}${more}</p>
<table id="job-children"><thead><tr><th scope="col">#</th><th scope="col">Child</th><th scope="col">Outcome</th><th scope="col">Result or reason</th></tr></thead>
<tbody>${rows.join("\n")}</tbody></table>`;
}
