/**
 * Typed queue handles, for each backend × topology: one client serves queues of different payload
 * types through `mq.queue<P>(name)`; each handle's calls are the client's on that queue (enqueue,
 * enqueueMany, schedule, work, counts, stats, getJob, jobs, remove, pause / resume); a Date sent as
 * JSON comes back a string, as the type says. A handle typed by its results too (`mq.queue<P, R>`)
 * gets its handler's value back from `result` and `enqueue` with `wait`, as JSON gives it; a flow
 * parent's handle typed by its children's results (`mq.queue<P, R, C>`) reads them from
 * `job.children()`, `children(id)` and `getJob`, as JSON gives them.
 */
import { describe, expect, test } from "bun:test";
import { COMBOS, eventually, useClient, useSites } from "./_harness.ts";

const servers = useSites();

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<unknown>(servers, combo);

    test("two handles, two payload types, one client", async () => {
      const mail = ctx.mq.queue<{ to: string }>(`qh-mail-${backend}`);
      const bills = ctx.mq.queue<{ amount: number; at: Date }>(`qh-bills-${backend}`);
      expect(mail.name).toBe(`qh-mail-${backend}`);
      const at = new Date("2026-12-01T10:00:00.000Z");
      const [b1] = await bills.enqueueMany([{ amount: 12, at }, { amount: 30, at }]);
      const m1 = await mail.enqueue({ to: "ada@example.com" });
      const later = await mail.schedule({ to: "later@example.com" }, { delayMs: 600_000 });
      expect(await mail.counts()).toEqual({ pending: 1, active: 0, schedule: 1, dead: 0, completed: 0, waitingChildren: 0 });
      expect((await bills.getJob(b1!))?.payload).toEqual({ amount: 12, at: "2026-12-01T10:00:00.000Z" });
      expect((await mail.jobs("pending")).map((j) => j.payload?.to)).toEqual(["ada@example.com"]);
      expect(await mail.remove(later)).toBe(true);
      expect(await bills.pause()).toBe(true);
      expect(await bills.isPaused()).toBe(true);
      const seen: string[] = [];
      const w1 = bills.work((job) => void seen.push(`${job.payload.amount} ${job.payload.at.slice(0, 10)}`), { concurrency: 2, blockMs: 200 });
      const w2 = mail.work((job) => void seen.push(job.payload.to), { blockMs: 200 });
      await eventually(() => seen.length === 1);
      expect(seen).toEqual(["ada@example.com"]); // bills is paused
      expect((await bills.counts()).pending).toBe(2);
      expect(await bills.resume()).toBe(true);
      await eventually(() => seen.length === 3);
      await Promise.all([w1.stop(), w2.stop()]);
      expect(seen.slice(1).sort()).toEqual(["12 2026-12-01", "30 2026-12-01"]);
      expect((await bills.stats()).acked).toBe(2);
      // acked: kept as completed (the default retention), without a result (the handler returned nothing)
      const done = await mail.getJob(m1);
      expect(done).toMatchObject({ state: "completed", attempts: 1, payload: { to: "ada@example.com" } });
      expect(done).not.toHaveProperty("result");
    });

    test("a handle typed by its results: the handler's value back from result() and enqueue's wait", async () => {
      const sizes = ctx.mq.queue<{ path: string }, { bytes: number; at: Date }>(`qh-sizes-${backend}`);
      const at = new Date("2026-12-01T10:00:00.000Z");
      const worker = sizes.work(async (job) => ({ bytes: job.payload.path.length, at }), { blockMs: 200 });
      try {
        const { id, result } = await sizes.enqueue({ path: "a.png" }, { wait: { timeoutMs: 30_000 } });
        const bytes: number = result.bytes;
        const when: string = result.at; // a Date comes back a string, as the type says
        expect([bytes, when]).toEqual([5, "2026-12-01T10:00:00.000Z"]);
        const again = await sizes.result(id);
        expect(again).toEqual({ bytes: 5, at: "2026-12-01T10:00:00.000Z" });
        expect(await ctx.mq.result(sizes.name, id)).toEqual(again); // the untyped call: the same value, `unknown`
      } finally {
        await worker.stop();
      }
    });

    test("a parent's handle typed by its children's results: job.children(), children(id) and getJob give them as JSON does", async () => {
      type Sum = { region: string; sum: number; at: Date };
      const sums = ctx.mq.queue<{ region: string }, Sum>(`qh-sums-${backend}`);
      const reports = ctx.mq.queue<{ month: string }, { total: number; at: string[] }, Sum>(`qh-reports-${backend}`);
      const at = new Date("2026-12-01T10:00:00.000Z");
      const children = sums.work((job) => ({ region: job.payload.region, sum: job.payload.region.length, at }), { blockMs: 200, relay: true });
      const parents = reports.work(async (job) => {
        const kids = await job.children();
        const stamps: string[] = kids.map((k) => k.result!.at); // a Date comes back a string, as the type says
        return { total: kids.reduce((n, k) => n + (k.result?.sum ?? 0), 0), at: stamps };
      }, { blockMs: 200, relay: true });
      try {
        const tree = await ctx.mq.flow({
          queue: reports.name,
          payload: { month: "2026-11" },
          children: [{ queue: sums.name, payload: { region: "eu" } }, { queue: sums.name, payload: { region: "asia" } }],
        });
        const stamp = "2026-12-01T10:00:00.000Z";
        expect(await reports.result(tree.id, { timeoutMs: 30_000 })).toEqual({ total: 6, at: [stamp, stamp] });
        const kids = await reports.children(tree.id);
        const regions: Array<string | undefined> = kids.map((k) => k.result?.region);
        expect(regions).toEqual(["eu", "asia"]);
        expect(kids.map((k) => [k.state, k.result?.sum, k.result?.at])).toEqual([["completed", 2, stamp], ["completed", 4, stamp]]);
        const info = await reports.getJob(tree.id);
        const total: number | undefined = info?.result?.total;
        expect(total).toBe(6);
        expect(info?.children?.map((k) => k.result?.at)).toEqual([stamp, stamp]);
      } finally {
        await Promise.all([children.stop(), parents.stop()]);
      }
    });
  });
}
