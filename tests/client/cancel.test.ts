/**
 * Cancel from anywhere (issue 37.7), for each backend × topology. `mq.cancel` buries a pending or
 * scheduled job at once with its reason (laned and prioritized ones leave their lists, the
 * queue's counts follow); a running job is buried at once too, its late settle is refused as for a
 * lost lease, its EXTEND is refused `cancelled` (writing nothing), and a handler in another process
 * sees `job.signal` abort with a `JobCancelledError` within two heartbeats; never retried. A job
 * that finished meanwhile answers `finished`, an unknown id `missing`: no error, nothing written.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, type Job, JobCancelledError, LeaseLostError } from "../../client.ts";
import { child, line } from "../reliability/_child.ts";
import { COMBOS, digest, rejection, useClient, useSites } from "./_harness.ts";

type P = { n: number };
const sites = useSites();
const HEARTBEAT_MS = 400;

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);
    const claimOne = async (q: string): Promise<Job<P>> => (await ctx.mq.claim(q, { leaseMs: 60_000 }))! as Job<P>;

    test("a pending or scheduled job is buried at once with the reason; a cancelled event; requeue undoes it", async () => {
      const q = `cx-wait-${backend}`;
      const plain = await ctx.mq.enqueue(q, { n: 1 });
      const laned = await ctx.mq.enqueue(q, { n: 2 }, { lane: "tenant-1", priority: 3, dedup: { key: "k-2" } });
      const later = await ctx.mq.schedule(q, { n: 3 }, { delayMs: 3_600_000 });
      const kept = await ctx.mq.enqueue(q, { n: 4 });
      expect(await ctx.mq.cancel(q, plain, { reason: "customer asked" })).toBe("cancelled");
      expect(await ctx.mq.cancel(q, laned)).toBe("cancelled");
      expect(await ctx.mq.cancel(q, later)).toBe("cancelled");
      const a = (await ctx.mq.getJob(q, plain))!;
      expect([a.state, a.reason]).toEqual(["dead", "cancelled: customer asked"]);
      expect((await ctx.mq.getJob(q, laned))!.reason).toBe("cancelled");
      expect((await ctx.mq.getJob(q, later))!.state).toBe("dead");
      expect(await ctx.mq.counts(q)).toEqual(expect.objectContaining({ pending: 1, schedule: 0, dead: 3, active: 0 }));
      // the dedup key was let go: a new job under it is admitted
      const again = await ctx.mq.enqueue(q, { n: 5 }, { lane: "tenant-1", dedup: { key: "k-2" } });
      expect(again).not.toBe(laned);
      // what is left is claimed, the cancelled are not
      const ids = [(await claimOne(q)).id, (await claimOne(q)).id].sort();
      expect(ids).toEqual([kept, again].sort());
      expect(await ctx.mq.claim(q, { leaseMs: 60_000 })).toBeNull();
      const events = (await ctx.mq.recentEvents(q, { limit: 100 })).filter((e) => e.type === "cancelled");
      expect(events.map((e) => [(e as { jobId: string }).jobId, (e as { reason: string }).reason])).toEqual(
        expect.arrayContaining([[plain, "cancelled: customer asked"], [laned, "cancelled"], [later, "cancelled"]]),
      );
      expect(await ctx.mq.requeueDead(q, { ids: [plain] })).toBe(1);
      const back = (await ctx.mq.getJob(q, plain))!;
      expect([back.state, back.reason]).toEqual(["pending", undefined]);
      expect(await ctx.row(q, plain, "cancelled_ms")).toEqual(["null"]);
    });

    test("a running job: buried at once, its EXTEND refused `cancelled` and its settle as a lost lease, writing nothing", async () => {
      const q = `cx-run-${backend}`;
      const K = keyspace(q);
      const id = await ctx.mq.enqueue(q, { n: 1 });
      const other = await ctx.mq.enqueue(q, { n: 2 });
      const job = await claimOne(q);
      const next = await claimOne(q);
      expect(job.id).toBe(id);
      expect(await ctx.mq.cancel(q, id, { reason: "stop it" })).toBe("aborting");
      const j = (await ctx.mq.getJob(q, id))!;
      expect([j.state, j.reason]).toEqual(["dead", "cancelled: stop it"]);
      expect((await ctx.mq.counts(q)).active).toBe(1);
      const before = await digest(ctx.raw, K.meta);
      const e = await rejection(ctx.mq.extend([job, next], 60_000));
      expect(e).toBeInstanceOf(JobCancelledError);
      expect((e as JobCancelledError).ids).toEqual([id]);
      expect((e as JobCancelledError).text).toBe(`ERR EMQ.EXTEND cancelled: ${id}`);
      expect(await rejection(ctx.mq.ack(job))).toBeInstanceOf(LeaseLostError);
      expect(await rejection(ctx.mq.retry(job, { delayMs: 0 }))).toBeInstanceOf(LeaseLostError);
      const [settled] = await ctx.mq.settleMany([{ kind: "ack", job }]);
      expect(settled).toBeInstanceOf(LeaseLostError);
      expect(await digest(ctx.raw, K.meta)).toBe(before);
      // the other job's lease extends alone; nothing reaps the cancelled one back
      await ctx.mq.extend(next, 60_000);
      expect(other).toBe(next.id);
      expect(await ctx.mq.reap(q)).toBe(0);
      expect((await ctx.mq.getJob(q, id))!.state).toBe("dead");
    });

    test("a job that finished meanwhile answers `finished`, an unknown id `missing`: nothing written", async () => {
      const q = `cx-done-${backend}`;
      const K = keyspace(q);
      const done = await ctx.mq.enqueue(q, { n: 1 });
      await ctx.mq.ack(await claimOne(q));
      const dead = await ctx.mq.enqueue(q, { n: 2 });
      await ctx.mq.bury(await claimOne(q), "broken");
      const before = await digest(ctx.raw, K.meta);
      expect(await ctx.mq.cancel(q, done)).toBe("finished");
      expect(await ctx.mq.cancel(q, dead)).toBe("finished");
      expect(await ctx.mq.cancel(q, "JOB00000000042")).toBe("missing");
      expect(await digest(ctx.raw, K.meta)).toBe(before);
      expect((await ctx.mq.getJob(q, dead))!.reason).toBe("broken");
      // refused before any wire
      expect(await rejection(ctx.mq.cancel(q, "order-28"))).toBeInstanceOf(EchoMQError);
      expect(await rejection(ctx.mq.cancel(q, done, { reason: "x".repeat(5000) }))).toBeInstanceOf(EchoMQError);
      expect(await digest(ctx.raw, K.meta)).toBe(before);
    });

    test("a handler in another process sees its signal abort within two heartbeats; the job is never retried", async () => {
      const q = `cx-far-${backend}`;
      const site = sites.sites.get(combo.topology)!;
      const other = child(
        [JSON.stringify(site.addresses), site.cluster ? "1" : "0", backend, q, String(HEARTBEAT_MS)],
        "../client/_cancel_child.ts",
      );
      try {
        await line(other.lines, "ready");
        const id = await ctx.mq.enqueue(q, { n: 1 });
        await line(other.lines, `running ${id}`);
        const sent = Date.now();
        expect(await ctx.mq.cancel(q, id, { reason: "from afar" })).toBe("aborting");
        const aborted = await line(other.lines, `aborted ${id}`);
        const [, , at, name] = aborted.split(" ");
        expect(name).toBe("JobCancelledError");
        expect(Number(at) - sent).toBeLessThanOrEqual(2 * HEARTBEAT_MS);
        await line(other.lines, "error JobCancelledError");
        const j = (await ctx.mq.getJob(q, id))!;
        expect([j.state, j.reason, j.attempts]).toEqual(["dead", "cancelled: from afar", 1]);
        expect((await ctx.mq.counts(q)).pending + (await ctx.mq.counts(q)).schedule).toBe(0);
      } finally {
        other.proc.kill();
        await other.exited;
      }
    });
  });
}
