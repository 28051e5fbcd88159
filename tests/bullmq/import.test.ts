/**
 * `emq import bullmq` (issue 41): a real BullMQ 6.7 queue on its own Redis backend (a
 * valkey-server holding `bull:<name>:*`) with jobs in every state and job schedulers is copied into
 * the EchoMQ backend's keyspace, for each backend × topology; a BullMQ `Worker` on the EchoMQ backend
 * then runs the copies with the same ids, names and data; a failed job is failed there with its
 * reason; a second import copies nothing; the report's figures and reasons; the id counter carried
 * over; the command line's report and `emq import --help`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FlowProducer, type Job as BullJob, Queue, Worker } from "bullmq";
import { importBullmq, type ImportReport } from "../../lib/bullmq/import.ts";
import { useBull } from "./_bull.ts";
import { COMBOS, eventually, type Site, startSite, useSites } from "../client/_harness.ts";
import { emq, emqAsync } from "../cli/_emq.ts";

const sites = useSites();
let source: Site;
let from = "";
const closers: Array<() => Promise<unknown>> = [];
beforeAll(async () => {
  source = await startSite("standalone", false); // BullMQ's own server: no module, BullMQ's Lua only
  from = `redis://${source.addresses[0]!.host}:${source.addresses[0]!.port}`;
}, 60_000);
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await source?.stop();
});

let n = 0;
const fresh = (what: string): string => `bqi-${what}-${++n}`;

/** BullMQ on its Redis backend, on the source server. */
function redisQueue(name: string): Queue {
  const q = new Queue(name, { connection: source.addresses[0]! });
  closers.push(() => q.close());
  return q;
}

/**
 * Fills BullMQ queue `name` on the source: a failed job, an active one (held by a worker until the
 * test ends), waiting ones (counter and custom ids), a prioritized and a delayed one, a LIFO job (the
 * backend refuses it), a flow (parent and child), an `every` scheduler and one with a limit.
 */
async function fill(name: string): Promise<void> {
  const q = redisQueue(name);
  let release = (): void => {};
  const held = new Promise<void>((r) => (release = r));
  const w = new Worker(name, async (job: BullJob) => {
    if (job.name === "f") throw new Error("card declined");
    await held;
  }, { connection: source.addresses[0]!, concurrency: 1 });
  closers.push(async () => {
    release();
    await w.close(true);
  });
  await q.add("f", { n: 0 }, { attempts: 1 }); // id 1
  await eventually(async () => (await q.getJobCounts("failed")).failed === 1);
  await q.add("a", { n: -1 }); // id 2, held by the worker (concurrency 1: it takes nothing else)
  await eventually(async () => (await q.getJobCounts("active")).active === 1);
  await q.add("w", { n: 1 }); // 3
  await q.add("w", { n: 2 }, { jobId: "custom-a" }); // (BullMQ's counter moves: 4)
  await q.add("p", { n: 3 }, { priority: 5 }); // 5
  await q.add("d", { n: 4 }, { delay: 4000, attempts: 2 }); // 6
  await q.add("l", { n: 5 }, { lifo: true }); // 7
  const flows = new FlowProducer({ connection: source.addresses[0]! });
  closers.push(() => flows.close());
  await flows.add({ name: "parent", queueName: name, data: {}, children: [{ name: "child", queueName: name, data: {} }] });
  await q.upsertJobScheduler("tick", { every: 60_000 }, { name: "beat", data: { k: 1 } });
  await q.upsertJobScheduler("few", { every: 60_000, limit: 3 }, { name: "few", data: {} });
}

const figures = (r: ImportReport): Record<string, number[]> =>
  Object.fromEntries([
    ...Object.entries(r.states).map(([st, f]) => [st, [f.found, f.copied, f.present, f.runs, f.notCopied.length]]),
    ["schedulers", [r.schedulers.found, r.schedulers.copied, r.schedulers.present, 0, r.schedulers.notCopied.length]],
  ]);

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);

    test("a BullMQ queue's jobs in flight and schedulers are copied; a BullMQ Worker on EchoMQ runs them as they were; a second import copies 0", async () => {
      const name = fresh("all");
      await fill(name);
      const site = sites.sites.get(combo.topology)!;
      const target = { addresses: site.addresses, cluster: site.cluster, backend: combo.backend };
      const report = await importBullmq({ from, queue: name, target });
      // [found, copied, already, scheduler runs, not copied]
      expect(figures(report)).toEqual({
        waiting: [6, 2, 0, 1, 3], // 3, custom-a; tick's first run; lifo, the flow's child, few's first run (its scheduler refused)
        prioritized: [1, 1, 0, 0, 0],
        delayed: [1, 1, 0, 0, 0],
        failed: [1, 1, 0, 0, 0],
        schedulers: [2, 1, 0, 0, 1],
      });
      expect(report.left).toEqual({ active: 1, completed: 0, "waiting-children": 1 });
      expect(report.counter).toBe(11); // and the flow (2), the schedulers' first runs (2)
      const reasons = [...report.states.waiting.notCopied, ...report.states.delayed.notCopied, ...report.schedulers.notCopied]
        .map((x) => `${x.id}: ${x.reason}`).join("\n");
      expect(reasons).toContain("7: EchoMQ backend for BullMQ: addJob (opts.lifo) is refused");
      expect(reasons).toContain("a flow's child");
      expect(reasons).toMatch(/repeat:few:\d+: a run of job scheduler few, which is not copied/);
      expect(reasons).toContain("few: EchoMQ backend for BullMQ: addJobScheduler (limit) is refused");

      // the failed job is failed on EchoMQ, with BullMQ's reason, under its id
      const q = bull.queue(name);
      const failed = await q.getFailed();
      expect(failed.map((j) => [j.id, j.name, j.data, j.failedReason])).toEqual([["1", "f", { n: 0 }, "cancelled: card declined"]]);

      const ran: Array<[string, string, unknown]> = [];
      bull.worker(name, async (job) => {
        ran.push([job.id!, job.name, job.data]);
        return job.data;
      });
      await eventually(() => ran.length >= 5, 20_000);
      const byId = new Map(ran.map((r) => [r[0], r]));
      expect(byId.get("3")).toEqual(["3", "w", { n: 1 }]);
      expect(byId.get("custom-a")).toEqual(["custom-a", "w", { n: 2 }]);
      expect(byId.get("5")).toEqual(["5", "p", { n: 3 }]);
      expect(byId.get("6")).toEqual(["6", "d", { n: 4 }]); // after its delay, on the copy
      const beat = ran.find((r) => r[1] === "beat")!;
      expect(beat[2]).toEqual({ k: 1 }); // the copied scheduler's run
      expect((await q.getJobScheduler("tick"))?.every).toBe(60_000);

      // a second run finds every copy (completed or failed now) and copies nothing
      const again = await importBullmq({ from, queue: name, target });
      expect(figures(again)).toEqual({
        waiting: [6, 0, 2, 1, 3],
        prioritized: [1, 0, 1, 0, 0],
        delayed: [1, 0, 1, 0, 0],
        failed: [1, 0, 1, 0, 0],
        schedulers: [2, 0, 1, 0, 1],
      });
      expect((await q.getJobCounts("completed")).completed).toBe(ran.length);
      // BullMQ's counter went on: the next add takes the id after the source's last
      expect((await q.add("next", {})).id).toBe("12");
    }, 60_000);
  });
}

describe("emq import bullmq", () => {
  const target = (): string => `valkey://${sites.sites.get("standalone")!.addresses[0]!.host}:${sites.sites.get("standalone")!.addresses[0]!.port}`;

  test("the command prints per state what it copied and what it could not, with reasons; a second run copies 0", async () => {
    if (!sites.sites.has("standalone")) return;
    const name = fresh("cli");
    const q = redisQueue(name);
    await q.add("w", { n: 1 });
    await q.add("l", {}, { lifo: true });
    const first = await emqAsync("import", "bullmq", "--from", from, "--queue", name, "--url", target());
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    const lines = first.out.split("\n");
    expect(lines[0]).toBe(`BullMQ queue bull:${name} on ${from} → EchoMQ queue ${name} on ${target()}`);
    expect(lines).toContain("waiting           2       1        0           1");
    expect(lines).toContain(
      "  waiting 2: EchoMQ backend for BullMQ: addJob (opts.lifo) is refused: EchoMQ admits at the head of pending and claims from its tail; no verb admits at the tail (next: a `lifo` option)",
    );
    expect(lines).toContain("BullMQ's id counter: 2 (new jobs without a jobId continue after it)");
    const second = await emqAsync("import", "bullmq", "--from", from, "--queue", name, "--url", target(), "--json");
    expect(second.code).toBe(0);
    const r = JSON.parse(second.out) as ImportReport;
    expect([r.states.waiting.copied, r.states.waiting.present]).toEqual([0, 1]);
  }, 60_000);

  test("--help reads as the command's usage; bad usage is one line", () => {
    const help = emq("import", "--help");
    expect(help.code).toBe(0);
    expect(help.out).toContain("emq import bullmq --from redis://host:port --queue <name>");
    expect(help.out).toContain("stop or drain the");
    const bad = emq("import", "bullmq", "--queue", "x");
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split("\n")).toHaveLength(1);
  });
});
