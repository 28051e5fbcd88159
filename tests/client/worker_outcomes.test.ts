/**
 * How a worker settles, for each backend × topology, where the handler or a stop decides: a
 * hand-back at a stop's deadline is not a failed attempt (and says so on the row); a handler
 * throwing `UnrecoverableError` buries its job at once; a handler that settles its own job (ack,
 * retry, bury through the client) is not settled again; the backoff sees the error, and an error
 * carrying `retryDelayMs` sets the delay; the handler sees its lease deadline (`leaseUntil`),
 * moved on by each heartbeat; `close({ timeoutMs })` returns even when a handler never does; a
 * claim loop that makes no progress says so (`WorkerStalledError`).
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { type Job, RetryError, UnrecoverableError, Worker, type WorkerClient, WorkerStalledError } from "../../client.ts";
import { COMBOS, eventually, sleep, useClient, useSites } from "./_harness.ts";

const servers = useSites();
const FAST = { blockMs: 200 };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo);

    test("a hand-back at a stop's deadline is no failed attempt: not counted, RELEASEd (back in pending, the attempt given back)", async () => {
      const q = `wo-handback-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      let started = false;
      const first = ctx.mq.work(q, (job) =>
        new Promise<void>((done) => {
          started = true;
          job.signal.addEventListener("abort", () => done());
        }), { maxAttempts: 2, leaseMs: 60_000, ...FAST });
      await eventually(() => started);
      await first.stop({ timeoutMs: 50 });
      expect(first.failed).toBe(0);
      expect(first.handedBack).toBe(1);
      expect(await ctx.row(q, id, "state", "reason", "attempts")).toEqual(["pending", "null", "0"]);
      expect((await ctx.mq.stats(q)).retried).toBe(0);
      // the next claim is attempt 1 again: one real failure after the hand-back is retried, not buried
      const seen: number[] = [];
      const second = ctx.mq.work(q, (job) => {
        seen.push(job.attempts);
        throw new Error("real failure");
      }, { maxAttempts: 2, backoff: 1, ...FAST });
      await eventually(async () => (await ctx.mq.counts(q)).dead === 1);
      await second.stop();
      expect(seen).toEqual([1, 2]);
      expect(await ctx.row(q, id, "state", "reason")).toEqual(["dead", "Error: real failure"]);
    });

    test("UnrecoverableError buries at once, whatever attempts are left", async () => {
      const q = `wo-unrecoverable-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      const errors: unknown[] = [];
      const worker = ctx.mq.work(q, () => {
        throw new UnrecoverableError("bad address");
      }, { maxAttempts: 5, backoff: 1, onError: (e) => errors.push(e), ...FAST });
      await eventually(async () => (await ctx.mq.counts(q)).dead === 1);
      await worker.stop();
      expect(await ctx.row(q, id, "state", "reason", "attempts")).toEqual(["dead", "UnrecoverableError: bad address", "1"]);
      expect([worker.failed, worker.buried, worker.completed]).toEqual([1, 1, 0]);
      expect(errors).toEqual([]);
    });

    test("a handler that settles its own job (bury, ack, retry) is not settled again, without noise", async () => {
      const q = `wo-own-${backend}`;
      const [buried, acked, retried] = await ctx.mq.enqueueMany(q, [{ n: 0 }, { n: 1 }, { n: 2 }]);
      const errors: unknown[] = [];
      const worker = ctx.mq.work(q, async (job) => {
        if (job.payload.n === 0) await ctx.mq.bury(job, "handler says no");
        if (job.payload.n === 1) await ctx.mq.ack(job);
        if (job.payload.n === 2 && job.attempts === 1) {
          await ctx.mq.retry(job, { delayMs: 1, reason: "handler says later" });
          throw new Error("and throws too"); // already settled: ignored
        }
      }, { concurrency: 3, leaseMs: 30_000, onError: (e) => errors.push(e), ...FAST });
      await eventually(async () => {
        const c = await ctx.mq.counts(q);
        return c.dead === 1 && c.pending + c.active + c.schedule === 0;
      });
      await worker.stop();
      expect(errors).toEqual([]);
      expect(worker.lost).toBe(0);
      expect([worker.completed, worker.buried, worker.failed]).toEqual([2, 1, 2]);
      expect(await ctx.row(q, buried!, "state", "reason")).toEqual(["dead", "handler says no"]);
      // completed, each once (the default retention keeps them)
      expect(await ctx.mq.getJob(q, acked!)).toMatchObject({ state: "completed", attempts: 1 });
      expect(await ctx.mq.getJob(q, retried!)).toMatchObject({ state: "completed", attempts: 2 }); // retried once, then acked by the worker
      expect((await ctx.mq.counts(q)).completed).toBe(2);
    });

    test("the backoff sees the error; an error carrying retryDelayMs (RetryError) sets the delay", async () => {
      const q = `wo-delay-${backend}`;
      const [a, b, c] = await ctx.mq.enqueueMany(q, [{ n: 0 }, { n: 1 }, { n: 2 }]);
      const seen: string[] = [];
      const worker = ctx.mq.work(q, (job) => {
        if (job.payload.n === 0) throw new Error("plain");
        if (job.payload.n === 1) throw new RetryError("rate limited", { delayMs: 600_000 });
        throw Object.assign(new Error("own class"), { retryDelayMs: 300_000 });
      }, {
        concurrency: 3,
        maxAttempts: 3,
        backoff: (attempts, error) => {
          seen.push(`${attempts} ${(error as Error).message}`);
          return 120_000;
        },
        ...FAST,
      });
      const K = keyspace(q);
      await eventually(async () => Number(await ctx.raw.command(["ZCARD", K.schedule], K.meta)) === 3);
      await worker.stop();
      const due = async (id: string): Promise<number> => Number(await ctx.raw.command(["ZSCORE", K.schedule, id], K.meta)) - Date.now();
      expect(seen).toEqual(["1 plain"]); // an error with its own delay does not ask the backoff
      for (const [id, ms] of [[a!, 120_000], [b!, 600_000], [c!, 300_000]] as const) {
        const left = await due(id);
        expect(left).toBeGreaterThan(ms - 10_000);
        expect(left).toBeLessThanOrEqual(ms);
      }
    });

    test("the handler sees its lease deadline (job.leaseUntil, monotonic clock), moved on by each heartbeat", async () => {
      const q = `wo-lease-until-${backend}`;
      await ctx.mq.enqueue(q, { n: 1 });
      const marks: Array<[number, number]> = []; // [performance.now(), job.leaseUntil]
      let before = 0;
      const worker = ctx.mq.work(q, async (job) => {
        for (let i = 0; i < 4; i++) {
          marks.push([performance.now(), job.leaseUntil]);
          await sleep(250);
        }
      }, { leaseMs: 600, heartbeatMs: 200, ...FAST });
      before = performance.now();
      await eventually(() => worker.completed === 1, 10_000);
      await worker.stop();
      const [now0, until0] = marks[0]!;
      expect(until0).toBeGreaterThan(now0); // not run out
      expect(until0).toBeLessThanOrEqual(now0 + 600);
      expect(until0).toBeGreaterThan(before - 1000);
      expect(marks.at(-1)![1]).toBeGreaterThan(until0); // extended
      for (const [now, until] of marks) expect(until).toBeGreaterThan(now);
    });

    test("close({ timeoutMs }) returns although a handler never settles; its job is handed back", async () => {
      const other = await ctx.connect<{ n: number }>();
      const q = `wo-close-deadline-${backend}`;
      const id = await other.enqueue(q, { n: 1 });
      let started = false;
      other.work(q, () => {
        started = true;
        return new Promise<void>(() => {}); // never settles, ignores its signal
      }, { leaseMs: 60_000, ...FAST });
      await eventually(() => started);
      const t0 = performance.now();
      await other.close({ timeoutMs: 100 });
      const took = performance.now() - t0;
      expect(took).toBeLessThan(3000);
      expect(await ctx.row(q, id, "state", "reason", "attempts")).toEqual(["pending", "null", "0"]);
      await expect(other.enqueue(q, { n: 2 })).rejects.toMatchObject({ rule: "closed" });
    });
  });
}

describe("watchdog", () => {
  test("a claim that never comes back is reported as a stall, and the claim connection is made again", async () => {
    let lines = 0;
    let closed = 0;
    const hung: WorkerClient<unknown> = {
      backend: "scripts",
      dedicated: () => {
        lines++;
        return Promise.resolve({
          claim: () => new Promise(() => {}),
          wake: () => sleep(5),
          unblock: () => Promise.resolve(),
          close: () => void closed++,
        });
      },
      settleMany: () => Promise.resolve([]),
      extend: () => Promise.resolve(),
      progress: () => Promise.resolve(),
      reap: () => Promise.resolve(0),
    };
    const errors: unknown[] = [];
    const worker = new Worker<unknown>(hung, "q", () => {}, { blockMs: 200, onError: (e) => errors.push(e) }, () => {});
    try {
      await eventually(() => errors.length > 0 && lines >= 2, 8000);
    } finally {
      await worker.stop();
    }
    expect(errors[0]).toBeInstanceOf(WorkerStalledError);
    expect((errors[0] as Error).message).toMatch(
      /^worker "q": no progress for \d+ ms: the claim loop is waiting for a CLAIM reply \(its connection is made again\)$/,
    );
    expect(closed).toBeGreaterThanOrEqual(1);
    expect(worker.running).toBe(false);
  });

  test("a settle that never comes back is given up: its slot frees and claims go on", async () => {
    let claims = 0;
    const errors: unknown[] = [];
    const job = (n: number): Job<unknown> => ({ id: `JOB0000000000${n % 10}` as never, queue: "q", token: n + 1, attempts: 1, payload: n });
    const stuck: WorkerClient<unknown> = {
      backend: "scripts",
      dedicated: () =>
        Promise.resolve({
          claim: () => Promise.resolve({ nextMs: 0, jobs: claims < 3 ? [job(claims++)] : [] }),
          wake: () => sleep(20),
          unblock: () => Promise.resolve(),
          close: () => {},
        }),
      settleMany: () => new Promise(() => {}),
      extend: () => Promise.resolve(),
      progress: () => Promise.resolve(),
      reap: () => Promise.resolve(0),
    };
    const worker = new Worker<unknown>(stuck, "q", () => {}, { blockMs: 200, onError: (e) => errors.push(e) }, () => {});
    try {
      await eventually(() => claims === 3 && errors.length > 0, 8000);
    } finally {
      await worker.stop({ timeoutMs: 100 });
    }
    expect(errors[0]).toBeInstanceOf(WorkerStalledError);
    expect((errors[0] as Error).message).toMatch(
      /^worker "q": no progress for \d+ ms: a settle of \d+ jobs? ha(s|ve) not come back \(given up: the lease runs out on the server\)$/,
    );
    expect(worker.completed).toBe(0);
  });
});
