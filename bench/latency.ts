/**
 * Enqueue-to-handler latency, one job in flight at a time, on one local server: the time from
 * just before `enqueue` / `Queue.add` is called to the moment the worker's handler starts, both
 * measured with this process's clock. The next job is enqueued only after the previous one has
 * been acked (completed), after a random pause: uniform in [0, pollMs + 20) ms for EchoMQ, so that
 * a job arrives at a uniformly random point of the worker's poll sleep (a pause of a fixed length
 * would line up with it), and uniform in [0, 20) ms for BullMQ. Both workers have concurrency 1
 * and are idle between jobs.
 *
 * EchoMQ's worker polls: when idle, one scout claim backs off from 1 ms up to `pollMs`, so its latency
 * depends on `pollMs`; it is measured at the default (DEFAULT_POLL_MS) and at a short one (5 ms). BullMQ's
 * worker blocks on `BZPOPMIN` of its marker key and wakes when a job is added.
 *
 * Options: `--samples S` per variant (default 200, after 20 warm-up jobs).
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/latency.ts [--samples 200]
 */
import { parseArgs } from "node:util";
import { Queue, Worker as BullWorker } from "bullmq";
import { DEFAULT_POLL_MS, EchoMQ } from "../client.ts";
import { command, startServer } from "../tools/embedded/mod.ts";
import { PAYLOAD, percentile, report, sleep, until } from "./_util.ts";

const { values: opt } = parseArgs({
  args: process.argv.slice(2),
  options: { samples: { type: "string", default: "200" } },
});
const SAMPLES = Number(opt.samples);
const WARMUP = 20;
const POLLS = [DEFAULT_POLL_MS, 5];

interface Summary {
  samples: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

function summarize(xs: number[]): Summary {
  return {
    samples: xs.length,
    p50Ms: percentile(xs, 50),
    p90Ms: percentile(xs, 90),
    p99Ms: percentile(xs, 99),
    maxMs: Math.max(...xs),
    meanMs: xs.reduce((a, b) => a + b, 0) / xs.length,
  };
}

/**
 * Runs WARMUP + SAMPLES jobs one at a time: `enqueue(seq)` admits job `seq`, the worker's handler
 * calls `started(seq)`, and `completed()` counts settled jobs.
 */
async function oneAtATime(
  gapMs: number,
  enqueue: (seq: number) => Promise<unknown>,
  startedAt: Map<number, number>,
  completed: () => number,
): Promise<number[]> {
  const out: number[] = [];
  for (let seq = 0; seq < WARMUP + SAMPLES; seq++) {
    await sleep(Math.random() * gapMs);
    const before = completed();
    const t0 = performance.now();
    await enqueue(seq);
    await until(`job ${seq} to complete`, () => completed() > before, 10_000, 0.5);
    const t1 = startedAt.get(seq);
    if (t1 === undefined) throw new Error(`job ${seq} completed without its handler starting`);
    if (seq >= WARMUP) out.push(t1 - t0);
  }
  return out;
}

const server = await startServer({});
if (!server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
const results: Record<string, Summary> = {};
try {
  const address = [{ host: server.host, port: server.port }];
  const mq = await EchoMQ.connect<{ seq: number; body: string }>({ addresses: address, backend: "module" });
  try {
    for (const pollMs of POLLS) {
      const queue = `lat-poll-${pollMs}`;
      const startedAt = new Map<number, number>();
      const worker = mq.work(queue, (job) => void startedAt.set(job.payload.seq, performance.now()), {
        concurrency: 1,
        pollMs,
      });
      await sleep(50);
      const xs = await oneAtATime(pollMs + 20, (seq) => mq.enqueue(queue, { seq, body: PAYLOAD.body }), startedAt, () => worker.completed);
      await worker.stop();
      results[`emqPoll${pollMs}`] = summarize(xs);
      console.error(`EchoMQ worker, pollMs ${pollMs}: p50 ${results[`emqPoll${pollMs}`]!.p50Ms.toFixed(2)} ms, p99 ${results[`emqPoll${pollMs}`]!.p99Ms.toFixed(2)} ms`);
    }
    // The idle cost of polling: claims a second while nothing is there.
    for (const pollMs of POLLS) {
      const queue = `idle-poll-${pollMs}`;
      const worker = mq.work(queue, () => {}, { concurrency: 50, pollMs, maintenanceMs: 60_000 });
      await sleep(100);
      await command(server.port, ["CONFIG", "RESETSTAT"]);
      await sleep(1000);
      const stats = String(await command(server.port, ["INFO", "commandstats"]));
      const m = /cmdstat_emq\.claim:calls=(\d+)/.exec(stats);
      await worker.stop();
      (results as Record<string, unknown>)[`idleClaimsPerSecPoll${pollMs}`] = m ? Number(m[1]) : 0;
    }
  } finally {
    await mq.close();
  }

  const connection = { host: server.host, port: server.port, maxRetriesPerRequest: null };
  const queue = new Queue("lat-bullmq", { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
  const startedAt = new Map<number, number>();
  let completed = 0;
  const worker = new BullWorker("lat-bullmq", async (job) => void startedAt.set(job.data.seq, performance.now()), {
    connection,
    concurrency: 1,
  });
  worker.on("completed", () => void completed++);
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    await sleep(50);
    const xs = await oneAtATime(20, (seq) => queue.add("job", { seq, body: PAYLOAD.body }), startedAt, () => completed);
    results.bullmq = summarize(xs);
    console.error(`BullMQ worker: p50 ${results.bullmq.p50Ms.toFixed(2)} ms, p99 ${results.bullmq.p99Ms.toFixed(2)} ms`);
  } finally {
    await worker.close();
    await queue.close();
  }
} finally {
  await server.stop();
}
report({ samples: SAMPLES, polls: POLLS, latency: results });
