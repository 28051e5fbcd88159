/**
 * History in Valkey (issue 37.5), for each backend × topology: the settles themselves (ACK,
 * RETRY, BURY, SETTLE) count what they did per minute in `emq:{q}:metrics`, so a client that was
 * not there — a dashboard restarted, another process — reads the same minutes with `mq.metrics`.
 * The window is `retain`'s `historyMinutes` (default a day): the first settle of a new minute
 * deletes the minutes that left it (a minute already written skips the check); 0 turns the history
 * off and deletes it. A `metrics` key of the
 * wrong type refuses the settle, writing nothing.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { type Job } from "../../client.ts";
import { COMBOS, digest, entries, eventually, rejection, useClient, useSites } from "./_harness.ts";

type P = { n: number };
const sites = useSites();
const MINUTE = 60_000;
const FAST = { blockMs: 200, backoff: 0 };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);
    const claimOne = async (q: string): Promise<Job<P>> => (await ctx.mq.claim(q, { leaseMs: 60_000 }))! as Job<P>;
    const total = (minutes: ReadonlyArray<{ processed: number; failed: number; retried: number }>) =>
      minutes.reduce((t, m) => ({ processed: t.processed + m.processed, failed: t.failed + m.failed, retried: t.retried + m.retried }), {
        processed: 0,
        failed: 0,
        retried: 0,
      });

    test("a worker's drain is counted per minute by its settles; another client reads the same minutes", async () => {
      const q = `hist-drain-${backend}`;
      await ctx.mq.enqueueMany(q, Array.from({ length: 30 }, (_, n) => ({ n })));
      // n % 3: 0 completes, 1 fails once then completes, 2 fails for good
      const worker = ctx.mq.work(q, (job) => {
        if (job.payload.n % 3 === 2) throw new Error("for good");
        if (job.payload.n % 3 === 1 && job.attempts === 1) throw new Error("once");
      }, { ...FAST, maxAttempts: 2, concurrency: 4 });
      await eventually(async () => {
        const c = await ctx.mq.counts(q);
        return c.completed === 20 && c.dead === 10;
      });
      await worker.stop();
      const read = await ctx.mq.metrics(q, { minutes: 3 });
      expect(read.historyMinutes).toBe(1440);
      expect(read.minutes.length).toBe(3);
      expect(read.minutes[2]!.at).toBe(Math.floor(read.minutes[2]!.at / MINUTE) * MINUTE);
      expect(read.minutes[2]!.at - read.minutes[0]!.at).toBe(2 * MINUTE);
      // failed for good twice: one retry each, then the bury
      expect(total(read.minutes)).toEqual({ processed: 20, failed: 10, retried: 20 });
      // every settle's job in both histograms
      expect([read.latency.run.count, read.latency.wait.count]).toEqual([50, 50]);
      expect(read.latency.run.counts.length).toBe(read.latency.run.boundsMs.length + 1);
      const other = await ctx.connect<P>();
      try {
        expect(await other.metrics(q, { minutes: 3 })).toEqual(read);
      } finally {
        await other.close();
      }
      expect(await rejection(ctx.mq.metrics(q, { minutes: 0 }))).toBeInstanceOf(Error);
      expect(await rejection(ctx.mq.metrics(q, { minutes: 10081 }))).toBeInstanceOf(Error);
    });

    test("the window: a new minute deletes the minutes past it; 0 turns history off and deletes it", async () => {
      const q = `hist-trim-${backend}`;
      const K = keyspace(q);
      const cmd = (...args: string[]) => ctx.raw.command(args, K.meta);
      await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
      await ctx.mq.retain(q, { historyMinutes: 3 });
      await ctx.mq.ack(await claimOne(q));
      const [now] = (await ctx.mq.metrics(q, { minutes: 1 })).minutes;
      const m = now!.at / MINUTE;
      // as if the queue had settled jobs for the ten minutes before this one
      const old = Array.from({ length: 10 }, (_, k) => m - 10 + k);
      await cmd("DEL", K.metrics);
      await cmd("HSET", K.metrics, ...old.flatMap((x) => [String(x), "1 0 0"]), "last", String(m - 1), "first", String(m - 10));
      await ctx.mq.ack(await claimOne(q));
      const h = Object.fromEntries(entries(await cmd("HGETALL", K.metrics)));
      // a minute rolled over meanwhile: the window moved on, the same rule holds
      const mm = Number(h.last);
      expect(mm === m || mm === m + 1).toBe(true);
      expect(Number(h.first)).toBe(mm - 2);
      const minutes = Object.keys(h).filter((f) => /^\d+$/.test(f)).map(Number).sort();
      expect(minutes.every((x) => x > mm - 3 && x <= mm)).toBe(true);
      expect(h[String(mm)]).toBe("1 0 0");
      // a minute already written skips the window's check: one read and one write a settle
      await cmd("HSET", K.metrics, String(mm - 2), "9 9 9");
      await ctx.mq.ack(await claimOne(q));
      const later = Object.fromEntries(entries(await cmd("HGETALL", K.metrics)));
      if (later.last === h.last) expect([later[String(mm - 2)], later[String(mm)]]).toEqual(["9 9 9", "2 0 0"]);
      // off: the history deleted, settles write none
      await ctx.mq.retain(q, { historyMinutes: 0 });
      expect(await cmd("EXISTS", K.metrics)).toBe(0);
      await ctx.mq.bury(await claimOne(q), "no");
      expect(await cmd("EXISTS", K.metrics)).toBe(0);
      expect((await ctx.mq.metrics(q, { minutes: 2 })).historyMinutes).toBe(0);
      await ctx.mq.retain(q, { historyMinutes: 1440 });
    });

    test("latency: a job's wait from its admission (or due time) to its claim, its run from its claim to its settle", async () => {
      const q = `hist-lat-${backend}`;
      const K = keyspace(q);
      const id = await ctx.mq.enqueue(q, { n: 1 });
      // as if admitted 100 s ago: its wait falls in the bucket up to 300 s
      const [s] = (await ctx.raw.command(["TIME"], K.meta)) as unknown[];
      await ctx.raw.command(["HSET", K.job(id as never), "created_ms", String(Number(String(s)) * 1000 - 100_000)], K.meta);
      await ctx.mq.ack(await claimOne(q));
      const { wait, run } = (await ctx.mq.metrics(q, { minutes: 1 })).latency;
      const at = (ms: number) => wait.boundsMs.indexOf(ms);
      expect(wait.counts.map((c, i) => (c > 0 ? i : -1)).filter((i) => i >= 0)).toEqual([at(300_000)]);
      expect(wait.sumMs).toBeGreaterThanOrEqual(100_000);
      expect(run.count).toBe(1);
      expect(run.counts.findIndex((c) => c > 0)).toBeLessThanOrEqual(at(1000)); // acked at once: within a second
    });

    test("a metrics key of the wrong type refuses the settle, writing nothing", async () => {
      const q = `hist-wrong-${backend}`;
      const K = keyspace(q);
      await ctx.mq.enqueue(q, { n: 1 });
      const job = await claimOne(q);
      await ctx.raw.command(["SET", K.metrics, "x"], K.meta);
      const before = await digest(ctx.raw, K.meta);
      const e = await rejection(ctx.mq.ack(job));
      expect(String(e)).toContain("WRONGTYPE");
      expect(await digest(ctx.raw, K.meta)).toBe(before);
      await ctx.raw.command(["DEL", K.metrics], K.meta);
      await ctx.mq.ack(job);
      expect(total((await ctx.mq.metrics(q, { minutes: 2 })).minutes).processed).toBe(1);
    });
  });
}
