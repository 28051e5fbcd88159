/**
 * BullMQ's events on EchoMQ (issue 41), for each backend × topology: the ones derived from EchoMQ's
 * events stream for `QueueEvents` — `added` (with the job's name) before `waiting`/`delayed`,
 * `deduplicated` (holder, deduplication id, the id not admitted), `drained` after the last job
 * finished, `waiting-children` of a flow's parent (the root, a nested middle node) and its `waiting`
 * when its children released it — and the ones BullMQ's own classes
 * emit from what the backend answers: a `Worker`'s `drained`, a `Queue`'s `waiting` and `cleaned`.
 * Each test waits for its event: one not emitted fails it (a timeout).
 */
import { describe, expect, test } from "bun:test";
import { type Job, QueueEvents, UnrecoverableError } from "bullmq";
import { useBull } from "./_bull.ts";
import { COMBOS, eventually, useSites } from "../client/_harness.ts";

const sites = useSites();
let n = 0;
const fresh = (what: string): string => `bqe-${what}-${++n}`;

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);
    const { queue, worker } = bull;
    /** A `QueueEvents` of queue `name`, ready, recording every event it emits (name, payload) in order. */
    const listen = async (name: string): Promise<Array<[string, Record<string, unknown> | string]>> => {
      const events = new QueueEvents(name, { connection: {} }, bull.factory);
      bull.closing(() => events.close());
      const seen: Array<[string, Record<string, unknown> | string]> = [];
      const emit = events.emit.bind(events) as (event: string, ...args: unknown[]) => boolean;
      events.emit = ((event: string, ...args: unknown[]) => {
        if (!event.includes(":") && event !== "ready" && event !== "running") seen.push([event, args[0] as Record<string, unknown>]);
        return emit(event, ...args);
      }) as typeof events.emit;
      await events.waitUntilReady();
      return seen;
    };
    const of = (seen: Array<[string, unknown]>, event: string): unknown[] => seen.filter(([e]) => e === event).map(([, a]) => a);

    test("added (with the job's name) before waiting, and before delayed", async () => {
      const name = fresh("added");
      const q = queue(name);
      const seen = await listen(name);
      const now = await q.add("greet", { v: 1 });
      const later = await q.add("remind", { v: 2 }, { delay: 60_000, jobId: "later-1" });
      await eventually(() => of(seen, "delayed").length === 1);
      expect(of(seen, "added")).toEqual([{ jobId: now.id, name: "greet" }, { jobId: "later-1", name: "remind" }]);
      expect(seen.map(([e, a]) => [e, (a as { jobId: string }).jobId])).toEqual([
        ["added", now.id!],
        ["waiting", now.id!],
        ["added", later.id!],
        ["delayed", later.id!],
      ]);
    });

    test("deduplicated: the job holding the key, the deduplication id, and the id not admitted", async () => {
      const name = fresh("dedup");
      const q = queue(name);
      const seen = await listen(name);
      const first = await q.add("once", { v: 1 }, { deduplication: { id: "the-key" } });
      const second = await q.add("once", { v: 2 }, { deduplication: { id: "the-key" } });
      const custom = await q.add("once", { v: 3 }, { jobId: "custom-3", deduplication: { id: "the-key" } });
      expect([second.id, custom.id]).toEqual([first.id, first.id]);
      await eventually(() => of(seen, "deduplicated").length === 2);
      // the second add took counter id 2 (not admitted): BullMQ's id decodes from its EchoMQ id
      expect(of(seen, "deduplicated")[0]).toEqual({ jobId: first.id, deduplicationId: "the-key", deduplicatedJobId: "2" });
      expect((of(seen, "deduplicated")[1] as Record<string, string>).jobId).toBe(first.id!);
      expect(of(seen, "added")).toEqual([{ jobId: first.id, name: "once" }]);
    });

    test("drained once the last job finished (QueueEvents and the Worker's own)", async () => {
      const name = fresh("drained");
      const q = queue(name);
      const seen = await listen(name);
      await q.addBulk([{ name: "a", data: {} }, { name: "b", data: {} }]);
      const w = worker(name, async (job: Job) => job.name);
      let workerDrained = 0;
      w.on("drained", () => void workerDrained++);
      await eventually(() => of(seen, "drained").length >= 1 && workerDrained >= 1);
      // drained comes after both completions
      const order = seen.map(([e]) => e).filter((e) => e === "completed" || e === "drained");
      expect(order.slice(0, 3)).toEqual(["completed", "completed", "drained"]);
      expect(seen.find(([e]) => e === "drained")![1]).toMatch(/^\d+-\d+$/); // BullMQ's drained carries the event id only
    });

    test("a flow's parent: added and waiting-children when made, waiting (prev waiting-children) when its children finished", async () => {
      const name = fresh("flow");
      const seen = await listen(name);
      const p = bull.producer();
      const tree = await p.add({ name: "parent", queueName: name, data: {}, children: [{ name: "kid", queueName: name, data: {} }] });
      await eventually(() => of(seen, "waiting-children").length === 1 && of(seen, "added").length === 2);
      expect(of(seen, "waiting-children")).toEqual([{ jobId: tree.job.id }]);
      // the parent first, then its child (wire 17: a flow's children write `enqueued`), as BullMQ adds a flow
      expect(of(seen, "added")).toEqual([{ jobId: tree.job.id, name: "parent" }, { jobId: tree.children![0]!.job.id, name: "kid" }]);
      worker(name, async (job: Job) => job.name);
      await eventually(() => of(seen, "completed").length === 2);
      expect(of(seen, "waiting")).toContainEqual({ jobId: tree.job.id, prev: "waiting-children" });
    });

    test("a nested flow's middle node: waiting-children in its own queue once the root's relay made it", async () => {
      const [top, mid] = [fresh("top"), fresh("mid")];
      const seen = await listen(mid);
      const p = bull.producer();
      const tree = await p.add({
        name: "root",
        queueName: top,
        data: {},
        children: [{ name: "middle", queueName: mid, data: {}, children: [{ name: "leaf", queueName: mid, data: {} }] }],
      });
      worker(top, async (job: Job) => job.name); // relays the root's outbox, which makes the middle node
      await eventually(() => of(seen, "waiting-children").length === 1 && of(seen, "added").length === 2, 30_000);
      expect(of(seen, "waiting-children")).toEqual([{ jobId: tree.children![0]!.job.id }]);
      const middle = tree.children![0]!;
      expect(of(seen, "added")).toEqual([{ jobId: middle.job.id, name: "middle" }, { jobId: middle.children![0]!.job.id, name: "leaf" }]);
    });

    test("retries-exhausted after failed when the attempts are spent, not for a failure before them", async () => {
      const name = fresh("exhausted");
      const q = queue(name);
      const seen = await listen(name);
      const spent = await q.add("spent", {}, { attempts: 2 });
      const early = await q.add("early", {}, { attempts: 5 });
      worker(name, async (job: Job) => {
        if (job.name === "early") throw new UnrecoverableError("give up");
        throw new Error("again");
      });
      await eventually(() => of(seen, "failed").length === 2);
      await eventually(() => of(seen, "retries-exhausted").length === 1);
      expect(of(seen, "retries-exhausted")).toEqual([{ jobId: spent.id, attemptsMade: "2" }]);
      const order = seen.filter(([, a]) => (a as { jobId?: string }).jobId === spent.id).map(([e]) => e);
      expect(order.slice(-2)).toEqual(["failed", "retries-exhausted"]);
      expect(of(seen, "failed").map((a) => (a as { jobId: string }).jobId)).toContain(early.id!);
    });

    test("a retry without backoff while paused: waiting (prev active), the job counted in wait", async () => {
      const name = fresh("retry0");
      const q = queue(name);
      const seen = await listen(name);
      await q.add("again", {}, { attempts: 2, backoff: 0 });
      let done = false;
      worker(name, async (job: Job) => {
        if (job.attemptsMade === 0) {
          await q.pause();
          throw new Error("not yet");
        }
        done = true;
      });
      await eventually(() => of(seen, "waiting").some((a) => (a as { prev?: string }).prev !== undefined));
      // BullMQ's retryJob writes waiting with prev active (the job leaves active, not failed)
      expect(of(seen, "waiting").filter((a) => (a as { prev?: string }).prev !== undefined)).toEqual([{ jobId: "1", prev: "active" }]);
      expect(await q.getJobCountByTypes("wait")).toBe(1);
      await q.resume();
      await eventually(() => done);
    });

    test("QueueEvents' cleaned: one event with the count of the jobs a clean removed (wire 17), no removed", async () => {
      const name = fresh("qe-clean");
      const q = queue(name);
      const seen = await listen(name);
      await q.addBulk([{ name: "a", data: {} }, { name: "b", data: {} }, { name: "c", data: {} }]);
      await eventually(() => of(seen, "waiting").length === 3);
      expect((await q.clean(0, 10, "wait")).length).toBe(3);
      await eventually(() => of(seen, "cleaned").length === 1);
      expect(of(seen, "cleaned")).toEqual([{ count: "3" }]);
      expect(of(seen, "removed")).toEqual([]);
    });

    test("a Queue's own events: waiting on add, cleaned with the ids and the type", async () => {
      const name = fresh("clean");
      const q = queue(name);
      const waiting: string[] = [];
      const cleaned: Array<[string[], string]> = [];
      q.on("waiting", (job) => void waiting.push(job.id!));
      q.on("cleaned", (ids, type) => void cleaned.push([ids, type]));
      const a = await q.add("a", {});
      const b = await q.add("b", {});
      expect(waiting).toEqual([a.id!, b.id!]);
      const ids = await q.clean(0, 10, "wait");
      expect(ids.sort()).toEqual([a.id!, b.id!].sort());
      expect(cleaned).toEqual([[ids, "wait"]]);
    });
  });
}
