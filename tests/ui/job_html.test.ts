// A job's page shows a lease token as held only while the job is active: a requeued, retried or
// finished job keeps its last claim's token on its row (tokens only grow), which is no lease.
import { expect, test } from "bun:test";
import type { JobInfo } from "../../client.ts";
import { jobHtml } from "../../lib/ui/job_html.ts";

const job = (state: JobInfo<unknown>["state"]): JobInfo<unknown> => ({
  id: "JOB00000000001" as JobInfo<unknown>["id"],
  queue: "q",
  state,
  attempts: 1,
  payload: 1,
  createdAt: 0,
  token: 42,
});
const tokenCell = (html: string): string => /Lease token<\/dt>\s*<dd>([^<]*)</.exec(html)?.[1] ?? html;

test("the lease token is shown as held for an active job only", () => {
  expect(tokenCell(jobHtml(job("active"), 0))).toBe("42");
  for (const state of ["pending", "scheduled", "dead", "completed"] as const) {
    expect({ state, cell: tokenCell(jobHtml(job(state), 0)) }).toEqual({ state, cell: "— (its last claim's was 42)" });
  }
});

test("the job's name is shown escaped, a dash without one; a table row carries it", async () => {
  const { jobRow } = await import("../../lib/ui/queue_rows.ts");
  expect(jobHtml({ ...job("pending"), name: "<send & invoice>" }, 0)).toContain(
    '<dt>Name</dt><dd><code id="job-name">&#60;send &#38; invoice&#62;</code></dd>',
  );
  expect(jobHtml(job("pending"), 0)).toContain("<dt>Name</dt><dd>—</dd>");
  expect(jobRow({ ...job("pending"), name: "n1" }).name).toBe("n1");
  expect("name" in jobRow(job("pending"))).toBe(false);
});

test("failed attempts: newest first, each folded (<details>) with its name and message, the stack inside, escaped", () => {
  const failures = [
    { attempt: 1, at: 1_000, name: "GatewayError", message: "timeout <21>", stack: "GatewayError: timeout <21>\n    at pay (pay.ts:3:9)" },
    { attempt: 2, at: 2_000, name: "TypeError", message: "x is undefined", truncated: true as const },
  ];
  const html = jobHtml({ ...job("dead"), failures }, 3_000);
  const section = html.slice(html.indexOf('<div id="job-failures">'));
  expect(section.indexOf("Attempt 2")).toBeLessThan(section.indexOf("Attempt 1"));
  expect(section.match(/<details class="failure">/g)?.length).toBe(2);
  expect(section).not.toContain('<details class="failure" open');
  expect(section).toContain("GatewayError: timeout &#60;21&#62;</span></summary>");
  expect(section).toContain("<pre>GatewayError: timeout &#60;21&#62;\n    at pay (pay.ts:3:9)</pre>");
  expect(section).toContain("<pre>(no stack)</pre>");
  expect(section).toContain("(cut to 8 KiB)");
  expect(jobHtml(job("dead"), 0)).not.toContain("job-failures");
});

test("the log: its lines oldest first, escaped, how many were written over, live while the job runs; why it could not be read", () => {
  const html = jobHtml(job("dead"), 0, {}, undefined, { lines: ["a <b>", "c"], total: 1002 });
  expect(html).toContain(
    '<h3>Log<span class="kind" id="job-log-count"> (1002 lines, the oldest 1000 written over)</span></h3>\n<pre id="job-log">a &#60;b&#62;\nc</pre>',
  );
  expect(jobHtml(job("active"), 0, {}, undefined, { lines: [], total: 0 })).toContain(
    '<h3>Log<span class="kind" id="job-log-count"></span></h3>\n<pre id="job-log" data-live="true">—</pre>',
  );
  expect(jobHtml(job("active"), 0, {}, undefined, new Error("NOPERM"))).toContain("The log could not be read: NOPERM");
  expect(jobHtml(job("active"), 0)).not.toContain("job-log");
});

test("a search's page: the jobs found linking to their pages, what was scanned, and a link that goes on", async () => {
  const { findHtml } = await import("../../lib/ui/find_html.ts");
  const html = findHtml("q/1", "<x>", { jobs: [{ ...job("dead"), name: "n<1>" }], scanned: 1000, cursor: "0:1000" });
  expect(html).toContain('<a href="job?q=q&#38;id=JOB00000000001"><code>JOB00000000001</code></a> <span class="jobname">n&#60;1&#62;</span>');
  expect(html).toContain('1000 rows scanned; <a id="find-more" href="job?q=q%252F1&amp;id=%3Cx%3E&amp;cursor=0%3A1000">go on</a>.');
  const none = findHtml("q", "y", { jobs: [], scanned: 3, cursor: null });
  expect(none).toContain("No job matched among the rows scanned.");
  expect(none).toContain("3 rows scanned; the end of the queue.");
});
