/**
 * Sandboxed processors (issue 38.2): jobs/s of one worker of concurrency 50 with a no-op handler,
 * in process, in a pool of worker threads and in a pool of child processes, beside BullMQ's
 * `Worker` in process and sandboxed (its processor file, child processes and worker threads), on
 * one local server, each phase on its own queue of `--n` jobs added in bulk first.
 *
 * Run: node_modules/.bin/bun bench/sandbox.ts [--n 20000]
 */
import { Queue, Worker as BullWorker } from "bullmq";
import { EchoMQ } from "../client.ts";
import { startServer } from "../tools/embedded/mod.ts";
import { bullConnection, cliOptions, PAYLOAD, report, until } from "./_util.ts";

const opt = cliOptions({ n: 20000 });
const N = opt.n;
const CONCURRENCY = 50;
const PHASE_TIMEOUT_MS = 300_000;
const server = await startServer({});
const addresses = [{ host: server.host, port: server.port }];
const mq = await EchoMQ.connect<typeof PAYLOAD>({ addresses });
const results: Record<string, number> = {};

async function echomq(name: string, handler: (() => void) | URL, sandbox?: "thread" | "process"): Promise<void> {
  const q = `sbx-${name}`;
  for (let i = 0; i < N; i += 1000) await mq.enqueueMany(q, Array.from({ length: Math.min(1000, N - i) }, () => PAYLOAD));
  const t0 = performance.now();
  const w = mq.work(q, handler, { concurrency: CONCURRENCY, leaseMs: 60_000, ...(sandbox === undefined ? {} : { sandbox }) });
  await until(name, () => w.completed >= N, PHASE_TIMEOUT_MS, 5);
  results[`echomq ${name}`] = Math.round(N / ((performance.now() - t0) / 1000));
  await w.stop();
}

async function bull(name: string, processor: string | (() => Promise<void>), useWorkerThreads = false): Promise<void> {
  const q = `bull-${name}`;
  const connection = bullConnection(addresses, false);
  const queue = new Queue(q, { connection });
  for (let i = 0; i < N; i += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, N - i) }, () => ({ name: "j", data: PAYLOAD, opts: { removeOnComplete: true } })));
  }
  let done = 0;
  const t0 = performance.now();
  const w = new BullWorker(q, processor as never, { connection, concurrency: CONCURRENCY, useWorkerThreads });
  w.on("completed", () => done++);
  await until(name, () => done >= N, PHASE_TIMEOUT_MS, 5);
  results[`bullmq ${name}`] = Math.round(N / ((performance.now() - t0) / 1000));
  await w.close();
  await queue.close();
}

const processor = new URL("./_sandbox/processor.ts", import.meta.url);
const bullProcessor = new URL("./_sandbox/bull_processor.js", import.meta.url).pathname;
await echomq("in-process", () => {});
await echomq("thread", processor, "thread");
await echomq("process", processor, "process");
await bull("in-process", async () => {});
await bull("process", bullProcessor);
await bull("thread", bullProcessor, true);
await mq.close();
await server.stop();
console.log(Object.entries(results).map(([k, v]) => `${k}: ${v} jobs/s`).join("\n"));
report({ n: N, concurrency: CONCURRENCY, jobsPerSecond: results });
