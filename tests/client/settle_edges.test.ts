/**
 * Wire-6 settles at the edges, for each backend × topology (issues 18 and 20):
 * - `retry(job, { delayMs: 0 })` and a backoff of 0 mean "ready now": RETRY with delay_ms 0 puts
 *   the job straight back on the head of pending (state `pending`, reason kept, `ready` on wake),
 *   claimable by the next claim; a negative or fractional delay is still refused;
 * - RELEASE (issue 18 #16) hands a held job back: the tail of pending (claimed next), its attempt
 *   given back, no reason, no failure counted; a stale token is refused (every stale id named),
 *   nothing written; `mq.release(job)` and the settlement kind `release` send it;
 * - the resulting keyspaces are identical across backends.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, type Job } from "../../client.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { COMBOS, counterIds, digest, dump, eventually, useClient, useSites, wire } from "./_harness.ts";

const servers = useSites();
const dumps = new Map<string, unknown>();
type P = { n: number };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo, { newId: counterIds(1) });

    test("retry with delayMs 0: straight back to the head of pending, ready now, reason kept", async () => {
      const q = `se-ready-${backend}`;
      const K = keyspace(q);
      await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const [a, b, c] = (await ctx.mq.claimMany(q, 3, { leaseMs: 60_000 })) as Array<Job<P>>;
      await ctx.mq.enqueue(q, { n: 4 }); // pending not empty: the retried job goes on its head
      await ctx.raw.command(["ZREM", K.wake, "ready"], K.meta);
      // one call, mixed: a now, b later, c now (argument order on the head)
      await ctx.mq.settleMany([
        { kind: "retry", job: a!, delayMs: 0, reason: "now" },
        { kind: "retry", job: b!, delayMs: 60_000, reason: "later" },
        { kind: "retry", job: c!, delayMs: 0, reason: "now too" },
      ]);
      expect(await ctx.row(q, a!.id, "state", "reason", "attempts")).toEqual(["pending", "now", "1"]);
      expect(await ctx.row(q, b!.id, "state", "reason")).toEqual(["scheduled", "later"]);
      const pending = ((await ctx.raw.command(["LRANGE", K.pending, "0", "-1"], K.meta)) as unknown[]).map(String);
      expect(pending.slice(0, 2)).toEqual([c!.id, a!.id]);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 3, active: 0, schedule: 1, dead: 0, completed: 0, waitingChildren: 0 });
      expect((await ctx.mq.stats(q)).retried).toBe(3);
      dumps.set(`ready ${combo.name}`, await dump(ctx.raw, q));
      // ready now: the next claims hand them out (the oldest pending first, then a, then c)
      const again = (await ctx.mq.claimMany(q, 3, { leaseMs: 60_000 })) as Array<Job<P>>;
      expect(again.map((j) => j.payload.n)).toEqual([4, 1, 3]);
      expect(again[1]!.attempts).toBe(2);
    });

    test("retry with delay 0 into an empty pending marks wake ready; the wire still refuses a delay that is not a number", async () => {
      const q = `se-empty-${backend}`;
      const K = keyspace(q);
      await ctx.mq.enqueue(q, { n: 1 });
      const job = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      expect(await ctx.raw.command(["EXISTS", K.pending], K.meta)).toBe(0);
      const d0 = await digest(ctx.raw, K.meta);
      for (const bad of ["-1", "1.5", ""]) {
        expect(await wire(ctx.raw, backend, "RETRY", [K.meta], [job.id, String(job.token), bad, "r", ""])).toEqual({
          err: renderRefusal("non-negative", "EMQ.RETRY", { arg: "delay_ms" }),
        });
      }
      expect(await digest(ctx.raw, K.meta)).toBe(d0);
      await expect(ctx.mq.retry(job, { delayMs: -1 })).rejects.toBeInstanceOf(EchoMQError);
      expect(await wire(ctx.raw, backend, "RETRY", [K.meta], [job.id, String(job.token), "0", "r", ""])).toEqual({ ok: 1 });
      expect(await ctx.raw.command(["ZSCORE", K.wake, "ready"], K.meta)).toBe(0);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 1, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
    });

    test("release: back to the tail of pending with the attempt given back; a stale token refused, nothing written", async () => {
      const q = `se-release-${backend}`;
      const K = keyspace(q);
      await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const [a, b] = (await ctx.mq.claimMany(q, 3, { leaseMs: 60_000 })) as Array<Job<P>>;
      expect(await ctx.raw.command(["EXISTS", K.pending, K.wake], K.meta)).toBe(0);
      const d0 = await digest(ctx.raw, K.meta);
      const stale = { ...b!, token: b!.token + 1000 };
      expect(await wire(ctx.raw, backend, "RELEASE", [K.meta], [a!.id, String(a!.token), stale.id, String(stale.token)])).toEqual({
        err: renderRefusal("lease-lost", "EMQ.RELEASE", { ids: stale.id }),
      });
      expect(await wire(ctx.raw, backend, "RELEASE", [K.meta], [a!.id, String(a!.token), a!.id, String(a!.token)])).toEqual({
        err: renderRefusal("repeated", "EMQ.RELEASE", { id: a!.id }),
      });
      expect(await digest(ctx.raw, K.meta)).toBe(d0);
      await ctx.mq.release(a!);
      expect(await ctx.mq.settleMany([{ kind: "release", job: b! }])).toEqual([null]);
      expect(await ctx.row(q, a!.id, "state", "attempts", "reason", "token")).toEqual(["pending", "0", "null", String(a!.token)]);
      const pending = ((await ctx.raw.command(["LRANGE", K.pending, "0", "-1"], K.meta)) as unknown[]).map(String);
      expect(pending).toEqual([a!.id, b!.id]); // the tail: b is claimed first, then a
      expect(await ctx.raw.command(["ZSCORE", K.wake, "ready"], K.meta)).toBe(0);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 2, active: 1, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
      expect((await ctx.mq.stats(q)).retried).toBe(0);
      await expect(ctx.mq.release(a!)).rejects.toMatchObject({ name: "LeaseLostError" });
      dumps.set(`release ${combo.name}`, await dump(ctx.raw, q));
      const again = (await ctx.mq.claimMany(q, 3, { leaseMs: 60_000 })) as Array<Job<P>>;
      expect(again.map((j) => [j.payload.n, j.attempts])).toEqual([[2, 1], [1, 1]]);
      expect(again[0]!.token).toBeGreaterThan(b!.token);
    });

    test("a worker whose backoff is 0 retries a failed job at once", async () => {
      const q = `se-backoff-${backend}`;
      await ctx.mq.enqueue(q, { n: 1 });
      const seen: number[] = [];
      const worker = ctx.mq.work(q, (job) => {
        seen.push(job.attempts);
        if (job.attempts < 3) throw new Error("again");
      }, { maxAttempts: 3, backoff: () => 0, blockMs: 50 });
      await eventually(() => seen.length === 3);
      await eventually(async () => (await ctx.mq.counts(q)).active === 0);
      await worker.stop();
      expect(seen).toEqual([1, 2, 3]);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 1, waitingChildren: 0 });
      expect((await ctx.mq.stats(q)).retried).toBe(2);
    });
  });
}

describe("identical across backends", () => {
  test("the keyspaces the settles leave", () => {
    const groups = new Map<string, unknown[]>();
    for (const [name, d] of dumps) {
      const what = name.split(" ")[0]!;
      groups.set(what, [...(groups.get(what) ?? []), d]);
    }
    for (const [, ds] of groups) for (const d of ds) expect(d).toEqual(ds[0]);
  });
});
