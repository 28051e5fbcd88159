/**
 * Priorities (wire 8's `priority` job option), for each backend × topology: claims take every
 * ready job of priority 0 first, then lower numbers first, FIFO inside one priority; every verb
 * that makes a job ready again keeps its priority (RELEASE to the tail of its level: claimed next;
 * RETRY with delay 0, REQUEUE, RUN and PROMOTE to the head; a lease that ran out to the tail);
 * counts and pages see every level in claim order; REMOVE and DROP leave no level behind; a
 * worker runs them in that order; a bad priority is refused before any wire, and by the server
 * with nothing written.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, type Job } from "../../client.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { claimOrder, COMBOS, digest, eventually, queueKeys, sleep, useClient, useSites, wire } from "./_harness.ts";

type P = { n: string };
const sites = useSites();

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);
    const claimOne = async (q: string, leaseMs = 60_000): Promise<Job<P>> => (await ctx.mq.claim(q, { leaseMs }))!;
    const names = (q: string, n: number): Promise<string[]> => claimOrder(ctx.mq, q, n);
    const keysOf = (q: string): Promise<string[]> => queueKeys(ctx.raw, q);

    test("priority 0 first, then lower numbers first, FIFO inside one priority; counts and pages in claim order", async () => {
      const q = `pr-order-${combo.backend}`;
      const plan: Array<[string, number]> = [["a5", 5], ["b1", 1], ["c0", 0], ["d1", 1], ["e5", 5], ["f0", 0], ["g2097151", 2097151]];
      for (const [n, priority] of plan) await ctx.mq.enqueue(q, { n }, { priority });
      expect((await ctx.mq.counts(q)).pending).toBe(7);
      const order = ["c0", "f0", "b1", "d1", "a5", "e5", "g2097151"];
      // pages across the lists, in claim order
      expect((await ctx.mq.jobs(q, "pending", { limit: 100 })).map((j) => j.payload?.n)).toEqual(order);
      expect((await ctx.mq.jobs(q, "pending", { offset: 1, limit: 3 })).map((j) => j.payload?.n)).toEqual(order.slice(1, 4));
      expect((await ctx.mq.jobs(q, "pending", { offset: 5, limit: 5 })).map((j) => j.payload?.n)).toEqual(order.slice(5));
      const first = (await ctx.mq.jobs(q, "pending", { offset: 4, limit: 1 }))[0]!;
      expect(first.priority).toBe(5);
      expect((await ctx.mq.jobs(q, "pending", { limit: 1 }))[0]!.priority).toBeUndefined();
      // one claim of many takes them in the same order
      const many = await ctx.mq.claimMany(q, 4, { leaseMs: 60_000 });
      expect(many.map((j) => (j as Job<P>).payload.n)).toEqual(order.slice(0, 4));
      expect((many[2] as Job<P>).priority).toBe(1);
      expect(await names(q, 4)).toEqual([...order.slice(4), "none"]);
      expect((await ctx.mq.counts(q)).pending).toBe(0);
      // no level is left behind once its list is empty
      expect(Number(await ctx.raw.command(["EXISTS", keyspace(q).levels("")], keyspace(q).meta))).toBe(0);
    });

    test("every way back to ready keeps the priority: release, retry now, reap, promote, requeue, run now", async () => {
      const q = `pr-keep-${combo.backend}`;
      for (const n of ["x", "y", "z"]) await ctx.mq.enqueue(q, { n }, { priority: 2 });
      // RELEASE: the tail of its level (claimed next)
      const x = await claimOne(q);
      expect(x.payload.n).toBe("x");
      await ctx.mq.settleMany([{ kind: "release", job: x }]);
      const x2 = await claimOne(q);
      expect(x2.payload.n).toBe("x");
      // RETRY with delay 0: the head of its level (after y and z), but before a lower priority
      await ctx.mq.enqueue(q, { n: "low" }, { priority: 3 });
      await ctx.mq.retry(x2, { delayMs: 0, reason: "again" });
      // a scheduled job of priority 1, due now: promoted by the claim, before every priority 2
      await ctx.mq.schedule(q, { n: "s1" }, { delayMs: 0 }, { priority: 1 });
      await sleep(5);
      expect(await names(q, 1)).toEqual(["s1"]);
      // a lease that ran out: the tail of its level (claimed next of priority 2)
      const y = await claimOne(q, 30);
      expect(y.payload.n).toBe("y");
      await sleep(60);
      expect(await names(q, 3)).toEqual(["y", "z", "x"]);
      // REQUEUE of a dead job and RUN of a scheduled one: the head of their levels
      const low = await claimOne(q);
      expect(low.payload.n).toBe("low");
      await ctx.mq.bury(low, "dead");
      await ctx.mq.enqueue(q, { n: "other3" }, { priority: 3 });
      expect(await ctx.mq.requeueDead(q)).toBe(1);
      const later = await ctx.mq.schedule(q, { n: "r0" }, { delayMs: 3_600_000 }, { priority: 0 });
      const later3 = await ctx.mq.schedule(q, { n: "r3" }, { delayMs: 3_600_000 }, { priority: 3 });
      expect(await ctx.mq.runNow(q, [later, later3])).toBe(2);
      expect((await ctx.mq.counts(q)).pending).toBe(4);
      expect(await names(q, 5)).toEqual(["r0", "other3", "low", "r3", "none"]);
      const info = await ctx.mq.getJob(q, later3);
      expect(info?.priority).toBe(3);
    });

    test("REMOVE takes a ready job off its level; DROP leaves no key behind", async () => {
      const q = `pr-gone-${combo.backend}`;
      const a = await ctx.mq.enqueue(q, { n: "a" }, { priority: 7 });
      const b = await ctx.mq.enqueue(q, { n: "b" }, { priority: 9 });
      await ctx.mq.enqueue(q, { n: "c" }, { priority: 9 });
      expect(await ctx.mq.remove(q, a)).toBe(true);
      expect(await ctx.mq.remove(q, b)).toBe(true);
      expect((await ctx.mq.counts(q)).pending).toBe(1);
      const K = keyspace(q);
      expect(await ctx.raw.command(["ZRANGE", K.levels(""), "0", "-1"], K.meta)).toEqual(["9"]);
      expect(Number(await ctx.raw.command(["EXISTS", K.ready("", 7)], K.meta))).toBe(0);
      await ctx.mq.enqueue(q, { n: "d" }, { priority: 1 });
      await ctx.mq.schedule(q, { n: "e" }, { delayMs: 60_000 }, { priority: 4 });
      expect(await ctx.mq.drop(q)).toBe(3);
      expect(await keysOf(q)).toEqual([]);
    });

    test("a worker runs ready jobs in priority order", async () => {
      const q = `pr-worker-${combo.backend}`;
      for (const [n, priority] of [["late", 9], ["soon", 1], ["now", 0], ["mid", 4]] as const) {
        await ctx.mq.enqueue(q, { n }, { priority });
      }
      const seen: string[] = [];
      const w = ctx.mq.work(q, (job) => void seen.push(job.payload.n), { concurrency: 1 });
      try {
        await eventually(() => seen.length === 4);
      } finally {
        await w.stop();
      }
      expect(seen).toEqual(["now", "soon", "mid", "late"]);
    });

    test("a bad priority: refused before any wire, and by the server with nothing written", async () => {
      const q = `pr-bad-${combo.backend}`;
      await ctx.mq.enqueue(q, { n: "kept" }, { priority: 2 });
      const before = await digest(ctx.raw, keyspace(q).meta);
      for (const priority of [-1, 2_097_152, 1.5, Number.NaN]) {
        const e = await ctx.mq.enqueue(q, { n: "x" }, { priority }).then(() => null, (x: unknown) => x);
        expect(e).toBeInstanceOf(EchoMQError);
        expect((e as EchoMQError).rule).toBe("options");
        expect((e as Error).message).toStartWith("enqueue: priority must be an integer from 0 to 2097151");
      }
      const K = keyspace(q);
      expect(await wire(ctx.raw, combo.backend, "ENQUEUE", [K.meta], ["JOB00000000099", "priority=2097152", "p"])).toEqual({
        err: renderRefusal("too-large", "EMQ.ENQUEUE", { arg: "priority", max: "2097151" }),
      });
      // a level list of the wrong type: refused, nothing written
      await ctx.raw.command(["SET", K.ready("", 5), "x"], K.meta);
      const typed = await digest(ctx.raw, K.meta);
      expect(await wire(ctx.raw, combo.backend, "ENQUEUE", [K.meta], ["JOB00000000098", "priority=5", "p"])).toEqual({
        err: renderRefusal("wrongtype", "EMQ.ENQUEUE", {}),
      });
      expect(await digest(ctx.raw, K.meta)).toBe(typed);
      await ctx.raw.command(["DEL", K.ready("", 5)], K.meta);
      expect(await digest(ctx.raw, K.meta)).toBe(before);
    });
  });
}
