/**
 * Flows (issue 36, docs/design/flows.md), for each backend × topology: a parent with children in
 * its own queue and in other queues (on other primaries of the cluster) becomes claimable only once
 * every child has finished, exactly once; a failed child of policy "fail" buries the parent with a
 * reason naming it, "ignore" counts it as finished; an outbox entry delivered twice makes nothing
 * twice and counts once; a relay's acknowledgement from a lease that ran out is refused, writing
 * nothing; bad input is refused before the wire, and what reaches the server anyway by both twins
 * with the digest unchanged.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { childId, type ChildState, EchoMQError } from "../../client.ts";
import { COMBOS, digest, outcome, sleep, useClient, useSites, wire } from "./_harness.ts";
import { flowKit } from "./_flows.ts";
import { spread } from "./_spread.ts";

const servers = useSites();
type P = { n: number };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo);
    const { state, zcard, ackOne } = flowKit(ctx);

    test("a parent with children here and in other queues runs once, after all of them", async () => {
      const [p, a, b] = spread(`flow-run-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 1 } }, {
          queue: a,
          payload: { n: 2 },
        }, { queue: b, payload: { n: 3 } }],
      });
      expect(tree.children.map((c) => c.queue)).toEqual([p, a, b]);
      expect(await state(p, tree.id)).toBe("waiting");
      expect(await zcard(p, "waiting")).toBe(1);
      expect(await zcard(p, "outbox")).toBe(2);
      // the child here is claimable at once; the parent is not
      const here = await ackOne(p);
      expect(here.id).toBe(tree.children[0]!.id);
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();
      // the relay makes the children elsewhere
      expect(await ctx.mq.relayOnce([p])).toBe(2);
      expect(await zcard(p, "outbox")).toBe(0);
      expect((await ackOne(a)).id).toBe(tree.children[1]!.id);
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect(await state(p, tree.id)).toBe("waiting");
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();
      await ackOne(b, "last");
      expect(await ctx.mq.relayOnce([a, b])).toBe(1);
      const parent = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect(parent.id).toBe(tree.id);
      expect(await ctx.mq.children(p, tree.id)).toEqual([
        {
          queue: p,
          id: tree.children[0]!.id,
          state: "completed",
          result: { n: 1 },
        },
        {
          queue: a,
          id: tree.children[1]!.id,
          state: "completed",
          result: { n: 2 },
        },
        {
          queue: b,
          id: tree.children[2]!.id,
          state: "completed",
          result: "last",
        },
      ]);
      await ctx.mq.ack(parent);
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();
      for (const q of [p, a, b]) expect(await zcard(q, "outbox")).toBe(0);
      expect(await zcard(p, "waiting")).toBe(0);
    });

    test(
      "with workers and a relay running: every parent runs once, after its children",
      async () => {
        const [p, a, b] = spread(`flow-work-${backend}`);
        const flows = 10;
        const done = new Map<string, number>();
        const parents: string[] = [];
        for (let i = 0; i < flows; i++) {
          const t = await ctx.mq.flow({
            queue: p,
            payload: { n: -1 },
            children: [{ queue: a, payload: { n: i } }, {
              queue: b,
              payload: { n: i },
            }, { queue: p, payload: { n: i } }],
          });
          parents.push(t.id);
        }
        const ran: string[] = [];
        const workers = [p, a, b].map((q) =>
          ctx.mq.work(q, async (job) => {
            if (job.payload.n === -1) {
              const kids = await ctx.mq.children(p, job.id);
              expect(kids.every((k) => k.state === "completed")).toBe(true);
              ran.push(job.id);
            }
            done.set(job.id, (done.get(job.id) ?? 0) + 1);
            return job.payload.n;
          }, { concurrency: 4, blockMs: 100 })
        );
        const relay = ctx.mq.relay([p, a, b], { intervalMs: 20 });
        const until = Date.now() + 30_000;
        while (ran.length < flows && Date.now() < until) await sleep(50);
        await relay.stop();
        await Promise.all(workers.map((w) => w.stop()));
        expect(ran.sort()).toEqual(parents.sort());
        expect([...done.values()].every((n) => n === 1)).toBe(true);
        expect(done.size).toBe(flows * 4);
      },
      60_000,
    );

    test(
      "workers that relay their queues (relay option): every parent runs once, reading job.children()",
      async () => {
        const [p, a, b] = spread(`flow-wrelay-${backend}`);
        const flows = 10;
        const done = new Map<string, number>();
        const parents: string[] = [];
        for (let i = 0; i < flows; i++) {
          const t = await ctx.mq.flow({
            queue: p,
            payload: { n: -1 },
            children: [{ queue: a, payload: { n: i } }, {
              queue: b,
              payload: { n: i },
            }],
          });
          parents.push(t.id);
        }
        const ran: string[] = [];
        const seen: Array<Array<[string, string]>> = [];
        const workers = [p, a, b].map((q) =>
          ctx.mq.work(q, async (job) => {
            if (job.payload.n === -1) {
              const kids = await job.children();
              seen.push(kids.map((k): [string, string] => [k.queue, k.state]));
              ran.push(job.id);
            }
            done.set(job.id, (done.get(job.id) ?? 0) + 1);
            return job.payload.n;
          }, { concurrency: 4, blockMs: 100, relay: { intervalMs: 20 } })
        );
        const until = Date.now() + 30_000;
        while (ran.length < flows && Date.now() < until) await sleep(50);
        await Promise.all(workers.map((w) => w.stop()));
        expect(ran.sort()).toEqual(parents.sort());
        expect([...done.values()].every((n) => n === 1)).toBe(true);
        for (const kids of seen) {
          expect(kids).toEqual([[a, "completed"], [b, "completed"]]);
        }
      },
      60_000,
    );

    test('a failed child of policy "fail" buries the parent with a reason naming it; "ignore" counts it as finished', async () => {
      const [p, a] = spread(`flow-fail-${backend}`);
      const failing = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }, {
          queue: p,
          payload: { n: 2 },
        }],
      });
      await ctx.mq.relayOnce([p]);
      const child = (await ctx.mq.claim(a, { leaseMs: 60_000 }))!;
      await ctx.mq.bury(child, "boom");
      await ctx.mq.relayOnce([a]);
      expect(await state(p, failing.id)).toBe("dead");
      expect((await ctx.row(p, failing.id, "reason"))[0]).toBe(
        `child ${a} ${child.id} failed: boom`,
      );
      expect(await zcard(p, "waiting")).toBe(0);
      // the sibling here, not started, was cancelled with it
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();

      // a child of its own queue buried: its parent buried in the same command, both counted
      const buried = async (): Promise<number> =>
        Number(
          await ctx.raw.command(
            ["HGET", keyspace(p).meta, "buried"],
            keyspace(p).meta,
          ),
        );
      const before = await buried();
      const local = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 4 } }],
      });
      await ctx.mq.bury((await ctx.mq.claim(p, { leaseMs: 60_000 }))!, "local");
      expect(await state(p, local.id)).toBe("dead");
      expect(await buried()).toBe(before + 2);

      const ignoring = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 3 }, onFailure: "ignore" }],
      });
      const own = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      await ctx.mq.bury(own, "ignored");
      const parent = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect(parent.id).toBe(ignoring.id);
      expect(await ctx.mq.children(p, ignoring.id)).toEqual([{
        queue: p,
        id: own.id,
        state: "failed",
        reason: "ignored",
      }]);
    });

    test('"remove": a failed child counts as finished, recorded as removed without its reason', async () => {
      const [p, a] = spread(`flow-remove-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 }, onFailure: "remove" }, {
          queue: p,
          payload: { n: 2 },
        }],
      });
      await ctx.mq.relayOnce([p]);
      await ctx.mq.bury((await ctx.mq.claim(a, { leaseMs: 60_000 }))!, "gone");
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect(await state(p, tree.id)).toBe("waiting");
      await ackOne(p);
      const parent = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect(parent.id).toBe(tree.id);
      expect(await ctx.mq.children(p, tree.id)).toEqual([
        { queue: a, id: tree.children[0]!.id, state: "removed" },
        {
          queue: p,
          id: tree.children[1]!.id,
          state: "completed",
          result: { n: 2 },
        },
      ]);
    });

    test('"continue": a failed child lets the parent run at once; later children land in children() and never wake it again', async () => {
      const [p, a, b] = spread(`flow-continue-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 }, onFailure: "continue" }, {
          queue: b,
          payload: { n: 2 },
        }, {
          queue: p,
          payload: { n: 3 },
          onFailure: "continue",
        }],
      });
      await ctx.mq.relayOnce([p]);
      await ctx.mq.bury(
        (await ctx.mq.claim(a, { leaseMs: 60_000 }))!,
        "partial",
      );
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      // the parent's own-queue child is ahead of it; the parent is next
      expect(await state(p, tree.id)).toBe("pending");
      const mine = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      const parent = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect([mine.id, parent.id].sort()).toEqual(
        [tree.children[2]!.id, tree.id].sort(),
      );
      const seen = await ctx.mq.children(p, tree.id);
      expect(seen.map((k) => k.state)).toEqual([
        "failed",
        "unfinished",
        "unfinished",
      ]);
      expect(seen[0]).toMatchObject({ reason: "partial" });
      await ctx.mq.ack(parent);
      await ctx.mq.bury(mine, "late"); // a second failure of policy continue: the parent is not woken twice
      await ackOne(b);
      expect(await ctx.mq.relayOnce([b])).toBe(1);
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();
      expect((await ctx.mq.children(p, tree.id)).map((k) => k.state)).toEqual([
        "failed",
        "completed",
        "failed",
      ]);
    });

    test("getJob shows a waiting parent with its children's outcomes and a child's parent; flowOf the whole tree", async () => {
      const [p, a] = spread(`flow-show-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }, {
          queue: p,
          payload: { n: 2 },
        }],
      });
      const [far, near] = tree.children as [typeof tree, typeof tree];
      const parent = (await ctx.mq.getJob(p, tree.id))!;
      expect(parent).toMatchObject({
        id: tree.id,
        queue: p,
        state: "waiting-children",
        payload: { n: 0 },
      });
      expect(parent.children).toEqual([{
        queue: a,
        id: far.id,
        state: "unfinished",
      }, { queue: p, id: near.id, state: "unfinished" }]);
      expect((await ctx.mq.jobs(p, "waiting-children")).map((j) => j.id))
        .toEqual([tree.id]);
      // counts name the waiting parent beside the five sets (the child here is pending)
      expect(await ctx.mq.counts(p)).toEqual({ pending: 1, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 1 });
      expect((await ctx.mq.getJob(p, near.id))!.parent).toEqual({
        queue: p,
        id: tree.id,
      });
      // the child elsewhere not made yet: missing in the tree; then pending, then completed
      expect(await ctx.mq.flowOf(p, tree.id)).toEqual({
        queue: p,
        id: tree.id,
        state: "waiting-children",
        children: [{ queue: a, id: far.id, state: "missing", children: [] }, {
          queue: p,
          id: near.id,
          state: "pending",
          children: [],
        }],
      });
      await ctx.mq.relayOnce([p]);
      expect((await ctx.mq.getJob(a, far.id))!.parent).toEqual({
        queue: p,
        id: tree.id,
      });
      await ackOne(p, "near");
      const fromChild = (await ctx.mq.flowOf(a, far.id))!;
      expect(fromChild.id).toBe(tree.id);
      expect(fromChild.children.map((k) => [k.id, k.state])).toEqual([[
        far.id,
        "pending",
      ], [near.id, "completed"]]);
      expect(fromChild.children[1]!.result).toBe("near");
      expect(await ctx.mq.flowOf(p, "JOB00000000009")).toBeNull();
    });

    test('"fail": the parent fails with a reason and its children not yet started are cancelled; a started one runs on', async () => {
      const [p, a, b] = spread(`flow-cancel-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [
          { queue: a, payload: { n: 1 } },
          { queue: b, payload: { n: 2 } },
          { queue: p, payload: { n: 3 } },
          { queue: b, payload: { n: 4 } },
        ],
      });
      expect(await ctx.mq.relayOnce([p])).toBe(3);
      const started = (await ctx.mq.claim(b, { leaseMs: 60_000 }))!;
      const failing = (await ctx.mq.claim(a, { leaseMs: 60_000 }))!;
      await ctx.mq.bury(failing, "broke");
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect(await state(p, tree.id)).toBe("dead");
      expect((await ctx.row(p, tree.id, "reason"))[0]).toBe(
        `child ${a} ${failing.id} failed: broke`,
      );
      // the child here is gone at once; the one elsewhere once the relay carries the cancel
      expect(await ctx.mq.getJob(p, tree.children[2]!.id)).toBeNull();
      expect(await ctx.mq.counts(p)).toMatchObject({ pending: 0 });
      const unstarted = tree.children.find((k) => k.queue === b && k.id !== started.id)!;
      expect(await ctx.mq.getJob(b, unstarted.id)).not.toBeNull();
      expect(await ctx.mq.relayOnce([p])).toBe(2); // a cancel per unfinished child: the started one's changes nothing
      expect(await ctx.mq.getJob(b, unstarted.id)).toBeNull();
      expect(await ctx.mq.counts(b)).toMatchObject({ pending: 0, active: 1 });
      // the started sibling finishes: its outcome lands on the dead parent and wakes nothing
      await ctx.mq.ack(started, "late");
      expect(await ctx.mq.relayOnce([b])).toBe(1);
      expect(await state(p, tree.id)).toBe("dead");
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();
      for (const q of [p, a, b]) expect(await zcard(q, "outbox")).toBe(0);
    });

    test("a cancel that reaches a child before its creation leaves a tombstone: the late creation makes nothing", async () => {
      const [p, b] = spread(`flow-tomb-${backend}`);
      const K = { p: keyspace(p), b: keyspace(b) };
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 1 } }, {
          queue: b,
          payload: { n: 2 },
        }],
      });
      await ctx.mq.bury((await ctx.mq.claim(p, { leaseMs: 60_000 }))!, "first");
      expect(await state(p, tree.id)).toBe("dead");
      const leased = (await wire(ctx.raw, backend, "OUTBOX", [K.p.meta], [
        "60000",
        "10",
      ])) as { ok: Array<number | string> };
      // (same-ms scores order by the entry's bytes: either may come first)
      const entries = leased.ok.filter((x): x is string => typeof x === "string");
      const create = entries.find((x) => x.startsWith("child\0"))!;
      const cancel = entries.find((x) => x.startsWith("cancel\0"))!;
      expect(entries.length).toBe(2);
      expect(cancel).toBe(
        `cancel\0${b}\0${tree.children[1]!.id}\0${p}\0${tree.id}\x001\0`,
      );
      // the cancel applied first (the creation's relay died): a tombstone
      expect(await wire(ctx.raw, backend, "APPLY", [K.b.meta], [cancel]))
        .toEqual({ ok: 1 });
      expect(await wire(ctx.raw, backend, "APPLY", [K.b.meta], [create]))
        .toEqual({ ok: 0 });
      const row = K.b.job(tree.children[1]!.id);
      expect(await ctx.row(b, tree.children[1]!.id, "state")).toEqual([
        "cancelled",
      ]);
      const ttl = Number(await ctx.raw.command(["PTTL", row], K.b.meta));
      expect(ttl).toBeGreaterThan(3_500_000);
      expect(ttl).toBeLessThanOrEqual(3_600_000);
      expect(await ctx.mq.getJob(b, tree.children[1]!.id)).toBeNull();
      expect(await ctx.mq.counts(b)).toMatchObject({ pending: 0 });
      expect(await wire(ctx.raw, backend, "APPLY", [K.b.meta], [cancel]))
        .toEqual({ ok: 0 });
    });

    test("a removed parent's unfinished children are removed (here at once, elsewhere through the outbox); a started one runs on", async () => {
      const [p, a, b] = spread(`flow-rmkids-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }, {
          queue: b,
          payload: { n: 2 },
        }, { queue: p, payload: { n: 3 } }],
      });
      expect(await ctx.mq.relayOnce([p])).toBe(2);
      const started = (await ctx.mq.claim(a, { leaseMs: 60_000 }))!;
      expect(await ctx.mq.remove(p, tree.id)).toBe(true);
      expect(await ctx.mq.counts(p)).toMatchObject({ pending: 0 });
      expect(await ctx.mq.relayOnce([p])).toBe(2);
      expect(await ctx.mq.getJob(b, tree.children[1]!.id)).toBeNull();
      expect(await ctx.mq.getJob(a, started.id)).toMatchObject({
        state: "active",
      });
      await ctx.mq.ack(started);
      expect(await ctx.mq.relayOnce([a])).toBe(1); // acknowledged; applied to nothing
      expect(await ctx.mq.counts(p)).toMatchObject({ pending: 0 });
      for (const q of [p, a, b]) expect(await zcard(q, "outbox")).toBe(0);
    });

    test("an open fan-in: children added while it waits; it runs once sealed and all have finished, sealed late or early", async () => {
      const [p, a] = spread(`flow-open-${backend}`);
      const late = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        open: true,
        children: [{ queue: p, payload: { n: 1 } }],
      });
      const more = await ctx.mq.addChildren(late, [{
        queue: a,
        payload: { n: 2 },
      }, { queue: p, payload: { n: 3 } }]);
      expect(more.map((k) => k.id)).toEqual([
        await childId(late.id, 1),
        await childId(late.id, 2),
      ]);
      await ackOne(p);
      await ackOne(p);
      await ctx.mq.relayOnce([p]);
      await ackOne(a);
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      // every child finished, but it is open: it waits for the seal
      expect(await state(p, late.id)).toBe("waiting");
      expect(await ctx.mq.seal(late)).toBe(true);
      expect(await state(p, late.id)).toBe("pending");
      expect(await ctx.mq.seal(late)).toBe(false);
      expect((await ctx.mq.claim(p, { leaseMs: 60_000 }))!.id).toBe(late.id);
      expect((await ctx.mq.children(p, late.id)).map((k) => k.state)).toEqual([
        "completed",
        "completed",
        "completed",
      ]);

      const early = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        open: true,
        children: [{ queue: p, payload: { n: 4 } }],
      });
      await ctx.mq.addChildren(early, [{ queue: p, payload: { n: 5 } }]);
      expect(await ctx.mq.seal(early)).toBe(true);
      expect(await state(p, early.id)).toBe("waiting");
      await ackOne(p);
      expect(await state(p, early.id)).toBe("waiting");
      await ackOne(p);
      expect((await ctx.mq.claim(p, { leaseMs: 60_000 }))!.id).toBe(early.id);
      expect(await ctx.mq.seal({ queue: p, id: "JOB00000000009" })).toBe(false);
    });

    test("open fan-in refusals: a sealed parent, a stale place, past the fan-in limit — nothing written", async () => {
      const [p, a] = spread(`flow-openbad-${backend}`);
      const K = keyspace(p);
      const shut = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }],
      });
      const open = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        open: true,
        children: [{ queue: a, payload: { n: 1 } }],
      });
      const empty = await ctx.mq.addChildren(open, []).catch((e) => e);
      expect(empty).toBeInstanceOf(EchoMQError);
      expect((empty as EchoMQError).rule).toBe("flow");
      const before = await digest(ctx.raw, K.meta);
      const sealed = await ctx.mq.addChildren(shut, [{
        queue: a,
        payload: { n: 2 },
      }]).catch((e) => e);
      expect(sealed).toBeInstanceOf(EchoMQError);
      expect((sealed as EchoMQError).rule).toBe("not-open");
      const kid = ["JOB00000000002", a, "0", "", "x"];
      const cases: Array<[string[], string]> = [
        [
          [shut.id, "1", ...kid],
          "ERR EMQ.ADOPT the parent is not open and waiting for children",
        ],
        [
          ["JOB00000000009", "0", ...kid],
          "ERR EMQ.ADOPT the parent is not open and waiting for children",
        ],
        [
          [open.id, "0", ...kid],
          "ERR EMQ.ADOPT the parent has 1 children: the first added takes that place",
        ],
        [
          [open.id, "2", ...kid],
          "ERR EMQ.ADOPT the parent has 1 children: the first added takes that place",
        ],
        [
          [open.id, "100001", ...kid],
          "ERR EMQ.ADOPT from must be at most 100000",
        ],
        [[
          open.id,
          "1",
          "JOB00000000002",
          a,
          "0",
          "",
          "x",
          "JOB00000000002",
          a,
          "0",
          "",
          "y",
        ], "ERR EMQ.ADOPT id JOB00000000002 appears twice"],
        [
          [open.id, "1", open.id, a, "0", "", "x"],
          `ERR EMQ.ADOPT id ${open.id} appears twice`,
        ],
      ];
      for (const [args, text] of cases) {
        expect(await wire(ctx.raw, backend, "ADOPT", [K.meta], args)).toEqual({
          err: text,
        });
      }
      expect(await digest(ctx.raw, K.meta)).toBe(before);
      // past the fan-in limit: a parent made to have 99,999 children by hand
      await ctx.raw.command(
        ["HSET", K.job(open.id), "children", "99999"],
        K.meta,
      );
      const near = await digest(ctx.raw, K.meta);
      expect(
        await wire(ctx.raw, backend, "ADOPT", [K.meta], [
          open.id,
          "99999",
          ...kid,
          "JOB00000000003",
          a,
          "0",
          "",
          "y",
        ]),
      ).toEqual({
        err: "ERR EMQ.ADOPT at most 100000 children per parent",
      });
      expect(await digest(ctx.raw, K.meta)).toBe(near);
      expect(
        await wire(ctx.raw, backend, "ADOPT", [K.meta], [
          open.id,
          "99999",
          ...kid,
        ]),
      ).toEqual({ ok: 0 });
      expect(await ctx.row(p, open.id, "children", "child:99999")).toEqual([
        "100000",
        `${a}\0JOB00000000002\x000`,
      ]);
    });

    test(
      "a fan-in of 5,000 children streamed in calls of 1,000, sealed: the parent runs once, after all",
      async () => {
        const [p, a] = spread(`flow-stream-${backend}`);
        const total = 5000;
        const call = (from: number) =>
          Array.from(
            { length: 1000 },
            (_, i) => ({
              queue: (from + i) % 2 === 0 ? a : p,
              payload: { n: from + i },
            }),
          );
        const tree = await ctx.mq.flow({
          queue: p,
          payload: { n: -1 },
          open: true,
          children: call(0),
        });
        for (let from = 1000; from < total; from += 1000) {
          await ctx.mq.addChildren(tree, call(from));
        }
        expect(await ctx.mq.seal(tree)).toBe(true);
        let ran = 0;
        let kids: ChildState[] = [];
        const workers = [p, a].map((q) =>
          ctx.mq.work(q, async (job) => {
            if (job.payload.n === -1) {
              kids = await job.children();
              ran++;
            }
            return job.payload.n;
          }, {
            concurrency: 16,
            blockMs: 100,
            relay: { intervalMs: 20, batch: 1000 },
          })
        );
        const until = Date.now() + 120_000;
        while (ran === 0 && Date.now() < until) await sleep(50);
        await Promise.all(workers.map((w) => w.stop()));
        expect(ran).toBe(1);
        expect(kids.length).toBe(total);
        expect(kids.every((k, i) => k.state === "completed" && k.result === i))
          .toBe(true);
        expect(await ctx.row(p, tree.id, "finished")).toEqual([String(total)]);
      },
      180_000,
    );

    test("a flow deadline: a parent still waiting then fails with a reason naming it, its unstarted children cancelled", async () => {
      const [p, a] = spread(`flow-deadline-${backend}`);
      const late = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        deadlineMs: 300,
        children: [{ queue: p, payload: { n: 1 } }, {
          queue: a,
          payload: { n: 2 },
        }],
      });
      const started = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect(started.id).toBe(late.children[0]!.id);
      // the queue's relay fails it once the deadline passed (polled: no fixed sleep)
      const until = Date.now() + 30_000;
      while ((await state(p, late.id)) === "waiting" && Date.now() < until) {
        await ctx.mq.relayOnce([p]);
      }
      expect(await state(p, late.id)).toBe("dead");
      expect((await ctx.row(p, late.id, "reason"))[0]).toBe(
        "flow deadline passed: 0 of 2 children finished",
      );
      await ctx.mq.relayOnce([p]);
      expect(await ctx.mq.counts(a)).toMatchObject({ pending: 0 });
      expect(await zcard(p, "outbox")).toBe(0);
      // the started child runs on; its outcome wakes nothing
      await ctx.mq.ack(started);
      expect(await state(p, late.id)).toBe("dead");
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();

      // a flow that finishes within its deadline runs, and the deadline does nothing after
      const kept = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        deadlineMs: 60_000,
        children: [{ queue: p, payload: { n: 3 } }],
      });
      await ackOne(p);
      expect(await zcard(p, "waiting")).toBe(0);
      await ctx.mq.relayOnce([p]);
      expect((await ctx.mq.claim(p, { leaseMs: 60_000 }))!.id).toBe(kept.id);
      const bad = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        deadlineMs: -1,
        children: [{ queue: p, payload: { n: 3 } }],
      }).catch((e) => e);
      expect((bad as EchoMQError).rule).toBe("flow");
    });

    test("a child's result longer than its parent keeps (64 KiB) is recorded by its length; the child's row keeps it", async () => {
      const [p, a] = spread(`flow-large-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 1 } }, {
          queue: a,
          payload: { n: 2 },
        }],
      });
      const big = "x".repeat(70_000);
      await ackOne(p, big);
      await ctx.mq.relayOnce([p]);
      await ackOne(a, "y".repeat(65_534)); // 65,536 bytes as JSON: kept
      await ctx.mq.relayOnce([a]);
      const kids = await ctx.mq.children(p, tree.id);
      expect(kids[0]).toEqual({
        queue: p,
        id: tree.children[0]!.id,
        state: "completed",
        resultBytes: 70_002,
      });
      expect(kids[1]!.result).toBe("y".repeat(65_534));
      expect((await ctx.mq.getJob(p, tree.children[0]!.id))!.result).toBe(big);
      expect((await ctx.mq.claim(p, { leaseMs: 60_000 }))!.id).toBe(tree.id);
    });

    test("a child removed before it finished counts as finished for its parent (removed): no parent stuck", async () => {
      const [p, a] = spread(`flow-rmchild-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 1 } }, {
          queue: a,
          payload: { n: 2 },
        }],
      });
      await ctx.mq.relayOnce([p]);
      expect(await ctx.mq.remove(p, tree.children[0]!.id)).toBe(true);
      expect(await ctx.row(p, tree.id, "finished", "state")).toEqual([
        "1",
        "waiting",
      ]);
      expect(await ctx.mq.remove(a, tree.children[1]!.id)).toBe(true);
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect((await ctx.mq.claim(p, { leaseMs: 60_000 }))!.id).toBe(tree.id);
      expect((await ctx.mq.children(p, tree.id)).map((k) => k.state)).toEqual([
        "removed",
        "removed",
      ]);
      // a finished child removed later reports nothing again
      const done = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 3 } }],
      });
      const kept = await ackOne(p);
      expect(await ctx.mq.remove(p, kept.id)).toBe(true);
      expect((await ctx.mq.children(p, done.id)).map((k) => k.state)).toEqual([
        "completed",
      ]);
    });

    test("an entry delivered twice makes nothing twice and counts once; a stale relay's ack is refused", async () => {
      const [p, a] = spread(`flow-dup-${backend}`);
      const K = { p: keyspace(p), a: keyspace(a) };
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }, {
          queue: a,
          payload: { n: 2 },
        }],
      });
      const leased = await wire(ctx.raw, backend, "OUTBOX", [K.p.meta], [
        "30",
        "10",
      ]);
      const [token, first, , second] = (leased as { ok: [number, string, number, string] }).ok;
      expect(await wire(ctx.raw, backend, "APPLY", [K.a.meta], [first, second]))
        .toEqual({ ok: 2 });
      expect(await wire(ctx.raw, backend, "APPLY", [K.a.meta], [first, second]))
        .toEqual({ ok: 0 });
      expect(await ctx.mq.counts(a)).toMatchObject({ pending: 2 });
      // the lease runs out, another relay leases the entries: the first one's ack is refused
      await sleep(60);
      const again = (await wire(ctx.raw, backend, "OUTBOX", [K.p.meta], [
        "60000",
        "10",
      ])) as { ok: [number, string, number, string] };
      expect(again.ok[0]).toBeGreaterThan(token);
      const before = await digest(ctx.raw, K.p.meta);
      expect(
        await wire(ctx.raw, backend, "UNBOX", [K.p.meta], [
          String(token),
          first,
        ]),
      ).toEqual({ err: "ERR EMQ.UNBOX outbox lease lost" });
      expect(await digest(ctx.raw, K.p.meta)).toBe(before);
      expect(await ctx.mq.relayOnce([p]).catch((e) => e)).toBe(0); // leased to the other relay: nothing free
      expect(
        await wire(ctx.raw, backend, "UNBOX", [K.p.meta], [
          String(again.ok[0]),
          first,
          String(again.ok[0]),
          second,
        ]),
      ).toEqual({ ok: 2 });
      expect(
        await wire(ctx.raw, backend, "UNBOX", [K.p.meta], [
          String(again.ok[0]),
          first,
        ]),
      ).toEqual({ ok: 0 });
      // a completion delivered twice counts once
      await ackOne(a);
      const done = (await wire(ctx.raw, backend, "OUTBOX", [K.a.meta], [
        "60000",
        "10",
      ])) as { ok: [number, string] };
      expect(await wire(ctx.raw, backend, "APPLY", [K.p.meta], [done.ok[1]]))
        .toEqual({ ok: 1 });
      expect(await wire(ctx.raw, backend, "APPLY", [K.p.meta], [done.ok[1]]))
        .toEqual({ ok: 0 });
      expect(await ctx.row(p, tree.id, "finished", "state")).toEqual([
        "1",
        "waiting",
      ]);
    });

    test("a waiting parent removed leaves waiting; its children's outcomes then record nothing", async () => {
      const [p, a] = spread(`flow-rm-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }],
      });
      await ctx.mq.relayOnce([p]);
      const started = (await ctx.mq.claim(a, { leaseMs: 60_000 }))!;
      expect(await ctx.mq.remove(p, tree.id)).toBe(true);
      expect(await zcard(p, "waiting")).toBe(0);
      await ctx.mq.ack(started);
      const done = (await wire(ctx.raw, backend, "OUTBOX", [keyspace(a).meta], [
        "60000",
        "10",
      ])) as { ok: [number, string] };
      expect(
        await wire(ctx.raw, backend, "APPLY", [keyspace(p).meta], [done.ok[1]]),
      ).toEqual({ ok: 0 });
      expect(
        Number(
          await ctx.raw.command(
            ["EXISTS", keyspace(p).job(tree.id)],
            keyspace(p).meta,
          ),
        ),
      ).toBe(0);
    });

    test("DROP takes a queue's waiting parents and keys; its outbox keeps only what others wait for, which a relay delivers", async () => {
      const [p, a, b] = spread(`flow-drop-${backend}`);
      const K = keyspace(p);
      // a parent whose child elsewhere was made (and one not made yet), and a child of a parent elsewhere
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }, {
          queue: p,
          payload: { n: 2 },
        }],
      });
      await ctx.mq.relayOnce([p]);
      const late = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 3 } }],
      });
      const other = await ctx.mq.flow({
        queue: b,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 4 } }],
      });
      await ctx.mq.relayOnce([b]);
      expect(await ctx.mq.drop(p)).toBeGreaterThan(0);
      expect(
        Number(
          await ctx.raw.command([
            "EXISTS",
            K.meta,
            K.waiting,
            K.pending,
            K.job(tree.id),
            K.job(late.id),
          ], K.meta),
        ),
      ).toBe(0);
      // left: two cancels (the made child, the late one's) and the dropped child's outcome
      const left = (await ctx.raw.command(
        ["ZRANGE", K.outbox, "0", "-1"],
        K.meta,
      )) as unknown[];
      expect(left.map((e) => String(e).split("\0")[0]).sort()).toEqual([
        "cancel",
        "cancel",
        "done",
      ]);
      expect(await ctx.mq.relayOnce([p])).toBe(3);
      expect(Number(await ctx.raw.command(["EXISTS", K.outbox], K.meta))).toBe(
        0,
      );
      expect(await ctx.mq.counts(a)).toMatchObject({ pending: 0 });
      expect(await ctx.row(a, late.children[0]!.id, "state")).toEqual([
        "cancelled",
      ]);
      // the parent elsewhere heard its child went, and runs
      expect((await ctx.mq.claim(b, { leaseMs: 60_000 }))!.id).toBe(other.id);
      expect((await ctx.mq.children(b, other.id)).map((k) => k.state)).toEqual([
        "removed",
      ]);
    });

    test("bad input: refused before the wire (typed), and by the server with the digest unchanged", async () => {
      const [p, a] = spread(`flow-bad-${backend}`);
      const K = keyspace(p);
      const refused = async (spec: unknown): Promise<unknown> => await ctx.mq.flow(spec as never).catch((e) => e);
      for (
        const spec of [
          { queue: p, payload: { n: 0 }, children: [] },
          {
            queue: p,
            payload: { n: 0 },
            children: [{ queue: a, payload: { n: 1 }, onFailure: "maybe" }],
          },
          {
            queue: p,
            payload: { n: 0 },
            children: [{ queue: a, payload: { n: 1 }, children: [] }],
          },
          {
            queue: p,
            payload: { n: 0 },
            children: Array.from(
              { length: 1001 },
              () => ({ queue: a, payload: { n: 1 } }),
            ),
          },
        ]
      ) {
        const e = await refused(spec);
        expect(e).toBeInstanceOf(EchoMQError);
        expect((e as EchoMQError).rule).toBe("flow");
      }
      expect(
        await refused({
          queue: p,
          payload: { n: 0 },
          children: [{ queue: "a}b", payload: { n: 1 } }],
        }),
      ).toBeInstanceOf(TypeError);
      expect(
        await refused({
          queue: p,
          id: "nope",
          payload: { n: 0 },
          children: [{ queue: a, payload: { n: 1 } }],
        }),
      ).toBeInstanceOf(TypeError);
      expect(
        Number(
          await ctx.raw.command(
            ["EXISTS", K.meta, K.outbox, K.waiting],
            K.meta,
          ),
        ),
      ).toBe(0);

      const before = await digest(ctx.raw, K.meta);
      const parent = "JOB00000000001";
      const cases: Array<[Parameters<typeof wire>[2], string[], string]> = [
        [
          "FLOW",
          [parent, "", "x", "0", "0"],
          "ERR wrong number of arguments for 'EMQ.FLOW' command",
        ],
        [
          "FLOW",
          [parent, "", "x", "0", "0", "JOB00000000002", "a{b", "0", "", "y"],
          "ERR EMQ.FLOW queue must be a name of 1 to 1024 bytes without braces or NUL",
        ],
        [
          "FLOW",
          [parent, "", "x", "0", "0", "JOB00000000002", a, "8", "", "y"],
          "ERR EMQ.FLOW policy must be at most 7",
        ],
        [
          "FLOW",
          [parent, "", "x", "0", "0", "JOB00000000002", a, "4", "", "y"],
          "ERR EMQ.FLOW malformed outbox entry",
        ],
        [
          "FLOW",
          [parent, "", "x", "0", "0", parent, a, "0", "", "y"],
          `ERR EMQ.FLOW id ${parent} appears twice`,
        ],
        ["APPLY", ["done"], "ERR EMQ.APPLY malformed outbox entry"],
        [
          "APPLY",
          [`done\0${a}\0${parent}\x000\0JOB00000000002\0completed\0`],
          "ERR EMQ.APPLY malformed outbox entry",
        ],
        [
          "APPLY",
          [`child\0${p}\0JOB00000000002\0${a}\0${parent}\x0001\x000\0x`],
          "ERR EMQ.APPLY malformed outbox entry",
        ],
        [
          "APPLY",
          [`cancel\0${p}\0JOB00000000002\0${a}\0${parent}\x000\0x`],
          "ERR EMQ.APPLY malformed outbox entry",
        ],
        [
          "FLOW",
          [parent, "", "x", "2", "0", "JOB00000000002", a, "0", "", "y"],
          "ERR EMQ.FLOW open must be at most 1",
        ],
        [
          "FLOW",
          [parent, "", "x", "0", "-1", "JOB00000000002", a, "0", "", "y"],
          "ERR EMQ.FLOW within_ms must be a non-negative integer",
        ],
        [
          "SEAL",
          [parent, "x"],
          "ERR wrong number of arguments for 'EMQ.SEAL' command",
        ],
        [
          "UNBOX",
          ["x", "e"],
          "ERR EMQ.UNBOX deadline must be a positive integer",
        ],
      ];
      for (const [verb, args, text] of cases) {
        expect(await wire(ctx.raw, backend, verb, [K.meta], args)).toEqual({
          err: text,
        });
      }
      expect(await digest(ctx.raw, K.meta)).toBe(before);
      expect(await outcome(() => ctx.mq.relayOnce([p]))).toEqual({ ok: 0 });
    });
  });
}
