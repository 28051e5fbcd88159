/**
 * A child's creation delivered again after the child finished (issue 36; found by the flows
 * chaos proof, tests/reliability/_flows_chaos.ts), for each backend × topology: a relay applies
 * a `child` entry and dies before its UNBOX; the child runs and is acked in a queue that keeps no
 * completed job (its row deleted); once the lease runs out another relay applies the entry
 * again. The ack left a tombstone (state `cancelled`, its `parent`, expiring after an hour), so
 * the second delivery makes nothing: the child is made once, and `getJob` still answers null. The
 * same when the child's row goes by its queue's retention (a trim of `completed`).
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { COMBOS, useClient, useSites, wire } from "./_harness.ts";
import { spread } from "./_spread.ts";

const servers = useSites();
type P = { n: number };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo);

    test("a child acked in a queue that keeps none is not made again by a second delivery of its creation", async () => {
      const [p, b] = spread(`flow-again-${backend}`);
      const K = { p: keyspace(p), b: keyspace(b) };
      await ctx.mq.retain(b, { completedMax: 0 });
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: b, payload: { n: 1 } }] });
      const kid = tree.children[0]!.id;
      // a relay leases the creation and applies it, then dies before its UNBOX
      const leased = (await wire(ctx.raw, backend, "OUTBOX", [K.p.meta], ["1", "10"])) as { ok: Array<number | string> };
      const create = leased.ok.find((x): x is string => typeof x === "string" && x.startsWith("child\0"))!;
      expect(await wire(ctx.raw, backend, "APPLY", [K.b.meta], [create])).toEqual({ ok: 1 });
      // the child runs and is acked: its row goes (the queue keeps no completed job), a tombstone stays
      const job = (await ctx.mq.claim(b, { leaseMs: 60_000 }))!;
      expect(job.id).toBe(kid);
      await ctx.mq.ack(job, "one");
      expect(await ctx.row(b, kid, "state", "parent", "result", "attempts")).toEqual(["cancelled", `${p}\0${tree.id}\x000`, "null", "null"]);
      const ttl = Number(await ctx.raw.command(["PTTL", K.b.job(kid)], K.b.meta));
      expect(ttl).toBeGreaterThan(3_500_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
      expect(await ctx.mq.getJob(b, kid)).toBeNull();
      // the lease has run out (1 ms): another relay delivers the creation again — nothing made
      expect(await ctx.mq.relayOnce([p])).toBe(1);
      expect(await ctx.mq.claim(b, { leaseMs: 60_000 })).toBeNull();
      expect(await ctx.mq.counts(b)).toMatchObject({ pending: 0, active: 0 });
      // the outcome reached the parent once; it runs
      expect(await ctx.mq.relayOnce([b])).toBe(1);
      const parent = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect(parent.id).toBe(tree.id);
      expect((await ctx.mq.children(p, tree.id)).map((c) => [c.state, c.result])).toEqual([["completed", "one"]]);
      await ctx.mq.ack(parent);
    });

    test("a child trimmed by its queue's retention leaves a tombstone: a second delivery of its creation makes nothing", async () => {
      const [p, b] = spread(`flow-trim-${backend}`);
      const K = { p: keyspace(p), b: keyspace(b) };
      await ctx.mq.retain(b, { completedMax: 1 });
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: b, payload: { n: 1 } }] });
      const kid = tree.children[0]!.id;
      const leased = (await wire(ctx.raw, backend, "OUTBOX", [K.p.meta], ["1", "10"])) as { ok: Array<number | string> };
      const create = leased.ok.find((x): x is string => typeof x === "string" && x.startsWith("child\0"))!;
      expect(await wire(ctx.raw, backend, "APPLY", [K.b.meta], [create])).toEqual({ ok: 1 });
      await ctx.mq.ack((await ctx.mq.claim(b, { leaseMs: 60_000 }))!, "one");
      expect(await ctx.row(b, kid, "state")).toEqual(["completed"]);
      // another job's ack trims the child out of completed (the queue keeps one)
      const other = await ctx.mq.enqueue(b, { n: 2 });
      await ctx.mq.ack((await ctx.mq.claim(b, { leaseMs: 60_000 }))!);
      expect(await ctx.row(b, other, "state")).toEqual(["completed"]);
      expect(await ctx.row(b, kid, "state", "parent", "result")).toEqual(["cancelled", `${p}\0${tree.id}\x000`, "null"]);
      expect(Number(await ctx.raw.command(["PTTL", K.b.job(kid)], K.b.meta))).toBeGreaterThan(3_500_000);
      expect(await ctx.mq.getJob(b, kid)).toBeNull();
      expect(await ctx.mq.counts(b)).toMatchObject({ completed: 1 });
      expect(await ctx.mq.relayOnce([p])).toBe(1);
      expect(await ctx.mq.claim(b, { leaseMs: 60_000 })).toBeNull();
      expect(await ctx.mq.relayOnce([b])).toBe(1);
      expect((await ctx.mq.claim(p, { leaseMs: 60_000 }))!.id).toBe(tree.id);
    });

    test("a child removed by hand, finished or not, leaves a tombstone: a second delivery of its creation makes nothing", async () => {
      const [p, b] = spread(`flow-rm-${backend}`);
      const K = { p: keyspace(p), b: keyspace(b) };
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: b, payload: { n: 1 } }, { queue: b, payload: { n: 2 } }] });
      // a relay applies both creations, then dies before its UNBOX
      const leased = (await wire(ctx.raw, backend, "OUTBOX", [K.p.meta], ["1", "10"])) as { ok: Array<number | string> };
      const creates = leased.ok.filter((x): x is string => typeof x === "string" && x.startsWith("child\0"));
      expect(creates.length).toBe(2);
      for (const create of creates) expect(await wire(ctx.raw, backend, "APPLY", [K.b.meta], [create])).toEqual({ ok: 1 });
      // the first child runs and completes (its row kept), then is removed; the second is removed before it runs
      const job = (await ctx.mq.claim(b, { leaseMs: 60_000 }))!;
      const [done, early] = job.id === tree.children[0]!.id ? [0, 1] : [1, 0];
      const kids = [tree.children[done]!.id, tree.children[early]!.id] as const;
      await ctx.mq.ack(job, "one");
      for (const kid of kids) expect(await ctx.mq.remove(b, kid)).toBe(true);
      for (const [k, kid] of kids.entries()) {
        expect(await ctx.row(b, kid, "state", "parent", "result", "payload")).toEqual(["cancelled", `${p}\0${tree.id}\0${[done, early][k]}`, "null", "null"]);
        expect(Number(await ctx.raw.command(["PTTL", K.b.job(kid)], K.b.meta))).toBeGreaterThan(3_500_000);
        expect(await ctx.mq.getJob(b, kid)).toBeNull();
      }
      // the leases have run out (1 ms): another relay delivers both creations again — nothing made
      expect(await ctx.mq.relayOnce([p])).toBe(2);
      expect(await ctx.mq.claim(b, { leaseMs: 60_000 })).toBeNull();
      expect(await ctx.mq.counts(b)).toMatchObject({ pending: 0, active: 0, completed: 0 });
      // the parent heard each child once (completed, then removed) and runs
      expect(await ctx.mq.relayOnce([b])).toBe(2);
      const parent = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect(parent.id).toBe(tree.id);
      expect((await ctx.mq.children(p, tree.id)).map((c) => c.state)).toEqual(done === 0 ? ["completed", "removed"] : ["removed", "completed"]);
    });

    test("a job of no flow acked in a queue that keeps none leaves no row", async () => {
      const [q] = spread(`flow-again-plain-${backend}`);
      await ctx.mq.retain(q, { completedMax: 0 });
      const id = await ctx.mq.enqueue(q, { n: 1 });
      await ctx.mq.ack((await ctx.mq.claim(q, { leaseMs: 60_000 }))!);
      expect(await ctx.raw.command(["EXISTS", keyspace(q).job(id)], keyspace(q).meta)).toBe(0);
    });
  });
}
