/**
 * The relay's rounds (docs/design/flows.md, "Rounds"), for each backend × topology: a round over
 * several queues sends a destination's entries from all of them in one call (two child queues'
 * outcomes for their parent queue: one TELL); the workers of one client share one relay, which
 * acknowledges a round's entries with the queue's next lease — and a worker that stops leaves its
 * queue's outbox acknowledged, while the relay goes on for the others.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { COMBOS, eventually, useClient, useSites } from "./_harness.ts";
import { spread } from "./_spread.ts";

const servers = useSites();
type P = { n: number };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo);

    /** `EMQ.TELL` calls so far, summed over the primaries (module: the scripts' FCALLs are not told apart). */
    const tells = async (): Promise<number> => {
      const infos = await ctx.raw.everyPrimary(["INFO", "commandstats"]);
      return infos.reduce<number>((sum, info) => sum + Number(/cmdstat_emq\.tell:calls=(\d+)/.exec(String(info))?.[1] ?? 0), 0);
    };

    test("a round over two child queues tells their parent queue both outcomes in one call", async () => {
      const [p, a, b] = spread(`relay-group-${backend}`);
      const tree = await ctx.mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: a, payload: { n: 1 } }, { queue: b, payload: { n: 2 } }] });
      expect(await ctx.mq.relayOnce([p])).toBe(2);
      for (const q of [a, b]) await ctx.mq.ack((await ctx.mq.claim(q, { leaseMs: 60_000 }))!, q);
      const before = await tells();
      expect(await ctx.mq.relayOnce([a, b])).toBe(2);
      if (backend === "module") expect(await tells()).toBe(before + 1);
      const parent = (await ctx.mq.claim(p, { leaseMs: 60_000 }))!;
      expect(parent.id).toBe(tree.id);
      expect((await ctx.mq.children(p, tree.id)).map((c) => [c.queue, c.state, c.result])).toEqual([[a, "completed", a], [b, "completed", b]]);
      await ctx.mq.ack(parent);
    });

    test(
      "workers share one relay: a stopped worker's queue is left acknowledged, the others still relayed",
      async () => {
        const [p, a, b] = spread(`relay-share-${backend}`);
        const flows = 5;
        for (let i = 0; i < flows; i++) {
          await ctx.mq.flow({ queue: p, payload: { n: -1 }, children: [{ queue: a, payload: { n: i } }, { queue: b, payload: { n: i } }] });
        }
        let ran = 0;
        // rounds every 2 s: a round's acknowledgements wait for the next (whose lease carries them)
        const relay = { intervalMs: 2_000 };
        const workers = new Map(
          [p, a, b].map((q) => [q, ctx.mq.work(q, (job) => void (job.payload.n === -1 && ran++), { concurrency: 4, blockMs: 100, relay })]),
        );
        await eventually(() => ran === flows, 30_000);
        // the round that told the parents left its acknowledgements for the next: the stop makes them
        await workers.get(a)!.stop();
        expect(Number(await ctx.raw.command(["ZCARD", keyspace(a).outbox], keyspace(a).meta))).toBe(0);
        // p and b are still relayed: a flow with its child in b runs
        await ctx.mq.flow({ queue: p, payload: { n: -1 }, children: [{ queue: b, payload: { n: 9 } }] });
        await eventually(() => ran === flows + 1, 30_000);
        await Promise.all([workers.get(p)!.stop(), workers.get(b)!.stop()]);
        for (const q of [p, b]) expect(Number(await ctx.raw.command(["ZCARD", keyspace(q).outbox], keyspace(q).meta))).toBe(0);
      },
      90_000,
    );
  });
}
