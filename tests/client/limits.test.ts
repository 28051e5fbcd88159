/**
 * Queue limits (wire 8's LIMIT and PENALIZE), for each backend × topology: the concurrency limit
 * holds across 8 workers in 2 processes (observed on the server: each handler counts itself in
 * with INCR) and is reached; the rate limit lets through `burst` at once then one per period
 * share, within ±10 % of the rate over 10 s, with the claim telling when to come back; a handler's
 * `RateLimitedError` hands the job back without spending an attempt and parks the queue for every
 * worker; `penalize` never shortens a longer park; a field left out keeps its limit and `null`
 * removes it; bad limits are refused before any wire, and by the server with nothing written.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, RateLimitedError } from "../../client.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { COMBOS, digest, eventually, sleep, useClient, useSites, wire, wireArgv, wireBatch } from "./_harness.ts";
import { runAcrossProcesses } from "./_limit_run.ts";

type P = { n: number };
const sites = useSites();

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);

    test("the concurrency limit holds across 8 workers in 2 processes, and is reached", async () => {
      const q = `lim-conc-${combo.backend}`;
      const JOBS = 60;
      expect(await ctx.mq.limit(q, { concurrency: 2 })).toEqual({ concurrency: 2, rate: null, parkedUntil: null });
      await ctx.mq.enqueueMany(q, Array.from({ length: JOBS }, (_, n) => ({ n })));
      const run = await runAcrossProcesses(sites, combo, ctx, q, JOBS);
      const max = run.here.get("") ?? 0;
      console.log(
        `[limits ${combo.name}] concurrency 2, 8 workers × 4 in 2 processes: observed max ${max} here, ${run.there} there; the child ran ${run.thereDone} of ${JOBS}`,
      );
      expect(run.done).toBe(JOBS);
      expect(Math.max(max, run.there)).toBe(2);
      expect((await ctx.mq.counts(q)).active).toBe(0);
    }, 90_000);

    test("a rate limit: `burst` at once, then evenly spaced; the claim says when to come back", async () => {
      const q = `lim-burst-${combo.backend}`;
      await ctx.mq.limit(q, { rate: { max: 10, perMs: 60_000, burst: 5 } });
      expect((await ctx.mq.limits(q)).rate).toEqual({ max: 10, perMs: 60_000, burst: 5 });
      await ctx.mq.enqueueMany(q, Array.from({ length: 20 }, (_, n) => ({ n })));
      const first = await ctx.mq.claimMany(q, 20, { leaseMs: 60_000 });
      expect(first.length).toBe(5);
      expect(await ctx.mq.claimMany(q, 20, { leaseMs: 60_000 })).toEqual([]);
      // the next token: 6 s (60 s / 10) after the burst's state began, by the server's clock
      const [s] = (await ctx.raw.command(["TIME"], keyspace(q).meta)) as [string];
      const tat = String(await ctx.raw.command(["HGET", keyspace(q).meta, "tat"], keyspace(q).meta));
      const [tq] = tat.split(" ").map(Number);
      expect(tq! - Number(s) * 1000).toBeGreaterThan(29_000); // 5 tokens of 6 s taken
      expect((await ctx.mq.counts(q)).pending).toBe(15);
    });

    test("3 per 1000 ms: the claim's next_ms is the next token's ms rounded up (TAT + 333⅓ → 334)", async () => {
      // a period that does not divide into whole ms: the next token is q + ⌈r / max⌉ (docs/WIRE.md,
      // "Limits"), one ms after the stored tat's q here, never q itself (a token not yet there)
      const q = `lim-ceil-${combo.backend}`;
      const meta = keyspace(q).meta;
      await ctx.mq.limit(q, { rate: { max: 3, perMs: 1000, burst: 1 } });
      await ctx.mq.enqueueMany(q, [1, 2].map((n) => ({ n })));
      // one transaction: the two claims µs apart (a busy machine cannot let a token come between)
      const claim = wireArgv(combo.backend, "CLAIM", [meta], ["60000", "1", "0"]);
      const [first, second] = (await wireBatch(ctx.raw, meta, [claim, claim], true)).map((o) => ("ok" in o ? o.ok : o.err)) as unknown[][];
      const [tq, tr] = String(await ctx.raw.command(["HGET", meta, "tat"], meta)).split(" ").map(Number);
      expect(tr).toBe(1); // one token of 333⅓ ms taken from a full bucket: TAT = now + 333 + 1/3
      expect(first!.length).toBe(2); // next_ms (the rate is spent) and the job
      expect(first![0]).toBe(tq! + 1);
      expect(second).toEqual([tq! + 1]);
    });

    test("a rate limit holds within ±10 % over 10 s across workers, and the queue's stats show it", async () => {
      const q = `lim-rate-${combo.backend}`;
      // burst 5: a worker that comes to a token up to 250 ms late keeps it (burst 1 spaces claims
      // at least 50 ms apart, so every late ms is lost: 93–97 % of the rate measured here; burst 2
      // kept 100 ms, and a run of the test command on a machine loaded 4× over measured 17.1/s)
      await ctx.mq.limit(q, { rate: { max: 20, perMs: 1000, burst: 5 } });
      await ctx.mq.enqueueMany(q, Array.from({ length: 400 }, (_, n) => ({ n })));
      const other = await ctx.connect<P>();
      const workers = [ctx.mq, other].map((mq) => mq.work(q, () => {}, { concurrency: 10 }));
      await eventually(async () => (await ctx.mq.stats(q)).claims > 0);
      const t0 = performance.now();
      const c0 = (await ctx.mq.stats(q)).claims;
      await sleep(10_000);
      const c1 = (await ctx.mq.stats(q)).claims;
      const seconds = (performance.now() - t0) / 1000;
      await Promise.all(workers.map((w) => w.stop()));
      await other.close();
      const rate = (c1 - c0) / seconds;
      console.log(`[limits ${combo.name}] rate 20/s: ${c1 - c0} claims in ${seconds.toFixed(2)} s = ${rate.toFixed(2)}/s`);
      expect(rate).toBeGreaterThanOrEqual(18);
      expect(rate).toBeLessThanOrEqual(22);
      const stats = await ctx.mq.stats(q);
      expect(stats.limits.rate).toEqual({ max: 20, perMs: 1000, burst: 5 });
    }, 60_000);

    test("RateLimitedError hands the job back without spending an attempt and parks the queue", async () => {
      const q = `lim-429-${combo.backend}`;
      const runs: Array<{ attempts: number; at: number }> = [];
      let parkedUntil: number | null = null;
      const worker = ctx.mq.work(q, (job) => {
        runs.push({ attempts: job.attempts, at: Date.now() });
        if (runs.length === 1) job.rateLimited(700);
        if (runs.length === 2) throw new RateLimitedError(1);
      }, { concurrency: 4 });
      try {
        await ctx.mq.enqueue(q, { n: 1 });
        await eventually(async () => {
          parkedUntil ??= (await ctx.mq.limits(q)).parkedUntil;
          return runs.length >= 3;
        });
      } finally {
        await worker.stop();
      }
      expect(runs.map((r) => r.attempts)).toEqual([1, 1, 1]);
      expect(parkedUntil).not.toBeNull();
      // the hand-back came after the park ended: no claim in between (server and client share a clock here)
      expect(runs[1]!.at - runs[0]!.at).toBeGreaterThanOrEqual(690);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 1, waitingChildren: 0 });
      expect((await ctx.mq.stats(q)).retried).toBe(0);
    });

    test("penalize parks the queue for every claim; a shorter park keeps the longer", async () => {
      const q = `lim-park-${combo.backend}`;
      await ctx.mq.enqueue(q, { n: 1 });
      const until = await ctx.mq.penalize(q, 60_000);
      expect(await ctx.mq.penalize(q, 1000)).toBe(until);
      expect((await ctx.mq.limits(q)).parkedUntil).toBe(until);
      expect(await ctx.mq.claim(q, { leaseMs: 60_000 })).toBeNull();
      // a park that has ended claims again
      await ctx.raw.command(["HSET", keyspace(q).meta, "parked", "1"], keyspace(q).meta);
      expect((await ctx.mq.limits(q)).parkedUntil).toBeNull();
      expect((await ctx.mq.claim(q, { leaseMs: 60_000 }))?.payload).toEqual({ n: 1 });
    });

    test("a field left out keeps its limit, null removes it", async () => {
      const q = `lim-keep-${combo.backend}`;
      await ctx.mq.limit(q, { concurrency: 3, rate: { max: 5, perMs: 1000, burst: 2 } });
      expect(await ctx.mq.limit(q, { rate: null })).toEqual({ concurrency: 3, rate: null, parkedUntil: null });
      expect(await ctx.mq.limits(q)).toEqual({ concurrency: 3, rate: null, parkedUntil: null });
      await ctx.mq.limit(q, { rate: { max: 1, perMs: 10 } });
      expect(await ctx.mq.limit(q, { concurrency: null })).toEqual({
        concurrency: null,
        rate: { max: 1, perMs: 10, burst: 1 },
        parkedUntil: null,
      });
      const meta = (await ctx.raw.command(["HGETALL", keyspace(q).meta], keyspace(q).meta)) as unknown;
      expect(JSON.stringify(meta)).not.toContain("concurrency");
    });

    test("bad limits: refused before any wire, and by the server with nothing written", async () => {
      const q = `lim-bad-${combo.backend}`;
      await ctx.mq.enqueue(q, { n: 1 });
      const before = await digest(ctx.raw, keyspace(q).meta);
      const bad: Array<[() => Promise<unknown>, string]> = [
        [() => ctx.mq.limit(q, { concurrency: 0 }), "limit: concurrency must be an integer from 1 to 1000000"],
        [() => ctx.mq.limit(q, { concurrency: Number.NaN }), "limit: concurrency must be an integer from 1 to 1000000"],
        [() => ctx.mq.limit(q, { concurrency: -1 }), "limit: concurrency must be an integer from 1 to 1000000"],
        [() => ctx.mq.limit(q, { rate: { max: 1, perMs: 0 } }), "limit: rate.perMs must be an integer from 1 to 86400000"],
        [() => ctx.mq.limit(q, { rate: { max: 0.5, perMs: 10 } }), "limit: rate.max must be an integer from 1 to 1000000"],
        [() => ctx.mq.limit(q, { rate: { max: 1, perMs: 10, burst: 0 } }), "limit: rate.burst must be an integer from 1 to 1000000"],
        [() => ctx.mq.penalize(q, 0), "penalize: ms must be an integer from 1 to 86400000"],
      ];
      for (const [call, message] of bad) {
        const e = await call().then(() => null, (x: unknown) => x);
        expect(e).toBeInstanceOf(EchoMQError);
        expect((e as EchoMQError).rule).toBe("limit");
        expect((e as Error).message).toStartWith(message);
      }
      const keys = [keyspace(q).meta];
      const verb = "EMQ.LIMIT";
      expect(await wire(ctx.raw, combo.backend, "LIMIT", keys, ["0", "", "1000001", "0", "1", "1"])).toEqual({
        err: renderRefusal("too-large", verb, { arg: "concurrency", max: "1000000" }),
      });
      expect(await wire(ctx.raw, combo.backend, "LIMIT", keys, ["0", "", "1", "1", "0", "1"])).toEqual({
        err: renderRefusal("positive", verb, { arg: "rate_per_ms" }),
      });
      expect(await wire(ctx.raw, combo.backend, "PENALIZE", keys, ["", "0"])).toEqual({
        err: renderRefusal("positive", "EMQ.PENALIZE", { arg: "penalty_ms" }),
      });
      expect(await digest(ctx.raw, keyspace(q).meta)).toBe(before);
    });
  });
}
