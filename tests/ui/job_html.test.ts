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
