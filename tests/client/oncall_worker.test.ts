/**
 * On call through a worker (issue 37), for each backend × topology: a handler's `job.name`, its
 * `job.log` lines (kept, then read with `jobLogs`), and its throws kept with their stacks per
 * attempt (the worker's settles through SETTLE) — a timeout's too.
 */
import { describe, expect, test } from "bun:test";
import { COMBOS, eventually, useClient, useSites } from "./_harness.ts";

type P = { n: number };
const sites = useSites();
const FAST = { blockMs: 200 };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);

    test("a handler sees job.name", async () => {
      const q = `ow-name-${backend}`;
      await ctx.mq.enqueue(q, { n: 1 }, { name: "send-invoice" });
      let seen: string | undefined;
      const worker = ctx.mq.work(q, (job) => {
        seen = job.name;
      }, FAST);
      await eventually(() => seen !== undefined);
      await worker.stop();
      expect(seen).toBe("send-invoice");
    });

    test("a handler's logs and throws: each attempt's error with its stack, the log across attempts", async () => {
      const q = `ow-fail-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      const worker = ctx.mq.work(q, async (job) => {
        await job.log(`attempt ${job.attempts} starts`);
        if (job.attempts === 1) throw new RangeError("first try fails");
        if (job.attempts === 2) await new Promise((r) => setTimeout(r, 500)); // past its time limit
        throw new TypeError("gave up");
      }, { ...FAST, maxAttempts: 3, backoff: 1, timeoutMs: 100 });
      await eventually(async () => (await ctx.mq.counts(q)).dead === 1);
      await worker.stop();
      const j = (await ctx.mq.getJob(q, id))!;
      expect(j.failures!.map((f) => [f.attempt, f.name])).toEqual([[1, "RangeError"], [2, "JobTimeoutError"], [3, "TypeError"]]);
      expect(j.failures![0]!.stack).toContain("RangeError: first try fails\n    at ");
      expect((await ctx.mq.jobLogs(q, id)).lines).toEqual(["attempt 1 starts", "attempt 2 starts", "attempt 3 starts"]);
    });
  });
}
