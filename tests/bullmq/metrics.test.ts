/**
 * BullMQ's `getMetrics` and `exportPrometheusMetrics` on EchoMQ's per-minute history (issue 41),
 * for each backend × topology: a BullMQ `Worker` completes and fails jobs, the counts come back as
 * BullMQ's series (newest minute first, sliced like LRANGE), and older minutes of the history sit at
 * their place in it.
 */
import { describe, expect, test } from "bun:test";
import { lrange } from "../../lib/bullmq/metrics.ts";
import { useBull } from "./_bull.ts";
import { COMBOS, eventually, useSites } from "../client/_harness.ts";

const sites = useSites();
let n = 0;
const fresh = (what: string): string => `bqm-${what}-${++n}`;
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

test("lrange: Redis' LRANGE bounds", () => {
  expect(lrange(5, 0, -1)).toEqual([0, 4]);
  expect(lrange(5, 1, 2)).toEqual([1, 2]);
  expect(lrange(5, -2, -1)).toEqual([3, 4]);
  expect(lrange(5, 3, 99)).toEqual([3, 4]);
  expect(lrange(5, -99, 0)).toEqual([0, 0]);
  expect(lrange(5, 5, 9)).toBeNull();
  expect(lrange(5, 3, 1)).toBeNull();
  expect(lrange(0, 0, -1)).toBeNull();
});

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);
    const { queue, worker } = bull;

    test("a Worker's completions and failures are getMetrics('completed') and ('failed'); Prometheus reads their totals", async () => {
      const name = fresh("counts");
      const q = queue(name);
      expect(await q.getMetrics("completed")).toEqual({ meta: { count: 0, prevTS: 0, prevCount: 0 }, data: [], count: 0 });
      await q.addBulk([0, 1, 2, 3, 4].map((i) => ({ name: "j", data: { i }, opts: { attempts: 1 } })));
      worker(name, async (job) => {
        if (job.data.i >= 3) throw new Error("no");
        return job.data.i;
      });
      await eventually(async () => {
        const c = await q.getJobCounts("completed", "failed");
        return c.completed === 3 && c.failed === 2;
      });
      const done = await q.getMetrics("completed");
      const failed = await q.getMetrics("failed");
      expect(done.meta.count).toBe(3);
      expect(failed.meta.count).toBe(2);
      expect(sum(done.data)).toBe(3); // one minute, or two when the run crossed a minute
      expect(sum(failed.data)).toBe(2);
      expect(done.count).toBe(done.data.length);
      expect(done.count).toBeGreaterThanOrEqual(1);
      expect((await q.getMetrics("completed", 0, 0)).data.length).toBe(1);
      const text = await q.exportPrometheusMetrics();
      expect(text).toContain(`bullmq_job_completed_total{queue="${name}"} 3`);
      expect(text).toContain(`bullmq_job_failed_total{queue="${name}"} 2`);
    });

    test("the series runs from the current minute back to the history's oldest, newest first, sliced like LRANGE", async () => {
      const name = fresh("series");
      const q = queue(name);
      const raw = sites.raws.get(combo.topology)!;
      const key = `emq:{${name}}:metrics`;
      const minute = async (): Promise<number> => {
        const [s] = (await raw.command(["TIME"], key)) as unknown[];
        return Math.floor(Number(String(s)) / 60);
      };
      // a minute that turns between the write and the read shifts the series by one: try again then
      for (;;) {
        const now = await minute();
        await raw.command(["HSET", key, "first", String(now - 5), "last", String(now - 3), String(now - 3), "4 1 0", String(now - 5), "2 0 7"], key);
        const all = await q.getMetrics("completed");
        const failed = await q.getMetrics("failed", 2, 3);
        const tail = await q.getMetrics("completed", -2, -1);
        if ((await minute()) !== now) continue;
        expect(all.data).toEqual([0, 0, 0, 4, 0, 2]);
        expect(all.count).toBe(6);
        expect(failed.data).toEqual([0, 1]);
        expect(failed.count).toBe(6);
        expect(tail.data).toEqual([0, 2]);
        break;
      }
      await bull.mq.retain(name, { historyMinutes: 2 });
      expect((await q.getMetrics("completed")).data.length).toBeLessThanOrEqual(2); // bounded by historyMinutes
    });
  });
}
