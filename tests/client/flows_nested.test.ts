/**
 * Nested flows (issue 36, docs/design/flows.md "Nested flows"), for each backend × topology: a
 * 3-level tree across queues on different primaries of the cluster — the middle nodes run only
 * after their children, the root after the middles; a `node` entry applied twice makes nothing
 * twice; a grandchild's failure buries its middle, which fails the root; a root that fails cancels
 * a middle still waiting and its children; the depth limit and a malformed subtree are refused
 * (before the wire, and by both twins with the digest unchanged).
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { childId, EchoMQError } from "../../client.ts";
import { COMBOS, digest, useClient, useSites, wire } from "./_harness.ts";
import { flowKit } from "./_flows.ts";
import { spread } from "./_spread.ts";

const servers = useSites();
type P = { n: number };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo);
    const { state, zcard, claim, exists } = flowKit(ctx);

    test("a 3-level tree across primaries: each middle runs after its children, the root after the middles", async () => {
      const [p, a, b] = spread(`nest-run-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [
          {
            queue: a,
            payload: { n: 1 },
            children: [{ queue: b, payload: { n: 11 } }, {
              queue: a,
              payload: { n: 12 },
            }],
          },
          {
            queue: p,
            payload: { n: 2 },
            children: [{ queue: b, payload: { n: 21 } }],
          },
        ],
      });
      const [ma, mp] = tree.children as [typeof tree, typeof tree];
      expect(ma.children.map((c) => c.queue)).toEqual([b, a]);
      expect(ma.children[0]!.id).toBe(await childId(ma.id, 0));
      expect(mp.children[0]!.id).toBe(await childId(mp.id, 0));
      // both middles travel through the root's outbox (even the one of its own queue)
      expect(await zcard(p, "outbox")).toBe(2);
      expect(await claim(p)).toBeNull();
      const entries = (await ctx.raw.command(
        ["ZRANGE", keyspace(p).outbox, "0", "-1"],
        keyspace(p).meta,
      )) as unknown[];
      expect(await ctx.mq.relayOnce([p])).toBe(2);
      expect(await state(a, ma.id)).toBe("waiting");
      expect(await state(p, mp.id)).toBe("waiting");
      // a node entry applied again makes nothing
      const node = entries.map(String).find((e) => e.startsWith(`node\0${a}\0`))!;
      const before = await digest(ctx.raw, keyspace(a).meta);
      expect(await wire(ctx.raw, backend, "APPLY", [keyspace(a).meta], [node]))
        .toEqual({ ok: 0 });
      expect(await digest(ctx.raw, keyspace(a).meta)).toBe(before);

      // the grandchild of the middle's own queue was made with it; the middle waits
      const g12 = (await claim(a))!;
      expect(g12.id).toBe(ma.children[1]!.id);
      await ctx.mq.ack(g12, { n: 12 });
      expect(await claim(a)).toBeNull();
      expect(await ctx.mq.relayOnce([a, p])).toBe(2); // the grandchildren in b
      for (let i = 0; i < 2; i++) {
        const g = (await claim(b))!;
        await ctx.mq.ack(g, { n: g.payload.n });
      }
      expect(await ctx.mq.relayOnce([b])).toBe(2);
      // the middles are claimable now; the root still waits
      const m1 = (await claim(a))!;
      expect(m1.id).toBe(ma.id);
      expect((await ctx.mq.children(a, ma.id)).map((c) => [c.state, c.result]))
        .toEqual([["completed", { n: 11 }], [
          "completed",
          { n: 12 },
        ]]);
      const m2 = (await claim(p))!;
      expect(m2.id).toBe(mp.id);
      expect(await claim(p)).toBeNull();
      await ctx.mq.ack(m2, "mp");
      expect(await state(p, tree.id)).toBe("waiting");
      await ctx.mq.ack(m1, "ma");
      expect(await ctx.mq.relayOnce([a])).toBe(1);
      const root = (await claim(p))!;
      expect(root.id).toBe(tree.id);
      expect((await ctx.mq.children(p, tree.id)).map((c) => c.result)).toEqual([
        "ma",
        "mp",
      ]);
      await ctx.mq.ack(root);
      // the whole tree from a grandchild
      const read = (await ctx.mq.flowOf(b, ma.children[0]!.id))!;
      expect(read.id).toBe(tree.id);
      expect(read.children.map((c) => c.children.length)).toEqual([2, 1]);
      for (const q of [p, a, b]) expect(await zcard(q, "outbox")).toBe(0);
      for (const q of [p, a]) expect(await zcard(q, "waiting")).toBe(0);
    });

    test("a grandchild's failure buries its middle, whose failure buries the root", async () => {
      const [p, a, b] = spread(`nest-fail-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{
          queue: a,
          payload: { n: 1 },
          children: [{ queue: b, payload: { n: 11 } }],
        }],
      });
      const mid = tree.children[0]!;
      await ctx.mq.relayOnce([p]);
      await ctx.mq.relayOnce([a]);
      await ctx.mq.bury((await claim(b))!, "boom");
      await ctx.mq.relayOnce([b]);
      expect(await state(a, mid.id)).toBe("dead");
      expect((await ctx.row(a, mid.id, "reason"))[0]).toBe(
        `child ${b} ${mid.children[0]!.id} failed: boom`,
      );
      await ctx.mq.relayOnce([a]);
      expect(await state(p, tree.id)).toBe("dead");
      expect((await ctx.row(p, tree.id, "reason"))[0]).toBe(
        `child ${a} ${mid.id} failed: child ${b} ${mid.children[0]!.id} failed: boom`,
      );
      for (const q of [p, a, b]) expect(await zcard(q, "outbox")).toBe(0);
    });

    test("a root that fails cancels a middle still waiting, and the middle's children", async () => {
      const [p, a, b] = spread(`nest-cancel-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [
          { queue: b, payload: { n: 1 } },
          {
            queue: a,
            payload: { n: 2 },
            children: [{ queue: a, payload: { n: 21 } }, {
              queue: b,
              payload: { n: 22 },
            }],
          },
        ],
      });
      const mid = tree.children[1]!;
      await ctx.mq.relayOnce([p]);
      expect(await state(a, mid.id)).toBe("waiting");
      await ctx.mq.bury((await claim(b))!, "first");
      await ctx.mq.relayOnce([b]);
      expect(await state(p, tree.id)).toBe("dead");
      await ctx.mq.relayOnce([p]); // the cancel reaches the middle: it and its child here go, a tombstone waits in b
      expect(await exists(a, mid.id)).toBe(false);
      expect(await exists(a, mid.children[0]!.id)).toBe(false);
      expect(await zcard(a, "waiting")).toBe(0);
      expect(await claim(a)).toBeNull();
      // the middle's child in b: its creation, then its cancel, both from a's outbox: nothing left to run
      await ctx.mq.relayOnce([a]);
      expect(await claim(b)).toBeNull();
      for (const q of [p, a, b]) expect(await zcard(q, "outbox")).toBe(0);
    });

    test("a middle removed while it waits counts as removed for its parent, and its children are cancelled", async () => {
      const [p, a, b] = spread(`nest-remove-${backend}`);
      const tree = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [{
          queue: a,
          payload: { n: 1 },
          children: [{ queue: a, payload: { n: 11 } }, {
            queue: b,
            payload: { n: 12 },
          }],
        }],
      });
      const mid = tree.children[0]!;
      await ctx.mq.relayOnce([p]);
      await ctx.mq.relayOnce([a]); // the middle's child in b is made
      expect(await ctx.mq.remove(a, mid.id)).toBe(true);
      expect(await claim(a)).toBeNull(); // its child here went with it
      await ctx.mq.relayOnce([a]); // its outcome to the root, the cancel to b
      expect(await claim(b)).toBeNull();
      expect((await ctx.mq.children(p, tree.id)).map((c) => c.state)).toEqual([
        "removed",
      ]);
      expect((await claim(p))!.id).toBe(tree.id);
      for (const q of [p, a, b]) expect(await zcard(q, "outbox")).toBe(0);
    });

    test("past the depth limit, refused before the wire; a malformed subtree, refused by both twins", async () => {
      const [p, a] = spread(`nest-bad-${backend}`);
      let kid: { queue: string; payload: P; children?: unknown[] } = {
        queue: a,
        payload: { n: 9 },
      };
      for (let i = 0; i < 8; i++) {
        kid = { queue: a, payload: { n: i }, children: [kid] };
      }
      const deep = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [kid as never],
      }).catch((e) => e);
      expect(deep).toBeInstanceOf(EchoMQError);
      expect(String(deep)).toContain("at most 8 levels");
      expect(
        await ctx.raw.command(["EXISTS", keyspace(p).meta], keyspace(p).meta),
      ).toBe(0);
      // eight levels are fine
      const ok = await ctx.mq.flow({
        queue: p,
        payload: { n: 0 },
        children: [kid.children![0] as never],
      });
      expect(ok.children[0]!.children[0]!.children.length).toBe(1);
      const K = keyspace(p);
      const before = await digest(ctx.raw, K.meta);
      const good = `1\x001\x00x${"JOB00000000003"}\x00${a}\x000\x000\x001\x00y`;
      const bad = [
        "x",
        "0\x001\x00x", // no children
        `1\x001\x00x${"JOB00000000003"}\x00${a}\x000\x000\x002\x00y`, // a body shorter than its length
        `1\x001\x00x${"JOB00000000003"}\x00${a}\x000\x009\x00lane=a{b1\x00y`, // options the gate refuses
        `1\x001\x00x${"JOB00000000003"}\x00${a}\x000\x009\x00lane=a1\x00y`, // options shorter than their length
        `${good}z`, // bytes after the last child
        `1\x001\x00x${"JOB00000000003"}\x00${a}\x008\x000\x001\x00y`, // policy 8
        `1\x001\x00xNOTAJOB\x00${a}\x000\x000\x001\x00y`,
        `1\x001\x00x${"JOB00000000003"}\x00${a}\x000\x001\x00y`, // no options length (wire 15's form)
      ];
      for (const body of bad) {
        for (const verb of ["FLOW", "ADOPT"] as const) {
          const args = verb === "FLOW" ? ["JOB00000000001", "", "p", "0", "0"] : [ok.id, "1"];
          expect(
            await wire(ctx.raw, backend, verb, [K.meta], [
              ...args,
              "JOB00000000002",
              a,
              "4",
              "",
              body,
            ]),
          ).toEqual({
            err: `ERR EMQ.${verb} malformed outbox entry`,
          });
        }
      }
      expect(await digest(ctx.raw, K.meta)).toBe(before);
      // the well-formed one is taken
      expect(
        await wire(ctx.raw, backend, "FLOW", [K.meta], [
          "JOB00000000001",
          "",
          "p",
          "0",
          "0",
          "JOB00000000002",
          a,
          "4",
          "",
          good,
        ]),
      ).toEqual({
        ok: 0,
      });
    });
  });
}
