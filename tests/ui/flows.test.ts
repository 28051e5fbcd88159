/**
 * Where flows show (issue 36): `mq.flowStats` (a queue's parents waiting, its outbox's length and
 * relay lag) on each backend × topology, as the queue page says it (`flowsText`) and `/metrics`
 * exports it (`flowsExposition`); a job page's flow section (`flowHtml`): its parent and its
 * children linked, with their outcomes, a hostile reason escaped, at most 100 children listed.
 */
import { describe, expect, test } from "bun:test";
import type { JobInfo } from "../../client.ts";
import { flowHtml } from "../../lib/ui/flow_html.ts";
import { flowsText } from "../../lib/ui/flows_text.ts";
import { jobHref } from "../../lib/ui/json_api.ts";
import { flowsExposition } from "../../lib/ui/metrics.ts";
import { esc } from "../../lib/ui/responses.ts";
import { COMBOS, useClient, useSites } from "../client/_harness.ts";

const servers = useSites();

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo);

    test("flowStats: parents waiting, the outbox's length, and its lag until a relay drains it", async () => {
      const [p, a] = [`fui-p-${combo.backend}`, `fui-a-${combo.backend}`];
      expect(await ctx.mq.flowStats(p)).toEqual({ waitingParents: 0, outbox: 0, relayLagMs: 0 });
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: a, payload: { n: 1 } }, { queue: a, payload: { n: 2 } }] });
      const before = await ctx.mq.flowStats(p);
      expect([before.waitingParents, before.outbox]).toEqual([1, 2]);
      // an entry no relay took: its age grows (read until it passes 20 ms)
      let lag = 0;
      for (let i = 0; i < 1000 && lag < 20; i++) lag = (await ctx.mq.flowStats(p)).relayLagMs;
      expect(lag).toBeGreaterThanOrEqual(20);
      await ctx.mq.relayOnce([p]);
      expect(await ctx.mq.flowStats(p)).toEqual({ waitingParents: 1, outbox: 0, relayLagMs: 0 });
      // the job pages of both ends
      const parentPage = flowHtml((await ctx.mq.getJob(p, tree.id))!);
      expect(parentPage).toContain("Children: 2 — 2 unfinished");
      for (const k of tree.children) expect(parentPage).toContain(`href="${esc(jobHref(a, k.id))}"`);
      const childPage = flowHtml((await ctx.mq.getJob(a, tree.children[0]!.id))!);
      expect(childPage).toContain(`<p id="job-parent">Parent: <a href="${esc(jobHref(p, tree.id))}">`);
      expect(childPage).not.toContain("job-children");
    });
  });
}

test("flowsText and flowsExposition say the figures", () => {
  expect(flowsText({ waitingParents: 1, outbox: 0, relayLagMs: 0 })).toBe("Flows: 1 parent waiting for children · outbox empty");
  expect(flowsText({ waitingParents: 2, outbox: 3, relayLagMs: 125_000 })).toBe(
    "Flows: 2 parents waiting for children · outbox 3 entries, oldest waiting 2 min",
  );
  expect(flowsText({ waitingParents: 0, outbox: 1, relayLagMs: 10 })).toBe("Flows: 0 parents waiting for children · outbox 1 entry, relayed within 1 s");
  const text = flowsExposition([['q"1', { waitingParents: 2, outbox: 5, relayLagMs: 1500 }]]);
  expect(text).toContain('echomq_waiting_parents{queue="q\\"1"} 2\n');
  expect(text).toContain('echomq_outbox_entries{queue="q\\"1"} 5\n');
  expect(text).toContain('echomq_relay_lag_seconds{queue="q\\"1"} 1.5\n');
  expect(text.match(/^# TYPE \S+ gauge$/gm)?.length).toBe(3);
});

test("flowHtml: outcomes counted, results and a hostile reason escaped, at most 100 children listed, nothing outside a flow", () => {
  const base = { queue: "p", id: "JOB1", state: "waiting-children", attempts: 0, createdAt: 1 } as unknown as JobInfo<unknown>;
  expect(flowHtml(base)).toBe("");
  const kids = [
    { queue: "a", id: "JOBa", state: "completed", result: { ok: "<b>" } },
    { queue: "a", id: "JOBb", state: "failed", reason: `<img src=x onerror="x()">` },
    { queue: "b", id: "JOBc", state: "completed", resultBytes: 70_000 },
    ...Array.from({ length: 120 }, (_, i) => ({ queue: "b", id: `JOBu${i}`, state: "unfinished" })),
  ];
  const html = flowHtml({ ...base, children: kids } as unknown as JobInfo<unknown>);
  expect(html).toContain("Children: 123 — 2 completed, 1 failed, 120 unfinished");
  expect(html).toContain("the first 100");
  expect(html.match(/<tr data-state=/g)?.length).toBe(100);
  expect(html).not.toContain("<img");
  expect(html).not.toContain("<b>");
  expect(html).toContain(esc(`<img src=x onerror="x()">`));
  expect(html).toContain("(a result of 70000 bytes: on the child's page)");
});
