/**
 * On call (issue 37), for each backend × topology. Job names: `enqueue`, `schedule`, `submit` and
 * `enqueueMany` (one name, or one per item) carry `name`, a job option kept on the row; the
 * handler sees `job.name`, `getJob` and pages return it; a bad name is refused before any wire
 * (the name rule), and by the server with nothing written; 10,000 distinct names cost nothing but
 * their rows.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, type Job } from "../../client.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { COMBOS, digest, eventually, useClient, useSites, wire } from "./_harness.ts";

type P = { n: number };
const sites = useSites();
const FAST = { blockMs: 200 };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);

    test("names: enqueue, schedule, submit and enqueueMany carry them; claims, the handler, getJob and pages see them", async () => {
      const q = `oc-names-${backend}`;
      const a = await ctx.mq.enqueue(q, { n: 1 }, { name: "send-invoice" });
      const b = await ctx.mq.enqueue(q, { n: 2 });
      const s = await ctx.mq.schedule(q, { n: 3 }, { delayMs: 3_600_000 }, { name: "nightly report", lane: "t1" });
      const sub = await ctx.mq.submit(q, { n: 4 }, { name: "sub", dedup: { key: "k4" } });
      const many = await ctx.mq.enqueueMany(q, [{ n: 5 }, { n: 6 }, { n: 7 }], { name: (p) => p.n === 6 ? undefined : `item-${p.n}` });
      const same = await ctx.mq.enqueueMany(q, [{ n: 8 }], { name: "all" });
      expect((await ctx.mq.getJob(q, a))!.name).toBe("send-invoice");
      expect((await ctx.mq.getJob(q, b))!.name).toBeUndefined();
      expect("name" in (await ctx.mq.getJob(q, b))!).toBe(false);
      const sj = (await ctx.mq.getJob(q, s))!;
      expect([sj.name, sj.lane, sj.state]).toEqual(["nightly report", "t1", "scheduled"]);
      expect((await ctx.mq.getJob(q, sub.id))!.name).toBe("sub");
      expect(await Promise.all(many.map(async (id) => (await ctx.mq.getJob(q, id))!.name))).toEqual(["item-5", undefined, "item-7"]);
      expect((await ctx.mq.getJob(q, same[0]!))!.name).toBe("all");
      const page = await ctx.mq.jobs(q, "pending", { limit: 100 });
      expect(new Map(page.map((j) => [j.payload?.n, j.name]))).toEqual(
        new Map<number | undefined, string | undefined>([[1, "send-invoice"], [2, undefined], [4, "sub"], [5, "item-5"], [6, undefined], [
          7,
          "item-7",
        ], [8, "all"]]),
      );
      // a claim hands the name back; a worker's handler sees it
      const claimed = (await ctx.mq.claim(q, { leaseMs: 60_000 }))! as Job<P>;
      expect([claimed.payload.n, claimed.name]).toEqual([1, "send-invoice"]);
      await ctx.mq.ack(claimed);
      const seen = new Map<number, string | undefined>();
      const worker = ctx.mq.work(q, (job) => {
        seen.set(job.payload.n, job.name);
      }, FAST);
      await eventually(() => seen.size === 6);
      await worker.stop();
      expect(seen.get(2)).toBeUndefined();
      expect(seen.get(4)).toBe("sub");
      expect(seen.get(5)).toBe("item-5");
      expect(seen.get(8)).toBe("all");
    });

    test("a bad name is refused before any wire (the name rule), and by the server with nothing written", async () => {
      const q = `oc-badname-${backend}`;
      for (const name of ["", "a}b", "{x", "a\0b", "n".repeat(1025), 42 as unknown as string]) {
        const e = await ctx.mq.enqueue(q, { n: 1 }, { name }).then(() => null, (e: unknown) => e);
        expect(e).toBeInstanceOf(EchoMQError);
        expect((e as EchoMQError).rule).toBe("options");
        expect((e as Error).message).toContain("enqueue: name: job name");
      }
      const many = await ctx.mq.enqueueMany(q, [{ n: 1 }], { name: () => "x}" }).then(() => null, (e: unknown) => e);
      expect(many).not.toBeNull();
      expect(await ctx.mq.counts(q)).toMatchObject({ pending: 0 });
      // the server's own gate: the option's value through the name rule
      const ks = keyspace(q);
      const before = await digest(ctx.raw, ks.meta);
      const out = await wire(ctx.raw, backend, "ENQUEUE", [ks.meta], ["JOB00000000001", "name=a}b", "p"]);
      expect(out).toEqual({ err: renderRefusal("name", "EMQ.ENQUEUE", { arg: "name", max: "1024" }) });
      expect(await digest(ctx.raw, ks.meta)).toBe(before);
    });

    test("10,000 distinct names: each kept on its own row, nothing else grows", async () => {
      const q = `oc-manynames-${backend}`;
      const items = Array.from({ length: 10_000 }, (_, n) => ({ n }));
      const ids = await ctx.mq.enqueueMany(q, items, { name: (p) => `name-${p.n}` });
      expect(ids.length).toBe(10_000);
      for (const i of [0, 4_321, 9_999]) expect((await ctx.mq.getJob(q, ids[i]!))!.name).toBe(`name-${i}`);
      const ks = keyspace(q);
      // the queue's keys are its rows and the usual structures: no index per name
      const scan = await ctx.raw.command(["SCAN", "0", "MATCH", `${ks.base}*`, "COUNT", "100000"], ks.meta);
      const keys = ((scan as unknown[])[1] as unknown[]).map(String).filter((k) => !k.includes(":job:"));
      expect(keys.sort()).toEqual([ks.meta, ks.pending, ks.events, ks.wake].sort());
    });
  });
}
