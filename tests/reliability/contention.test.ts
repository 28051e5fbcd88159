/**
 * Contention: 8 workers, each with its own EchoMQ client (its own connection), over 20k jobs of
 * one queue on one standalone server. Some handlers outlive their lease (reaped and handed to
 * another worker), some always fail (retried, then buried). Every handling is recorded as
 * (id, worker, claim time, lease deadline, settle time); no id is ever handed to a second worker
 * while a first one holds a valid lease on it, and the totals balance: enqueued = acked + dead,
 * every acked id acked exactly once. Half the workers claim and settle in batches (`claimMany`,
 * `settleMany`), the other half one job per call (a client without the batch calls).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  EchoMQ,
  type Job,
  type JobRef,
  JobNotActiveError,
  PayloadDecodeError,
  type Settlement,
  Worker,
  type WorkerClient,
} from "../../client.ts";
import { command, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { requireModule, sleep } from "../native/_native.ts";


const JOBS = 20_000;
const WORKERS = 8;
const CONCURRENCY = 4;
const LEASE_MS = 1000;
const SLOW_EVERY = 250; // these outlive their lease on the first attempt
const SLOW_MS = 1400;
const FAIL_EVERY = 997; // these always throw: retried, then buried
const MAX_ATTEMPTS = 3;
const DRAIN_CAP_MS = 150_000;
const CLOCK_SLACK_MS = 2; // client and server read the same host clock, each truncated to ms

type P = { seq: number };

/** One handling of one job by one worker, in client time (ms since epoch). */
interface Handling {
  readonly id: string;
  readonly worker: number;
  readonly attempts: number;
  /** Before the CLAIM was sent: the server's lease deadline is at least this + LEASE_MS. */
  readonly claimStart: number;
  /** The CLAIM reply arrived: the server claimed it no later than this. */
  readonly claimEnd: number;
  /** Lower bound of the server's lease deadline. */
  readonly leaseEnd: number;
  /** Before the ack / retry / bury was sent (the server settled it no earlier). */
  settleStart: number;
  settleEnd: number;
  outcome: "ack" | "retry" | "bury" | "refused" | "error" | "none";
}

let server: ServerHandle;
const clients: Array<EchoMQ<P>> = [];

beforeAll(async () => {
  server = await startServer({ module: requireModule() });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server?.stop();
});

test(`${WORKERS} workers over ${JOBS} jobs: no id held twice under a valid lease; totals balance`, async () => {
  const q = "contended";
  const address = { addresses: [{ host: "127.0.0.1", port: server.port }], requestTimeout: 10_000 };
  for (let i = 0; i < WORKERS + 1; i++) clients.push(await EchoMQ.connect<P>(address));
  const producer = clients[WORKERS]!;
  const ids = await producer.enqueueMany(q, Array.from({ length: JOBS }, (_, seq) => ({ seq })));
  expect(new Set(ids).size).toBe(JOBS);

  const handlings: Handling[] = [];
  const byJob = new WeakMap<object, Handling>();
  const otherErrors: unknown[] = [];

  const record = (job: Job<P>, worker: number, claimStart: number, leaseMs: number): void => {
    const h: Handling = {
      id: job.id,
      worker,
      attempts: job.attempts,
      claimStart,
      claimEnd: Date.now(),
      leaseEnd: claimStart + leaseMs,
      settleStart: Infinity,
      settleEnd: Infinity,
      outcome: "none",
    };
    handlings.push(h);
    byJob.set(job, h);
  };

  // Each worker gets the client's verbs through a recorder; even workers also get the batch calls.
  const recorder = (mq: EchoMQ<P>, worker: number): WorkerClient<P> => {
    const batched: Pick<WorkerClient<P>, "claimMany" | "settleMany"> = worker % 2 !== 0 ? {} : {
      async claimMany(queue: string, n: number, opts: { leaseMs: number }): Promise<Array<Job<P> | PayloadDecodeError>> {
        const claimStart = Date.now();
        const got = await mq.claimMany(queue, n, opts);
        for (const job of got) if (!(job instanceof PayloadDecodeError)) record(job, worker, claimStart, opts.leaseMs);
        return got;
      },
      async settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>> {
        const hs = settlements.map((s) => byJob.get(s.job));
        const settleStart = Date.now();
        for (const h of hs) if (h) h.settleStart = settleStart;
        try {
          const results = await mq.settleMany(settlements);
          results.forEach((r, i) => {
            const h = hs[i];
            if (h) h.outcome = r === null ? settlements[i]!.kind : r instanceof JobNotActiveError ? "refused" : "error";
          });
          return results;
        } catch (e) {
          for (const h of hs) if (h) h.outcome = "error";
          throw e;
        } finally {
          const settleEnd = Date.now();
          for (const h of hs) if (h) h.settleEnd = settleEnd;
        }
      },
    };
    const settle = async (job: JobRef, kind: "ack" | "retry" | "bury", run: () => Promise<void>): Promise<void> => {
      const h = byJob.get(job);
      if (h) h.settleStart = Date.now();
      try {
        await run();
        if (h) h.outcome = kind;
      } catch (e) {
        if (h) h.outcome = e instanceof JobNotActiveError ? "refused" : "error";
        throw e;
      } finally {
        if (h) h.settleEnd = Date.now();
      }
    };
    return {
      ...batched,
      async claim(queue: string, opts: { leaseMs: number }): Promise<Job<P> | null> {
        const claimStart = Date.now();
        const job = await mq.claim(queue, opts);
        if (job === null) return null;
        record(job, worker, claimStart, opts.leaseMs);
        return job;
      },
      ack: (job) => settle(job, "ack", () => mq.ack(job)),
      retry: (job, o) => settle(job, "retry", () => mq.retry(job, o)),
      bury: (job, reason) => settle(job, "bury", () => mq.bury(job, reason)),
      promote: (queue, limit) => mq.promote(queue, limit),
      reap: (queue, limit) => mq.reap(queue, limit),
    };
  };

  const handler = async (job: Job<P>): Promise<void> => {
    if (job.payload.seq % FAIL_EVERY === 0) throw new Error(`job ${job.payload.seq} always fails`);
    if (job.payload.seq % SLOW_EVERY === 0 && job.attempts === 1) await sleep(SLOW_MS);
  };
  const workers = Array.from({ length: WORKERS }, (_, w) =>
    new Worker<P>(recorder(clients[w]!, w), q, handler, {
      concurrency: CONCURRENCY,
      leaseMs: LEASE_MS,
      maxAttempts: MAX_ATTEMPTS,
      backoff: 5,
      pollMs: 20,
      maintenanceMs: 100,
      onError: (e) => {
        if (!(e instanceof JobNotActiveError)) otherErrors.push(e);
      },
    }, () => {}));

  const t0 = Date.now();
  try {
    const deadline = Date.now() + DRAIN_CAP_MS;
    for (;;) {
      const n = await producer.counts(q);
      if (n.pending + n.active + n.schedule === 0) break;
      if (Date.now() > deadline) throw new Error(`not drained within ${DRAIN_CAP_MS} ms: ${JSON.stringify(n)}`);
      await sleep(100);
    }
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
  const elapsed = Date.now() - t0;

  // 1. No second claim while an earlier holder's lease was valid and it had not settled.
  const perId = new Map<string, Handling[]>();
  for (const h of handlings) {
    const list = perId.get(h.id);
    if (list) list.push(h);
    else perId.set(h.id, [h]);
  }
  const violations: string[] = [];
  let reclaimedAfterLease = 0; // handed out again while the earlier holder was still running
  let staleAcks = 0; // acked by a worker whose lease had run out (and someone else held it then)
  for (const list of perId.values()) {
    list.sort((a, b) => a.claimStart - b.claimStart);
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i]!;
        const b = list[j]!;
        const heldUntil = Math.min(a.leaseEnd, a.settleStart);
        if (b.claimEnd + CLOCK_SLACK_MS < heldUntil) {
          violations.push(`${a.id}: worker ${b.worker} claimed at ≤${b.claimEnd} while worker ${a.worker} held it until ≥${heldUntil}`);
        }
        if (b.claimEnd < a.settleStart) reclaimedAfterLease++;
        if (a.outcome === "ack" && a.settleStart > a.leaseEnd && b.claimEnd <= a.settleEnd) staleAcks++;
      }
    }
  }

  // 2. Totals: enqueued = acked + dead; each acked id acked exactly once; nothing left but dead rows.
  const acks = new Map<string, number>();
  for (const h of handlings) if (h.outcome === "ack") acks.set(h.id, (acks.get(h.id) ?? 0) + 1);
  const ackedTwice = [...acks.entries()].filter(([, n]) => n > 1).map(([id]) => id);
  const counts = await producer.counts(q);
  const dead = (await command(server.port, ["ZRANGE", `emq:{${q}}:dead`, "0", "-1"])) as string[];
  const rows = Number(await command(server.port, ["DBSIZE"])) - (counts.dead > 0 ? 1 : 0);
  const buried = handlings.filter((h) => h.outcome === "bury").length;
  const expectedDead = ids.filter((_, seq) => seq % FAIL_EVERY === 0).length;
  const notSettled = handlings.filter((h) => h.outcome === "error").length;

  console.log(
    `[contention] ${JOBS} jobs, ${WORKERS} workers × ${CONCURRENCY}, lease ${LEASE_MS} ms: drained in ${elapsed} ms; ` +
      `handlings ${handlings.length}, acked ${acks.size}, dead ${dead.length}, ` +
      `handed out again after a lease ran out ${reclaimedAfterLease}, acks refused (not active) ` +
      `${handlings.filter((h) => h.outcome === "refused").length}, stale acks ${staleAcks}, ` +
      `overlaps under a valid lease ${violations.length}, other errors ${otherErrors.length}`,
  );
  expect(violations.slice(0, 5)).toEqual([]);
  expect(ackedTwice).toEqual([]);
  expect(acks.size + dead.length).toBe(JOBS);
  expect(dead.length).toBe(expectedDead);
  expect(buried).toBe(expectedDead);
  expect(new Set([...acks.keys(), ...dead])).toEqual(new Set(ids));
  expect(counts).toEqual({ pending: 0, active: 0, schedule: 0, dead: expectedDead });
  expect(rows).toBe(expectedDead); // only the dead keep their rows
  expect(notSettled).toBe(0);
  expect(otherErrors).toEqual([]);
  expect(reclaimedAfterLease).toBeGreaterThan(0); // the slow jobs did lose their lease
}, 240_000);
