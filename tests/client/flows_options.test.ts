/**
 * A flow step's options (issue 36, wire 16; docs/design/flows.md, "Options"), for each backend ×
 * topology: a child with a lane lands in that lane and a prioritized one in priority order, here
 * and in another queue (through the relay); a parent's lane and priority apply once it becomes
 * claimable; a child's own `attempts` is retried past the worker's `maxAttempts` and then succeeds
 * (and is buried once they are spent); a step's name shows in `getJob` and on the claimed job; bad
 * options are refused before any wire with nothing written, and those that reach the server anyway
 * by both twins with the digest unchanged.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, type FlowChild, type FlowStepOptions, type Job } from "../../client.ts";
import { COMBOS, digest, eventually, useClient, useSites, wire } from "./_harness.ts";
import { spread } from "./_spread.ts";

const servers = useSites();
type P = { n: number };
const LEASE = { leaseMs: 60_000 };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo);
    const claimAll = async (q: string): Promise<Array<Job<P>>> => {
      const out: Array<Job<P>> = [];
      for (let job = await ctx.mq.claim(q, LEASE); job !== null; job = await ctx.mq.claim(q, LEASE)) out.push(job);
      return out;
    };

    test("a laned child lands in its lane, a prioritized one in priority order, here and in another queue", async () => {
      const [p, a] = spread(`fopt-place-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [
          { queue: p, payload: { n: 1 }, opts: { priority: 5 } },
          { queue: p, payload: { n: 2 }, opts: { lane: "tenant-a" } },
          { queue: p, payload: { n: 3 } },
          { queue: a, payload: { n: 4 }, opts: { lane: "tenant-x", priority: 2 } },
        ],
      });
      const [c1, c2, c3, c4] = tree.children.map((c) => c.id);
      expect(await ctx.mq.getJob(p, c1!)).toMatchObject({ state: "pending", priority: 5 });
      expect((await ctx.mq.getJob(p, c1!))!.lane).toBeUndefined();
      expect(await ctx.mq.getJob(p, c2!)).toMatchObject({ state: "pending", lane: "tenant-a" });
      // the first laned step made the queue laned: the lane is served beside the default lane
      expect((await ctx.mq.lanes(p)).lanes.map((l) => l.name ?? "").sort()).toEqual(["", "tenant-a"]);
      const claimed = await claimAll(p);
      const order = claimed.map((j) => j.id);
      expect(order.slice().sort()).toEqual([c1!, c2!, c3!].sort());
      // the default lane: priority 0 before priority 5
      expect(order.indexOf(c3!)).toBeLessThan(order.indexOf(c1!));
      expect(claimed.find((j) => j.id === c2)!.lane).toBe("tenant-a");
      expect(claimed.find((j) => j.id === c1)!.priority).toBe(5);
      // the child elsewhere travels through the outbox with its options
      expect(await ctx.mq.relayOnce([p])).toBe(1);
      expect(await ctx.mq.getJob(a, c4!)).toMatchObject({ state: "pending", lane: "tenant-x", priority: 2 });
      const there = (await ctx.mq.claim(a, LEASE))!;
      expect([there.id, there.lane, there.priority]).toEqual([c4!, "tenant-x", 2]);
    });

    test("a parent's lane and priority apply once it becomes claimable; its name shows in getJob", async () => {
      const [p] = spread(`fopt-parent-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        opts: { lane: "reports", priority: 3, name: "monthly-report" },
        children: [{ queue: p, payload: { n: 1 }, opts: { name: "fetch" } }],
      });
      expect(await ctx.mq.getJob(p, tree.id)).toMatchObject({
        state: "waiting-children",
        lane: "reports",
        priority: 3,
        name: "monthly-report",
      });
      // stats count the waiting parent with the queue's counts
      expect((await ctx.mq.stats(p)).waitingChildren).toBe(1);
      const child = (await ctx.mq.claim(p, LEASE))!;
      expect([child.id, child.name]).toEqual([tree.children[0]!.id, "fetch"]);
      expect((await ctx.mq.getJob(p, child.id))!.name).toBe("fetch");
      // nothing else is claimable while the parent waits
      expect(await ctx.mq.claim(p, LEASE)).toBeNull();
      await ctx.mq.ack(child, { n: 1 });
      // two jobs of the parent's lane: the parent (3) runs after priority 1, before priority 5
      expect((await ctx.mq.stats(p)).waitingChildren).toBe(0);
      const urgent = await ctx.mq.enqueue(p, { n: 2 }, { lane: "reports", priority: 1 });
      const late = await ctx.mq.enqueue(p, { n: 3 }, { lane: "reports", priority: 5 });
      const order = await claimAll(p);
      expect(order.map((j) => j.id)).toEqual([urgent, tree.id, late]);
      const parent = order[1]!;
      expect([parent.lane, parent.priority, parent.name]).toEqual(["reports", 3, "monthly-report"]);
    });

    test("a child's own attempts are spent past the worker's maxAttempts, then it is buried (and its parent, policy fail)", async () => {
      const [p] = spread(`fopt-attempts-${backend}`);
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: p, payload: { n: 1 }, opts: { attempts: 2 } }] });
      expect((await ctx.mq.getJob(p, tree.children[0]!.id))!.maxAttempts).toBe(2);
      const seen: number[] = [];
      const worker = ctx.mq.work(p, (job) => {
        seen.push(job.attempts);
        throw new Error(`attempt ${job.attempts}`);
      }, { maxAttempts: 1, backoff: 1, blockMs: 200 });
      await eventually(async () => (await ctx.mq.getJob(p, tree.id))?.state === "dead");
      await worker.stop();
      expect(seen).toEqual([1, 2]);
      expect(await ctx.mq.getJob(p, tree.children[0]!.id)).toMatchObject({ state: "dead", attempts: 2 });
    });

    test("a child whose own attempts succeed on the last one lets its parent run", async () => {
      const [p] = spread(`fopt-retry-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 1 }, opts: { attempts: 3 } }],
      });
      const attempts: number[] = [];
      let parentRan = false;
      const worker = ctx.mq.work(p, (job) => {
        if (job.payload.n === 0) {
          parentRan = true;
          return;
        }
        attempts.push(job.attempts);
        if (job.attempts < 3) throw new Error(`attempt ${job.attempts}`);
      }, { maxAttempts: 1, backoff: 1, blockMs: 200 });
      await eventually(() => parentRan);
      await worker.stop();
      expect(attempts).toEqual([1, 2, 3]);
      expect(await ctx.mq.children(p, tree.id)).toMatchObject([{ state: "completed" }]);
    });

    test("bad options are refused before any wire, nothing written", async () => {
      const [p, a] = spread(`fopt-bad-${backend}`);
      const open = await ctx.mq.flow({ queue: p, payload: { n: 0 }, open: true, children: [{ queue: p, payload: { n: 1 } }] });
      const before = await digest(ctx.raw, keyspace(p).meta);
      const beforeA = await digest(ctx.raw, keyspace(a).meta);
      const bad: unknown[] = [
        { lane: "a{b" },
        { lane: "" },
        { priority: -1 },
        { priority: 1.5 },
        { priority: 2_097_152 },
        { attempts: 0 },
        { attempts: 1_000_001 },
        { name: "" },
        { name: "x}" },
        { timeoutMs: 0 },
        { dedup: { key: "k" } },
        { delay: 5 },
        "lane=a",
        null,
      ];
      for (const opts of bad) {
        const child = { queue: a, payload: { n: 1 }, opts } as unknown as FlowChild;
        const attempts: Array<Promise<unknown>> = [
          ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [child] }),
          ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: p, payload: { n: 1 }, children: [child] }] }),
          ctx.mq.flow({ queue: p, payload: { n: 0 }, opts: opts as FlowStepOptions, children: [{ queue: a, payload: { n: 1 } }] }),
          ctx.mq.addChildren(open, [child]),
        ];
        for (const call of attempts) {
          const e = await call.catch((x: unknown) => x);
          expect(e, JSON.stringify(opts)).toBeInstanceOf(EchoMQError);
          expect((e as EchoMQError).rule, JSON.stringify(opts)).toBe("options");
        }
      }
      expect(await digest(ctx.raw, keyspace(p).meta)).toBe(before);
      expect(await digest(ctx.raw, keyspace(a).meta)).toBe(beforeA);
    });

    test("bad options that reach the server: refused by the gate (FLOW, ADOPT) or as a malformed entry (APPLY), digest unchanged", async () => {
      const [p, a] = spread(`fopt-wire-${backend}`);
      const open = await ctx.mq.flow({ queue: p, payload: { n: 0 }, open: true, children: [{ queue: p, payload: { n: 1 } }] });
      const K = keyspace(p);
      const before = await digest(ctx.raw, K.meta);
      const parent = "JOB00000000001";
      const kid = (opts: string): string[] => ["JOB00000000002", a, "0", opts, "y"];
      const cases: Array<[Parameters<typeof wire>[2], string[], string]> = [
        ["FLOW", [parent, "lane=a{b", "x", "0", "0", ...kid("")], "ERR EMQ.FLOW lane must be a name of 1 to 1024 bytes without braces or NUL"],
        ["FLOW", [parent, "", "x", "0", "0", ...kid("priority=2097152")], "ERR EMQ.FLOW priority must be at most 2097151"],
        ["FLOW", [parent, "", "x", "0", "0", ...kid("attempts=0")], "ERR EMQ.FLOW attempts must be a positive integer"],
        ["FLOW", [parent, "", "x", "0", "0", ...kid("flavour=x")], "ERR EMQ.FLOW unknown option flavour"],
        ["FLOW", [parent, "", "x", "0", "0", ...kid("lane")], "ERR EMQ.FLOW options must be key=value items joined by NUL"],
        ["ADOPT", [open.id, "1", ...kid("lane=a\0lane=b")], "ERR EMQ.ADOPT option lane appears twice"],
        ["ADOPT", [open.id, "1", ...kid("attempts=x")], "ERR EMQ.ADOPT attempts must be a positive integer"],
        // an entry's options: gated as FLOW's, else the entry is malformed
        ["APPLY", [`child\0${p}\0JOB00000000003\0${a}\0${parent}\x000\x006\0lane=}b`], "ERR EMQ.APPLY malformed outbox entry"],
        ["APPLY", [`child\0${p}\0JOB00000000003\0${a}\0${parent}\x000\x009\0lane=b`], "ERR EMQ.APPLY malformed outbox entry"],
        ["APPLY", [`child\0${p}\0JOB00000000003\0${a}\0${parent}\x000\0b`], "ERR EMQ.APPLY malformed outbox entry"],
        ["APPLY", [`node\0${p}\0JOB00000000003\0${a}\0${parent}\x000\x0010\0priority=x1\x001\x00m`], "ERR EMQ.APPLY malformed outbox entry"],
      ];
      for (const [verb, args, text] of cases) {
        expect(await wire(ctx.raw, backend, verb, [K.meta], args), `${verb} ${JSON.stringify(args)}`).toEqual({ err: text });
      }
      expect(await digest(ctx.raw, K.meta)).toBe(before);
    });
  });
}
