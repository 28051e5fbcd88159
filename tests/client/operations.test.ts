/**
 * Operating a queue, for each backend × topology: look up a job, page through a state, remove
 * (one or many), run scheduled jobs now, requeue dead jobs, pause and resume (server-side, obeyed by waiting workers), progress (token
 * checked), retention of the dead set, discovery of every queue, and stats with the totals `meta`
 * keeps. Every refusal is typed, writes nothing (digest unchanged) and has the spec's text; the
 * resulting keyspaces are identical across backends.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { DEAD_MAX_DEFAULT, EchoMQError, type Job, JobActiveError, JobNotDeadError, JobNotScheduledError, LeaseLostError } from "../../client.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { type BackendKind, BACKENDS, comboName, COMBOS, counterIds, digest, dump, eventually, sleep, TOPOLOGIES, useClient, useSites } from "./_harness.ts";

const servers = useSites();
const dumps = new Map<string, unknown>();

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo, { newId: counterIds(1) });

    /** Asserts `run` is refused with `name` and leaves the queue's node unchanged. */
    async function refused(q: string, run: () => Promise<unknown>, name: string): Promise<unknown> {
      const key = keyspace(q).meta;
      const d0 = await digest(ctx.raw, key);
      const e = await run().then(() => null, (x) => x);
      expect(e).not.toBeNull();
      expect((e as Error).name).toBe(name);
      expect(await digest(ctx.raw, key)).toBe(d0);
      return e;
    }

    test("getJob and jobs: every state, in the order it is served; bad names and bounds refused", async () => {
      const q = `ops-look-${backend}`;
      expect(await ctx.mq.getJob(q, "JOB00000009999")).toBeNull();
      const [p1, p2, p3] = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const s1 = await ctx.mq.schedule(q, { n: 4 }, { at: 9_000_000_000_000 });
      const s2 = await ctx.mq.schedule(q, { n: 5 }, { at: 8_000_000_000_000 });
      // claim order: p1 first; a page from offset 1 starts at p2
      expect((await ctx.mq.jobs(q, "pending", { limit: 2 })).map((j) => j.id)).toEqual([p1!, p2!]);
      expect((await ctx.mq.jobs(q, "pending", { offset: 1, limit: 5 })).map((j) => j.id)).toEqual([p2!, p3!]);
      expect((await ctx.mq.jobs(q, "scheduled")).map((j) => j.id)).toEqual([s2, s1]);
      const a = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const b = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      await ctx.mq.bury(b, "first");
      const c = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      await sleep(2);
      await ctx.mq.bury(c, "second");
      expect((await ctx.mq.jobs(q, "dead")).map((j) => [j.id, j.reason])).toEqual([[c.id, "second"], [b.id, "first"]]);
      const active = await ctx.mq.jobs(q, "active");
      expect(active.map((j) => j.id)).toEqual([a.id]);
      const info = await ctx.mq.getJob(q, a.id);
      expect(info).toMatchObject({ id: a.id, queue: q, state: "active", attempts: 1, payload: { n: 1 }, token: a.token });
      expect(info!.leaseUntil).toBeGreaterThan(Date.now());
      expect(info!.createdAt).toBeLessThanOrEqual(Date.now());
      expect(await ctx.mq.getJob(q, s1)).toMatchObject({ state: "scheduled", dueAt: 9_000_000_000_000, attempts: 0 });
      expect(await ctx.mq.getJob(q, b.id)).toMatchObject({ state: "dead", reason: "first", attempts: 1 });
      expect((await ctx.mq.getJob(q, b.id))!.buriedAt).toBeGreaterThan(0);
      await expect(ctx.mq.jobs(q, "waiting" as never)).rejects.toMatchObject({ name: "EchoMQError", rule: "options" });
      await expect(ctx.mq.jobs(q, "dead", { offset: -1 })).rejects.toBeInstanceOf(EchoMQError);
      await expect(ctx.mq.jobs(q, "dead", { limit: 0 })).rejects.toBeInstanceOf(EchoMQError);
      await expect(ctx.mq.jobs(q, "dead", { limit: 1001 })).rejects.toThrow("jobs: limit must be an integer from 1 to 1000, got 1001");
      await expect(ctx.mq.getJob(q, "nope")).rejects.toMatchObject({ name: "KeyspaceError" });
      expect(await ctx.mq.jobs(q, "dead", { offset: 10 })).toEqual([]);
    });

    test("remove: pending, scheduled and dead jobs; unknown is false; an active job is refused, nothing written", async () => {
      const q = `ops-remove-${backend}`;
      const [p, , held] = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const s = await ctx.mq.schedule(q, { n: 4 }, { delayMs: 60_000 });
      const first = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!; // p
      await ctx.mq.bury(first, "x");
      expect(first.id).toBe(p!);
      expect(await ctx.mq.remove(q, p!)).toBe(true); // dead
      expect(await ctx.mq.remove(q, s)).toBe(true); // scheduled
      expect(await ctx.mq.remove(q, held!)).toBe(true); // pending, not at the tail
      expect(await ctx.mq.remove(q, p!)).toBe(false);
      expect(await ctx.mq.remove(q, "JOB00000009999")).toBe(false);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 1, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
      const busy = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const e = await refused(q, () => ctx.mq.remove(q, busy.id), "JobActiveError");
      expect((e as JobActiveError).ids).toEqual([busy.id]);
      expect((e as JobActiveError).text).toBe(renderRefusal("active", "EMQ.REMOVE", { ids: busy.id }));
      await ctx.mq.ack(busy);
      expect(await ctx.mq.getJob(q, p!)).toBeNull();
    });

    test("requeueDead: all, or by id (each must be dead); a fresh attempt budget; tokens stay monotonic", async () => {
      const q = `ops-requeue-${backend}`;
      await ctx.mq.enqueueMany(q, [1, 2, 3, 4].map((n) => ({ n })));
      const jobs = (await ctx.mq.claimMany(q, 4, { leaseMs: 60_000 })) as Array<Job<{ n: number }>>;
      for (const j of jobs) await ctx.mq.bury(j, "dead");
      const maxToken = Math.max(...jobs.map((j) => j.token));
      const e = await refused(q, () => ctx.mq.requeueDead(q, { ids: [jobs[0]!.id, "JOB00000009999"] }), "JobNotDeadError");
      expect((e as JobNotDeadError).ids).toEqual(["JOB00000009999"]);
      expect(await ctx.mq.requeueDead(q, { ids: [jobs[0]!.id] })).toBe(1);
      const again = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      expect(again.id).toBe(jobs[0]!.id);
      expect(again.attempts).toBe(1); // a fresh budget
      expect(again.token).toBeGreaterThan(maxToken);
      await expect(ctx.mq.ack(jobs[0]!)).rejects.toBeInstanceOf(LeaseLostError); // the old claim's token
      await ctx.mq.ack(again);
      expect(await ctx.mq.requeueDead(q)).toBe(3);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 3, active: 0, schedule: 0, dead: 0, completed: 1, waitingChildren: 0 });
      expect((await ctx.mq.getJob(q, jobs[1]!.id))!).toMatchObject({ state: "pending", attempts: 0 });
      expect((await ctx.mq.getJob(q, jobs[1]!.id))!.reason).toBeUndefined();
      expect(await ctx.mq.requeueDead(q)).toBe(0);
    });

    test("runNow: scheduled jobs to pending at once, due now, attempts kept; each must be scheduled, else none moves", async () => {
      const { mq, raw } = ctx;
      const q = `ops-run-${backend}`;
      const later = Date.now() + 3_600_000;
      const [s1, s2, s3] = await Promise.all([1, 2, 3].map((n) => mq.schedule(q, { n }, { at: later + n })));
      const [p] = await mq.enqueueMany(q, [{ n: 0 }]);
      // a retry waiting on its backoff, run now: attempts and reason kept
      const first = (await mq.claim(q, { leaseMs: 60_000 }))!;
      expect(first.id).toBe(p!);
      await mq.retry(first, { delayMs: 3_600_000, reason: "backoff" });
      const e = await refused(q, () => mq.runNow(q, [s1!, p!, "JOB00000009999"]), "JobNotScheduledError");
      expect(e).toBeInstanceOf(JobNotScheduledError);
      expect((e as JobNotScheduledError).ids).toEqual(["JOB00000009999"]);
      expect((e as JobNotScheduledError).text).toBe(renderRefusal("not-scheduled", "EMQ.RUN", { ids: "JOB00000009999" }));
      await refused(q, () => mq.runNow(q, [s1!, s1!]), "DuplicateIdError");
      await expect(mq.runNow(q, ["nope"])).rejects.toMatchObject({ name: "KeyspaceError" });
      expect(await mq.runNow(q, [])).toBe(0);
      const t0 = Date.now();
      expect(await mq.runNow(q, [s2!, p!])).toBe(2);
      expect(await mq.counts(q)).toEqual({ pending: 2, active: 0, schedule: 2, dead: 0, completed: 0, waitingChildren: 0 });
      const ran = (await mq.getJob(q, s2!))!;
      expect(ran).toMatchObject({ state: "pending", attempts: 0 });
      const row = keyspace(q).job(s2! as never);
      const due = Number(await raw.command(["HGET", row, "due_ms"], row));
      expect(due).toBeGreaterThanOrEqual(t0 - 5000);
      expect(due).toBeLessThan(later);
      expect(await mq.getJob(q, p!)).toMatchObject({ state: "pending", attempts: 1, reason: "backoff" });
      // claimed in argument order (the head of pending; the first given is claimed first)
      const claimed = (await mq.claimMany(q, 2, { leaseMs: 60_000 })).map((j) => (j as Job<{ n: number }>).id);
      expect(claimed).toEqual([s2!, p!]);
      // through a Queue handle
      expect(await mq.queue(q).runNow([s3!])).toBe(1);
      expect((await mq.claim(q, { leaseMs: 60_000 }))!.id).toBe(s3!);
      // removeMany: one command; an active job refuses the whole command
      const held = await refused(q, () => mq.removeMany(q, [s1!, s3!]), "JobActiveError");
      expect((held as JobActiveError).ids).toEqual([s3!]);
      expect(await mq.queue(q).removeMany([s1!, "JOB00000009999"])).toBe(1);
      expect(await mq.counts(q)).toEqual({ pending: 0, active: 3, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
    });

    test("pause and resume live on the server: admits while paused, claims nothing, waiting workers keep waiting; resume wakes them", async () => {
      const q = `ops-pause-${backend}`;
      expect(await ctx.mq.isPaused(q)).toBe(false);
      expect(await ctx.mq.pause(q)).toBe(true);
      expect(await ctx.mq.pause(q)).toBe(false);
      expect(await ctx.mq.isPaused(q)).toBe(true);
      const seen: number[] = [];
      const worker = ctx.mq.work(q, (job) => void seen.push(job.payload.n), { blockMs: 300 });
      await ctx.mq.enqueue(q, { n: 1 });
      expect(await ctx.mq.claim(q, { leaseMs: 1000 })).toBeNull();
      await sleep(700); // past two waits of the worker
      expect(seen).toEqual([]);
      const t0 = Date.now();
      expect(await ctx.mq.resume(q)).toBe(true);
      expect(await ctx.mq.resume(q)).toBe(false);
      await eventually(() => seen.length === 1, 5000);
      console.log(`[pause] ${combo.name}: a waiting worker started ${Date.now() - t0} ms after resume`);
      await worker.stop();
      expect((await ctx.mq.stats(q)).paused).toBe(false);
    });

    test("progress: a held job's JSON value, shown by getJob; a lost lease is refused", async () => {
      const q = `ops-progress-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      let reported = false;
      const worker = ctx.mq.work(q, async (job) => {
        await job.progress({ step: 1, of: 2 });
        reported = true;
        await eventually(async () => (await ctx.mq.getJob(q, id))?.progress !== undefined);
      }, { blockMs: 200 });
      await eventually(() => reported);
      await eventually(() => worker.completed === 1);
      await worker.stop();
      const job = (await ctx.mq.enqueue(q, { n: 2 }), await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      await ctx.mq.progress(job, "half");
      expect((await ctx.mq.getJob(q, job.id))!.progress).toBe("half");
      await refused(q, () => ctx.mq.progress({ ...job, token: job.token + 1 }, 1), "LeaseLostError");
      await expect(ctx.mq.progress(job, "x".repeat(70_000))).rejects.toMatchObject({ rule: "options" });
    });

    test("retention: the dead set keeps deadMax jobs (oldest trimmed, rows deleted) and none older than deadAgeMs", async () => {
      const q = `ops-retain-${backend}`;
      expect((await ctx.mq.stats(q)).deadMax).toBe(DEAD_MAX_DEFAULT);
      await ctx.mq.retain(q, { deadMax: 3, deadAgeMs: 0 });
      await ctx.mq.enqueueMany(q, [1, 2, 3, 4, 5].map((n) => ({ n })));
      const jobs = (await ctx.mq.claimMany(q, 5, { leaseMs: 60_000 })) as Array<Job<{ n: number }>>;
      for (const j of jobs) {
        await ctx.mq.bury(j, `r${j.payload.n}`);
        await sleep(2);
      }
      expect((await ctx.mq.jobs(q, "dead")).map((j) => j.payload!.n)).toEqual([5, 4, 3]);
      expect(await ctx.mq.getJob(q, jobs[0]!.id)).toBeNull(); // its row went too
      await ctx.mq.retain(q, { deadMax: 0, deadAgeMs: 50 });
      await sleep(80);
      expect(await ctx.mq.claim(q, { leaseMs: 1000 })).toBeNull(); // a claim applies the retention
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
      const stats = await ctx.mq.stats(q);
      expect([stats.deadMax, stats.deadAgeMs]).toEqual([0, 50]);
      await expect(ctx.mq.retain(q, { deadMax: -1 })).rejects.toBeInstanceOf(EchoMQError);
    });

    test("drop: every job and key of a queue goes, meta included; refused while a job is active", async () => {
      const q = `ops-drop-${backend}`;
      await ctx.mq.enqueueMany(q, Array.from({ length: 1500 }, (_, n) => ({ n })));
      await ctx.mq.schedule(q, { n: -1 }, { delayMs: 60_000 });
      const held = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      await ctx.mq.bury((await ctx.mq.claim(q, { leaseMs: 60_000 }))!, "x");
      const e = await refused(q, () => ctx.mq.drop(q), "JobActiveError");
      expect((e as JobActiveError).ids).toEqual([held.id]);
      await ctx.mq.ack(held);
      expect(await ctx.mq.drop(q)).toBe(1501); // 1498 pending, 1 scheduled, 1 dead, 1 completed (the acked one, kept)
      expect(await ctx.mq.queues()).not.toContain(q);
      expect(await dump(ctx.raw, q)).toEqual({});
      expect(await ctx.mq.drop(q)).toBe(0);
    });

    test("stats: counts and the totals meta keeps; queues(): every queue, from its meta", async () => {
      const q = `ops-stats-${backend}`;
      await ctx.mq.enqueueMany(q, [1, 2, 3].map((n) => ({ n })));
      await ctx.mq.schedule(q, { n: 4 }, { delayMs: 60_000 });
      const [a, b, c] = (await ctx.mq.claimMany(q, 3, { leaseMs: 60_000 })) as Array<Job<{ n: number }>>;
      await ctx.mq.ack(a!);
      await ctx.mq.retry(b!, { delayMs: 60_000 });
      await ctx.mq.bury(c!, "x");
      const stats = await ctx.mq.stats(q);
      expect(stats).toMatchObject({
        pending: 0,
        active: 0,
        schedule: 2,
        dead: 1,
        completed: 1,
        paused: false,
        enqueued: 4,
        acked: 1,
        retried: 1,
        buried: 1,
        claims: 3,
      });
      expect(stats.createdAt).toBeGreaterThan(0);
      const names = Array.from({ length: 6 }, (_, i) => `ops-found-${backend}-${i}`);
      for (const n of names) await ctx.mq.enqueue(n, { n: 0 });
      await ctx.mq.pause(`ops-paused-only-${backend}`); // a queue never admitted still has meta
      const all = await ctx.mq.queues();
      for (const n of [...names, q, `ops-paused-only-${backend}`]) expect(all).toContain(n);
      expect(all).toEqual([...all].sort());
      // the queues of this combo, for the cross-backend comparison
      dumps.set(
        combo.name,
        await Promise.all([q, "ops-requeue", "ops-remove", "ops-run"].map((n) => dump(ctx.raw, n.startsWith("ops-stats") ? n : `${n}-${backend}`))),
      );
    });
  });
}

describe("identical across backends", () => {
  for (const topology of TOPOLOGIES) {
    test.skipIf(BACKENDS.length < 2)(`${topology}: keyspaces after the same operations`, () => {
      const [first, ...rest] = BACKENDS as [BackendKind, ...BackendKind[]];
      for (const other of rest) expect(dumps.get(comboName(other, topology))).toEqual(dumps.get(comboName(first, topology)));
    });
  }
});
