/**
 * The worker, for each backend × topology: retries with backoff then buries after maxAttempts,
 * survives throwing handlers, promotes and reaps on its own, and `stop()` drains in-flight jobs.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQ, type Job } from "../../client.ts";
import type { Connection } from "../../lib/client/connection.ts";
import {
  BACKENDS,
  comboName,
  sleep,
  TOPOLOGIES,
  useSites,
} from "./_harness.ts";

const { sites, raws } = useSites();

/** Polls `check` every 10 ms until it is true or `ms` pass. */
async function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error("condition not met in time");
}

const FAST = { pollMs: 5, maintenanceMs: 10 };

for (const topology of TOPOLOGIES) {
  for (const backend of BACKENDS) {
    describe(comboName(backend, topology), () => {
      let mq: EchoMQ<{ n: number }>;
      let raw: Connection;
      beforeAll(async () => {
        const site = sites.get(topology)!;
        raw = raws.get(topology)!;
        mq = await EchoMQ.connect({ addresses: site.addresses, cluster: site.cluster, backend });
      });
      afterAll(async () => {
        await mq.close();
      });

      test("a throwing handler: retried with backoff, buried after maxAttempts; the loop goes on", async () => {
        const q = `wk-fail-${backend}`;
        const seen: Array<{ n: number; attempts: number }> = [];
        const delays: number[] = [];
        const errors: unknown[] = [];
        const worker = mq.work(
          q,
          (job) => {
            seen.push({ n: job.payload.n, attempts: job.attempts });
            if (job.payload.n === 0) throw new Error(`boom ${job.attempts}`);
            if (job.payload.n === 1 && job.attempts === 1) throw new Error("flaky");
          },
          {
            concurrency: 2,
            leaseMs: 10_000,
            maxAttempts: 3,
            backoff: (attempts) => {
              delays.push(attempts);
              return 5 * attempts;
            },
            onError: (e) => errors.push(e),
            ...FAST,
          },
        );
        const bad = await mq.enqueue(q, { n: 0 });
        await mq.enqueue(q, { n: 1 });
        await mq.enqueue(q, { n: 2 });
        await eventually(async () => {
          const c = await mq.counts(q);
          return c.dead === 1 && c.pending === 0 && c.schedule === 0 && c.active === 0;
        });
        await worker.stop();
        expect(seen.filter((s) => s.n === 0).map((s) => s.attempts)).toEqual([1, 2, 3]);
        expect(seen.filter((s) => s.n === 1).map((s) => s.attempts)).toEqual([1, 2]);
        expect(seen.filter((s) => s.n === 2).map((s) => s.attempts)).toEqual([1]);
        expect(delays.sort()).toEqual([1, 1, 2]);
        expect(worker.completed).toBe(2);
        expect(worker.failed).toBe(4);
        expect(worker.buried).toBe(1);
        expect(errors).toEqual([]);
        const K = keyspace(q);
        const row = (await raw.command(["HMGET", K.job(bad), "state", "reason", "attempts"], K.pending)) as string[];
        expect(row.map(String)).toEqual(["dead", "Error: boom 3", "3"]);
      });

      test("promotes due jobs and reaps expired leases on its own", async () => {
        const q = `wk-maint-${backend}`;
        const done: number[] = [];
        await mq.schedule(q, { n: 7 }, { delayMs: 30 });
        await mq.enqueue(q, { n: 8 });
        const lost = await mq.claim(q, { leaseMs: 20 }); // a consumer that died holding the job
        expect(lost?.payload.n).toBe(8);
        const worker = mq.work(q, (job) => void done.push(job.payload.n), { leaseMs: 5000, ...FAST });
        await eventually(() => done.length === 2);
        await worker.stop();
        expect(done.sort()).toEqual([7, 8]);
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
      });

      test("stop() lets in-flight jobs finish and claims nothing more", async () => {
        const q = `wk-stop-${backend}`;
        for (let n = 0; n < 6; n++) await mq.enqueue(q, { n });
        const started: Array<Job<{ n: number }>> = [];
        let finished = 0;
        const worker = mq.work(
          q,
          async (job) => {
            started.push(job);
            await sleep(150);
            finished++;
          },
          { concurrency: 2, ...FAST },
        );
        await eventually(() => started.length === 2);
        const stopping = worker.stop();
        expect(worker.running).toBe(false);
        await stopping;
        expect(finished).toBe(2);
        expect(started).toHaveLength(2);
        expect(worker.completed).toBe(2);
        expect(await mq.counts(q)).toEqual({ pending: 4, active: 0, schedule: 0, dead: 0 });
        expect(await worker.stop()).toBeUndefined(); // idempotent
      });

      test("an undecodable payload is a failed attempt: retried, then buried (no stuck lease)", async () => {
        const q = `wk-bad-${backend}`;
        const K = keyspace(q);
        const id = "JOB0000000bad1";
        await raw.command(["EVAL", "redis.call('HSET', KEYS[1], 'state', 'pending', 'payload', 'not json', 'attempts', '0', 'created_ms', '1'); return redis.call('LPUSH', KEYS[2], ARGV[1])", "2", K.job(id as never), K.pending, id], K.pending);
        await expect(mq.claim(q, { leaseMs: 1 })).rejects.toMatchObject({ name: "PayloadDecodeError", job: { id, queue: q, attempts: 1 } });
        let ran = 0;
        const worker = mq.work(q, () => void ran++, { maxAttempts: 3, backoff: 1, leaseMs: 5000, ...FAST });
        await eventually(async () => (await mq.counts(q)).dead === 1);
        await worker.stop();
        expect(ran).toBe(0);
        const row = (await raw.command(["HMGET", K.job(id as never), "attempts", "reason"], K.pending)) as string[];
        expect(String(row[0])).toBe("3");
        expect(String(row[1])).toStartWith("PayloadDecodeError: claim: the json codec could not decode the payload");
      });

      test("close() stops the client's workers first", async () => {
        const site = sites.get(topology)!;
        const other = await EchoMQ.connect<number>({ addresses: site.addresses, cluster: site.cluster, backend });
        const q = `wk-close-${backend}`;
        await other.enqueue(q, 1);
        let finished = 0;
        other.work(q, async () => {
          await sleep(50);
          finished++;
        }, FAST);
        await eventually(async () => (await mq.counts(q)).active === 1);
        await other.close();
        expect(finished).toBe(1);
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
      });
    });
  }
}
