/**
 * Lanes, measured (issue 19 §1, §4, §5), on one embedded server in one run:
 *
 * - **claim cost vs lane count**: server CPU per CLAIM of one job (`INFO commandstats`
 *   `usec_per_call`; module `emq.claim`, scripts `fcall`) on a queue whose jobs are spread over
 *   10, 10,000 and 100,000 lanes, beside the same claims on a queue without lanes, and on a laned
 *   queue whose lanes and queue all have a concurrency and a rate limit in force (set high, so that
 *   every call claims: the cost of obeying them). Target: the most lanes ≤ 1.5× the fewest; lanes
 *   and limits on ≤ 1.3× a plain claim.
 * - **noisy neighbour**: one lane with `--big` jobs (100,000) enqueued first, then 99 lanes with 10
 *   jobs each; one worker of concurrency 10 with a no-op handler. Reports the claim rank of the
 *   last small-lane job (target: within the first 1,100 claims) and the p50/p99 wait (enqueue →
 *   handler) of the small lanes' jobs, beside BullMQ's `Worker` (FIFO: no lanes in its open-source
 *   core) on the same workload in the same run.
 *
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/lanes.ts [--n 20000] [--big 100000] [--rounds 3]
 */
import { Queue, Worker as BullWorker } from "bullmq";
import { EchoMQ } from "../client.ts";
import { command, infoFields, startServer } from "../tools/embedded/mod.ts";
import { bullConnection, cliOptions, percentile, pool, until } from "./_util.ts";

const opt = cliOptions({ n: 20000, big: 100000, rounds: 3 });
const LANE_COUNTS = [10, 10_000, 100_000] as const;
const SMALL_LANES = 99;
const SMALL_JOBS = 10;
const IN_FLIGHT = 200;

const server = await startServer({});
if (!server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
const addresses = [{ host: server.host, port: server.port }];

/** `usec_per_call` of one command since the last `CONFIG RESETSTAT`. */
async function usecPerCall(name: string): Promise<number> {
  const raw = infoFields(await command(server.port, ["INFO", "commandstats"]))[`cmdstat_${name}`];
  if (!raw) throw new Error(`no cmdstat_${name}`);
  return Number(/usec_per_call=([0-9.]+)/.exec(raw)![1]);
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

type Cost = { plain: number; limited: number } & Record<`lanes${number}`, number>;

/** One round of the claim-cost phases on one backend. */
async function claimCosts(backend: "module" | "scripts", round: number): Promise<Cost> {
  // a batch of 1000 jobs in 1000 new lanes takes the server a while on a busy machine: a long timeout
  const mq = await EchoMQ.connect({ addresses, backend, inflightRequestsLimit: 1000, requestTimeout: 60_000 });
  const name = backend === "module" ? "emq.claim" : "fcall";
  const out = {} as Cost;
  try {
    // fills q with `jobs` jobs (job i in lane i mod lanes; no lane when lanes is 0), then times N claims
    const measure = async (q: string, lanes: number, jobs: number): Promise<number> => {
      const lane = lanes === 0 ? undefined : (_: unknown, i: number): string => `t${i % lanes}`;
      await mq.enqueueMany(q, Array.from({ length: jobs }, (_, i) => i), { lane });
      await command(server.port, ["CONFIG", "RESETSTAT"]);
      await pool(opt.n, IN_FLIGHT, async () => {
        if ((await mq.claim(q, { leaseMs: 600_000 })) === null) throw new Error(`${q}: a claim claimed nothing`);
      });
      const usec = await usecPerCall(name);
      // the server is this benchmark's own: the next phase starts from an empty one
      await command(server.port, ["FLUSHALL"]);
      return usec;
    };
    out.plain = await measure(`lc-${backend}-${round}-plain`, 0, opt.n);
    for (const lanes of LANE_COUNTS) out[`lanes${lanes}`] = await measure(`lc-${backend}-${round}-${lanes}`, lanes, Math.max(opt.n, lanes));
    const limited = `lc-${backend}-${round}-limited`;
    const high = { concurrency: 1_000_000, rate: { max: 1_000_000, perMs: 1, burst: 1_000_000 } };
    await mq.limit(limited, high);
    await mq.limit(limited, high, { perLane: true });
    out.limited = await measure(limited, 10, opt.n);
  } finally {
    await mq.close();
  }
  return out;
}

/** The noisy-neighbour workload on EchoMQ: the rank and wait of every small-lane job. */
async function noisyEchoMQ(round: number): Promise<{ lastRank: number; p50Ms: number; p99Ms: number }> {
  const mq = await EchoMQ.connect({ addresses, backend: "module" });
  const q = `noisy-${round}`;
  try {
    await mq.enqueueMany(q, Array.from({ length: opt.big }, () => ({ t: 0 })), { lane: "big" });
    const small = Array.from({ length: SMALL_LANES * SMALL_JOBS }, (_, i) => ({ t: Date.now(), i }));
    await mq.enqueueMany(q, small, { lane: (_: unknown, i: number) => `small${i % SMALL_LANES}` });
    let rank = 0;
    let lastRank = 0;
    const waits: number[] = [];
    const w = mq.work(q, (job) => {
      rank++;
      const p = job.payload as { t: number; i?: number };
      if (p.i !== undefined) {
        waits.push(Date.now() - p.t);
        lastRank = rank;
      }
    }, { concurrency: 10, leaseMs: 60_000 });
    await until("the small lanes' jobs", () => waits.length === small.length, 600_000, 5);
    await w.stop();
    await command(server.port, ["FLUSHALL"]);
    return { lastRank, p50Ms: percentile(waits, 50), p99Ms: percentile(waits, 99) };
  } finally {
    await mq.close();
  }
}

/** The same workload on BullMQ (one FIFO): when the small jobs run. */
async function noisyBull(round: number): Promise<{ lastRank: number; p50Ms: number; p99Ms: number }> {
  const connection = bullConnection(addresses, false);
  const name = `noisy-bull-${round}`;
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
  await queue.waitUntilReady();
  for (let i = 0; i < opt.big; i += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, opt.big - i) }, () => ({ name: "big", data: { t: 0 } })));
  }
  const smallCount = SMALL_LANES * SMALL_JOBS;
  for (let i = 0; i < smallCount; i += 1000) {
    await queue.addBulk(Array.from({ length: Math.min(1000, smallCount - i) }, (_, k) => ({ name: "small", data: { t: Date.now(), i: i + k } })));
  }
  let rank = 0;
  let lastRank = 0;
  const waits: number[] = [];
  const worker = new BullWorker(name, async (job) => {
    rank++;
    if (job.data.i !== undefined) {
      waits.push(Date.now() - job.data.t);
      lastRank = rank;
    }
  }, { connection, concurrency: 10 });
  try {
    await until("BullMQ's small jobs", () => waits.length === smallCount, 900_000, 5);
  } finally {
    await worker.close(true);
    await queue.close();
    await command(server.port, ["FLUSHALL"]);
  }
  return { lastRank, p50Ms: percentile(waits, 50), p99Ms: percentile(waits, 99) };
}

try {
  const costs: Record<"module" | "scripts", Cost[]> = { module: [], scripts: [] };
  const noisy: Array<{ emq: Awaited<ReturnType<typeof noisyEchoMQ>>; bull: Awaited<ReturnType<typeof noisyBull>> }> = [];
  for (let r = 0; r < opt.rounds; r++) {
    for (const b of ["module", "scripts"] as const) costs[b].push(await claimCosts(b, r));
    noisy.push({ emq: await noisyEchoMQ(r), bull: await noisyBull(r) });
    console.error(`round ${r + 1}/${opt.rounds}: ${JSON.stringify({ module: costs.module.at(-1), noisy: noisy.at(-1) })}`);
  }
  const medians = (rows: Cost[]): Cost => Object.fromEntries(Object.keys(rows[0]!).map((k) => [k, median(rows.map((x) => x[k as keyof Cost]))])) as Cost;
  const usec = { module: medians(costs.module), scripts: medians(costs.scripts) };
  const most = `lanes${LANE_COUNTS[2]}` as const, fewest = `lanes${LANE_COUNTS[0]}` as const;
  const ratios = Object.fromEntries((["module", "scripts"] as const).map((b) => [b, {
    mostVsFewest: usec[b][most] / usec[b][fewest],
    limitedVsPlain: usec[b].limited / usec[b].plain,
    lanesVsPlain: usec[b][fewest] / usec[b].plain,
  }]));
  const pick = (k: "emq" | "bull") => ({
    lastRank: median(noisy.map((x) => x[k].lastRank)),
    p50Ms: median(noisy.map((x) => x[k].p50Ms)),
    p99Ms: median(noisy.map((x) => x[k].p99Ms)),
    rounds: noisy.map((x) => x[k]),
  });
  for (const b of ["module", "scripts"] as const) {
    console.log(
      `${b}: claim µs plain ${usec[b].plain.toFixed(2)}, ` +
        LANE_COUNTS.map((l) => `${l} lanes ${usec[b][`lanes${l}`].toFixed(2)}`).join(", ") + `, lanes+limits ${usec[b].limited.toFixed(2)}`,
    );
  }
  console.log(JSON.stringify({
    n: opt.n,
    big: opt.big,
    rounds: opt.rounds,
    laneCounts: LANE_COUNTS,
    usecPerClaim: usec,
    usecRounds: costs,
    ratios,
    noisy: { emq: pick("emq"), bull: pick("bull"), smallJobs: SMALL_LANES * SMALL_JOBS },
  }));
} finally {
  await server.stop();
}
