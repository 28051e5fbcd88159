/**
 * Cancel and flows (issue 37.7 with issue 36's flows, wire 15), for each backend × topology. A
 * cancelled flow child tells its parent as a failure with the cancel's reason, under its onFailure
 * policy — `fail` buries the parent (and cancels its unstarted children), `ignore` counts it as
 * finished (recorded failed), `remove` as removed, `continue` lets the parent run at once —
 * whether it waited or ran, in the parent's queue (the same command) or another (a `done` entry the
 * relay carries). Cancelling a flow's parent waiting for its children buries it (`cancelled`, never
 * `finished`), out of `waiting`, and cancels its unfinished children as `remove` does: here at once,
 * elsewhere through the outbox; a started one runs on, and its outcome wakes nothing.
 */
import { describe, expect, test } from "bun:test";
import { keyspace, slot } from "../../mod.ts";
import { type Job, LeaseLostError } from "../../client.ts";
import { COMBOS, digest, rejection, useClient, useSites, wire } from "./_harness.ts";
import { flowKit } from "./_flows.ts";

const sites = useSites();
type P = { n: number };

/** Two queue names of `stem` in different thirds of the slot space (other primaries of the test cluster). */
function two(stem: string): [string, string] {
  const found: Array<string | undefined> = [undefined, undefined, undefined];
  for (let i = 0; found.includes(undefined); i++) {
    const q = `${stem}-${i}`;
    found[Math.min(2, Math.floor(slot(`{${q}}`) / 5462))] ??= q;
  }
  return [found[0]!, found[2]!];
}

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);
    const { state, zcard } = flowKit(ctx);
    const buried = async (q: string): Promise<number> => Number(await ctx.raw.command(["HGET", keyspace(q).meta, "buried"], keyspace(q).meta));
    const claimOne = async (q: string): Promise<Job<P>> => (await ctx.mq.claim(q, { leaseMs: 60_000 }))! as Job<P>;

    test('a cancelled child of policy "fail" buries its parent, here in the same command and elsewhere through the relay', async () => {
      const [p, a] = two(`cxf-fail-${backend}`);
      // here: the child and its parent buried by one CANCEL, both counted
      const local = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: p, payload: { n: 1 } }, { queue: p, payload: { n: 2 } }] });
      const before = await buried(p);
      expect(await ctx.mq.cancel(p, local.children[0]!.id, { reason: "wrong order" })).toBe("cancelled");
      expect(await state(p, local.id)).toBe("dead");
      expect((await ctx.row(p, local.id, "reason"))[0]).toBe(`child ${p} ${local.children[0]!.id} failed: cancelled: wrong order`);
      expect(await buried(p)).toBe(before + 2);
      expect(await zcard(p, "waiting")).toBe(0);
      // its sibling, never started, was cancelled with the parent
      expect(await ctx.mq.getJob(p, local.children[1]!.id)).toBeNull();
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();

      // elsewhere: the child's queue writes a `done` entry, the relay buries the parent
      const far = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: a, payload: { n: 1 } }] });
      expect(await ctx.mq.relayOnce([p])).toBe(1);
      expect(await ctx.mq.cancel(a, far.children[0]!.id)).toBe("cancelled");
      expect(await zcard(a, "outbox")).toBe(1);
      expect(await state(p, far.id)).toBe("waiting");
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect(await state(p, far.id)).toBe("dead");
      expect((await ctx.row(p, far.id, "reason"))[0]).toBe(`child ${a} ${far.children[0]!.id} failed: cancelled`);
      expect(await ctx.mq.children(p, far.id)).toEqual([{ queue: a, id: far.children[0]!.id, state: "failed", reason: "cancelled" }]);
    });

    test('policies: "ignore" counts a cancelled child as finished (failed), "remove" as removed, "continue" lets the parent run at once', async () => {
      const [p, a] = two(`cxf-pol-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [
          { queue: p, payload: { n: 1 }, onFailure: "ignore" },
          { queue: a, payload: { n: 2 }, onFailure: "remove" },
          { queue: p, payload: { n: 3 } },
        ],
      });
      await ctx.mq.relayOnce([p]);
      const [ignored, removed, plain] = tree.children as [typeof tree, typeof tree, typeof tree];
      expect(await ctx.mq.cancel(p, ignored.id, { reason: "dup" })).toBe("cancelled");
      expect(await ctx.mq.cancel(a, removed.id)).toBe("cancelled");
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect(await ctx.row(p, tree.id, "finished", "state")).toEqual(["2", "waiting"]);
      // the last child finishes: the parent runs, and reads the cancels among its children
      const last = await claimOne(p);
      expect(last.id).toBe(plain.id);
      await ctx.mq.ack(last, "ok");
      expect((await claimOne(p)).id).toBe(tree.id);
      expect(await ctx.mq.children(p, tree.id)).toEqual([
        { queue: p, id: ignored.id, state: "failed", reason: "cancelled: dup" },
        { queue: a, id: removed.id, state: "removed" },
        { queue: p, id: plain.id, state: "completed", result: "ok" },
      ]);

      const going = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 4 }, onFailure: "continue" }, { queue: a, payload: { n: 5 } }],
      });
      expect(await ctx.mq.cancel(p, going.children[0]!.id)).toBe("cancelled");
      expect(await state(p, going.id)).toBe("pending");
      expect(await zcard(p, "waiting")).toBe(0);
      expect((await claimOne(p)).id).toBe(going.id);
    });

    test("a running child cancelled tells its parent at once; its worker's late ack is refused and tells nothing more", async () => {
      const [p, a] = two(`cxf-run-${backend}`);
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: a, payload: { n: 1 } }, { queue: a, payload: { n: 2 } }] });
      await ctx.mq.relayOnce([p]);
      const running = await claimOne(a);
      expect(await ctx.mq.cancel(a, running.id, { reason: "stop" })).toBe("aborting");
      expect(await rejection(ctx.mq.ack(running, "late"))).toBeInstanceOf(LeaseLostError);
      expect(await zcard(a, "outbox")).toBe(1); // one `done` entry: the cancel's, not the ack's
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect(await state(p, tree.id)).toBe("dead");
      expect((await ctx.row(p, tree.id, "reason"))[0]).toBe(`child ${a} ${running.id} failed: cancelled: stop`);
      // the parent's cancel of the other child, carried by its queue's relay
      expect(await ctx.mq.relayOnce([p])).toBe(1);
      expect(await ctx.mq.counts(a)).toMatchObject({ pending: 0, active: 0, dead: 1 });
    });

    test("a parent waiting for its children is cancelled, not `finished`: buried, out of waiting, its unfinished children cancelled as remove's", async () => {
      const [p, a] = two(`cxf-parent-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: p, payload: { n: 1 } }, { queue: a, payload: { n: 2 } }, { queue: a, payload: { n: 3 } }, { queue: p, payload: { n: 4 } }],
      });
      expect(await ctx.mq.relayOnce([p])).toBe(2);
      const [hereDone, , , hereWaiting] = tree.children as [typeof tree, typeof tree, typeof tree, typeof tree];
      const first = await claimOne(p);
      expect(first.id).toBe(hereDone.id);
      await ctx.mq.ack(first, "one");
      // (the relay made the two children elsewhere in either order: same-ms entries order by bytes)
      const started = await claimOne(a);
      const farWaiting = tree.children.find((k) => k.queue === a && k.id !== started.id)!;
      const before = await buried(p);

      expect(await ctx.mq.cancel(p, tree.id, { reason: "order void" })).toBe("cancelled");
      const parent = (await ctx.mq.getJob(p, tree.id))!;
      expect([parent.state, parent.reason]).toEqual(["dead", "cancelled: order void"]);
      expect(await ctx.row(p, tree.id, "cancelled_ms")).not.toEqual(["null"]);
      expect(await zcard(p, "waiting")).toBe(0);
      expect(await buried(p)).toBe(before + 1);
      expect((await ctx.mq.jobs(p, "waiting-children")).length).toBe(0);
      const events = (await ctx.mq.recentEvents(p, { limit: 20 })).filter((e) => e.type === "cancelled");
      expect(events.map((e) => (e as { jobId: string }).jobId)).toContain(tree.id);
      // the unstarted child here went at once; the one elsewhere once the relay carries the cancel
      expect(await ctx.mq.getJob(p, hereWaiting.id)).toBeNull();
      expect(await ctx.mq.counts(p)).toMatchObject({ pending: 0, active: 0 });
      expect(await ctx.mq.getJob(a, farWaiting.id)).not.toBeNull();
      expect(await ctx.mq.relayOnce([p])).toBe(2); // a cancel per unfinished child elsewhere
      expect(await ctx.mq.getJob(a, farWaiting.id)).toBeNull();
      expect(await ctx.mq.getJob(a, started.id)).toMatchObject({ state: "active" });
      // the started child runs on: its outcome lands on the buried parent and wakes nothing
      await ctx.mq.ack(started, "two");
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      expect(await state(p, tree.id)).toBe("dead");
      expect(await ctx.mq.claim(p, { leaseMs: 60_000 })).toBeNull();
      // cancelled again: it had finished, nothing written
      const d = await digest(ctx.raw, keyspace(p).meta);
      expect(await ctx.mq.cancel(p, tree.id)).toBe("finished");
      expect(await digest(ctx.raw, keyspace(p).meta)).toBe(d);
      for (const q of [p, a]) expect(await zcard(q, "outbox")).toBe(0);
    });

    test("a parent and its own child cancelled in one call: both buried, the child's outcome recorded on the buried parent", async () => {
      const [p] = two(`cxf-both-${backend}`);
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: p, payload: { n: 1 } }, { queue: p, payload: { n: 2 } }] });
      const [cancelled, other] = tree.children as [typeof tree, typeof tree];
      const before = await buried(p);
      // the client cancels one id a call; the wire takes many (the child named first)
      expect(await wire(ctx.raw, backend, "CANCEL", [keyspace(p).meta], ["cancelled", cancelled.id, tree.id])).toEqual({ ok: [1, 1] });
      expect(await state(p, tree.id)).toBe("dead");
      expect((await ctx.row(p, tree.id, "reason"))[0]).toBe("cancelled");
      expect(await buried(p)).toBe(before + 2);
      expect(await ctx.mq.getJob(p, other.id)).toBeNull(); // never started: cancelled with its parent
      expect((await ctx.mq.children(p, tree.id)).map((k) => k.state)).toEqual(["failed", "unfinished"]);
      expect(await ctx.mq.counts(p)).toMatchObject({ pending: 0, dead: 2 });
    });
  });
}
