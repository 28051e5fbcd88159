/**
 * Deduplication, throttle, debounce and per-job timeouts (wire 7's job options), for each backend ×
 * topology: a held key admits nothing and answers the holder's id; settling, burying and removing
 * let the key go (at once, or when the window ends); a window holds after the job settled
 * (throttle) and never admits two jobs closer than it; a debounced burst runs once with the last
 * payload, at the last due time; racing producers of one key get one job; the state is empty once
 * the jobs settled and the windows passed; bad options are refused before any wire (and raw,
 * by the server, with nothing written); a job's own timeout fails its attempt.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type JobId, keyspace } from "../../mod.ts";
import { EchoMQ, EchoMQError, type Job } from "../../client.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { BACKENDS, comboName, digest, eventually, sleep, TOPOLOGIES, useSites, wire, wireArgv, wireBatch } from "./_harness.ts";

const { sites, raws } = useSites();

/** Server time in ms (TIME), through the queue's node. */
async function serverNow(raw: Connection, q: string): Promise<number> {
  const [s, us] = (await raw.command(["TIME"], keyspace(q).meta)) as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

for (const topology of TOPOLOGIES) {
  for (const backend of BACKENDS) {
    describe(comboName(backend, topology), () => {
      let mq: EchoMQ<{ n: number }>;
      let raw: Connection;
      const connect = () => {
        const site = sites.get(topology)!;
        return EchoMQ.connect<{ n: number }>({ addresses: site.addresses, cluster: site.cluster, backend });
      };
      beforeAll(async () => {
        raw = raws.get(topology)!;
        mq = await connect();
      });
      afterAll(async () => {
        await mq.close();
      });
      const hlen = async (q: string) => Number(await raw.command(["HLEN", keyspace(q).dedup], keyspace(q).meta));
      const exists = async (key: string, q: string) => Number(await raw.command(["EXISTS", key], keyspace(q).meta));

      test("a held key admits nothing and answers the holder; ACK, BURY and REMOVE let it go", async () => {
        const q = `dd-hold-${backend}`;
        const first = await mq.submit(q, { n: 1 }, { dedup: { key: "order-42" } });
        expect(first.outcome).toBe("admitted");
        const again = await mq.submit(q, { n: 2 }, { dedup: { key: "order-42" } });
        expect(again).toEqual({ id: first.id, outcome: "deduplicated" });
        // enqueue says only the id: the holder's
        expect(await mq.enqueue(q, { n: 3 }, { dedup: { key: "order-42" } })).toBe(first.id);
        expect((await mq.counts(q)).pending).toBe(1);
        expect((await mq.stats(q)).enqueued).toBe(1);
        // claimed (active): still held; the claim hands the key back with the job
        const job = (await mq.claim(q, { leaseMs: 60_000 }))!;
        expect(job.dedupKey).toBe("order-42");
        expect((await mq.submit(q, { n: 4 }, { dedup: { key: "order-42" } })).outcome).toBe("deduplicated");
        await mq.ack(job);
        // acked without a window: the key is gone, the next admission is a new job
        expect(await hlen(q)).toBe(0);
        const next = await mq.submit(q, { n: 5 }, { dedup: { key: "order-42" } });
        expect(next.outcome).toBe("admitted");
        expect(next.id).not.toBe(first.id);
        // bury lets go too
        const j2 = (await mq.claim(q, { leaseMs: 60_000 }))!;
        await mq.bury(j2, "no");
        expect((await mq.submit(q, { n: 6 }, { dedup: { key: "order-42" } })).outcome).toBe("admitted");
        // remove of a pending holder lets go
        const held = await mq.submit(q, { n: 7 }, { dedup: { key: "other" } });
        expect(await mq.remove(q, held.id)).toBe(true);
        expect((await mq.submit(q, { n: 8 }, { dedup: { key: "other" } })).outcome).toBe("admitted");
        // a retried job still waits: the key stays held
        const j3 = (await mq.claim(q, { leaseMs: 60_000 }))!;
        await mq.retry(j3, { delayMs: 60_000, reason: "later" });
        const k3 = j3.dedupKey!;
        expect((await mq.submit(q, { n: 9 }, { dedup: { key: k3 } })).outcome).toBe("deduplicated");
      });

      test("one call: a later job of the same key folds into the earlier; outcomes by place", async () => {
        const q = `dd-call-${backend}`;
        const ks = keyspace(q);
        const J = (n: number) => `JOB${String(n).padStart(11, "0")}`;
        const out = await wire(raw, backend, "ENQUEUE", [ks.meta], [
          J(1),
          "dedup=a",
          "p1",
          J(2),
          "dedup=a",
          "p2",
          J(3),
          "",
          "p3",
          J(4),
          "dedup=a\0debounce=1",
          "p4",
        ]);
        expect(out).toEqual({ ok: [2, 1, J(1), "deduplicated", 3, J(1), "debounced"] });
        // J(1) took J(4)'s payload (debounced), J(2) and J(4) have no row
        expect(await raw.command(["HGET", ks.job(J(1)), "payload"], ks.meta)).toBe("p4");
        expect(await exists(ks.job(J(2)), q) + await exists(ks.job(J(4)), q)).toBe(0);
        expect(await raw.command(["LRANGE", ks.pending, "0", "-1"], ks.meta)).toEqual([J(3), J(1)]);
        // a call without any dedup option answers the plain count
        expect(await wire(raw, backend, "ENQUEUE", [ks.meta], [J(5), "timeout_ms=5", "p5"])).toEqual({ ok: 1 });
      });

      test("a window ends at its until_ms: an admission in that very ms is not held", async () => {
        // The entry names a job that is gone, so only its window could hold the key; its end is the
        // server's now, written in the admission's own MULTI/EXEC: TIME (the scripts' clock) is
        // frozen there, so the Lua twin admits at until_ms exactly; the module reads the real clock,
        // at until_ms or a ms later: an attempt counts when the admitted row's created_ms (its now)
        // is until_ms, and every attempt must admit (now ≥ until_ms).
        const q = `dd-boundary-${backend}`;
        const ks = keyspace(q);
        const gone = "JOB0Gone000001";
        const writeEntry = [
          "EVAL",
          "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000) " +
          "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ' ' .. string.format('%d', now)) return now",
          "1",
          ks.dedup,
          "k",
          gone,
        ];
        let atBoundary = 0;
        let attempts = 0;
        for (let i = 1; i <= 50 && atBoundary === 0; i++) {
          attempts = i;
          const id = `JOB${String(i).padStart(11, "0")}`;
          const admit = wireArgv(backend, "ENQUEUE", [ks.meta], [id, "dedup=k", "p"]);
          const [until, admitted] = await wireBatch(raw, ks.meta, [writeEntry, admit], true);
          expect(admitted).toEqual({ ok: [1] });
          const created = Number(await raw.command(["HGET", ks.job(id), "created_ms"], ks.meta));
          const end = (until as { ok: number }).ok;
          expect(created).toBeGreaterThanOrEqual(end);
          if (created === end) atBoundary++;
        }
        console.log(`[dedup ${comboName(backend, topology)}] an admission at until_ms after ${attempts} attempt(s)`);
        expect(atBoundary).toBe(1);
      });

      test("throttle: the window holds after the job settled, then a claim drops the entry", async () => {
        const q = `dd-window-${backend}`;
        const windowMs = 200;
        const worker = mq.work(q, () => {}, { concurrency: 4, leaseMs: 30_000 });
        const admitted: string[] = [];
        const start = Date.now();
        while (Date.now() < start + 5 * windowMs) {
          const a = await mq.submit(q, { n: admitted.length }, { dedup: { key: "ping", ttlMs: windowMs } });
          if (a.outcome === "admitted") admitted.push(a.id);
          await sleep(5);
        }
        const elapsed = Date.now() - start;
        await eventually(async () => (await mq.stats(q)).acked === admitted.length);
        await worker.stop();
        // at most one admission per window (however slow the machine, never more)
        expect(admitted.length).toBeGreaterThanOrEqual(1);
        expect(admitted.length).toBeLessThanOrEqual(Math.ceil(elapsed / windowMs) + 1);
        // the key outlives its job's ack until the window ends, listed in dedup_ttl
        // (on a loaded machine the window may have passed and the worker's claims dropped it already)
        const ks = keyspace(q);
        const held = await raw.command(["HGET", ks.dedup, "ping"], ks.meta);
        if (held !== null) {
          const entry = String(held);
          expect(entry.split(" ")[0]).toBe(admitted.at(-1)!);
          const until = Number(entry.split(" ")[1]);
          const score = await raw.command(["ZSCORE", ks.dedup_ttl, "ping"], ks.meta);
          if (until > (await serverNow(raw, q))) expect(Number(score)).toBe(until);
          // once the window passed, a claim drops the entry (dedup_ttl's due members)
          await eventually(async () => (await serverNow(raw, q)) > until);
        }
        await mq.claim(q, { leaseMs: 1000 });
        expect(await hlen(q)).toBe(0);
        expect(await exists(ks.dedup_ttl, q)).toBe(0);
      });

      test("throttle, server-side: admissions of one key are at least the window apart (created_ms)", async () => {
        const q = `dd-gap-${backend}`;
        const windowMs = 150;
        const created: number[] = [];
        const end = Date.now() + 6 * windowMs;
        while (Date.now() < end) {
          const a = await mq.submit(q, { n: 0 }, { dedup: { key: "k", ttlMs: windowMs } });
          if (a.outcome === "admitted") {
            created.push(Number(await raw.command(["HGET", keyspace(q).job(a.id), "created_ms"], keyspace(q).meta)));
            // settle at once: only the window holds the key
            const j = (await mq.claim(q, { leaseMs: 60_000 }))!;
            await mq.ack(j);
          }
          await sleep(3);
        }
        const gaps = created.slice(1).map((t, i) => t - created[i]!);
        console.log(`[dedup ${comboName(backend, topology)}] throttle ${windowMs} ms: gaps ${gaps.join(", ")} ms`);
        expect(gaps.length).toBeGreaterThanOrEqual(2);
        for (const g of gaps) expect(g).toBeGreaterThanOrEqual(windowMs);
      });

      test("debounce: 100 edits in a burst run once, with the last payload, at the last due time", async () => {
        const q = `dd-debounce-${backend}`;
        const runs: Array<Job<{ n: number }>> = [];
        let first: JobId | undefined;
        for (let n = 1; n <= 100; n++) {
          const a = await mq.submit(q, { n }, { delayMs: 300, dedup: { key: "doc-7", mode: "debounce" } });
          first ??= a.id;
          expect(a).toEqual({ id: first, outcome: n === 1 ? "admitted" : "debounced" });
        }
        const ks = keyspace(q);
        const due = Number(await raw.command(["ZSCORE", ks.schedule, first!], ks.meta));
        expect(Number(await raw.command(["HGET", ks.job(first!), "due_ms"], ks.meta))).toBe(due);
        const worker = mq.work(q, (job) => void runs.push(job), { leaseMs: 30_000 });
        await eventually(() => runs.length >= 1);
        await sleep(300);
        await worker.stop();
        expect(runs.map((j) => j.payload.n)).toEqual([100]);
        expect(await hlen(q)).toBe(0);
      });

      test("debounce into a running job admits a new one, which takes the key", async () => {
        const q = `dd-running-${backend}`;
        const a = await mq.submit(q, { n: 1 }, { dedup: { key: "x", mode: "debounce" } });
        const held = (await mq.claim(q, { leaseMs: 60_000 }))!;
        expect(held.id).toBe(a.id);
        const b = await mq.submit(q, { n: 2 }, { dedup: { key: "x", mode: "debounce" } });
        expect(b.outcome).toBe("admitted");
        expect(b.id).not.toBe(a.id);
        // the first one's ack does not let go of a key it no longer holds
        await mq.ack(held);
        expect(await mq.submit(q, { n: 3 }, { dedup: { key: "x", mode: "debounce" } })).toEqual({ id: b.id, outcome: "debounced" });
        expect((await mq.getJob(q, b.id))!.payload).toEqual({ n: 3 });
      });

      test("1,000 concurrent admissions of one key from 4 clients: one job", async () => {
        const q = `dd-race-${backend}`;
        const clients = await Promise.all([0, 1, 2, 3].map(() => connect()));
        try {
          const all = await Promise.all(
            Array.from({ length: 1000 }, (_, i) => clients[i % 4]!.submit(q, { n: i }, { dedup: { key: "once" } })),
          );
          const admitted = all.filter((a) => a.outcome === "admitted");
          expect(admitted.length).toBe(1);
          expect(new Set(all.map((a) => a.id))).toEqual(new Set([admitted[0]!.id]));
          expect((await mq.counts(q)).pending).toBe(1);
        } finally {
          await Promise.all(clients.map((c) => c.close()));
        }
      });

      test("bad options are refused before any wire, naming the option; raw, the server refuses with nothing written", async () => {
        const q = `dd-bad-${backend}`;
        await mq.enqueue(q, { n: 0 });
        const ks = keyspace(q);
        const d0 = await digest(raw, ks.meta);
        const bad: Array<[unknown, RegExp]> = [
          [{ dedup: { key: "a}b" } }, /^submit: dedup\.key: dedup key "a}b" must not contain "}"/],
          [{ dedup: { key: "" } }, /^submit: dedup\.key: dedup key must not be empty/],
          [{ dedup: { key: "k", ttlMs: 0 } }, /^submit: dedup\.ttlMs must be an integer from 1/],
          [{ dedup: { key: "k", ttlMs: Number.NaN } }, /^submit: dedup\.ttlMs must be an integer/],
          [{ dedup: { key: "k", mode: "latest" } }, /^submit: dedup\.mode must be "deduplicate" or "debounce"/],
          [{ dedup: "k" }, /^submit: dedup must be \{ key, ttlMs\?, mode\? \}/],
          [{ timeoutMs: 0 }, /^submit: timeoutMs must be an integer from 1 to 86400000/],
          [{ timeoutMs: 1.5 }, /^submit: timeoutMs must be an integer/],
        ];
        for (const [opts, message] of bad) {
          const e = await mq.submit(q, { n: 1 }, opts as never).then(() => null, (x: unknown) => x);
          expect(e).toBeInstanceOf(EchoMQError);
          expect((e as EchoMQError).rule).toBe("options");
          expect((e as Error).message).toMatch(message);
        }
        const J = "JOB00000000099";
        const raws: Array<[string, string]> = [
          ["dedup=a{b", renderRefusal("name", "EMQ.ENQUEUE", { arg: "dedup", max: "1024" })],
          ["dedup_ms=10", renderRefusal("option-needs", "EMQ.ENQUEUE", { option: "dedup_ms", needs: "dedup" })],
          ["dedup=k\0dedup_ms=0", renderRefusal("positive", "EMQ.ENQUEUE", { arg: "dedup_ms" })],
          ["group=x", renderRefusal("option-unknown", "EMQ.ENQUEUE", { option: "group" })],
          ["lane=a{b", renderRefusal("name", "EMQ.ENQUEUE", { arg: "lane", max: "1024" })],
          ["lane\r\né=x", renderRefusal("option-unknown", "EMQ.ENQUEUE", { option: "lane????" })],
        ];
        for (const [opts, err] of raws) expect(await wire(raw, backend, "ENQUEUE", [ks.meta], [J, opts, "p"])).toEqual({ err });
        expect(await digest(raw, ks.meta)).toBe(d0);
      });

      test("a job's own timeoutMs fails its attempt (and wins over the worker's)", async () => {
        const q = `dd-timeout-${backend}`;
        await mq.enqueue(q, { n: 1 }, { timeoutMs: 100 });
        const aborted: unknown[] = [];
        const worker = mq.work(q, async (job) => {
          expect(job.timeoutMs).toBe(100);
          await new Promise<void>((done) => job.signal.addEventListener("abort", () => done()));
          aborted.push(job.signal.reason);
        }, { leaseMs: 30_000, timeoutMs: 60_000, maxAttempts: 1 });
        await eventually(async () => (await mq.counts(q)).dead === 1);
        await worker.stop();
        const [dead] = await mq.jobs(q, "dead");
        expect(dead!.reason).toBe("timed out after 100 ms");
        expect((aborted[0] as Error).name).toBe("JobTimeoutError");
      });

      test("the state is empty once the jobs settled and the windows passed", async () => {
        const q = `dd-empty-${backend}`;
        for (let i = 0; i < 50; i++) {
          await mq.submit(q, { n: i }, { dedup: { key: `k${i % 10}`, ...(i % 2 ? { ttlMs: 100 } : {}) } });
        }
        const worker = mq.work(q, () => {}, { concurrency: 8, leaseMs: 30_000 });
        await eventually(async () => (await mq.counts(q)).pending + (await mq.counts(q)).active === 0);
        await sleep(150);
        await eventually(async () => {
          await mq.claim(q, { leaseMs: 1000 }); // a claim drops the windows that ended
          return (await hlen(q)) === 0;
        });
        await worker.stop();
        expect(await exists(keyspace(q).dedup, q) + await exists(keyspace(q).dedup_ttl, q)).toBe(0);
      });
    });
  }
}
