/**
 * Flow events (issue 36), for each backend × topology: a parent made to wait writes `waiting` (FLOW's
 * parent, a nested middle by APPLY, issue 41's `waiting-children`); a parent made ready writes `ready` in its
 * queue's events stream — by APPLY of its last child's outcome, by the settle of a last child of its
 * own queue, by SEAL —, and a parent a child failed writes `dead` with the reason naming the child
 * (by APPLY, or by the child's BURY in its own queue); a nested middle failing its root writes both
 * parents' `dead`. A flow's children made pending write `enqueued` where they are made (wire 17).
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { COMBOS, streamEntries, useClient, useSites } from "./_harness.ts";
import { flowKit } from "./_flows.ts";
import { spread } from "./_spread.ts";

const servers = useSites();
type P = { n: number };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo);
    const { claim } = flowKit(ctx);
    /** The events of `q` of the flow kinds (`ready`, `dead`), each as its fields after `type`. */
    const flowEvents = async (q: string): Promise<string[][]> => {
      const K = keyspace(q);
      const all = streamEntries(
        await ctx.raw.command(["XRANGE", K.events, "-", "+"], K.meta),
      );
      return all.filter((f) => f[1] === "ready" || f[1] === "dead").map((f) => f.slice(1));
    };

    test("a parent made to wait writes `waiting`: FLOW's parent in its queue, a nested middle by APPLY in its own", async () => {
      const [p, a, b] = spread(`fev-waiting-${backend}`);
      const waits = async (q: string): Promise<string[][]> => {
        const K = keyspace(q);
        const all = streamEntries(await ctx.raw.command(["XRANGE", K.events, "-", "+"], K.meta));
        return all.filter((f) => f[1] === "waiting").map((f) => f.slice(1));
      };
      const root = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 }, children: [{ queue: b, payload: { n: 2 } }] }],
      });
      expect(await waits(p)).toEqual([["waiting", "jobs", root.id]]);
      expect(await waits(a)).toEqual([]);
      await ctx.mq.relayOnce([p]);
      expect(await waits(a)).toEqual([["waiting", "jobs", root.children[0]!.id]]);
      expect(await waits(b)).toEqual([]);
    });

    test("a flow's children made pending write `enqueued` where they are made: FLOW's and ADOPT's here, APPLY's elsewhere (wire 17)", async () => {
      const [p, a, b] = spread(`fev-enq-${backend}`);
      const kinds = async (q: string): Promise<string[][]> => {
        const K = keyspace(q);
        const all = streamEntries(await ctx.raw.command(["XRANGE", K.events, "-", "+"], K.meta));
        return all.filter((f) => f[1] === "enqueued" || f[1] === "waiting").map((f) => f.slice(1));
      };
      const root = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        open: true,
        children: [
          { queue: p, payload: { n: 1 } },
          { queue: p, payload: { n: 2 } },
          { queue: a, payload: { n: 3 } },
          { queue: b, payload: { n: 4 }, children: [{ queue: b, payload: { n: 5 } }, { queue: a, payload: { n: 6 } }] },
        ],
      });
      const [c1, c2, c3, mid] = root.children as [typeof root, typeof root, typeof root, typeof root];
      const [leaf, far] = mid.children as [typeof root, typeof root];
      // FLOW: the parent's `waiting`, then one entry of the children here
      expect(await kinds(p)).toEqual([["waiting", "jobs", root.id], ["enqueued", "jobs", `${c1.id} ${c2.id}`]]);
      expect(await kinds(a)).toEqual([]);
      // APPLY: each child it makes; a node's `waiting`, then its children here
      await ctx.mq.relayOnce([p]);
      expect(await kinds(a)).toEqual([["enqueued", "jobs", c3.id]]);
      expect(await kinds(b)).toEqual([["waiting", "jobs", mid.id], ["enqueued", "jobs", leaf.id]]);
      await ctx.mq.relayOnce([b]);
      expect(await kinds(a)).toEqual([["enqueued", "jobs", c3.id], ["enqueued", "jobs", far.id]]);
      // ADOPT: one entry of the children here (none when every child is elsewhere)
      const more = await ctx.mq.addChildren(root, [{ queue: p, payload: { n: 7 } }, { queue: a, payload: { n: 8 } }]);
      const extra = await ctx.mq.addChildren(root, [{ queue: a, payload: { n: 9 } }]);
      expect(await kinds(p)).toEqual([
        ["waiting", "jobs", root.id],
        ["enqueued", "jobs", `${c1.id} ${c2.id}`],
        ["enqueued", "jobs", more[0]!.id],
      ]);
      await ctx.mq.relayOnce([p]);
      expect((await kinds(a)).slice(2).map((e) => e[2]).sort()).toEqual([more[1]!.id, extra[0]!.id].sort());
    });

    test("a flow's child cancelled unstarted writes `removed` where it is deleted, a child parent's children first (wire 17)", async () => {
      const [p, a, b] = spread(`fev-rm-${backend}`);
      const removed = async (q: string): Promise<string[]> => {
        const K = keyspace(q);
        const all = streamEntries(await ctx.raw.command(["XRANGE", K.events, "-", "+"], K.meta));
        return all.filter((f) => f[1] === "removed").map((f) => f.slice(2).join(" "));
      };
      const root = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [
          { queue: b, payload: { n: 1 }, onFailure: "fail" },
          { queue: p, payload: { n: 2 } },
          { queue: a, payload: { n: 3 } },
          { queue: p, payload: { n: 4 }, children: [{ queue: p, payload: { n: 5 } }] },
        ],
      });
      const [, here, there, mid] = root.children as [typeof root, typeof root, typeof root, typeof root];
      const leaf = mid.children[0]!;
      await ctx.mq.relayOnce([p]);
      await ctx.mq.bury((await claim(b))!, "boom");
      expect(await removed(p)).toEqual([]);
      // APPLY of the failure buries the parent and cancels its unstarted children: here at once
      // (the nested middle's own child before it), elsewhere by a `cancel` entry
      await ctx.mq.relayOnce([b]);
      expect(await removed(p)).toEqual([`jobs ${here.id}`, `jobs ${leaf.id}`, `jobs ${mid.id}`]);
      expect(await removed(a)).toEqual([]);
      await ctx.mq.relayOnce([p]);
      expect(await removed(a)).toEqual([`jobs ${there.id}`]);

      // REMOVE of a parent: its unstarted child here first, then REMOVE's own entry
      const other = await ctx.mq.flow({ queue: a, payload: { n: 6 }, children: [{ queue: a, payload: { n: 7 } }] });
      expect(await ctx.mq.remove(a, other.id)).toBe(true);
      expect((await removed(a)).slice(1)).toEqual([`jobs ${other.children[0]!.id}`, `jobs ${other.id}`]);
    });

    test("a parent made ready writes `ready`: by APPLY, by a settle in its queue, by SEAL", async () => {
      const [p, a, b] = spread(`fev-ready-${backend}`);
      const far = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }, {
          queue: b,
          payload: { n: 2 },
        }],
      });
      await ctx.mq.relayOnce([p]);
      await ctx.mq.ack((await claim(a))!);
      await ctx.mq.relayOnce([a]);
      expect(await flowEvents(p)).toEqual([]);
      await ctx.mq.ack((await claim(b))!);
      await ctx.mq.relayOnce([b]);
      expect(await flowEvents(p)).toEqual([["ready", "jobs", far.id]]);
      expect((await claim(p))!.id).toBe(far.id);

      const near = await ctx.mq.flow({
        queue: a,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }],
      });
      await ctx.mq.ack((await claim(a))!);
      expect(await flowEvents(a)).toEqual([["ready", "jobs", near.id]]);

      const open = await ctx.mq.flow({
        queue: b,
        payload: { n: 0 },
        open: true,
        children: [{ queue: b, payload: { n: 1 } }],
      });
      await ctx.mq.ack((await claim(b))!);
      expect(await flowEvents(b)).toEqual([]);
      await ctx.mq.seal(open);
      expect(await flowEvents(b)).toEqual([["ready", "jobs", open.id]]);
    });

    test("a parent a child failed writes `dead` naming the child; a nested middle's failure writes both parents'", async () => {
      const [p, a, b] = spread(`fev-dead-${backend}`);
      const far = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{ queue: a, payload: { n: 1 } }],
      });
      await ctx.mq.relayOnce([p]);
      const child = (await claim(a))!;
      await ctx.mq.bury(child, "boom");
      expect(await flowEvents(p)).toEqual([]);
      await ctx.mq.relayOnce([a]);
      expect(await flowEvents(p)).toEqual([[
        "dead",
        "jobs",
        far.id,
        "reason",
        `child ${a} ${child.id} failed: boom`,
      ]]);

      // in its own queue: the parent's entry, then the child's own (the settle records first)
      const near = await ctx.mq.flow({
        queue: b,
        payload: { n: 0 },
        children: [{ queue: b, payload: { n: 1 } }],
      });
      const mine = (await claim(b))!;
      await ctx.mq.bury(mine, "local");
      expect(await flowEvents(b)).toEqual([
        [
          "dead",
          "jobs",
          near.id,
          "reason",
          `child ${b} ${mine.id} failed: local`,
        ],
        ["dead", "jobs", mine.id, "reason", "local"],
      ]);

      // nested, all in one queue: the grandchild's failure buries the middle, whose buries the root
      const root = await ctx.mq.flow({
        queue: a,
        payload: { n: 0 },
        children: [{
          queue: a,
          payload: { n: 1 },
          children: [{ queue: a, payload: { n: 2 } }],
        }],
      });
      const mid = root.children[0]!;
      await ctx.mq.relayOnce([a]);
      const leaf = (await claim(a))!;
      expect(leaf.id).toBe(mid.children[0]!.id);
      await ctx.mq.bury(leaf, "deep");
      const midReason = `child ${a} ${leaf.id} failed: deep`;
      expect((await flowEvents(a)).slice(-3)).toEqual([
        ["dead", "jobs", mid.id, "reason", midReason],
        [
          "dead",
          "jobs",
          root.id,
          "reason",
          `child ${a} ${mid.id} failed: ${midReason}`,
        ],
        ["dead", "jobs", leaf.id, "reason", "deep"],
      ]);
    });
  });
}
