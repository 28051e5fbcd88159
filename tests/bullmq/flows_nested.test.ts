/**
 * BullMQ's nested flows on EchoMQ's (issue 41), for each backend × topology: a `FlowProducer` tree
 * of 3 levels across 3 queues (another slot each on a cluster) is one FLOW, run by BullMQ `Worker`s
 * leaves first, each middle node after its own children, the root last; the dependency getters
 * answer for a middle node as for the root, under BullMQ's keys; a failing grandchild fails its
 * chain by the policies (BullMQ's default: its parent fails, and so on up; a middle node's own
 * `ignoreDependencyOnFailure` lets the root run).
 */
import { describe, expect, test } from "bun:test";
import type { Job } from "bullmq";
import { useBull } from "./_bull.ts";
import { COMBOS, eventually, useSites } from "../client/_harness.ts";

const sites = useSites();
let n = 0;
const fresh = (what: string): string => `bqn-${what}-${++n}`;

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);
    const { queue, worker, producer } = bull;

    test("a 3-level tree across 3 queues runs leaves first, each middle after its children, the root last", async () => {
      const [top, mid, low] = [fresh("top"), fresh("mid"), fresh("low")];
      const [qt, qm, ql] = [queue(top), queue(mid), queue(low)];
      const flows = producer();
      const tree = await flows.add({
        name: "root",
        queueName: top,
        data: {},
        children: [
          { name: "m1", queueName: mid, data: {}, children: [{ name: "a", queueName: low, data: { v: 1 } }, { name: "b", queueName: low, data: { v: 2 } }] },
          { name: "m2", queueName: mid, data: {}, children: [{ name: "c", queueName: low, data: { v: 4 } }] },
        ],
      });
      const rootId = tree.job.id!;
      const [m1, m2] = tree.children!.map((c) => c.job.id!);
      const [a, b] = tree.children![0]!.children!.map((c) => c.job.id!);
      const [c] = tree.children![1]!.children!.map((c) => c.job.id!);
      expect(await qt.getJobState(rootId)).toBe("waiting-children");
      const root = (await qt.getJob(rootId))!;
      expect(await root.getDependenciesCount()).toEqual({ processed: 0, unprocessed: 2, ignored: 0, failed: 0 });

      // what each job saw when it started: the names finished before it, and its children's values
      const finished = new Set<string>();
      const started = new Map<string, string[]>();
      const values = new Map<string, Record<string, unknown>>();
      const run = async (job: Job): Promise<unknown> => {
        started.set(job.name, [...finished].sort());
        let out: unknown;
        if (job.data.v !== undefined) out = job.data.v * 10;
        else {
          const seen = await job.getChildrenValues();
          values.set(job.name, seen);
          out = Object.values(seen).reduce((x: number, y) => x + (y as number), 0);
        }
        finished.add(job.name);
        return out;
      };
      worker(low, run);
      worker(mid, run);
      worker(top, run);
      await eventually(async () => (await qt.getJobState(rootId)) === "completed", 30_000);

      expect(started.get("m1")).toEqual(expect.arrayContaining(["a", "b"]));
      expect(started.get("m2")).toEqual(expect.arrayContaining(["c"]));
      expect(started.get("root")).toEqual(["a", "b", "c", "m1", "m2"]);
      expect(values.get("m1")).toEqual({ [`bull:${low}:${a}`]: 10, [`bull:${low}:${b}`]: 20 });
      expect(values.get("m2")).toEqual({ [`bull:${low}:${c}`]: 40 });
      expect(values.get("root")).toEqual({ [`bull:${mid}:${m1}`]: 30, [`bull:${mid}:${m2}`]: 40 });
      expect((await qt.getJob(rootId))!.returnvalue).toBe(70);

      // a middle node: BullMQ's parent reference, and its own dependencies under BullMQ's keys
      const middle = (await qm.getJob(m1))!;
      expect([middle.name, middle.parentKey, middle.parent]).toEqual(["m1", `bull:${top}:${rootId}`, { id: rootId, queueKey: `bull:${top}` }]);
      expect(await middle.getDependenciesCount()).toEqual({ processed: 2, unprocessed: 0, ignored: 0, failed: 0 });
      expect(await middle.getChildrenValues()).toEqual({ [`bull:${low}:${a}`]: 10, [`bull:${low}:${b}`]: 20 });
      expect((await middle.getDependencies()).processed).toEqual({ [`bull:${low}:${a}`]: 10, [`bull:${low}:${b}`]: 20 });
      expect((await ql.getJob(c))!.parentKey).toBe(`bull:${mid}:${m2}`);
      expect(await root.getDependenciesCount()).toEqual({ processed: 2, unprocessed: 0, ignored: 0, failed: 0 });

      // BullMQ's getFlow walks the tree back through the dependency getters and parseNodeKey
      const back = (await flows.getFlow({ id: rootId, queueName: top }))!;
      const shape = (n: typeof back): unknown => ({
        name: n.job.name,
        children: (n.children ?? []).map(shape).sort((x, y) => JSON.stringify(x) < JSON.stringify(y) ? -1 : 1),
      });
      expect(shape(back)).toEqual({
        name: "root",
        children: [
          { name: "m1", children: [{ name: "a", children: [] }, { name: "b", children: [] }] },
          { name: "m2", children: [{ name: "c", children: [] }] },
        ],
      });
    });

    test("a middle node waits for its children: waiting-children with its unprocessed children until they run", async () => {
      const [top, mid, low] = [fresh("top"), fresh("mid"), fresh("low")];
      const qm = queue(mid);
      const tree = await producer().add({
        name: "root",
        queueName: top,
        data: {},
        children: [{ name: "m", queueName: mid, data: {}, children: [{ name: "leaf", queueName: low, data: {} }] }],
      });
      const m = tree.children![0]!.job.id!;
      const leaf = tree.children![0]!.children![0]!.job.id!;
      // a middle node is made by the relay of the root's queue (EchoMQ's nested flows go through an outbox)
      worker(top, async () => "root");
      await eventually(async () => (await qm.getJobState(m)) === "waiting-children", 30_000);
      const middle = (await qm.getJob(m))!;
      expect(await middle.getDependencies()).toEqual({ processed: {}, unprocessed: [`bull:${low}:${leaf}`], ignored: {}, failed: [] });
      expect(await middle.getDependenciesCount({ unprocessed: true })).toEqual({ unprocessed: 1 });
    });

    test("a failing grandchild fails its middle node, which fails the root (BullMQ's failParentOnFailure, the default here)", async () => {
      const [top, mid, low] = [fresh("top"), fresh("mid"), fresh("low")];
      const [qt, qm] = [queue(top), queue(mid)];
      const tree = await producer().add({
        name: "root",
        queueName: top,
        data: {},
        children: [{
          name: "m",
          queueName: mid,
          data: {},
          opts: { failParentOnFailure: true },
          children: [{ name: "bad", queueName: low, data: {}, opts: { attempts: 1, failParentOnFailure: true } }],
        }],
      });
      const rootId = tree.job.id!;
      const m = tree.children![0]!.job.id!;
      let ran = 0;
      worker(low, async () => {
        throw new Error("grandchild broke");
      });
      worker(mid, async () => ran++);
      worker(top, async () => ran++);
      await eventually(async () => (await qt.getJobState(rootId)) === "failed", 30_000);
      expect(await qm.getJobState(m)).toBe("failed");
      expect((await qm.getJob(m))!.failedReason).toContain("grandchild broke");
      expect((await qt.getJob(rootId))!.failedReason).toContain("grandchild broke");
      expect(ran).toBe(0);
    });

    test("a middle node's ignoreDependencyOnFailure: its chain fails, the root runs and reads the ignored failure", async () => {
      const [top, mid, low] = [fresh("top"), fresh("mid"), fresh("low")];
      const qt = queue(top);
      const tree = await producer().add({
        name: "root",
        queueName: top,
        data: {},
        children: [
          {
            name: "m",
            queueName: mid,
            data: {},
            opts: { ignoreDependencyOnFailure: true },
            children: [{ name: "bad", queueName: low, data: {}, opts: { attempts: 1 } }],
          },
          { name: "ok", queueName: mid, data: {} },
        ],
      });
      const rootId = tree.job.id!;
      const [m, ok] = tree.children!.map((c) => c.job.id!);
      let ignored: Record<string, string> = {};
      worker(low, async () => {
        throw new Error("leaf broke");
      });
      worker(mid, async (job) => job.name);
      worker(top, async (job) => {
        ignored = await job.getIgnoredChildrenFailures();
        return await job.getChildrenValues();
      });
      await eventually(async () => (await qt.getJobState(rootId)) === "completed", 30_000);
      expect((await qt.getJob(rootId))!.returnvalue).toEqual({ [`bull:${mid}:${ok}`]: "ok" });
      expect(Object.keys(ignored)).toEqual([`bull:${mid}:${m}`]);
      expect(ignored[`bull:${mid}:${m}`]).toContain("leaf broke");
    });
  });
}
