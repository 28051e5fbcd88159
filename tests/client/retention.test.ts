/**
 * RETAIN trims by itself (issue 18 #8), for each backend × topology: a queue with no worker and
 * 10,000 dead jobs keeps 100 after `retain({ deadMax: 100 })` — no bury or claim needed. One RETAIN
 * deletes at most TRIM_LIMIT rows (its reply: how many); the client repeats it until one deletes
 * fewer. The oldest go first, their rows with them; the keyspaces are identical across backends.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { COMPLETED_AGE_DEFAULT_MS, COMPLETED_MAX_DEFAULT, EVENTS_MAX_DEFAULT, TRIM_LIMIT } from "../../lib/wire/mod.ts";
import { COMBOS, counterIds, dump, useClient, useSites, wire } from "./_harness.ts";

const servers = useSites();
const dumps = new Map<string, unknown>();
const DEAD = 10_000;
/** RETAIN's settings after the dead ones (wire 10): completed jobs and events at their defaults. */
const KEEP = [String(COMPLETED_MAX_DEFAULT), String(COMPLETED_AGE_DEFAULT_MS), String(EVENTS_MAX_DEFAULT), "1440"];

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<number>(servers, combo, { newId: counterIds(1) });

    /** `n` dead jobs, buried through the wire (a worker would trim as it buries). */
    async function buried(q: string, n: number): Promise<string[]> {
      const K = keyspace(q);
      const ids: string[] = [];
      for (let i = 0; i < n; i += 1000) {
        ids.push(...await ctx.mq.enqueueMany(q, Array.from({ length: Math.min(1000, n - i) }, (_, k) => i + k)));
        const jobs = await ctx.mq.claimMany(q, 1000, { leaseMs: 60_000 });
        await ctx.mq.settleMany(jobs.map((job) => ({ kind: "bury" as const, job: job as never, reason: "r" })));
      }
      // the order of burial: scores equal within a call, so the set orders by member (the id)
      expect(await ctx.raw.command(["ZCARD", K.dead], K.meta)).toBe(n);
      return ids;
    }

    test(`retain({ deadMax: 100 }) on a queue of ${DEAD} dead and no worker keeps 100, rows deleted`, async () => {
      const q = `ret-${backend}`;
      const K = keyspace(q);
      await buried(q, DEAD);
      const oldest = ((await ctx.raw.command(["ZRANGE", K.dead, "0", "0"], K.meta)) as unknown[]).map(String)[0]!;
      const kept = ((await ctx.raw.command(["ZRANGE", K.dead, "-100", "-1"], K.meta)) as unknown[]).map(String);
      expect(await ctx.mq.retain(q, { deadMax: 100 })).toBe(DEAD - 100);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 100, completed: 0, waitingChildren: 0 });
      expect(((await ctx.raw.command(["ZRANGE", K.dead, "0", "-1"], K.meta)) as unknown[]).map(String)).toEqual(kept);
      expect(await ctx.mq.getJob(q, oldest as never)).toBeNull();
      expect(await ctx.raw.command(["EXISTS", K.job(oldest as never)], K.meta)).toBe(0);
      const stats = await ctx.mq.stats(q);
      expect(stats.deadMax).toBe(100);
      expect(await ctx.mq.retain(q, { deadMax: 100 })).toBe(0);
      // the history's minutes split where a minute turned during the burials (a time, not a rule of
      // RETAIN's): compared without them (tests/client/history.test.ts compares those)
      await ctx.raw.command(["DEL", K.metrics], K.meta);
      dumps.set(combo.name, await dump(ctx.raw, q));
    }, 120_000);

    test(`one RETAIN deletes at most ${TRIM_LIMIT}: its reply is how many`, async () => {
      const q = `ret-one-${backend}`;
      const K = keyspace(q);
      await buried(q, 1500);
      expect(await wire(ctx.raw, backend, "RETAIN", [K.meta], ["1", "0", ...KEEP])).toEqual({ ok: TRIM_LIMIT });
      expect(await ctx.raw.command(["ZCARD", K.dead], K.meta)).toBe(500);
      expect(await wire(ctx.raw, backend, "RETAIN", [K.meta], ["1", "0", ...KEEP])).toEqual({ ok: 499 });
      expect(await wire(ctx.raw, backend, "RETAIN", [K.meta], ["1", "0", ...KEEP])).toEqual({ ok: 0 });
      expect(await wire(ctx.raw, backend, "RETAIN", [K.meta], ["0", "0", ...KEEP])).toEqual({ ok: 0 });
      expect(await ctx.raw.command(["ZCARD", K.dead], K.meta)).toBe(1);
    }, 120_000);
  });
}

describe("identical across backends", () => {
  test("the keyspaces RETAIN leaves", () => {
    const all = [...dumps.values()];
    for (const d of all) expect(d).toEqual(all[0]);
  });
});
