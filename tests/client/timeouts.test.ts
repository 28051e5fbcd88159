/**
 * Job timeouts and backoff helpers, for each backend on one server (client-only features, so the
 * cluster adds nothing): a handler past the worker's `timeoutMs` has its signal aborted with a
 * `JobTimeoutError`, the attempt fails with "timed out after <ms> ms" and follows retry and
 * burial; a handler that ignores the signal cannot settle afterwards; `exponential` and `fixed`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ, EchoMQError, exponential, fixed, JobOverdueError, JobTimeoutError, LeaseLostError } from "../../client.ts";
import { BACKENDS, eventually, type Site, startSite } from "./_harness.ts";

let site: Site;
beforeAll(async () => {
  site = await startSite("standalone");
}, 60_000);
afterAll(async () => {
  await site.stop();
});

for (const backend of BACKENDS) {
  describe(backend, () => {
    let mq: EchoMQ<{ n: number }>;
    beforeAll(async () => {
      mq = await EchoMQ.connect({ addresses: site.addresses, backend });
    });
    afterAll(async () => {
      await mq.close();
    });

    test("timeoutMs: the signal aborts with JobTimeoutError, the attempt fails, retries, then buries", async () => {
      const q = `to-${backend}`;
      const id = await mq.enqueue(q, { n: 1 });
      const reasons: unknown[] = [];
      const w = mq.work(q, (job) =>
        new Promise<void>((_, fail) => {
          job.signal.addEventListener("abort", () => {
            reasons.push(job.signal.reason);
            fail(job.signal.reason);
          });
        }), { timeoutMs: 150, maxAttempts: 2, backoff: fixed(10), blockMs: 100 });
      await eventually(async () => (await mq.getJob(q, id))?.state === "dead", 20_000);
      await w.stop();
      expect(reasons.length).toBe(2);
      expect(reasons.every((r) => r instanceof JobTimeoutError && r.timeoutMs === 150)).toBe(true);
      const dead = await mq.getJob(q, id);
      expect([dead!.attempts, dead!.reason]).toEqual([2, "timed out after 150 ms"]);
      expect([w.failed, w.buried, w.completed]).toEqual([2, 1, 0]);
      expect(w.overdue).toBe(0); // it returned at its signal: not overdue
    });

    test("a handler that ignores the signal cannot settle the job after its timeout; read late, the signal is aborted", async () => {
      const q = `to-ignore-${backend}`;
      const id = await mq.enqueue(q, { n: 1 });
      let late: unknown = "not settled";
      let seen: unknown[] = [];
      let done = false;
      const reports: unknown[] = [];
      const w = mq.work(q, async (job) => {
        if (job.attempts > 1) return;
        await new Promise((r) => setTimeout(r, 400)); // ignores the signal
        // its signal, first read after the timeout (the worker makes it on first use), is aborted
        seen = [job.signal.aborted, job.signal.reason];
        late = await mq.ack(job).then(() => null, (e: unknown) => e);
        done = true;
      }, { timeoutMs: 100, backoff: fixed(60_000), blockMs: 100, onError: (e) => reports.push(e) });
      await eventually(() => done, 20_000);
      await w.stop();
      expect([w.overdue, reports.length, reports[0] instanceof JobOverdueError]).toEqual([1, 1, true]);
      expect(late).toBeInstanceOf(LeaseLostError);
      expect(seen[0]).toBe(true);
      expect(seen[1]).toBeInstanceOf(JobTimeoutError);
      const row = await mq.getJob(q, id);
      expect([row!.state, row!.reason]).toEqual(["scheduled", "timed out after 100 ms"]);
    });

    test("concurrency 1: a handler that ignores its signal keeps its slot past its time limit (never 2 at once), reported once per job", async () => {
      const q = `to-slot-${backend}`;
      const n = 100;
      for (let i = 0; i < n; i++) await mq.enqueue(q, { n: i });
      let inFlight = 0;
      let most = 0;
      let returned = 0;
      const reports: unknown[] = [];
      const w = mq.work(q, async (job) => {
        inFlight++;
        most = Math.max(most, inFlight);
        // runs on after its signal aborts (at the time limit), ignoring it
        await new Promise((r) => job.signal.addEventListener("abort", r));
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        returned++;
      }, { concurrency: 1, timeoutMs: 5, maxAttempts: 1, blockMs: 100, onError: (e) => reports.push(e) });
      await eventually(async () => w.buried === n && returned === n, 60_000);
      await w.stop();
      expect(most).toBe(1);
      expect(w.overdue).toBe(n);
      expect(reports.length).toBe(n);
      expect(reports.every((e) => e instanceof JobOverdueError && e.timeoutMs === 5)).toBe(true);
      expect((await mq.counts(q)).dead).toBe(n);
    }, 90_000);
  });
}

test("backoff helpers: exponential with a cap and jitter, fixed; bad input is an EchoMQError (rule options)", () => {
  const e = exponential({ baseMs: 100, maxMs: 1000 });
  expect([1, 2, 3, 4, 5, 6].map((a) => e(a))).toEqual([100, 200, 400, 800, 1000, 1000]);
  expect(exponential()(3)).toBe(4000);
  const j = exponential({ baseMs: 1000, jitter: 0.5 });
  const draws = Array.from({ length: 200 }, () => j(1));
  expect(Math.min(...draws)).toBeGreaterThanOrEqual(500);
  expect(Math.max(...draws)).toBeLessThanOrEqual(1000);
  expect(new Set(draws).size).toBeGreaterThan(10);
  expect(fixed(250)()).toBe(250);
  expect(() => exponential({ baseMs: 0 })).toThrow(EchoMQError);
  expect(() => exponential({ jitter: 2 })).toThrow(/jitter must be a number from 0 to 1/);
  expect(() => fixed(Number.NaN)).toThrow(/fixed: delayMs must be an integer/);
});
