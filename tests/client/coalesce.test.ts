/**
 * One-job admissions coalesced (issue 39.2), for each backend × topology: calls of `enqueue`,
 * `submit` and `schedule` made while others are in flight go as few commands, in call order per
 * queue, each answered for itself — its own id, its own dedup outcome, its own refusal (a refused
 * job never fails its neighbours); a lone call is one command of one job.
 */
import { describe, expect, test } from "bun:test";
import { type JobId, keyspace } from "../../mod.ts";
import { DuplicateIdError, type EchoMQ } from "../../client.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { COMBOS, useClient, useSites } from "./_harness.ts";

const sites = useSites();

/** Admission commands the queue's node ran so far (EMQ.ENQUEUE/SCHEDULE, or the scripts' FCALL/EVALSHA/EVAL). */
async function admissions(raw: Connection, q: string): Promise<number> {
  const info = String(await raw.command(["INFO", "commandstats"], keyspace(q).meta));
  let n = 0;
  for (const m of info.matchAll(/^cmdstat_(emq\.enqueue|emq\.schedule|fcall|evalsha|eval):calls=(\d+)/gm)) n += Number(m[2]);
  return n;
}

/** Pending ids in claim order (the tail of the list is claimed first). */
async function pendingOrder(raw: Connection, q: string): Promise<string[]> {
  return ((await raw.command(["LRANGE", keyspace(q).pending, "0", "-1"], keyspace(q).meta)) as unknown[]).map(String).reverse();
}

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const s = useClient<{ n: number }>(sites, combo);
    const mq = (): EchoMQ<{ n: number }> => s.mq;

    test("500 enqueues in flight go as a few commands, in call order, each with its own id", async () => {
      const q = `co-many-${combo.backend}`;
      await mq().enqueue(q, { n: -1 }); // the script loaded and the route learnt
      const before = await admissions(s.raw, q);
      const ids = await Promise.all(Array.from({ length: 500 }, (_, n) => mq().enqueue(q, { n })));
      const commands = (await admissions(s.raw, q)) - before;
      expect(new Set(ids).size).toBe(500);
      expect(commands).toBeGreaterThan(0);
      expect(commands).toBeLessThanOrEqual(10); // one per job without coalescing: 500
      expect((await pendingOrder(s.raw, q)).slice(1)).toEqual(ids);
    });

    test("a lone enqueue is one command of one job", async () => {
      const q = `co-one-${combo.backend}`;
      await mq().enqueue(q, { n: 0 });
      const before = await admissions(s.raw, q);
      const id = await mq().enqueue(q, { n: 1 });
      expect((await admissions(s.raw, q)) - before).toBe(1);
      expect((await pendingOrder(s.raw, q))[1]).toBe(id);
    });

    test("a refused job fails alone: its neighbours land, in order", async () => {
      const q = `co-refused-${combo.backend}`;
      const taken = "JOB0000000000T" as JobId;
      await mq().enqueue(q, { n: 0 }, { id: taken });
      const calls = Array.from({ length: 20 }, (_, n) => mq().enqueue(q, { n }, n === 7 ? { id: taken } : undefined));
      const settled = await Promise.allSettled(calls);
      const refused = settled.flatMap((r, i) => r.status === "rejected" ? [[i, r.reason]] : []);
      expect(refused.length).toBe(1);
      expect(refused[0]![0]).toBe(7);
      expect(refused[0]![1]).toBeInstanceOf(DuplicateIdError);
      const landed = settled.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
      expect(landed.length).toBe(19);
      expect((await pendingOrder(s.raw, q)).slice(1)).toEqual(landed);
    });

    test("two calls giving one id in one tick: the first lands, the second is a duplicate", async () => {
      const q = `co-twice-${combo.backend}`;
      const id = "JOB0000000000W" as JobId;
      const [a, b] = await Promise.allSettled([mq().enqueue(q, { n: 1 }, { id }), mq().enqueue(q, { n: 2 }, { id })]);
      expect(a).toEqual({ status: "fulfilled", value: id });
      expect(b.status === "rejected" && b.reason instanceof DuplicateIdError).toBe(true);
      expect(await s.row(q, id, "payload")).toEqual(['{"n":1}']);
    });

    test("racing submits of one dedup key in one command: one admitted, the rest answered with its id", async () => {
      const q = `co-dedup-${combo.backend}`;
      const outs = await Promise.all(Array.from({ length: 10 }, (_, n) => mq().submit(q, { n }, { dedup: { key: "k" } })));
      const admitted = outs.filter((o) => o.outcome === "admitted");
      expect(admitted.length).toBe(1);
      expect(outs[0]).toEqual(admitted[0]!); // call order: the first call is the holder
      for (const o of outs.slice(1)) expect(o).toEqual({ id: admitted[0]!.id, outcome: "deduplicated" });
      expect((await mq().counts(q)).pending).toBe(1);
    });

    test("enqueues and schedules in one tick: each its own verb, each answered", async () => {
      const q = `co-mixed-${combo.backend}`;
      const at = Date.now() + 3_600_000;
      const [e1, s1, e2, s2] = await Promise.all([
        mq().enqueue(q, { n: 1 }),
        mq().schedule(q, { n: 2 }, { at }),
        mq().enqueue(q, { n: 3 }),
        mq().schedule(q, { n: 4 }, { at }),
      ]);
      expect(await pendingOrder(s.raw, q)).toEqual([e1, e2]);
      const counts = await mq().counts(q);
      expect(counts.schedule).toBe(2);
      expect(new Set([e1, s1, e2, s2]).size).toBe(4);
    });
  });
}
