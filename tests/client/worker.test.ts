/**
 * The worker, for each backend × topology: retries with backoff then buries after maxAttempts,
 * survives throwing handlers, promotes and reaps on its own, and `stop()` drains in-flight jobs.
 * Its batching: claims and settles go out in batches (`claimMany` / `settleMany`, also tested on
 * their own) without ever holding more than `concurrency` claimed-but-unsettled jobs; a settle
 * refused in a batch leaves the others applied; an idle worker polls with one claim at a time
 * whatever its concurrency, and still picks up a lone job quickly at the default `pollMs`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import {
  DEFAULT_POLL_MS,
  EchoMQ,
  EchoMQError,
  type Job,
  JobNotActiveError,
  PayloadDecodeError,
  type Settlement,
  Worker,
  type WorkerClient,
} from "../../client.ts";
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

      test("claimMany: up to n jobs in FIFO order, fewer when the queue runs dry; undecodable ones named", async () => {
        const q = `wk-claimmany-${backend}`;
        const K = keyspace(q);
        const ids = await mq.enqueueMany(q, [0, 1, 2, 3, 4].map((n) => ({ n })));
        const first = await mq.claimMany(q, 3, { leaseMs: 60_000 });
        expect(first.map((j) => (j as Job<{ n: number }>).payload.n)).toEqual([0, 1, 2]);
        expect(first.map((j) => (j as Job<{ n: number }>).attempts)).toEqual([1, 1, 1]);
        const rest = await mq.claimMany(q, 10, { leaseMs: 60_000 });
        expect(rest.map((j) => (j as Job<{ n: number }>).id)).toEqual(ids.slice(3));
        expect(await mq.claimMany(q, 4, { leaseMs: 60_000 })).toEqual([]);
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 5, schedule: 0, dead: 0 });
        await expect(mq.claimMany(q, 0, { leaseMs: 1000 })).rejects.toMatchObject({ rule: "limit" });
        await expect(mq.claimMany(q, 2, { leaseMs: 0 })).rejects.toMatchObject({ rule: "lease-ms" });
        // an undecodable payload between two good ones: claimed, returned as the error naming it
        const bad = "JOB0000000bad2";
        await mq.enqueue(q, { n: 5 });
        await raw.command(["EVAL", "redis.call('HSET', KEYS[1], 'state', 'pending', 'payload', 'not json', 'attempts', '0', 'created_ms', '1'); return redis.call('LPUSH', KEYS[2], ARGV[1])", "2", K.job(bad as never), K.pending, bad], K.pending);
        await mq.enqueue(q, { n: 6 });
        const mixed = await mq.claimMany(q, 5, { leaseMs: 60_000 });
        expect(mixed).toHaveLength(3);
        expect((mixed[0] as Job<{ n: number }>).payload.n).toBe(5);
        expect(mixed[1]).toBeInstanceOf(PayloadDecodeError);
        expect((mixed[1] as PayloadDecodeError).job).toEqual({ id: bad, queue: q, attempts: 1 });
        expect((mixed[2] as Job<{ n: number }>).payload.n).toBe(6);
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 8, schedule: 0, dead: 0 });
      });

      test("settleMany: one reply per settlement, a refusal does not affect the others", async () => {
        const q = `wk-settlemany-${backend}`;
        await mq.enqueueMany(q, [0, 1, 2, 3].map((n) => ({ n })));
        const jobs = (await mq.claimMany(q, 4, { leaseMs: 60_000 })) as Array<Job<{ n: number }>>;
        await mq.ack(jobs[3]!); // settled already: a second settle finds it not active
        const results = await mq.settleMany([
          { kind: "ack", job: jobs[0]! },
          { kind: "retry", job: jobs[1]!, delayMs: 60_000, reason: "later" },
          { kind: "ack", job: jobs[3]! },
          { kind: "retry", job: jobs[2]!, delayMs: 0 }, // refused by the client: delay-ms
          { kind: "bury", job: jobs[2]!, reason: "no" },
        ]);
        expect(results[0]).toBeNull();
        expect(results[1]).toBeNull();
        expect(results[2]).toBeInstanceOf(JobNotActiveError);
        expect(results[3]).toBeInstanceOf(EchoMQError);
        expect(results[3]).toMatchObject({ rule: "delay-ms" });
        expect(results[4]).toBeNull();
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 1, dead: 1 });
        expect(await mq.settleMany([])).toEqual([]);
      });

      test("batched claims and settles never hold more than concurrency jobs claimed and unsettled", async () => {
        const q = `wk-bound-${backend}`;
        const JOBS = 400;
        const CONCURRENCY = 7;
        await mq.enqueueMany(q, Array.from({ length: JOBS }, (_, n) => ({ n })));
        let outstanding = 0; // claimed (reply seen) and not yet settled (reply seen)
        let maxOutstanding = 0;
        let running = 0;
        let maxRunning = 0;
        const claimSizes: number[] = [];
        const settleSizes: number[] = [];
        const client: WorkerClient<{ n: number }> = {
          claim: (queue, o) => mq.claim(queue, o),
          async claimMany(queue, n, o) {
            claimSizes.push(n);
            const got = await mq.claimMany(queue, n, o);
            outstanding += got.length;
            maxOutstanding = Math.max(maxOutstanding, outstanding);
            return got;
          },
          ack: (job) => mq.ack(job),
          retry: (job, o) => mq.retry(job, o),
          bury: (job, reason) => mq.bury(job, reason),
          async settleMany(settlements: readonly Settlement[]) {
            settleSizes.push(settlements.length);
            const results = await mq.settleMany(settlements);
            outstanding -= settlements.length;
            return results;
          },
          promote: (queue, limit) => mq.promote(queue, limit),
          reap: (queue, limit) => mq.reap(queue, limit),
        };
        const worker = new Worker<{ n: number }>(client, q, async (job) => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          if (job.payload.n % 3 === 0) await sleep(Math.random() * 3);
          running--;
          if (job.payload.n % 50 === 0 && job.attempts === 1) throw new Error("again");
        }, { concurrency: CONCURRENCY, leaseMs: 60_000, backoff: 1, ...FAST }, () => {});
        await eventually(() => worker.completed === JOBS, 60_000);
        await worker.stop();
        expect(maxOutstanding).toBeLessThanOrEqual(CONCURRENCY);
        expect(maxRunning).toBeLessThanOrEqual(CONCURRENCY);
        expect(outstanding).toBe(0);
        expect(Math.max(...claimSizes)).toBeGreaterThan(1); // claims went out in batches
        expect(Math.max(...claimSizes)).toBeLessThanOrEqual(CONCURRENCY);
        expect(Math.max(...settleSizes)).toBeGreaterThan(1); // so did settles
        expect(worker.failed).toBe(JOBS / 50);
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
      });

      test("a lost lease on one ack of a batch: reported and counted, the other acks applied", async () => {
        const q = `wk-lost-${backend}`;
        await mq.enqueueMany(q, [0, 1, 2, 3, 4].map((n) => ({ n })));
        const batches: number[] = [];
        const errors: unknown[] = [];
        const client: WorkerClient<{ n: number }> = {
          claim: (queue, o) => mq.claim(queue, o),
          claimMany: (queue, n, o) => mq.claimMany(queue, n, o),
          ack: (job) => mq.ack(job),
          retry: (job, o) => mq.retry(job, o),
          bury: (job, reason) => mq.bury(job, reason),
          settleMany(settlements: readonly Settlement[]) {
            batches.push(settlements.length);
            return mq.settleMany(settlements);
          },
          promote: (queue, limit) => mq.promote(queue, limit),
          reap: (queue, limit) => mq.reap(queue, limit),
        };
        let started = 0;
        let release!: () => void;
        const barrier = new Promise<void>((done) => (release = done));
        const worker = new Worker<{ n: number }>(client, q, async (job) => {
          if (job.payload.n === 2) await mq.ack(job); // the job leaves active behind the worker's back
          if (++started === 5) release();
          await barrier; // all five finish together: their acks share one batch
        }, { concurrency: 5, leaseMs: 60_000, onError: (e) => errors.push(e), ...FAST }, () => {});
        await eventually(() => worker.completed + worker.lost === 5);
        await worker.stop();
        expect(batches).toEqual([5]);
        expect(worker.completed).toBe(4);
        expect(worker.lost).toBe(1);
        expect(errors).toHaveLength(1);
        expect(errors[0]).toBeInstanceOf(JobNotActiveError);
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
      });

      test("idle: one claim at a time polls, whatever the concurrency; a lone job still starts fast", async () => {
        const q = `wk-idle-${backend}`;
        const K = keyspace(q);
        expect(DEFAULT_POLL_MS).toBe(20);
        const claimCalls = async (): Promise<number> => {
          const info = String(await raw.command(["INFO", "commandstats"], K.pending));
          // the module counts EMQ.CLAIM; the scripts count every EVALSHA (claims and maintenance)
          const names = backend === "module" ? ["emq.claim"] : ["evalsha", "eval"];
          return names.reduce((sum, name) => {
            const m = new RegExp(`cmdstat_${name.replace(".", "\\.")}:calls=(\\d+)`).exec(info);
            return sum + (m ? Number(m[1]) : 0);
          }, 0);
        };
        const started: number[] = [];
        const worker = mq.work(q, () => void started.push(performance.now()), { concurrency: 20 });
        try {
          await sleep(400); // past the first empty claims: the scout is at its longest wait
          const before = await claimCalls();
          await sleep(1000);
          const perSecond = (await claimCalls()) - before;
          console.log(`[worker idle] ${comboName(backend, topology)}: ${perSecond} claims in 1 s at concurrency 20`);
          expect(perSecond).toBeLessThan(200); // ≈ 1000 / pollMs; 20 polling loops sent ≈ 100–1000
          const waits: number[] = [];
          for (let i = 0; i < 3; i++) {
            await sleep(300);
            const t0 = performance.now();
            await mq.enqueue(q, { n: i });
            await eventually(() => started.length === i + 1, 5000);
            waits.push(started[i]! - t0);
          }
          console.log(`[worker idle] ${comboName(backend, topology)}: lone jobs started after ${waits.map((w) => w.toFixed(1)).join(", ")} ms`);
          expect(Math.max(...waits)).toBeLessThan(500);
        } finally {
          await worker.stop();
        }
        expect(worker.completed).toBe(3);
        // a short pollMs: still one poller (≈ 200 claims/s at 5 ms; 20 polling loops sent ≈ 4000)
        const eager = mq.work(q, () => {}, { concurrency: 20, pollMs: 5, maintenanceMs: 60_000 });
        try {
          await sleep(200);
          const before = await claimCalls();
          await sleep(1000);
          expect((await claimCalls()) - before).toBeLessThan(400);
        } finally {
          await eager.stop();
        }
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
