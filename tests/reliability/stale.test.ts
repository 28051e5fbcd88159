/**
 * Stale holders, per backend (the module when built, the scripts always) on one standalone site.server.
 *
 * 1. For each settle verb (ack, retry, bury, extend): 1,000 jobs are claimed with a 50 ms lease,
 *    the leases run out, a second claim takes them under new tokens; then each first claim's
 *    settle is sent (1,000 stale calls): every one is refused with LeaseLostError, DEBUG DIGEST is
 *    unchanged by them, and the valid holders' settles then all succeed.
 * 2. The original finding: two workers, maxAttempts 1, handlers that outlive their lease with a
 *    stalled heartbeat on the first run (which then fails) and a slower second run (which
 *    succeeds) — under wire-4 the first run's bury landed while the second held the job, so the
 *    job ended dead although a run succeeded. Now no job ends dead while a run succeeded, and no
 *    job runs twice with overlapping valid leases.
 * 3. One worker whose lease of a job ran out and whose own next claim takes the job back: the two
 *    claims stay apart (the stale one's refusal must not release the new one, whose heartbeat
 *    must keep running), so the job runs twice, not three times, and is acked once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { COMPLETED_MAX_DEFAULT, EchoMQ, type EchoMQOptions, type Job, type JobRef, LeaseLostError, type Settlement, Worker } from "../../client.ts";
import { command } from "../../tools/embedded/mod.ts";
import { Recorder, sleep } from "./_recorder.ts";
import { BACKENDS, useServer } from "./_server.ts";

const STALE = 1000;
const VERBS = ["ack", "retry", "bury", "extend"] as const;
type P = { n: number };

const site = useServer();

const digest = async (): Promise<string> => String(await command(site.server.port, ["DEBUG", "DIGEST"]));

function options(backend: "module" | "scripts"): EchoMQOptions<P> {
  return { addresses: [{ host: "127.0.0.1", port: site.server.port }], requestTimeout: 10_000, backend };
}

/** Runs `calls` with at most `width` in flight; the outcome of each (null: resolved). */
async function inWaves(calls: Array<() => Promise<unknown>>, width = 100): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let i = 0; i < calls.length; i += width) {
    out.push(...await Promise.all(calls.slice(i, i + width).map((c) => c().then(() => null, (e: unknown) => e))));
  }
  return out;
}

for (const backend of BACKENDS) {
  describe(`stale settles (${backend})`, () => {
    let mq: EchoMQ<P>;
    beforeAll(async () => {
      mq = await EchoMQ.connect<P>(options(backend));
    });
    afterAll(async () => {
      await mq?.close();
    });

    for (const verb of VERBS) {
      test(`${verb}: ${STALE} stale calls are all refused and write nothing; the valid holder's ${verb} succeeds`, async () => {
        const q = `stale-${backend}-${verb}`;
        const ids = await mq.enqueueMany(q, Array.from({ length: STALE }, (_, n) => ({ n })));
        const first = (await mq.claimMany(q, STALE, { leaseMs: 50 })) as Array<Job<P>>;
        expect(first.length).toBe(STALE);
        await sleep(80);
        const second = (await mq.claimMany(q, STALE, { leaseMs: 600_000 })) as Array<Job<P>>;
        expect(second.length).toBe(STALE); // CLAIM reaped the expired leases and took them back
        const firstBy = new Map(first.map((j) => [j.id, j]));
        for (const j of second) {
          expect(j.token).toBeGreaterThan(firstBy.get(j.id)!.token);
          expect(j.attempts).toBe(2);
        }
        expect(new Set(second.map((j) => j.id))).toEqual(new Set(ids));

        const before = await digest();
        const t0 = Date.now();
        const call = (job: JobRef): Promise<unknown> => {
          switch (verb) {
            case "ack":
              return mq.ack(job);
            case "retry":
              return mq.retry(job, { delayMs: 1, reason: "stale" });
            case "bury":
              return mq.bury(job, "stale");
            case "extend":
              return mq.extend(job, 600_000);
          }
        };
        const outcomes = await inWaves(first.map((job) => () => call(job)));
        const elapsed = Date.now() - t0;
        // the same stale claims once more, all in one command (settleMany / one EXTEND)
        let batchRefused = 0;
        if (verb === "extend") {
          const e = await mq.extend(first, 600_000).catch((x: unknown) => x);
          if (e instanceof LeaseLostError && e.ids.length === STALE) batchRefused = STALE;
        } else {
          const settlements = first.map((job): Settlement =>
            verb === "ack"
              ? { kind: "ack", job }
              : verb === "retry"
              ? { kind: "retry", job, delayMs: 1, reason: "stale" }
              : { kind: "bury", job, reason: "stale" }
          );
          batchRefused = (await mq.settleMany(settlements)).filter((r) => r instanceof LeaseLostError).length;
        }
        const after = await digest();
        const accepted = outcomes.filter((o) => o === null).length;
        const leaseLost = outcomes.filter((o) => o instanceof LeaseLostError).length;
        const other = outcomes.filter((o) => o !== null && !(o instanceof LeaseLostError));

        // the valid holders' own calls
        let valid: unknown[];
        if (verb === "extend") valid = [await mq.extend(second, 600_000).then(() => null, (e: unknown) => e)];
        else {
          valid = await mq.settleMany(
            second.map((job): Settlement =>
              verb === "ack"
                ? { kind: "ack", job }
                : verb === "retry"
                ? { kind: "retry", job, delayMs: 60_000, reason: "valid" }
                : { kind: "bury", job, reason: "valid" }
            ),
          );
        }
        const counts = await mq.counts(q);
        console.log(
          `[stale ${backend} ${verb}] ${STALE} stale calls in ${elapsed} ms: accepted ${accepted}, LeaseLostError ` +
            `${leaseLost}, other ${other.length}; one batched stale call refused ${batchRefused}/${STALE}; digest ` +
            `${before === after ? "unchanged" : "CHANGED"}; valid holder's ${verb}: ` +
            `${valid.filter((v) => v === null).length} ok → ${JSON.stringify(counts)}`,
        );
        expect(accepted).toBe(0);
        expect(other.slice(0, 3)).toEqual([]);
        expect(leaseLost).toBe(STALE);
        expect(batchRefused).toBe(STALE);
        expect(after).toBe(before);
        for (const o of outcomes as LeaseLostError[]) expect(o.ids.length).toBe(1);
        expect(valid.every((v) => v === null)).toBe(true);
        const expected = {
          // the valid acks complete their jobs, kept (STALE ≤ the default of COMPLETED_MAX_DEFAULT kept)
          ack: { pending: 0, active: 0, schedule: 0, dead: 0, completed: Math.min(STALE, COMPLETED_MAX_DEFAULT), waitingChildren: 0 },
          retry: { pending: 0, active: 0, schedule: STALE, dead: 0, completed: 0, waitingChildren: 0 },
          bury: { pending: 0, active: 0, schedule: 0, dead: STALE, completed: 0, waitingChildren: 0 },
          extend: { pending: 0, active: STALE, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 },
        }[verb];
        expect(counts).toEqual(expected);
      }, 120_000);
    }

    test("two workers, maxAttempts 1: no job ends dead although a run succeeded; no overlap under valid leases", async () => {
      const q = `stale-finding-${backend}`;
      const N = 12;
      const LEASE = 300;
      const recorder = new Recorder<P>();
      const clients = [await EchoMQ.connect<P>(options(backend)), await EchoMQ.connect<P>(options(backend))];
      const runs: Array<{ id: string; token: number; worker: number; attempts: number; ok: boolean; aborted: boolean }> = [];
      const errors: unknown[] = [];
      const workers: Array<Worker<P>> = [];
      try {
        // first run: its heartbeat stalls (extensions dropped), it outlives its lease, then fails;
        // a later run is slower still and succeeds
        const stalled = (j: { attempts?: number }): boolean => j.attempts === 1;
        for (let w = 0; w < 2; w++) {
          const handler = async (job: Job<P> & { signal: AbortSignal }): Promise<void> => {
            const run = { id: job.id, token: job.token, worker: w, attempts: job.attempts, ok: false, aborted: false };
            runs.push(run);
            await sleep(job.attempts === 1 ? 2 * LEASE : 3 * LEASE);
            run.aborted = job.signal.aborted;
            if (job.attempts === 1) throw new Error("first run fails");
            run.ok = true;
          };
          workers.push(
            new Worker<P>(recorder.client(clients[w]!, w, { dropExtend: stalled }), q, handler, {
              concurrency: N,
              leaseMs: LEASE,
              maxAttempts: 1,
              blockMs: 1000,
              onError: (e) => {
                if (!(e instanceof LeaseLostError)) errors.push(e);
              },
            }, () => {}),
          );
        }
        const ids = await clients[0]!.enqueueMany(q, Array.from({ length: N }, (_, n) => ({ n })));
        const deadline = Date.now() + 30_000;
        for (;;) {
          const c = await clients[0]!.counts(q);
          if (c.pending + c.active + c.schedule === 0) break;
          if (Date.now() > deadline) throw new Error(`not drained: ${JSON.stringify(c)}`);
          await sleep(50);
        }
        await Promise.all(workers.map((w) => w.stop()));
        const dead = new Set(((await command(site.server.port, ["ZRANGE", `emq:{${q}}:dead`, "0", "-1"])) as string[]).map(String));
        const succeeded = new Set(runs.filter((r) => r.ok).map((r) => r.id));
        const deadButSucceeded = [...dead].filter((id) => succeeded.has(id));
        const c = recorder.check();
        const refused = recorder.handlings.filter((h) => h.outcome === "refused").length;
        const sameWorker = [...recorder.perId().values()].filter((l) => l.length > 1 && l[0]!.worker === l[1]!.worker).length;
        console.log(
          `[stale ${backend} finding] ${N} jobs, 2 workers, lease ${LEASE} ms, maxAttempts 1: runs ${runs.length} ` +
            `(${succeeded.size} ids with a successful run), acked ${c.acked.size}, dead ${dead.size}, dead although a run ` +
            `succeeded ${deadButSucceeded.length}, stale settles refused ${refused}, stale settles accepted ` +
            `${c.staleAccepted.length}, overlaps under a valid lease ${c.overlaps.length}, reclaimed by the same worker ` +
            `${sameWorker}, errors ${errors.length}`,
        );
        expect(deadButSucceeded).toEqual([]);
        expect(c.overlaps).toEqual([]);
        expect(c.staleAccepted).toEqual([]);
        expect(c.ackedTwice).toEqual([]);
        expect(errors).toEqual([]);
        // the scenario did happen: every first run lost its lease, its bury was refused, the job was acked
        expect(c.reclaimed).toBeGreaterThanOrEqual(N);
        expect(refused).toBeGreaterThanOrEqual(N);
        expect(dead.size).toBe(0);
        expect(c.acked).toEqual(new Set(ids));
      } finally {
        await Promise.all(workers.map((w) => w.stop().catch(() => {})));
        recorder.close();
        await Promise.all(clients.map((m) => m.close()));
      }
    }, 60_000);

    test("one worker takes back its own job after its lease ran out: the claims stay apart", async () => {
      const q = `stale-self-${backend}`;
      const LEASE = 300;
      const recorder = new Recorder<P>();
      const client = await EchoMQ.connect<P>(options(backend));
      const runs: Array<{ token: number; attempts: number; aborted: boolean }> = [];
      const errors: unknown[] = [];
      let worker: Worker<P> | undefined;
      try {
        worker = new Worker<P>(
          recorder.client(client, 0, { dropExtend: (j) => j.attempts === 1 }),
          q,
          async (job) => {
            const run = { token: job.token, attempts: job.attempts, aborted: false };
            runs.push(run);
            // the first run outlives its (unextended) lease; the second outlives its lease too,
            // kept by the heartbeat
            await sleep(job.attempts === 1 ? 3 * LEASE : 5 * LEASE);
            run.aborted = job.signal.aborted;
          },
          {
            concurrency: 2,
            leaseMs: LEASE,
            blockMs: 1000,
            maxAttempts: 5,
            onError: (e) => {
              if (!(e instanceof LeaseLostError)) errors.push(e);
            },
          },
          () => {},
        );
        const id = await client.enqueue(q, { n: 1 });
        // two runs take 3 + 5 leases; give it twice that, then look
        const deadline = Date.now() + 16 * LEASE;
        let drained = false;
        while (!drained && Date.now() < deadline) {
          const c = await client.counts(q);
          drained = c.pending + c.active + c.schedule === 0 && runs.length > 0;
          if (!drained) await sleep(50);
        }
        await sleep(3 * LEASE); // a third run, if any, would have started by now
        await worker.stop();
        const c = recorder.check();
        const list = recorder.perId().get(id) ?? [];
        console.log(
          `[stale ${backend} self] one worker, lease ${LEASE} ms: ${drained ? "drained" : "NOT drained"}, claims ${list.length} (tokens ` +
            `${list.map((h) => `${h.token}:${h.outcome}`).join(", ")}), runs ${runs.length}, lost ${worker.lost}, ` +
            `completed ${worker.completed}, overlaps ${c.overlaps.length}, errors ${errors.length}`,
        );
        expect(errors).toEqual([]);
        expect(c.overlaps).toEqual([]);
        expect(c.staleAccepted).toEqual([]);
        expect(drained).toBe(true);
        expect(runs.map((r) => r.attempts)).toEqual([1, 2]); // the second claim is kept by its heartbeat
        expect(list.map((h) => h.outcome)).toEqual(["refused", "ack"]);
        expect(worker.completed).toBe(1);
        expect(worker.lost).toBe(1);
      } finally {
        await worker?.stop().catch(() => {});
        recorder.close();
        await client.close();
      }
    }, 60_000);
  });
}
