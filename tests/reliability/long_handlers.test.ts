/**
 * Handlers much longer than their lease, per backend, on one standalone site.server.
 *
 * 1. Handlers 5× longer than the lease (lease 300 ms, handler 1,500 ms), three workers: the
 *    heartbeat keeps every lease, so every job runs exactly once and is acked, and no worker loses
 *    a lease.
 * 2. A handler whose lease is taken away while it runs — its row's token altered, its active entry
 *    deleted, or its heartbeat paused while another client claims the job — sees `job.signal`
 *    abort with a LeaseLostError at the next heartbeat, and its job is not acked by it.
 */
import { describe, expect, test } from "bun:test";
import { EchoMQ, type EchoMQOptions, LeaseLostError, Worker, type WorkerJob } from "../../client.ts";
import { jobKey } from "../../mod.ts";
import { command, waitUntil } from "../../tools/embedded/mod.ts";
import { Recorder, sleep } from "./_recorder.ts";
import { BACKENDS, useServer } from "./_server.ts";

const LEASE_MS = 300;
const HANDLER_MS = 1500;
const WORKERS = 3;
const CONCURRENCY = 4;
const JOBS = 24; // two rounds of the 12 slots
type P = { n: number };

const site = useServer();

function options(backend: "module" | "scripts"): EchoMQOptions<P> {
  return { addresses: [{ host: "127.0.0.1", port: site.server.port }], requestTimeout: 10_000, backend };
}

const until = (what: string, check: () => Promise<boolean> | boolean, ms: number): Promise<void> => waitUntil(what, check, ms, 10);

for (const backend of BACKENDS) {
  describe(`long handlers (${backend})`, () => {
    test(`handlers ${HANDLER_MS / LEASE_MS}× their lease: every job runs once and is acked; no lease lost`, async () => {
      const q = `long-${backend}`;
      const clients: Array<EchoMQ<P>> = [];
      const workers: Array<Worker<P>> = [];
      const runs = new Map<string, number>();
      const aborted: string[] = [];
      const errors: unknown[] = [];
      try {
        for (let i = 0; i <= WORKERS; i++) clients.push(await EchoMQ.connect<P>(options(backend)));
        const producer = clients[WORKERS]!;
        for (let w = 0; w < WORKERS; w++) {
          workers.push(clients[w]!.work(q, async (job) => {
            runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
            await sleep(HANDLER_MS);
            if (job.signal.aborted) aborted.push(job.id);
          }, { concurrency: CONCURRENCY, leaseMs: LEASE_MS, blockMs: 1000, maxAttempts: 5, onError: (e) => errors.push(e) }));
        }
        const t0 = Date.now();
        const ids = await producer.enqueueMany(q, Array.from({ length: JOBS }, (_, n) => ({ n })));
        await until("the queue to drain", async () => {
          const c = await producer.counts(q);
          return c.pending + c.active + c.schedule === 0;
        }, 60_000);
        const elapsed = Date.now() - t0;
        await Promise.all(workers.map((w) => w.stop()));
        const completed = workers.reduce((s, w) => s + w.completed, 0);
        const lost = workers.reduce((s, w) => s + w.lost, 0);
        const twice = [...runs.entries()].filter(([, n]) => n !== 1).map(([id]) => id);
        console.log(
          `[long_handlers ${backend}] ${JOBS} jobs of ${HANDLER_MS} ms, lease ${LEASE_MS} ms (heartbeat ${LEASE_MS / 3} ms), ` +
            `${WORKERS} workers × ${CONCURRENCY}: drained in ${elapsed} ms; runs ${[...runs.values()].reduce((a, b) => a + b, 0)}, ` +
            `run more than once ${twice.length}, acked ${completed}, lost ${lost}, aborted ${aborted.length}, errors ${errors.length}`,
        );
        expect(errors).toEqual([]);
        expect(twice).toEqual([]);
        expect(new Set(runs.keys())).toEqual(new Set(ids));
        expect(completed).toBe(JOBS);
        expect(lost).toBe(0);
        expect(aborted).toEqual([]);
        expect(await producer.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: JOBS, waitingChildren: 0 });
      } finally {
        await Promise.all(workers.map((w) => w.stop().catch(() => {})));
        await Promise.all(clients.map((c) => c.close()));
      }
    }, 90_000);

    for (const how of ["token altered", "active entry deleted", "heartbeat paused, claimed by another"] as const) {
      test(`a handler whose lease is taken away (${how}) sees its signal abort with LeaseLostError; not acked by it`, async () => {
        const q = `taken-${backend}-${how.split(" ")[0]}`;
        const mq = await EchoMQ.connect<P>(options(backend));
        const other = await EchoMQ.connect<P>(options(backend));
        const recorder = new Recorder<P>();
        const pause = { on: false };
        const errors: unknown[] = [];
        let started: WorkerJob<P> | null = null;
        let reason: unknown = undefined;
        let abortedAt = 0;
        let returnedAt = 0;
        let worker: Worker<P> | undefined;
        try {
          worker = new Worker<P>(
            recorder.client(mq, 0, { dropExtend: () => pause.on }),
            q,
            async (job) => {
              started = job;
              const signal = job.signal;
              await new Promise<void>((done) => {
                const timer = setTimeout(done, 10_000);
                signal.addEventListener("abort", () => {
                  abortedAt = Date.now();
                  reason = signal.reason;
                  clearTimeout(timer);
                  done();
                }, { once: true });
              });
              returnedAt = Date.now();
            },
            { leaseMs: LEASE_MS, blockMs: 1000, onError: (e) => errors.push(e) },
            () => {},
          );
          const id = await mq.enqueue(q, { n: 1 });
          await until("the handler to start", () => started !== null, 10_000);
          await sleep(2 * LEASE_MS); // a few heartbeats go through first
          const row = jobKey(q, id);
          const acked0 = Number(await command(site.server.port, ["HGET", `emq:{${q}}:meta`, "acked"]) ?? 0);
          let thief: { id: string; token: number } | null = null;
          const takenAt = Date.now();
          if (how === "token altered") {
            expect(await command(site.server.port, ["HSET", row, "token", "999999999"])).toBe(0);
          } else if (how === "active entry deleted") {
            expect(await command(site.server.port, ["ZREM", `emq:{${q}}:active`, id])).toBe(1);
          } else {
            pause.on = true;
            await sleep(LEASE_MS + 100); // the lease runs out
            thief = await other.claim(q, { leaseMs: 60_000 });
            expect(thief?.id).toBe(id);
            pause.on = false;
          }
          await until("the signal to abort", () => abortedAt > 0, 5_000).catch(() => {});
          await until("the handler to return", () => returnedAt > 0, 1_000).catch(() => {});
          // stop claiming (the job would be handed out again once its lease runs out), let any
          // settle the worker would send go out, then look
          await worker.stop();
          await sleep(LEASE_MS);
          const acked1 = Number(await command(site.server.port, ["HGET", `emq:{${q}}:meta`, "acked"]) ?? 0);
          const rowLeft = Number(await command(site.server.port, ["EXISTS", row]));
          const mine = recorder.handlings.find((h) => h.token === started!.token);
          console.log(
            `[long_handlers ${backend}] lease taken away (${how}): signal aborted ${abortedAt ? abortedAt - takenAt : "never"} ms ` +
              `later (reason ${reason instanceof Error ? reason.name : String(reason)}), handler returned, settle sent by it: ` +
              `${mine?.outcome === "none" ? "none" : mine?.outcome}, acked counter ${acked0} → ${acked1}, row left ${rowLeft}, ` +
              `worker lost ${worker.lost} completed ${worker.completed}`,
          );
          expect(abortedAt).toBeGreaterThan(0);
          expect(reason).toBeInstanceOf(LeaseLostError);
          expect((reason as LeaseLostError).ids).toEqual([id]);
          expect(mine?.outcome).toBe("none"); // it sent no ack (nor retry, nor bury)
          expect(acked1).toBe(acked0);
          expect(rowLeft).toBe(1);
          expect(worker.completed).toBe(0);
          expect(worker.lost).toBe(1);
          expect(errors.filter((e) => !(e instanceof LeaseLostError))).toEqual([]);
          expect(errors.length).toBe(1);
          if (thief) {
            await other.ack(thief as never); // the new holder's ack goes through
            expect(rowLeft).toBe(1);
            // completed by the new holder (kept: the default retention of completed jobs)
            expect(await command(site.server.port, ["HGET", row, "state"])).toBe("completed");
          }
        } finally {
          await worker?.stop().catch(() => {});
          recorder.close();
          await mq.close();
          await other.close();
        }
      }, 30_000);
    }
  });
}
