/**
 * Lanes (wire 9's `lane` job option; docs/design/lanes.md §10), for each backend × topology: one
 * claimer is served round-robin exactly, the lane admitted first first; priorities order jobs
 * inside a lane, FIFO per level; a lane's concurrency limit holds across 8 workers in 2 processes
 * and is reached; a paused lane is skipped until resumed; a handler's `RateLimitedError` parks its
 * job's lane only and spends no attempt; a lane's rate limit holds within ±10 % while the other lanes
 * run at full speed; a lane's rate park ends when its rate (its own, the default) changes or goes,
 * and a penalty's holds; `mq.lanes` pages busiest first; jobs show their lane; REMOVE
 * and DROP leave no key behind (REMOVE of a lane's last jobs takes it out of the ring at once, the
 * keyspace the same on both backends); a raised per-lane default concurrency or rate reaches a lane
 * held back by the old one at once (a waiting worker gets its job), a lane's own limit and a longer
 * penalty kept; a bad lane name is refused before any wire (nothing reaches the
 * server: DEBUG DIGEST unchanged), at compile time too (tests/client/types.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { BatchError, EchoMQError, type Job, RateLimitedError } from "../../client.ts";
import { claimOrder, COMBOS, digest, dump, eventually, queueKeys, sleep, useClient, useSites } from "./_harness.ts";
import { runAcrossProcesses } from "./_limit_run.ts";

type P = { n: string };
const sites = useSites();
/** Keyspace dumps by topology and step, compared between the backends (see sameAcrossBackends). */
const dumps = new Map<string, Record<string, unknown>>();

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);
    const names = (q: string, n: number): Promise<string[]> => claimOrder(ctx.mq, q, n);
    const keysOf = (q: string): Promise<string[]> => queueKeys(ctx.raw, q);
    /**
     * Queue `q`'s keyspace (tests/client/_harness.ts's dump: times normalised) but for the keys
     * that hold job ids (the client makes them: they differ per backend), the same as the other
     * backend's at step `label` on this topology (the first backend's is kept; the second's compared).
     */
    const sameAcrossBackends = async (label: string, q: string): Promise<void> => {
      const all = await dump(ctx.raw, q);
      const kept = Object.fromEntries(Object.entries(all).filter(([k]) => !/:(events|pending|active|dead)$|:job:|:ready:/.test(k)));
      const key = `${combo.topology} ${label}`;
      const other = dumps.get(key);
      if (other === undefined) dumps.set(key, kept);
      else expect(kept).toEqual(other);
    };

    test("one claimer is served round-robin exactly: the lane admitted first, first", async () => {
      const q = `ln-rr-${combo.backend}`;
      const payloads = ["a", "b", "c"].flatMap((l) => Array.from({ length: 5 }, (_, i) => ({ n: `${l}${i}` })));
      await ctx.mq.enqueueMany(q, payloads, { lane: (p) => p.n[0] });
      expect((await ctx.mq.counts(q)).pending).toBe(15);
      const order = Array.from({ length: 5 }, (_, i) => ["a", "b", "c"].map((l) => `${l}${i}`)).flat();
      expect(await names(q, 16)).toEqual([...order, "none"]);
      // one claim of many takes one job of each lane in ring order
      await ctx.mq.enqueueMany(q, [{ n: "x0" }, { n: "x1" }, { n: "y0" }, { n: "z0" }], { lane: (p) => p.n[0] });
      const many = await ctx.mq.claimMany(q, 3, { leaseMs: 60_000 });
      expect(many.map((j) => (j as Job<P>).payload.n)).toEqual(["x0", "y0", "z0"]);
      expect((many[0] as Job<P>).lane).toBe("x");
    });

    test("priorities order jobs inside a lane, FIFO per level; the default lane is a lane like the others", async () => {
      const q = `ln-prio-${combo.backend}`;
      const plan: Array<[string, number, string | undefined]> = [
        ["a5-1", 5, "a"],
        ["a0-1", 0, "a"],
        ["a5-2", 5, "a"],
        ["a0-2", 0, "a"],
        ["d1", 1, undefined],
        ["d0", 0, undefined],
      ];
      for (const [n, priority, lane] of plan) await ctx.mq.enqueue(q, { n }, { priority, ...(lane === undefined ? {} : { lane }) });
      // lane a was admitted first (its first job made the queue laned), then the default lane
      expect(await names(q, 7)).toEqual(["a0-1", "d0", "a0-2", "d1", "a5-1", "a5-2", "none"]);
    });

    test("a lane's concurrency limit holds across 8 workers in 2 processes, and is reached", async () => {
      const q = `ln-conc-${combo.backend}`;
      const LANES = ["t1", "t2", "t3"];
      const JOBS = 60;
      await ctx.mq.limit(q, { concurrency: 2 }, { perLane: true });
      await ctx.mq.limit(q, { concurrency: 1 }, { lane: "t3" });
      expect(await ctx.mq.limits(q, { lane: "t3" })).toEqual({ concurrency: 1, rate: null, parkedUntil: null });
      await ctx.mq.enqueueMany(q, Array.from({ length: JOBS }, (_, i) => ({ n: String(i) })), { lane: (_, i) => LANES[i % 3] });
      const run = await runAcrossProcesses(sites, combo, ctx, q, JOBS);
      console.log(
        `[lanes ${combo.name}] per-lane concurrency 2 (t3: 1), 8 workers × 4 in 2 processes: here ${JSON.stringify([...run.here])}, there ${
          JSON.stringify([...run.thereByLane])
        }`,
      );
      expect(run.done).toBe(JOBS);
      // seen by a handler of either process (a worker that settles a lane's job may claim its freed
      // slot in the same call, so one process may hold a lane throughout): reached, never passed
      const seen = (lane: string): number[] => [run.here.get(lane) ?? 0, run.thereByLane.get(lane) ?? 0];
      expect(LANES.map((l) => Math.max(...seen(l)))).toEqual([2, 2, 1]);
      expect(run.there).toBeLessThanOrEqual(2);
      expect((await ctx.mq.counts(q)).active).toBe(0);
      expect((await ctx.mq.lanes(q)).lanes.every((l) => l.active === 0)).toBe(true);
    }, 90_000);

    test("a paused lane is skipped until resumed; the queue and its other lanes are served", async () => {
      const q = `ln-pause-${combo.backend}`;
      await ctx.mq.enqueueMany(q, [{ n: "a0" }, { n: "a1" }, { n: "b0" }, { n: "b1" }], { lane: (p) => p.n[0] });
      expect(await ctx.mq.pause(q, { lane: "a" })).toBe(true);
      expect(await ctx.mq.pause(q, { lane: "a" })).toBe(false);
      expect(await ctx.mq.isPaused(q)).toBe(false);
      // two lanes of one backlog: in no promised order
      expect((await ctx.mq.lanes(q)).lanes.map((l) => [l.name, l.paused]).sort()).toEqual([["a", true], ["b", false]]);
      expect(await names(q, 3)).toEqual(["b0", "b1", "none"]);
      expect(await ctx.mq.resume(q, { lane: "a" })).toBe(true);
      expect(await ctx.mq.resume(q, { lane: "a" })).toBe(false);
      expect(await names(q, 3)).toEqual(["a0", "a1", "none"]);
      // a lane paused before it has a job: its jobs wait from the first
      await ctx.mq.pause(q, { lane: "later" });
      await ctx.mq.enqueue(q, { n: "l0" }, { lane: "later" });
      expect(await names(q, 1)).toEqual(["none"]);
      await ctx.mq.resume(q, { lane: "later" });
      expect(await names(q, 1)).toEqual(["l0"]);
    });

    test("a lane's rate limit holds within ±10 % over 5 s across workers; the other lanes run at full speed", async () => {
      const q = `ln-rate-${combo.backend}`;
      // burst 5, as the queue-level rate test (tests/client/limits.test.ts) says why
      await ctx.mq.limit(q, { rate: { max: 20, perMs: 1000, burst: 5 } }, { lane: "slow" });
      await ctx.mq.enqueueMany(q, Array.from({ length: 200 }, (_, i) => ({ n: `s${i}` })), { lane: "slow" });
      await ctx.mq.enqueueMany(q, Array.from({ length: 300 }, (_, i) => ({ n: `f${i}` })), { lane: "fast" });
      const done = { slow: 0, fast: 0 };
      const other = await ctx.connect<P>();
      const workers = [ctx.mq, other].map((mq) => mq.work(q, (job) => void done[job.lane as "slow" | "fast"]++, { concurrency: 10 }));
      await eventually(() => done.slow > 0);
      const t0 = performance.now();
      const s0 = done.slow;
      await sleep(5_000);
      const seconds = (performance.now() - t0) / 1000;
      const rate = (done.slow - s0) / seconds;
      await Promise.all(workers.map((w) => w.stop()));
      await other.close();
      console.log(
        `[lanes ${combo.name}] lane rate 20/s: ${done.slow - s0} claims in ${seconds.toFixed(2)} s = ${rate.toFixed(2)}/s; fast lane ${done.fast}/300`,
      );
      expect(rate).toBeGreaterThanOrEqual(18);
      expect(rate).toBeLessThanOrEqual(22);
      expect(done.fast).toBe(300);
      expect((await ctx.mq.limits(q, { lane: "slow" })).rate).toEqual({ max: 20, perMs: 1000, burst: 5 });
    });

    test("RateLimitedError parks its job's lane only, and spends no attempt", async () => {
      const q = `ln-rl-${combo.backend}`;
      const a = await ctx.mq.enqueue(q, { n: "a0" }, { lane: "a" });
      await ctx.mq.enqueueMany(q, [{ n: "b0" }, { n: "b1" }, { n: "b2" }], { lane: "b" });
      const seen: string[] = [];
      const worker = ctx.mq.work(q, (job) => {
        seen.push(job.payload.n);
        if (job.lane === "a") throw new RateLimitedError(60_000);
      }, { concurrency: 1 });
      try {
        await eventually(() => seen.filter((n) => n.startsWith("b")).length === 3);
        await sleep(300);
      } finally {
        await worker.stop();
      }
      expect(seen.filter((n) => n === "a0")).toEqual(["a0"]); // parked: not claimed again
      const job = (await ctx.mq.getJob(q, a))!;
      expect([job.state, job.attempts, job.lane]).toEqual(["pending", 0, "a"]);
      expect((await ctx.mq.limits(q)).parkedUntil).toBeNull();
      const lane = (await ctx.mq.lanes(q)).lanes.find((l) => l.name === "a")!;
      expect(lane.parkedUntil).toBeGreaterThan(Date.now() + 50_000);
      expect((await ctx.mq.limits(q, { lane: "a" })).parkedUntil).toBe(lane.parkedUntil);
      expect(await ctx.mq.claim(q, { leaseMs: 1000 })).toBeNull();
    });

    test("a lane's rate park ends when its rate changes or goes, its own or the default; a penalty holds", async () => {
      const DAY = 86_400_000;
      type Target = { lane: string } | { perLane: true };
      const next = async (q: string): Promise<string> => (await ctx.mq.claim(q, { leaseMs: 60_000 }))?.payload.n ?? "none";
      const parkedUntil = async (q: string): Promise<number | null> => (await ctx.mq.limits(q, { lane: "a" })).parkedUntil;
      // lane a claimed once under a rate of 1 per period (a day): parked until the next token
      const spent = async (q: string, scope: Target, period = DAY): Promise<void> => {
        await ctx.mq.limit(q, { rate: { max: 1, perMs: period } }, scope);
        await ctx.mq.enqueueMany(q, [{ n: "a0" }, { n: "a1" }, { n: "a2" }], { lane: "a" });
        expect(await next(q)).toBe("a0");
        expect(await next(q)).toBe("none");
        expect(await parkedUntil(q)).toBeGreaterThan(Date.now() + period - 60_000);
      };
      // a new rate (a burst left after the next claim), no rate, a new default, no default: the
      // next claim of a comes at once, its park gone
      const fast = { max: 1000, perMs: 1000, burst: 10 };
      const changes: [string, Target, typeof fast | null][] = [
        ["own", { lane: "a" }, fast],
        ["gone", { lane: "a" }, null],
        ["default", { perLane: true }, fast],
        ["nodefault", { perLane: true }, null],
      ];
      for (const [name, scope, rate] of changes) {
        const q = `ln-repark-${name}-${combo.backend}`;
        await spent(q, scope);
        await ctx.mq.limit(q, { rate }, scope);
        await eventually(async () => (await next(q)) === "a1", 5_000);
        expect(await parkedUntil(q)).toBeNull();
      }
      // a lane that spent its token with no job left (not parked: its state alone holds it back)
      // is reached too: its next job is claimed at once
      for (const [name, scope, rate] of changes) {
        const q = `ln-respent-${name}-${combo.backend}`;
        await ctx.mq.limit(q, { rate: { max: 1, perMs: DAY } }, scope);
        await ctx.mq.enqueue(q, { n: "a0" }, { lane: "a" });
        expect(await next(q)).toBe("a0");
        expect(await parkedUntil(q)).toBeNull();
        await ctx.mq.limit(q, { rate }, scope);
        await ctx.mq.enqueue(q, { n: "a1" }, { lane: "a" });
        expect(await next(q)).toBe("a1");
      }
      // a penalty later than the rate's park (of an hour: a penalty is at most a day) holds across
      // the change, of its own rate or the default
      for (const [name, scope, rate] of changes) {
        const q = `ln-repen-${name}-${combo.backend}`;
        await spent(q, scope, 3_600_000);
        const until = await ctx.mq.penalize(q, 7_200_000, { lane: "a" });
        await ctx.mq.limit(q, { rate }, scope);
        expect(await next(q)).toBe("none");
        expect(await parkedUntil(q)).toBe(until);
      }
      // a penalty shorter than the rate's next token, on a lane its rate did not park (it had no
      // job left then), holds too
      const q = `ln-repen-free-${combo.backend}`;
      await ctx.mq.limit(q, { rate: { max: 1, perMs: DAY } }, { lane: "a" });
      await ctx.mq.enqueue(q, { n: "a0" }, { lane: "a" });
      expect(await next(q)).toBe("a0");
      await ctx.mq.enqueue(q, { n: "a1" }, { lane: "a" });
      expect(await parkedUntil(q)).toBeNull();
      const until = await ctx.mq.penalize(q, 60_000, { lane: "a" });
      await ctx.mq.limit(q, { rate: fast }, { lane: "a" });
      expect(await next(q)).toBe("none");
      expect(await parkedUntil(q)).toBe(until);
    });

    test("mq.lanes pages busiest first, the default lane as null; limits in force, own and default", async () => {
      const q = `ln-page-${combo.backend}`;
      for (let i = 0; i < 5; i++) {
        await ctx.mq.enqueueMany(q, Array.from({ length: i + 1 }, (_, k) => ({ n: `l${i}-${k}` })), { lane: `l${i}` });
      }
      await ctx.mq.enqueue(q, { n: "d" });
      await ctx.mq.limit(q, { rate: { max: 5, perMs: 1000 } }, { perLane: true });
      await ctx.mq.limit(q, { concurrency: 3 }, { lane: "l4" });
      const all = await ctx.mq.lanes(q);
      expect(all.total).toBe(6);
      expect(all.lanes.map((l) => [l.name, l.ready])).toEqual([["l4", 5], ["l3", 4], ["l2", 3], ["l1", 2], ["l0", 1], [null, 1]]);
      expect(all.lanes[0]).toEqual({
        name: "l4",
        ready: 5,
        active: 0,
        paused: false,
        concurrency: 3,
        rate: { max: 5, perMs: 1000, burst: 1 },
        own: { concurrency: 3, rate: null },
        parkedUntil: null,
        inRing: true,
      });
      const page = await ctx.mq.lanes(q, { offset: 1, limit: 2 });
      expect([page.total, page.lanes.map((l) => l.name)]).toEqual([6, ["l3", "l2"]]);
      expect((await ctx.mq.lanes(q, { offset: 6 })).lanes).toEqual([]);
      expect((await ctx.mq.stats(q)).lanes).toBe(6);
      expect(await ctx.mq.limits(q, { perLane: true })).toEqual({ concurrency: null, rate: { max: 5, perMs: 1000, burst: 1 }, parkedUntil: null });
      // a field left out keeps its value, null removes it
      await ctx.mq.limit(q, { rate: { max: 1, perMs: 1000 } }, { lane: "l4" });
      expect(await ctx.mq.limits(q, { lane: "l4" })).toMatchObject({ concurrency: 3, rate: { max: 1, perMs: 1000, burst: 1 } });
      await ctx.mq.limit(q, { concurrency: null }, { lane: "l4" });
      expect(await ctx.mq.limits(q, { lane: "l4" })).toMatchObject({ concurrency: null, rate: { max: 1, perMs: 1000, burst: 1 } });
      // the default lane's own limits
      await ctx.mq.limit(q, { concurrency: 1 }, { lane: null });
      expect((await ctx.mq.limits(q, { lane: null })).concurrency).toBe(1);
    });

    test("jobs carry their lane: claimed, getJob, jobs of a state; undefined in the default lane", async () => {
      const q = `ln-show-${combo.backend}`;
      const s = await ctx.mq.schedule(q, { n: "s" }, { delayMs: 60_000 }, { lane: "x" });
      const d = await ctx.mq.enqueue(q, { n: "d" });
      expect((await ctx.mq.getJob(q, s))!.lane).toBe("x");
      expect((await ctx.mq.getJob(q, d))!.lane).toBeUndefined();
      expect((await ctx.mq.jobs(q, "scheduled")).map((j) => j.lane)).toEqual(["x"]);
      await ctx.mq.runNow(q, [s]);
      // pending pages list every lane's jobs: the default lane first, then the lanes by name
      await ctx.mq.enqueueMany(q, [{ n: "w0" }, { n: "w1" }, { n: "b0" }], {
        lane: (p) => (p.n[0] === "w" ? "w" : "b"),
        priority: (p) => (p.n === "w1" ? 3 : 0),
      });
      expect((await ctx.mq.jobs(q, "pending")).map((j) => [j.payload?.n, j.lane])).toEqual([["d", undefined], ["b0", "b"], ["w0", "w"], ["w1", "w"], [
        "s",
        "x",
      ]]);
      expect((await ctx.mq.jobs(q, "pending", { offset: 2, limit: 2 })).map((j) => j.payload?.n)).toEqual(["w0", "w1"]);
      expect((await ctx.mq.counts(q)).pending).toBe(5);
      expect(await ctx.mq.removeMany(q, (await ctx.mq.jobs(q, "pending", { offset: 1, limit: 3 })).map((j) => j.id))).toBe(3);
      const claimed = await ctx.mq.claimMany(q, 2, { leaseMs: 60_000 });
      expect(claimed.map((j) => (j as Job<P>).lane).sort()).toEqual(["x", undefined].sort());
      expect((await ctx.mq.jobs(q, "active")).map((j) => [j.payload?.n, j.lane]).sort()).toEqual([["d", undefined], ["s", "x"]]);
    });

    test("REMOVE and DROP of a laned queue leave no key behind", async () => {
      const q = `ln-drop-${combo.backend}`;
      const ids = await ctx.mq.enqueueMany(q, [{ n: "a" }, { n: "b" }, { n: "b2" }], { lane: (p) => p.n[0], priority: (_, i) => i });
      await ctx.mq.pause(q, { lane: "z" });
      await ctx.mq.penalize(q, 60_000, { lane: "y" });
      await ctx.mq.limit(q, { concurrency: 2 }, { lane: "w" });
      expect(await ctx.mq.remove(q, ids[0]!)).toBe(true);
      // the emptied lane leaves the ring at once, and nothing of it is left
      expect(await keysOf(q)).not.toContain(keyspace(q).lane("a"));
      const j = await ctx.mq.claim(q, { leaseMs: 60_000 });
      expect(j?.lane).toBe("b");
      await ctx.mq.ack(j!);
      expect(await ctx.mq.drop(q)).toBe(2); // b2, pending, and the acked job (kept completed)
      expect(await keysOf(q)).toEqual([]);
    });

    test("removing a lane's last jobs takes it out of the ring at once: nothing of it is left, no `ready` marker", async () => {
      const q = `ln-rm-${combo.backend}`;
      const K = keyspace(q);
      const a = await ctx.mq.enqueueMany(q, [{ n: "a0" }, { n: "a1" }], { lane: "a", priority: (_, i) => i });
      const [b] = await ctx.mq.enqueueMany(q, [{ n: "b0" }], { lane: "b" });
      expect(await ctx.mq.removeMany(q, a)).toBe(2);
      expect((await ctx.mq.lanes(q)).lanes.map((l) => [l.name, l.ready, l.inRing])).toEqual([["b", 1, true]]);
      const keys = await keysOf(q);
      for (const k of [K.lane("a"), K.ready("a", 0), K.ready("a", 1), K.levels("a")]) expect(keys).not.toContain(k);
      expect(await ctx.raw.command(["LRANGE", K.ring, "0", "-1"], K.meta)).toEqual(["b"]);
      // b still waits: the marker stays; its last job gone, the queue has nothing for a claim
      expect(await ctx.raw.command(["ZSCORE", K.wake, "ready"], K.meta)).not.toBeNull();
      await sameAcrossBackends("remove-a", q);
      expect(await ctx.mq.remove(q, b!)).toBe(true);
      expect((await ctx.mq.lanes(q)).lanes).toEqual([]);
      expect(await keysOf(q)).toEqual([K.events, K.meta]);
      await sameAcrossBackends("remove-b", q);
      expect(await ctx.mq.claim(q, { leaseMs: 1000 })).toBeNull();
    });

    test("cancelling a lane's last jobs, waiting and running, takes it out at once: nothing of it is left, no `ready` marker", async () => {
      const q = `ln-cx-${combo.backend}`;
      const K = keyspace(q);
      const [a0, a1] = await ctx.mq.enqueueMany(q, [{ n: "a0" }, { n: "a1" }], { lane: "a", priority: (_, i) => 2 * i });
      const [b0] = await ctx.mq.enqueueMany(q, [{ n: "b0" }], { lane: "b" });
      const held = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      expect(held.id).toBe(a0!);
      // the waiting one first: the lane leaves the ring, its running job keeps it listed
      expect(await ctx.mq.cancel(q, a1!)).toBe("cancelled");
      expect((await ctx.mq.lanes(q)).lanes.map((l) => [l.name, l.ready, l.active, l.inRing])).toEqual([["b", 1, 0, true], ["a", 0, 1, false]]);
      expect(await ctx.raw.command(["LRANGE", K.ring, "0", "-1"], K.meta)).toEqual(["b"]);
      // then the running one: nothing of the lane is left
      expect(await ctx.mq.cancel(q, a0!)).toBe("aborting");
      expect((await ctx.mq.lanes(q)).lanes.map((l) => l.name)).toEqual(["b"]);
      const keys = await keysOf(q);
      for (const k of [K.lane("a"), K.ready("a", 0), K.ready("a", 2), K.levels("a")]) expect(keys).not.toContain(k);
      expect(await ctx.raw.command(["ZSCORE", K.wake, "ready"], K.meta)).not.toBeNull();
      await sameAcrossBackends("cancel-a", q);
      // the last ready job of the queue cancelled: no lane, no ring, no marker for workers to wake on
      expect(await ctx.mq.cancel(q, b0!)).toBe("cancelled");
      expect((await ctx.mq.lanes(q)).lanes).toEqual([]);
      expect(await keysOf(q)).not.toContain(K.ring);
      expect(await keysOf(q)).not.toContain(K.lanes);
      expect(await ctx.raw.command(["ZSCORE", K.wake, "ready"], K.meta)).toBeNull();
      await sameAcrossBackends("cancel-b", q);
      expect(await ctx.mq.claim(q, { leaseMs: 1000 })).toBeNull();
    });

    test("a flow's child cancelled with its removed parent takes the default lane out at once", async () => {
      const q = `ln-flow-${combo.backend}`;
      const K = keyspace(q);
      await ctx.mq.enqueue(q, { n: "x0" }, { lane: "x" });
      const tree = await ctx.mq.flow({ queue: q, payload: { n: "p" }, children: [{ queue: q, payload: { n: "c" } }] });
      expect((await ctx.mq.lanes(q)).lanes.map((l) => [l.name, l.ready, l.inRing])).toEqual([["x", 1, true], [null, 1, true]]);
      expect(await ctx.mq.remove(q, tree.id)).toBe(true);
      expect(await ctx.mq.getJob(q, tree.children[0]!.id)).toBeNull();
      expect((await ctx.mq.lanes(q)).lanes.map((l) => [l.name, l.ready, l.inRing])).toEqual([["x", 1, true]]);
      expect(await ctx.raw.command(["LRANGE", K.ring, "0", "-1"], K.meta)).toEqual(["x"]);
      expect(await keysOf(q)).not.toContain(K.lane(""));
    });

    /**
     * A worker of 2 on `q` waits (it finds nothing), then `raise` changes the per-lane default: the
     * jobs the worker then got, once it has lane `a`'s second job (a1), within 5 s.
     */
    async function afterRaise(q: string, raise: () => Promise<unknown>, what: string): Promise<string[]> {
      const seen: string[] = [];
      // the clients blocked on q's node (the worker's wait: a blocking CLAIM, or BZPOPMIN on wake)
      const blocked = async (): Promise<number> =>
        Number(/blocked_clients:(\d+)/.exec(String(await ctx.raw.command(["INFO", "clients"], keyspace(q).meta)))?.[1] ?? 0);
      const before = await blocked();
      const worker = ctx.mq.work(q, (job) => void seen.push(job.payload.n), { concurrency: 2 });
      try {
        await eventually(async () => (await blocked()) > before, 5_000); // the worker found nothing and waits
        expect(seen).toEqual([]);
        const t0 = performance.now();
        await raise();
        await eventually(() => seen.includes("a1"), 5_000);
        console.log(`[lanes ${combo.name}] ${what}: the waiting worker got the lane's job in ${(performance.now() - t0).toFixed(0)} ms`);
      } finally {
        await worker.stop();
      }
      return seen;
    }

    test("a raised per-lane default concurrency reaches a lane at the old one at once: a waiting worker gets its job", async () => {
      const q = `ln-raise-conc-${combo.backend}`;
      await ctx.mq.limit(q, { concurrency: 1 }, { perLane: true });
      await ctx.mq.limit(q, { concurrency: 1 }, { lane: "own" });
      await ctx.mq.enqueueMany(q, [{ n: "a0" }, { n: "a1" }, { n: "o0" }, { n: "o1" }], { lane: (p) => (p.n[0] === "a" ? "a" : "own") });
      const held = await ctx.mq.claimMany(q, 4, { leaseMs: 60_000 });
      expect(held.map((j) => (j as Job<P>).payload.n).sort()).toEqual(["a0", "o0"]);
      expect((await ctx.mq.lanes(q)).lanes.map((l) => [l.name, l.inRing]).sort()).toEqual([["a", false], ["own", false]]);
      const seen = await afterRaise(q, () => ctx.mq.limit(q, { concurrency: 5 }, { perLane: true }), "per-lane concurrency 1 → 5");
      // a lane with its own limit keeps it
      expect(seen).toEqual(["a1"]);
      expect((await ctx.mq.lanes(q)).lanes.find((l) => l.name === "own")!.inRing).toBe(false);
    });

    test("a raised per-lane default rate ends a park at the old rate's next token; a penalty is kept", async () => {
      const q = `ln-raise-rate-${combo.backend}`;
      await ctx.mq.limit(q, { rate: { max: 1, perMs: 60_000 } }, { perLane: true });
      await ctx.mq.enqueueMany(q, [{ n: "a0" }, { n: "a1" }, { n: "p0" }, { n: "p1" }], { lane: (p) => p.n[0] });
      // one job of each lane claimed (held), which spends its token: both parked for a minute
      const held = await ctx.mq.claimMany(q, 4, { leaseMs: 60_000 });
      expect(held.map((j) => (j as Job<P>).payload.n).sort()).toEqual(["a0", "p0"]);
      const parked = (await ctx.mq.lanes(q)).lanes.map((l) => l.parkedUntil ?? 0);
      expect(parked.every((t) => t > Date.now() + 50_000)).toBe(true);
      // p is also penalized for longer: not a park of the rate
      const until = await ctx.mq.penalize(q, 600_000, { lane: "p" });
      const seen = await afterRaise(q, () => ctx.mq.limit(q, { rate: { max: 100, perMs: 1000 } }, { perLane: true }), "per-lane rate 1/min → 100/s");
      expect(seen).toEqual(["a1"]);
      expect((await ctx.mq.lanes(q)).lanes.find((l) => l.name === "p")!.parkedUntil).toBe(until);
    });

    test("a lane's own limit raised while a worker waits (concurrency 1 → 5, rate 1/min → 100/s): the worker gets its job at once", async () => {
      for (
        const [name, old, raised] of [
          ["conc", { concurrency: 1 }, { concurrency: 5 }],
          ["rate", { rate: { max: 1, perMs: 60_000 } }, { rate: { max: 100, perMs: 1000 } }],
        ] as const
      ) {
        const q = `ln-own-${name}-${combo.backend}`;
        await ctx.mq.limit(q, old, { lane: "a" });
        await ctx.mq.enqueueMany(q, [{ n: "a0" }, { n: "a1" }], { lane: "a" });
        // a0 held: the lane is at its concurrency, or parked for a minute
        expect((await ctx.mq.claimMany(q, 2, { leaseMs: 60_000 })).map((j) => (j as Job<P>).payload.n)).toEqual(["a0"]);
        expect(await afterRaise(q, () => ctx.mq.limit(q, raised, { lane: "a" }), `lane ${name} raised`)).toEqual(["a1"]);
      }
    });

    test("a bad lane name is an EchoMQError naming the option, before any wire", async () => {
      const q = `ln-bad-${combo.backend}`;
      await ctx.mq.enqueue(q, { n: "there" }, { lane: "ok" });
      const before = await digest(ctx.raw, keyspace(q).meta);
      const bad: unknown[] = ["", "a{b", "a}b", "a\0b", "x".repeat(1025), 5, null];
      for (const lane of bad) {
        const calls: Array<[string, () => Promise<unknown>]> = [
          ["enqueue", () => ctx.mq.enqueue(q, { n: "x" }, { lane: lane as string })],
          ["schedule", () => ctx.mq.schedule(q, { n: "x" }, { delayMs: 10 }, { lane: lane as string })],
          ["submit", () => ctx.mq.submit(q, { n: "x" }, { lane: lane as string })],
          ["enqueueMany", () => ctx.mq.enqueueMany(q, [{ n: "x" }], { lane: lane as string })],
          ["pause", () => ctx.mq.pause(q, { lane: lane as string })],
          ["resume", () => ctx.mq.resume(q, { lane: lane as string })],
          ["penalize", () => ctx.mq.penalize(q, 1000, { lane: lane as string })],
          ["limit", () => ctx.mq.limit(q, { concurrency: 1 }, { lane: lane as string })],
          ["limits", () => ctx.mq.limits(q, { lane: lane as string })],
        ];
        for (const [what, call] of calls) {
          if (lane === null && (what === "limit" || what === "limits")) continue; // null: the default lane
          const e = await call().then(() => null, (x: unknown) => x);
          expect({ what, lane, error: e instanceof EchoMQError }).toEqual({ what, lane, error: true });
          expect((e as EchoMQError).rule).toBe("options");
          expect((e as Error).message).toStartWith(`${what}: lane: lane name`);
        }
      }
      // from a function: the batch stops at that job, nothing of it sent
      const e = await ctx.mq.enqueueMany(q, [{ n: "x" }, { n: "y" }], { lane: (p) => (p.n === "y" ? "a{b" : "x") })
        .then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(BatchError);
      expect((e as BatchError<P>).cause).toBeInstanceOf(EchoMQError);
      expect((e as BatchError<P>).unsent.length).toBe(2);
      expect(await digest(ctx.raw, keyspace(q).meta)).toBe(before);
    });
  });
}
