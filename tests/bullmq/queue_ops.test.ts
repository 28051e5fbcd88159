/**
 * BullMQ's queue operations on the EchoMQ backend (issue 41), for each backend × topology:
 * deduplication (`keepLastIfActive` refused), drain, clean, remove (an active job is locked), obliterate (refused with a job
 * active, with and without `force`; then DROP leaves no key), the queue's global concurrency and
 * rate limit (LIMIT, which EchoMQ's own claims obey), a worker's `rateLimit` (PENALIZE), counts per
 * priority, an immediate retry, and `getRanges` order.
 */
import { describe, expect, test } from "bun:test";
import { RefusedOperationError } from "../../bullmq.ts";
import { emqIdOf } from "../../lib/bullmq/ids.ts";
import { queueDigest, useBull } from "./_bull.ts";
import { COMBOS, eventually, queueKeys, rejection, useSites } from "../client/_harness.ts";

const sites = useSites();
let n = 0;
const fresh = (what: string): string => `bqo-${what}-${++n}`;

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);
    const { queue, worker } = bull;

    test("deduplication: an add under a held id answers the holder's id; getDeduplicationJobId names it", async () => {
      const name = fresh("dedup");
      const q = queue(name);
      const first = await q.add("d", { v: 1 }, { deduplication: { id: "user-7" } });
      const second = await q.add("d", { v: 2 }, { deduplication: { id: "user-7" } });
      expect(second.id).toBe(first.id);
      expect((await q.getJobCounts("waiting")).waiting).toBe(1);
      expect(await q.getDeduplicationJobId("user-7")).toBe(first.id!);
    });

    test("deduplication's keepLastIfActive is refused by name (add and addBulk), writing nothing, the counter unmoved", async () => {
      const name = fresh("keeplast");
      const q = queue(name);
      const held = await q.add("d", { v: 1 }, { deduplication: { id: "k" } });
      const raw = sites.raws.get(combo.topology)!;
      const before = await queueDigest(raw, name);
      const opts = { deduplication: { id: "k", keepLastIfActive: true } };
      for (const run of [q.add("d", { v: 2 }, opts), q.addBulk([{ name: "d", data: { v: 3 }, opts }])]) {
        const e = await run.catch((x) => x);
        expect(e).toBeInstanceOf(RefusedOperationError);
        expect((e as RefusedOperationError).operation).toBe("addJob (opts.deduplication.keepLastIfActive)");
        expect((e as Error).message).toContain("keepLastIfActive keeps the newest add aside");
      }
      expect(await queueDigest(raw, name)).toBe(before);
      expect((await q.add("next", {})).id).toBe(String(Number(held.id) + 1));
    });

    test("drain removes waiting jobs (and delayed ones when asked); clean removes finished ones older than the grace", async () => {
      const name = fresh("drain");
      const q = queue(name);
      await q.addBulk([{ name: "a", data: {} }, { name: "b", data: {}, opts: { priority: 4 } }, { name: "c", data: {}, opts: { delay: 60_000 } }]);
      await q.drain();
      expect(await q.getJobCounts("waiting", "prioritized", "delayed")).toEqual({ waiting: 0, prioritized: 0, delayed: 1 });
      await q.drain(true);
      expect((await q.getJobCounts("delayed")).delayed).toBe(0);
      await q.addBulk([0, 1, 2].map((i) => ({ name: "done", data: { i } })));
      worker(name, async () => 1);
      await eventually(async () => (await q.getJobCounts("completed")).completed === 3);
      expect(await q.clean(60_000, 10, "completed")).toEqual([]); // none older than a minute
      const cleaned = await q.clean(0, 2, "completed");
      expect(cleaned.length).toBe(2);
      expect((await q.getJobCounts("completed")).completed).toBe(1);
    });

    test("clean's grace is inclusive, as BullMQ's; retryJobs({ timestamp }) retries the jobs failed at or before it", async () => {
      const name = fresh("bounds");
      const q = queue(name);
      const added = await q.add("w", {});
      const row = await bull.mq.getJob(name, emqIdOf(added.id!));
      // a job admitted in the very millisecond of the clean's timestamp is cleaned
      expect(await q.getBackend().cleanJobsByState("wait", row!.createdAt, 0)).toEqual([added.id!]);
      await q.addBulk([0, 1, 2, 3].map((i) => ({ name: "f", data: { i }, opts: { attempts: 1 } })));
      const w = worker(name, async () => {
        throw new Error("no");
      });
      await eventually(async () => (await q.getJobCounts("failed")).failed === 4);
      await w.close();
      const failed = await q.getFailed();
      const at = failed.find((j) => j.data.i === 1)!.finishedOn!;
      const expected = failed.filter((j) => j.finishedOn! <= at).map((j) => j.id).sort();
      await q.retryJobs({ state: "failed", timestamp: at });
      expect((await q.getWaiting()).map((j) => j.id).sort()).toEqual(expected);
      expect((await q.getJobCounts("failed")).failed).toBe(4 - expected.length);
    });

    test("a finishing command with BullMQ's token '0' skips the token check (as BullMQ's scripts); another token is a lock mismatch", async () => {
      const name = fresh("token0");
      const q = queue(name);
      await q.addBulk([{ name: "a", data: {}, opts: { attempts: 1 } }, { name: "b", data: {}, opts: { attempts: 1 } }]);
      const w = worker(name, null as never, { autorun: false });
      const first = (await w.getNextJob("my-token"))!;
      expect(String(await rejection(first.moveToCompleted("x", "other", false)))).toContain(`Lock mismatch for job ${first.id}`);
      await first.moveToFailed(new Error("no"), "0", false);
      expect(await first.getState()).toBe("failed");
      const second = (await w.getNextJob("my-token"))!;
      await second.moveToCompleted("done", "0", false);
      expect(await second.getState()).toBe("completed");
    });

    test("a failure retried after a backoff answers [] when no next job is fetched (fetchNext or not), as BullMQ's moveToDelayed", async () => {
      const name = fresh("delayed-next");
      const q = queue(name);
      await q.addBulk([{ name: "a", data: {}, opts: { attempts: 3, backoff: 60_000 } }, { name: "b", data: {}, opts: { attempts: 3, backoff: 60_000 } }]);
      const w = worker(name, null as never, { autorun: false });
      const first = (await w.getNextJob("my-token"))!;
      expect(await first.moveToFailed(new Error("later"), "my-token", false)).toEqual([]);
      const second = (await w.getNextJob("my-token"))!;
      expect(await second.moveToFailed(new Error("later"), "my-token", true)).toEqual([]);
      expect([await first.getState(), await second.getState()]).toEqual(["delayed", "delayed"]);
    });

    test("failing a job not active answers BullMQ's 'not in the active state', a job gone its 'Missing key', writing nothing", async () => {
      const name = fresh("not-active");
      const q = queue(name);
      const waiting = await q.add("w", {}, { attempts: 3 });
      const gone = await q.add("g", {}, { attempts: 1 });
      await gone.remove();
      const raw = sites.raws.get(combo.topology)!;
      const before = await queueDigest(raw, name);
      expect(String(await rejection(waiting.moveToFailed(new Error("x"), "0", true)))).toContain(`Job ${waiting.id} is not in the active state. retryJob`);
      expect(String(await rejection(gone.moveToFailed(new Error("x"), "0", true)))).toContain(`Missing key for job ${gone.id}. moveToFinished`);
      expect(await queueDigest(raw, name)).toBe(before);
    });

    test("retry of a job not failed, or gone, is refused with BullMQ's reprocessJob texts, writing nothing", async () => {
      const name = fresh("reprocess");
      const q = queue(name);
      const waiting = await q.add("w", {});
      const gone = await q.add("g", {});
      await gone.remove();
      const raw = sites.raws.get(combo.topology)!;
      const before = await queueDigest(raw, name);
      expect(String(await rejection(waiting.retry()))).toContain(`Job ${waiting.id} is not in the failed state. reprocessJob`);
      expect(String(await rejection(gone.retry()))).toContain(`Missing key for job ${gone.id}. reprocessJob`);
      expect(await queueDigest(raw, name)).toBe(before);
      expect(await waiting.getState()).toBe("waiting");
    });

    test("remove: a waiting job is gone; an active one is locked (EchoMQ refuses to take it from its worker)", async () => {
      const name = fresh("remove");
      const q = queue(name);
      const a = await q.add("a", {});
      await a.remove();
      expect(await q.getJob(a.id!)).toBeUndefined();
      await q.add("b", {});
      const w = worker(name, async (): Promise<string> => "x", { autorun: false });
      const held = (await w.getNextJob("tok"))!;
      await expect(held.remove()).rejects.toThrow(`Job ${held.id} could not be removed because it is locked by another worker`);
      await held.moveToCompleted("x", "tok", false);
    });

    test("obliterate: refused with a job active (force or not); then DROP leaves no key of the queue", async () => {
      const name = fresh("oblit");
      const q = queue(name);
      await q.add("a", {});
      await q.add("b", {});
      const w = worker(name, async (): Promise<string> => "x", { autorun: false });
      const held = (await w.getNextJob("tok"))!;
      await expect(q.obliterate()).rejects.toThrow("Cannot obliterate queue with active jobs");
      const e = await q.obliterate({ force: true }).catch((x) => x);
      expect(e).toBeInstanceOf(RefusedOperationError);
      expect((e as RefusedOperationError).operation).toBe("obliterate({ force: true }) with active jobs");
      await held.moveToCompleted("x", "tok", false);
      await q.obliterate();
      expect(await queueKeys(sites.raws.get(combo.topology)!, name)).toEqual([]);
    });

    test("the queue's global concurrency and rate limit are EchoMQ's LIMIT; isMaxed reads it", async () => {
      const name = fresh("global");
      const q = queue(name);
      await q.setGlobalConcurrency(1);
      await q.setGlobalRateLimit(50, 1000);
      expect(await q.getGlobalConcurrency()).toBe(1);
      expect(await bull.mq.limits(name)).toMatchObject({ concurrency: 1, rate: { max: 50, perMs: 1000, burst: 50 } });
      await q.addBulk([{ name: "a", data: {} }, { name: "b", data: {} }]);
      const w = worker(name, async (): Promise<string> => "x", { autorun: false });
      const held = (await w.getNextJob("tok"))!;
      expect(await q.isMaxed()).toBe(true);
      expect(await bull.mq.claim(name, { leaseMs: 1000 })).toBeNull(); // the limit holds for EchoMQ's own claims too
      await held.moveToCompleted("x", "tok", false);
      expect(await q.isMaxed()).toBe(false);
      await q.removeGlobalConcurrency();
      await q.removeGlobalRateLimit();
      expect(await bull.mq.limits(name)).toMatchObject({ concurrency: null, rate: null });
    });

    test("a worker's rateLimit parks the queue (PENALIZE); getRateLimitTtl reads the park", async () => {
      const name = fresh("park");
      const q = queue(name);
      const w = worker(name, async (): Promise<string> => "x", { autorun: false });
      // not parked: BullMQ's answers (its limiter key's PTTL, -2 when absent; 0 with a max known)
      expect([await q.getRateLimitTtl(), await q.getRateLimitTtl(5)]).toEqual([-2, 0]);
      await w.rateLimit(60_000);
      expect(await q.getRateLimitTtl()).toBeGreaterThan(50_000);
      await q.add("a", {});
      expect(await bull.mq.claim(name, { leaseMs: 1000 })).toBeNull();
      expect((await bull.mq.limits(name)).parkedUntil).toBeGreaterThan(Date.now() + 50_000);
    });

    test("counts per priority; getRanges in BullMQ's orders; an immediate retry (no backoff) is ready at once", async () => {
      const name = fresh("ranges");
      const q = queue(name);
      await q.addBulk([
        { name: "a", data: {} },
        { name: "b", data: {} },
        { name: "p2", data: {}, opts: { priority: 2 } },
        { name: "p1", data: {}, opts: { priority: 1 } },
        { name: "p2b", data: {}, opts: { priority: 2 } },
      ]);
      expect(await q.getCountsPerPriority([0, 1, 2, 3])).toEqual({ "0": 2, "1": 1, "2": 2, "3": 0 });
      expect((await q.getWaiting()).map((j) => j.name)).toEqual(["a", "b"]); // ascending: the oldest first
      expect((await q.getJobs(["waiting"], 0, -1, false)).map((j) => j.name)).toEqual(["b", "a"]);
      expect((await q.getJobs(["prioritized"], 0, -1, true)).map((j) => j.name)).toEqual(["p1", "p2", "p2b"]);
      await q.drain();
      await q.add("again", {}, { attempts: 2 });
      let calls = 0;
      worker(name, async () => {
        if (++calls === 1) throw new Error("once");
        return "fine";
      });
      await eventually(async () => (await q.getJobCounts("completed")).completed === 1);
      const job = (await q.getJobs(["completed"]))[0]!;
      expect([job.name, job.attemptsMade, job.returnvalue]).toEqual(["again", 2, "fine"]);
    });
  });
}
