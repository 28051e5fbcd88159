/**
 * The dashboard's page times on a large keyspace (issue 18 #7, issue 22 §4): one embedded server
 * (the module when built) holding QUEUES queues and ROWS job rows (pending, spread evenly), the
 * package's dashboard served by Bun.serve in this process. Measured, each over REPEAT requests
 * (median and p95, ms): the first `/` (it waits for the first, unpaced discovery walk), then `/`
 * (a page of 100 queues), `/api/queues`, `/metrics` (from the background snapshot) and one queue's
 * page, while the background walk runs; a queue's page on a dashboard just made (its HTML, and its
 * first paint: the HTML, the script and the API calls the page makes at once); the SCAN calls and server CPU per second of that walk
 * with one page polling; and, for comparison, one full keyspace walk (`mq.queues()`, what every
 * request cost before).
 *
 * Run: node_modules/.bin/bun bench/dashboard.ts [QUEUES] [ROWS] [REPEAT]
 */
import { EchoMQ } from "../client.ts";
import { dashboard } from "../ui.ts";
import { command, startServer } from "../tools/embedded/mod.ts";
import { commandStats, percentile, pool, report, serverCpu } from "./_util.ts";

const QUEUES = Number(process.argv[2] ?? 2000);
const ROWS = Number(process.argv[3] ?? 1_000_000);
const REPEAT = Number(process.argv[4] ?? 30);

const server = await startServer({ args: ["--save", "", "--appendonly", "no"] });
const mq = await EchoMQ.connect({ url: `valkey://127.0.0.1:${server.port}`, requestTimeout: 30_000 });
const names = Array.from({ length: QUEUES }, (_, i) => `q-${String(i).padStart(4, "0")}`);
const perQueue = Math.floor(ROWS / QUEUES);
const t0 = performance.now();
await pool(QUEUES, 8, async (i) => {
  await mq.enqueueMany(names[i]!, Array.from({ length: perQueue }, (_, n) => ({ n })));
});
const filledMs = performance.now() - t0;
const keys = Number(await command(server.port, ["DBSIZE"]));

const ui = dashboard(mq);
const http = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => ui(r) });
const base = `http://127.0.0.1:${http.port}`;

async function timed(path: string): Promise<number> {
  const start = performance.now();
  const r = await fetch(`${base}${path}`);
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
  return performance.now() - start;
}

async function series(path: string): Promise<{ medianMs: number; p95Ms: number }> {
  const xs: number[] = [];
  for (let i = 0; i < REPEAT; i++) xs.push(await timed(path));
  return { medianMs: +percentile(xs, 50).toFixed(1), p95Ms: +percentile(xs, 95).toFixed(1) };
}

const firstMs = +(await timed("/")).toFixed(1);
const firstMetricsMs = +(await timed("/metrics")).toFixed(1);
const pages = {
  queues: await series("/"),
  apiQueues: await series("/api/queues"),
  metrics: await series("/metrics"),
  queuePage: await series(`/queues/${names[QUEUES - 1]}`),
  apiJobs: await series(`/api/jobs?name=${names[0]}&state=pending`),
};

// A queue's page on a dashboard just made (nothing sampled, discovered or snapshotted yet): its
// HTML alone, then its first paint as a browser gets it — the HTML, the script and the API
// calls the script makes at once (counts, the four job tables, schedulers, workers), in parallel.
async function coldQueuePage(): Promise<{ htmlMs: number; firstPaintMs: number }> {
  const fresh = dashboard(mq);
  const served = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (r) => fresh(r) });
  const at = `http://127.0.0.1:${served.port}`;
  const get = async (path: string): Promise<void> => {
    const r = await fetch(`${at}${path}`);
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
  };
  const q = names[QUEUES - 1]!;
  try {
    const start = performance.now();
    await get(`/queues/${q}`);
    const htmlMs = performance.now() - start;
    await Promise.all([
      get("/dashboard.js"),
      get(`/api/queue?name=${q}`),
      ...["dead", "active", "pending", "scheduled"].map((state) => get(`/api/jobs?name=${q}&state=${state}`)),
      get(`/api/schedulers?name=${q}`),
      get(`/api/workers?name=${q}`),
    ]);
    return { htmlMs: +htmlMs.toFixed(1), firstPaintMs: +(performance.now() - start).toFixed(1) };
  } finally {
    fresh.close();
    served.stop(true);
  }
}
const queuePageCold = await coldQueuePage();

// the background walk's cost, with one page polling /api/queues once a second for 10 s
const before = await commandStats(server.port);
const cpu0 = await serverCpu(server.port);
for (let i = 0; i < 10; i++) {
  await timed("/api/queues");
  await new Promise((r) => setTimeout(r, 1000));
}
const after = await commandStats(server.port);
const cpu1 = await serverCpu(server.port);
const scansPerSec = +(((after.scan?.calls ?? 0) - (before.scan?.calls ?? 0)) / 10).toFixed(1);
const serverCpuPerSec = +((cpu1 - cpu0) / 10).toFixed(3);

// what one request cost before: a full walk, then every queue's stats
const w0 = performance.now();
const walked = await mq.queues();
const fullWalkMs = +(performance.now() - w0).toFixed(1);

ui.close();
http.stop(true);
await mq.close();
await server.stop();
report({
  queues: QUEUES,
  rows: perQueue * QUEUES,
  keys,
  fillSeconds: +(filledMs / 1000).toFixed(1),
  firstPaintColdMs: firstMs,
  firstMetricsMs,
  queuePageCold,
  pages,
  backgroundWalk: { scansPerSec, serverCpuPerSec },
  fullWalkMs,
  fullWalkQueues: walked.length,
});
