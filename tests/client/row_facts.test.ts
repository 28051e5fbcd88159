/**
 * What a row keeps since wire 17, for each backend × topology: the claim time after the settle
 * (`claimedAt`, from the token ACK now keeps), a retry's delay (`retryDelayMs`), REQUEUE keeping the
 * attempts (`requeueDead({ keepAttempts })`), a clean's one `cleaned` event (`removeMany(ids,
 * { clean })`), and the stalls a job's expired leases count (`stalls`). The keyspaces the twins
 * leave are identical.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { BACKENDS, comboName, COMBOS, counterIds, dump, eventually, streamEntries, TOPOLOGIES, useClient, useSites } from "./_harness.ts";

const servers = useSites();
const dumps = new Map<string, unknown>();

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo, { newId: counterIds(1) });

    /** The events of `q` of `types`, each as its fields after `type`. */
    const events = async (q: string, types: readonly string[]): Promise<string[][]> => {
      const K = keyspace(q);
      const all = streamEntries(await ctx.raw.command(["XRANGE", K.events, "-", "+"], K.meta));
      return all.filter((f) => types.includes(f[1]!)).map((f) => f.slice(1));
    };

    test("a completed job keeps its claim time; a dead one and a retried one too", async () => {
      const q = `facts-claimed-${backend}`;
      const [a, b, c] = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const before = Date.now() - 1000; // the server's clock may be a little behind ours
      const ja = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const jb = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const jc = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      expect([ja.id, jb.id, jc.id]).toEqual([a!, b!, c!]);
      const active = (await ctx.mq.getJob(q, a!))!;
      expect(active.claimedAt).toBe(Math.floor(ja.token / 1000));
      await ctx.mq.ack(ja, { ok: true });
      await ctx.mq.bury(jb, "no");
      await ctx.mq.retry(jc, { delayMs: 60_000, reason: "later" });
      const done = (await ctx.mq.getJob(q, a!))!;
      expect(done.state).toBe("completed");
      expect(done.claimedAt).toBe(Math.floor(ja.token / 1000));
      expect(done.claimedAt!).toBeGreaterThanOrEqual(before);
      expect(done.claimedAt!).toBeLessThanOrEqual(done.finishedAt!);
      expect((await ctx.mq.getJob(q, b!))!.claimedAt).toBe(Math.floor(jb.token / 1000));
      expect((await ctx.mq.getJob(q, c!))!.claimedAt).toBe(Math.floor(jc.token / 1000));
      // never claimed: none
      const d = await ctx.mq.enqueue(q, { n: 4 });
      expect((await ctx.mq.getJob(q, d))!.claimedAt).toBeUndefined();
      dumps.set(comboName(backend, combo.topology) + ":claimed", await dump(ctx.raw, q));
    });

    test("a retry's delay is on the row: after a backoff, and 0 for a retry due now", async () => {
      const q = `facts-delay-${backend}`;
      const [a, b] = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }]);
      expect((await ctx.mq.getJob(q, a!))!.retryDelayMs).toBeUndefined();
      const ja = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const jb = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      await ctx.mq.retry(ja, { delayMs: 300_000, reason: "backoff" });
      await ctx.mq.retry(jb, { delayMs: 0, reason: "now" });
      const ra = (await ctx.mq.getJob(q, a!))!;
      expect(ra).toMatchObject({ state: "scheduled", retryDelayMs: 300_000 });
      expect(ra.dueAt! - ra.retryDelayMs!).toBeLessThanOrEqual(Date.now() + 1000);
      expect((await ctx.mq.getJob(q, b!))!).toMatchObject({ state: "pending", retryDelayMs: 0 });
      dumps.set(comboName(backend, combo.topology) + ":delay", await dump(ctx.raw, q));
    });

    test("requeueDead keeps the attempts with keepAttempts: the next claim counts on", async () => {
      const q = `facts-keep-${backend}`;
      const [a, b] = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }]);
      for (let i = 0; i < 2; i++) {
        const j = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
        await ctx.mq.bury(j, "x");
      }
      expect(await ctx.mq.requeueDead(q, { ids: [a!], keepAttempts: true })).toBe(1);
      expect(await ctx.mq.requeueDead(q, { ids: [b!] })).toBe(1);
      expect((await ctx.mq.getJob(q, a!))!).toMatchObject({ state: "pending", attempts: 1 });
      expect((await ctx.mq.getJob(q, b!))!).toMatchObject({ state: "pending", attempts: 0 });
      // no claim time until the next claim (REQUEUE deletes the token)
      expect((await ctx.mq.getJob(q, a!))!.claimedAt).toBeUndefined();
      expect((await ctx.mq.getJob(q, b!))!.claimedAt).toBeUndefined();
      const first = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const second = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const byId = new Map([[first.id, first.attempts], [second.id, second.attempts]]);
      expect(byId.get(a!)).toBe(2);
      expect(byId.get(b!)).toBe(1);
      // without ids (up to a limit) too
      await ctx.mq.bury(first, "y");
      await ctx.mq.bury(second, "y");
      expect(await ctx.mq.requeueDead(q, { limit: 10, keepAttempts: true })).toBe(2);
      expect((await ctx.mq.getJob(q, a!))!.attempts).toBe(2);
      expect((await ctx.mq.getJob(q, b!))!.attempts).toBe(1);
      dumps.set(comboName(backend, combo.topology) + ":keep", await dump(ctx.raw, q));
    });

    test("a lease that ran out counts a stall on the row: by CLAIM and by REAP", async () => {
      const q = `facts-stalls-${backend}`;
      const a = await ctx.mq.enqueue(q, { n: 1 });
      expect((await ctx.mq.getJob(q, a))!.stalls).toBeUndefined();
      const lost = (await ctx.mq.claim(q, { leaseMs: 1 }))!;
      await eventually(async () => (await ctx.mq.reap(q)) === 1);
      expect((await ctx.mq.getJob(q, a))!).toMatchObject({ state: "pending", stalls: 1 });
      // a claim takes back the expired lease itself (and claims the job again)
      expect((await ctx.mq.claim(q, { leaseMs: 1 }))!.token).toBeGreaterThan(lost.token);
      let again: Awaited<ReturnType<typeof ctx.mq.claim>> = null;
      await eventually(async () => (again = await ctx.mq.claim(q, { leaseMs: 60_000 })) !== null);
      expect((await ctx.mq.getJob(q, a))!).toMatchObject({ state: "active", stalls: 2 });
      await ctx.mq.ack(again!);
      expect((await ctx.mq.getJob(q, a))!.stalls).toBe(2);
      dumps.set(comboName(backend, combo.topology) + ":stalls", await dump(ctx.raw, q));
    });

    test("removeMany with clean writes one `cleaned` entry of the ids removed, in place of `removed`", async () => {
      const q = `facts-clean-${backend}`;
      const ids = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
      expect(await ctx.mq.removeMany(q, [ids[0]!, ids[1]!, "JOB00000099999"], { clean: true })).toBe(2);
      expect(await ctx.mq.removeMany(q, [ids[2]!])).toBe(1);
      expect(await events(q, ["cleaned", "removed"])).toEqual([
        ["cleaned", "jobs", `${ids[0]} ${ids[1]}`],
        ["removed", "jobs", ids[2]!],
      ]);
      dumps.set(comboName(backend, combo.topology) + ":clean", await dump(ctx.raw, q));
    });
  });
}

// the twins leave the same keyspaces
if (BACKENDS.length === 2) {
  for (const topology of TOPOLOGIES) {
    for (const what of ["claimed", "delay", "keep", "clean", "stalls"]) {
      test(`${topology} ${what}: module and scripts leave identical keyspaces`, () => {
        const a = dumps.get(comboName("scripts", topology) + `:${what}`);
        const b = dumps.get(comboName("module", topology) + `:${what}`);
        expect(a).toBeDefined();
        expect(b).toEqual(a);
      });
    }
  }
}
