/**
 * Contention: 8 workers, each with its own EchoMQ client (its own connections), over 20k jobs of
 * one queue on one standalone server, per backend. Some handlers outlive their lease with a
 * stalled heartbeat (their extensions are dropped: the lease runs out, the job is reaped and
 * handed to another worker under a new token, and the first holder's ack is refused); some outlive
 * it with a working heartbeat (never handed out again); some always fail (retried, then buried).
 * Every handling is recorded (tests/reliability/_recorder.ts): no id is ever handed to a second
 * worker while a first one holds a valid lease on it, no settle of a superseded claim is accepted,
 * tokens are unique, and the totals balance: enqueued = acked + dead, every acked id acked exactly
 * once.
 */
import { describe, expect, test } from "bun:test";
import { COMPLETED_MAX_DEFAULT, EchoMQ, type EchoMQOptions, type Job, LeaseLostError, Worker } from "../../client.ts";
import { command } from "../../tools/embedded/mod.ts";
import { countRows, Recorder, sleep } from "./_recorder.ts";
import { BACKENDS, useServer } from "./_server.ts";

const JOBS = 20_000;
/**
 * Workers × slots: 8 small workers (one call in flight each), and 2 of 40 slots, which keep two
 * claims in flight (worker.ts PIPELINE_FROM).
 */
const SHAPES = [{ WORKERS: 8, CONCURRENCY: 4 }, { WORKERS: 2, CONCURRENCY: 40 }] as const;
const LEASE_MS = 1000;
const SLOW_EVERY = 250; // seq % 250 === 0: outlive their lease on the first attempt, heartbeat stalled
const KEPT_EVERY = 250; // seq % 250 === 125: outlive their lease, heartbeat working
const SLOW_MS = 1400;
const FAIL_EVERY = 997; // these always throw: retried, then buried
const MAX_ATTEMPTS = 3;
const DRAIN_CAP_MS = 150_000;

type P = { seq: number };

const site = useServer();

for (const backend of BACKENDS) {
  describe(`contention (${backend})`, () => {
    for (const { WORKERS, CONCURRENCY } of SHAPES) {
      test(`${WORKERS} workers of ${CONCURRENCY} over ${JOBS} jobs: no id held twice under a valid lease; totals balance`, async () => {
        const q = `contended-${backend}-${WORKERS}x${CONCURRENCY}`;
        const options: EchoMQOptions<P> = {
          addresses: [{ host: "127.0.0.1", port: site.server.port }],
          requestTimeout: 10_000,
          backend,
        };
        const clients: Array<EchoMQ<P>> = [];
        const recorder = new Recorder<P>();
        const workers: Array<Worker<P>> = [];
        try {
          for (let i = 0; i < WORKERS + 1; i++) clients.push(await EchoMQ.connect<P>(options));
          const producer = clients[WORKERS]!;
          const ids = await producer.enqueueMany(q, Array.from({ length: JOBS }, (_, seq) => ({ seq })));
          expect(new Set(ids).size).toBe(JOBS);

          const otherErrors: unknown[] = [];
          let lostReported = 0;
          const extendLost: Array<{ worker: number; id: string }> = []; // ids an EXTEND of a worker was refused for
          const stalled = (job: { attempts?: number; payload?: unknown }): boolean =>
            job.attempts === 1 && (job.payload as P | undefined)?.seq !== undefined &&
            (job.payload as P).seq % SLOW_EVERY === 0;
          const handler = async (job: Job<P>): Promise<void> => {
            const seq = job.payload.seq;
            if (seq % FAIL_EVERY === 0) throw new Error(`job ${seq} always fails`);
            if (job.attempts === 1 && (seq % SLOW_EVERY === 0 || seq % KEPT_EVERY === 125)) await sleep(SLOW_MS);
          };
          for (let w = 0; w < WORKERS; w++) {
            workers.push(
              new Worker<P>(recorder.client(clients[w]!, w, { dropExtend: stalled }), q, handler, {
                concurrency: CONCURRENCY,
                leaseMs: LEASE_MS,
                maxAttempts: MAX_ATTEMPTS,
                backoff: 5,
                blockMs: 1000,
                maintenanceMs: 1000,
                onError: (e) => {
                  if (e instanceof LeaseLostError && e.verb === "EMQ.EXTEND") {
                    for (const id of e.ids) extendLost.push({ worker: w, id });
                  }
                  if (e instanceof LeaseLostError) lostReported++;
                  else otherErrors.push(e);
                },
              }, () => {}),
            );
          }

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

          const c = recorder.check();
          const counts = await producer.counts(q);
          const dead = ((await command(site.server.port, ["ZRANGE", `emq:{${q}}:dead`, "0", "-1"])) as string[]).map(String);
          const rows = await countRows((a) => command(site.server.port, a), q);
          const handlings = recorder.handlings;
          const buried = handlings.filter((h) => h.outcome === "bury").length;
          const refused = handlings.filter((h) => h.outcome === "refused").length;
          const notSettled = handlings.filter((h) => h.outcome === "error" || h.outcome === "none").length;
          const expectedDead = ids.filter((_, seq) => seq % FAIL_EVERY === 0).length;
          const lost = workers.reduce((s, w) => s + w.lost, 0);
          const completed = workers.reduce((s, w) => s + w.completed, 0);
          const byId = recorder.perId();
          const keptIds = ids.filter((_, seq) => seq % KEPT_EVERY === 125 && seq % FAIL_EVERY !== 0);
          const keptTwice = keptIds.filter((id) => (byId.get(id)?.length ?? 0) !== 1);
          // A job reported lost by its holder's heartbeat although that same holder's settle was
          // accepted: the heartbeat extended a job whose ack was already on its way (a spurious loss).
          const spurious = extendLost.filter(({ worker, id }) =>
            (byId.get(id) ?? []).some((h) => h.worker === worker && (h.outcome === "ack" || h.outcome === "retry" || h.outcome === "bury"))
          );

          console.log(
            `[contention ${backend}] ${JOBS} jobs, ${WORKERS} workers × ${CONCURRENCY}, lease ${LEASE_MS} ms: drained in ` +
              `${elapsed} ms; handlings ${handlings.length}, acked ${c.acked.size}, dead ${dead.length}, handed out again ` +
              `while the holder ran (lease run out, heartbeat stalled) ${c.reclaimed}, stale settles refused ${refused} ` +
              `(worker.lost ${lost}), stale settles accepted ${c.staleAccepted.length}, overlaps under a valid lease ` +
              `${c.overlaps.length}, tokens repeated ${c.tokensRepeated}, long handlers kept by the heartbeat handed out ` +
              `twice ${keptTwice.length}/${keptIds.length}, heartbeat losses reported for jobs the same worker settled ` +
              `${spurious.length}, other errors ${otherErrors.length}`,
          );
          expect(c.overlaps.slice(0, 5)).toEqual([]);
          expect(c.staleAccepted.slice(0, 5)).toEqual([]);
          expect(c.tokensRepeated).toBe(0);
          expect(c.ackedTwice).toEqual([]);
          expect(c.acked.size + dead.length).toBe(JOBS);
          expect(dead.length).toBe(expectedDead);
          expect(buried).toBe(expectedDead);
          expect(new Set([...c.acked, ...dead])).toEqual(new Set(ids));
          expect(counts).toEqual({
            pending: 0,
            active: 0,
            schedule: 0,
            dead: expectedDead,
            completed: Math.min(COMPLETED_MAX_DEFAULT, JOBS - expectedDead),
            waitingChildren: 0,
          });
          // the dead keep their rows, and the newest COMPLETED_MAX_DEFAULT completed jobs (the default retention)
          expect(rows).toBe(expectedDead + Math.min(COMPLETED_MAX_DEFAULT, JOBS - expectedDead));
          expect(completed).toBe(c.acked.size);
          expect(otherErrors).toEqual([]); // first: a settle without an outcome says why here
          expect(notSettled).toBe(0);
          expect(keptTwice).toEqual([]);
          expect(c.reclaimed).toBeGreaterThan(0); // the stalled jobs did lose their lease
          expect(refused).toBeGreaterThan(0); // … and their holders' acks were refused
          // worker.lost and the LeaseLostErrors reported count the stalled jobs only: a job the worker
          // itself settled is not lost (fails today: the heartbeat races the settle, see the report)
          expect(spurious.slice(0, 3)).toEqual([]);
          expect(lost).toBe(refused);
          expect(lostReported).toBe(refused);
        } finally {
          await Promise.all(workers.map((w) => w.stop().catch(() => {})));
          recorder.close();
          await Promise.all(clients.map((c) => c.close()));
        }
      }, 240_000);
    }
  });
}
