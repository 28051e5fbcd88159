/**
 * Idle cost, per backend: a worker of concurrency 50 with nothing to do waits on the server (the
 * module's CLAIM blocked on pending, the scripts' BZPOPMIN on wake), maintenance included. Over
 * ~6 s it may send at most 1 command per second: counted on the server (a server of its own per
 * backend) as the delta of INFO's `total_commands_processed` (less the measuring INFO itself) and,
 * per command, of `commandstats`; the server counts the commands a script runs inside its call too
 * (TYPE, TIME, …), so those are printed apart and the bound is on the commands sent. And a
 * job enqueued to the idle worker starts quickly: the latency is printed; only < 1000 ms is
 * asserted (speed targets belong to benchmarks).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { command, commandCalls, infoFields, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { sleep } from "./_recorder.ts";
import { BACKENDS } from "./_server.ts";

const WINDOW_MS = 6000;
const SAMPLES = 6;
type P = { n: number };

/** The commands a client of this suite may send (anything else in commandstats ran inside a call). */
const SENT =
  /^(emq\.\w+|fcall|function|evalsha|eval|eval_ro|evalsha_ro|bzpopmin|script|info|ping|hello|client|config|command|module|exec|multi|wait|select|readonly)$/;

let server: ServerHandle; // one per backend: a blocked call of one must not count against the other
const servers: ServerHandle[] = [];

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** `INFO stats commandstats` in one call: the processed total, and calls per command. */
async function snapshot(): Promise<{ total: number; calls: Map<string, number> }> {
  const text = await command(server.port, ["INFO", "stats", "commandstats"]);
  return { total: Number(infoFields(text)["total_commands_processed"]), calls: commandCalls(text) };
}

/** Commands clients sent per second over `ms` (commandstats' delta of {@link SENT}, less the measuring INFO). */
async function sentPerSecond(ms: number): Promise<{ rate: number; by: string }> {
  const a = await snapshot();
  const t0 = Date.now();
  await sleep(ms);
  const b = await snapshot();
  const delta: Array<[string, number]> = [];
  for (const [cmd, n] of b.calls) {
    const d = n - (a.calls.get(cmd) ?? 0) - (cmd === "info" ? 1 : 0);
    if (d > 0 && SENT.test(cmd)) delta.push([cmd, d]);
  }
  const sent = delta.reduce((s, [, n]) => s + n, 0);
  return { rate: sent / ((Date.now() - t0) / 1000), by: delta.map(([c, n]) => `${c} ${n}`).join(", ") || "none" };
}

for (const backend of BACKENDS) {
  describe(`idle (${backend})`, () => {
    beforeAll(async () => {
      server = await startServer({ module: moduleIfBuilt() });
      servers.push(server);
    }, 60_000);
    test("an idle worker (concurrency 50) sends at most 1 command/s; an enqueued job starts < 1 s later", async () => {
      const q = `idle-${backend}`;
      const mq = await EchoMQ.connect<P>({
        addresses: [{ host: "127.0.0.1", port: server.port }],
        requestTimeout: 10_000,
        backend,
      });
      const started = new Map<number, number>();
      const errors: unknown[] = [];
      const worker = mq.work(q, (job) => void started.set(job.payload.n, Date.now()), {
        concurrency: 50,
        onError: (e) => errors.push(e),
      });
      try {
        // warm: one job through, then let the worker settle into waiting
        await mq.enqueue(q, { n: -1 });
        const warm = Date.now() + 10_000;
        while (!started.has(-1) && Date.now() < warm) await sleep(10);
        expect(started.has(-1)).toBe(true);
        await sleep(1000);

        const a = await snapshot();
        const t0 = Date.now();
        await sleep(WINDOW_MS);
        const b = await snapshot();
        const seconds = (Date.now() - t0) / 1000;
        const processed = b.total - a.total - 1; // the first INFO is counted once it has run
        const delta: Array<[string, number]> = [];
        for (const [cmd, n] of b.calls) {
          const d = n - (a.calls.get(cmd) ?? 0) - (cmd === "info" ? 1 : 0);
          if (d > 0) delta.push([cmd, d]);
        }
        const sent = delta.filter(([cmd]) => SENT.test(cmd)).reduce((s, [, n]) => s + n, 0);
        const inner = delta.filter(([cmd]) => !SENT.test(cmd)).reduce((s, [, n]) => s + n, 0);

        // latency: a job enqueued to the idle worker, after idle gaps of different lengths
        const latencies: number[] = [];
        for (let i = 0; i < SAMPLES; i++) {
          await sleep(200 + ((i * 397) % 1300));
          const t = Date.now();
          await mq.enqueue(q, { n: i });
          const end = t + 5000;
          while (!started.has(i) && Date.now() < end) await sleep(1);
          latencies.push(started.has(i) ? started.get(i)! - t : Infinity);
        }
        const sorted = [...latencies].sort((x, y) => x - y);
        console.log(
          `[idle ${backend}] concurrency 50, blockMs 5000 (default), ${seconds.toFixed(1)} s idle: ` +
            `total_commands_processed +${processed} (${(processed / seconds).toFixed(2)}/s), sent by clients ${sent} ` +
            `(${(sent / seconds).toFixed(2)}/s), run inside calls ${inner}; by command ${
              delta.map(([c, n]) => `${c} ${n}`).join(", ") || "none"
            } | enqueue → handler start: median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms ` +
            `(${latencies.join(", ")})`,
        );
        expect(errors).toEqual([]);
        expect(sent / seconds).toBeLessThanOrEqual(1);
        expect(processed - inner).toBe(sent);
        for (const l of latencies) expect(l).toBeLessThan(1000);
      } finally {
        await worker.stop();
        await mq.close();
      }
    }, 60_000);

    test(
      "a worker held back by a pause or a concurrency limit, jobs pending, sends at most 1 command/s; a freed slot starts the next < 1 s later",
      async () => {
        const q = `held-${backend}`;
        const mq = await EchoMQ.connect<P>({ addresses: [{ host: "127.0.0.1", port: server.port }], requestTimeout: 10_000, backend });
        const started = new Map<number, number>();
        const hold = Promise.withResolvers<void>();
        const worker = mq.work(q, async (job) => {
          started.set(job.payload.n, Date.now());
          if (job.payload.n === 0) await hold.promise;
        }, { concurrency: 50 });
        try {
          // paused with jobs pending: claims hand out nothing, and nothing wakes the worker
          await mq.pause(q);
          await mq.enqueueMany(q, [{ n: 0 }, { n: 1 }, { n: 2 }]);
          await sleep(500);
          const paused = await sentPerSecond(WINDOW_MS / 2);
          // at its concurrency limit (job 0 holds the one slot) with jobs pending
          await mq.limit(q, { concurrency: 1 });
          await mq.resume(q);
          const until = Date.now() + 10_000;
          while (!started.has(0) && Date.now() < until) await sleep(5);
          await sleep(500);
          const limited = await sentPerSecond(WINDOW_MS / 2);
          expect(started.size).toBe(1);
          const freed = Date.now();
          hold.resolve();
          while (!started.has(1) && Date.now() < freed + 5000) await sleep(1);
          console.log(
            `[idle ${backend}] held back, jobs pending: paused ${paused.rate.toFixed(2)} commands/s (${paused.by}); ` +
              `at a concurrency limit ${limited.rate.toFixed(2)}/s (${limited.by}); slot freed → next job start ${started.get(1)! - freed} ms`,
          );
          expect(paused.rate).toBeLessThanOrEqual(1);
          expect(limited.rate).toBeLessThanOrEqual(1);
          expect(started.get(1)! - freed).toBeLessThan(1000);
        } finally {
          hold.resolve();
          await worker.stop();
          await mq.close();
        }
      },
      60_000,
    );
  });
}
