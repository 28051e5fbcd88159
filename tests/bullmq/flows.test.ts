/**
 * BullMQ's flows on EchoMQ's (issue 41), for each backend × topology: a `FlowProducer`'s tree of
 * depth 1 is one FLOW — the parent waits (`waiting-children`) until its children, run by BullMQ
 * `Worker`s, finish, then reads their values under BullMQ's keys; children in another queue (another
 * slot on a cluster) travel through the outbox the workers' backends relay; a child's failure acts
 * by its policy; trees deeper than EchoMQ's 8 levels, several trees at once (`addBulk`) and options FLOW
 * cannot carry are refused by name, writing nothing (nested trees: flows_nested.test.ts).
 */
import { describe, expect, test } from "bun:test";
import type { FlowJob } from "bullmq";
import { RefusedOperationError } from "../../bullmq.ts";
import { queueDigest, useBull } from "./_bull.ts";
import { COMBOS, eventually, useSites } from "../client/_harness.ts";

const sites = useSites();
let n = 0;
const fresh = (what: string): string => `bqf-${what}-${++n}`;

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);
    const { queue, worker, producer } = bull;

    test("a parent waits for its children (same queue), then reads their values under BullMQ's keys", async () => {
      const name = fresh("one");
      const q = queue(name);
      const tree = await producer().add({
        name: "sum",
        queueName: name,
        data: {},
        children: [{ name: "part", queueName: name, data: { v: 2 } }, { name: "part", queueName: name, data: { v: 3 } }],
      });
      const parentId = tree.job.id!;
      const kids = tree.children!.map((c) => c.job.id!);
      expect(await q.getJobState(parentId)).toBe("waiting-children");
      const parent = (await q.getJob(parentId))!;
      expect(await parent.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 2, ignored: 0, failed: 0 });
      expect((await parent.getDependencies()).unprocessed!.sort()).toEqual(kids.map((k) => `bull:${name}:${k}`).sort());
      const child = (await q.getJob(kids[0]!))!;
      expect([child.name, child.data, child.parentKey]).toEqual(["part", { v: 2 }, `bull:${name}:${parentId}`]);
      let seen: Record<string, unknown> = {};
      worker(name, async (job) => {
        if (job.name === "part") return job.data.v * 10;
        seen = await job.getChildrenValues();
        return Object.values(seen).reduce((a: number, b) => a + (b as number), 0);
      });
      await eventually(async () => (await q.getJobState(parentId)) === "completed");
      expect(seen).toEqual({ [`bull:${name}:${kids[0]}`]: 20, [`bull:${name}:${kids[1]}`]: 30 });
      expect((await q.getJob(parentId))!.returnvalue).toBe(50);
      expect(await parent.getDependenciesCount()).toEqual({ processed: 2, unprocessed: 0, ignored: 0, failed: 0 });
    });

    test("children in another queue go through the outbox the workers relay; an ignored failure lets the parent run", async () => {
      const top = fresh("top");
      const low = fresh("low");
      const qt = queue(top);
      const tree = await producer().add({
        name: "report",
        queueName: top,
        data: {},
        children: [
          { name: "ok", queueName: low, data: {} },
          { name: "bad", queueName: low, data: {}, opts: { ignoreDependencyOnFailure: true, attempts: 1 } },
        ],
      });
      const parentId = tree.job.id!;
      let ignored: Record<string, string> = {};
      worker(low, async (job) => {
        if (job.name === "bad") throw new Error("broken");
        return "fine";
      });
      worker(top, async (job) => {
        ignored = await job.getIgnoredChildrenFailures();
        return Object.keys(await job.getChildrenValues());
      });
      await eventually(async () => (await qt.getJobState(parentId)) === "completed");
      const [ok, bad] = tree.children!.map((c) => c.job.id!);
      expect((await qt.getJob(parentId))!.returnvalue).toEqual([`bull:${low}:${ok}`]);
      expect(ignored).toEqual({ [`bull:${low}:${bad}`]: "broken" });
    });

    test("a child's failure fails its parent (BullMQ's failParentOnFailure, and the default here)", async () => {
      const name = fresh("fail");
      const q = queue(name);
      const tree = await producer().add({ name: "p", queueName: name, data: {}, children: [{ name: "c", queueName: name, data: {}, opts: { attempts: 1 } }] });
      worker(name, async (job) => {
        if (job.name === "c") throw new Error("no");
        return "ran";
      });
      await eventually(async () => (await q.getJobState(tree.job.id!)) === "failed");
      expect((await q.getJob(tree.job.id!))!.failedReason).toContain("failed: no");
    });

    test("a tree deeper than 8, several trees at once and a child's options FLOW cannot carry are refused by name, writing nothing", async () => {
      const name = fresh("refused");
      const q = queue(name);
      await q.add("x", {});
      const raw = sites.raws.get(combo.topology)!;
      const before = await queueDigest(raw, name);
      const refusal = async (run: Promise<unknown>): Promise<string> => {
        const e = await run.catch((x) => x);
        expect(e).toBeInstanceOf(RefusedOperationError);
        return (e as RefusedOperationError).operation;
      };
      const p = producer();
      const leaf = { name: "leaf", queueName: name, data: {} };
      // 9 levels of children under the root: one more than EchoMQ's nested flows (MAX_FLOW_DEPTH)
      let deep: FlowJob = leaf;
      for (let i = 0; i < 9; i++) deep = { name: `l${i}`, queueName: name, children: [deep] };
      expect(await refusal(p.add({ name: "a", queueName: name, children: [deep] }))).toBe("addFlow (depth)");
      expect(await refusal(p.addBulk([{ name: "a", queueName: name, children: [leaf] }, { name: "b", queueName: name, children: [leaf] }])))
        .toBe("addFlow (several roots)");
      expect(await refusal(p.add({ name: "a", queueName: name, children: [{ ...leaf, opts: { delay: 1000 } }] }))).toBe("addFlow (opts.delay)");
      expect(await refusal(p.add({ name: "a", queueName: name, opts: { priority: 2 }, children: [leaf] }))).toBe("addFlow (opts.priority)");
      expect(await queueDigest(raw, name)).toBe(before);
    });
  });
}
