/**
 * `mq.jobEvents(queue, id, { scan })` on each backend × topology: one job's events among the
 * newest `scan` entries of its queue's stream, newest first, as the verbs wrote them — the items
 * of batch entries that name it (its own attempt number), not the other jobs' — with how many
 * entries were searched and whether that was all the stream keeps; a bad `scan` or id is refused
 * before any wire.
 */
import { describe, expect, test } from "bun:test";
import { EchoMQError, type Job } from "../../client.ts";
import { COMBOS, counterIds, useClient, useSites } from "./_harness.ts";

const servers = useSites();

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo, { newId: counterIds(1) });

    test("its own items, newest first; bounded by scan", async () => {
      const q = `je-${combo.backend}`;
      const [a, b] = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }]);
      const [ja, jb] = (await ctx.mq.claimMany(q, 2, { leaseMs: 60_000 })) as Array<Job<{ n: number }>>;
      await ctx.mq.retry(jb!, { delayMs: 0, reason: "later" });
      await ctx.mq.ack(ja!, 1);
      const all = await ctx.mq.jobEvents(q, a!);
      expect(all.events.map((e) => [e.type, e.jobId, "attempts" in e ? e.attempts : null])).toEqual([
        ["completed", a, null],
        ["claimed", a, 1],
        ["enqueued", a, null],
      ]);
      expect([all.searched, all.complete]).toEqual([4, true]);
      expect((await ctx.mq.jobEvents(q, b!)).events.map((e) => e.type)).toEqual(["retried", "claimed", "enqueued"]);
      const newest = await ctx.mq.jobEvents(q, a!, { scan: 2 });
      expect(newest.events.map((e) => e.type)).toEqual(["completed"]);
      expect([newest.searched, newest.complete]).toEqual([2, false]);
      expect((await ctx.mq.jobEvents(q, "JOB99999999999")).events).toEqual([]);
      for (const scan of [0, 10_001, 1.5]) {
        await expect(ctx.mq.jobEvents(q, a!, { scan })).rejects.toBeInstanceOf(EchoMQError);
      }
      await expect(ctx.mq.jobEvents(q, "nope")).rejects.toThrow();
    }, 30_000);
  });
}
