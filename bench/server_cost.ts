/**
 * Server CPU per call of each EchoMQ verb, module beside scripts, and of BullMQ's add, claim and
 * complete scripts, on one embedded server in one run: `CONFIG RESETSTAT`, a phase of N calls,
 * then `INFO commandstats` `usec_per_call` (`cmdstat_emq.<verb>` for the module,
 * `cmdstat_fcall` for the scripts (their function libraries); EVALSHA + EVAL for BullMQ, whose ioredis falls back to EVAL
 * on NOSCRIPT). The commands each BullMQ script runs inside are listed per script call (a profile).
 *
 * `claimLimited` is CLAIM on a queue whose concurrency and rate limits are in force (set high, so
 * that every call claims: the cost of checking them), beside `claim` on a plain queue.
 *
 * One call is one job for every verb but two: PROMOTE moves up to 100 ids per call, and the batched
 * admission phase (`enqueueMany` of N jobs: one ENQUEUE of 1000 groups per command, 8 in flight)
 * whose figure is per JOB (the verb's usec over the phase divided by N), beside BullMQ's `addBulk`
 * per job (chunks of 1000 jobs, 8 in flight: `addStandardJob` once per job inside a MULTI, so the
 * script's usec over the phase divided by N is per job too).
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/server_cost.ts [N] [ROUNDS]
 */
import { type Job as BullJob, Queue, Worker } from "bullmq";
import { EchoMQ, type Job } from "../client.ts";
import { command, infoFields, startServer } from "../tools/embedded/mod.ts";
import { insideScripts, phase as measured, pool as poolN, scriptUsecPerCall } from "./_util.ts";

const N = Number(process.argv[2] ?? 20000);
/** Rounds of every phase, interleaved (module, scripts, BullMQ, module, …); the median is kept. */
const ROUNDS = Number(process.argv[3] ?? 5);
const IN_FLIGHT = 200;
/** BullMQ addBulk: jobs per call and calls in flight, as `enqueueMany` sends its commands. */
const BULK_CHUNK = 1000;
const BULK_IN_FLIGHT = 8;

/** `usec_per_call` and `calls` of one command from INFO commandstats. */
async function stat(port: number, name: string): Promise<{ calls: number; usecPerCall: number }> {
  const fields = infoFields(await command(port, ["INFO", "commandstats"]));
  const raw = fields[`cmdstat_${name}`];
  if (!raw) throw new Error(`no cmdstat_${name}`);
  const kv = Object.fromEntries(raw.split(",").map((p) => p.split("=") as [string, string]));
  return { calls: Number(kv.calls), usecPerCall: Number(kv.usec_per_call) };
}

/** Runs `task` over `items` with at most `inFlight` calls at once. */
async function pool<T>(items: T[], task: (x: T) => Promise<unknown>, inFlight = IN_FLIGHT): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

/** The verbs measured one job per call (PROMOTE: 100 ids per call), then `enqueueMany` per job. */
const VERB_ORDER = [
  "enqueue",
  "claim",
  "extend",
  "progress",
  "ack",
  "retry",
  "bury",
  "remove",
  "requeue",
  "schedule",
  "promote",
  "enqueueBatchPerJob",
  "claimLimited",
] as const;
type Verb = (typeof VERB_ORDER)[number];

async function measure(mq: EchoMQ<unknown>, port: number, queue: string): Promise<Record<Verb, number>> {
  const name = (verb: string): string => (mq.backend === "module" ? `emq.${verb}` : "fcall");
  const out = {} as Record<Verb, number>;
  /** The verb's usec over the phase divided by `per` (default: by its calls). */
  const phase = async (verb: Verb, run: () => Promise<unknown>, per?: number): Promise<void> => {
    await command(port, ["CONFIG", "RESETSTAT"]);
    await run();
    const counted = verb === "enqueueBatchPerJob" ? "enqueue" : verb === "claimLimited" ? "claim" : verb;
    const s = await stat(port, name(counted));
    out[verb] = per === undefined ? s.usecPerCall : (s.usecPerCall * s.calls) / per;
  };
  const payload = { to: "ada@example.com", body: "x".repeat(64) };
  const ones = Array.from({ length: N }, (_, i) => i);
  // one call at a time: calls in flight together would go as one command (they coalesce), and
  // this row is what one job alone costs (bench/throughput.ts measures enqueue with 500 in flight)
  await phase("enqueue", () => pool(ones, () => mq.enqueue(queue, payload), 1));
  const jobs: Job<unknown>[] = [];
  await phase("claim", () => pool(ones, async () => jobs.push((await mq.claim(queue, { leaseMs: 60_000 }))!)));
  await phase("extend", () => pool(jobs, (j) => mq.extend(j, 60_000)));
  await phase("progress", () => pool(jobs.slice(0, N / 2), (j) => mq.progress(j, { done: 50 })));
  await phase("ack", () => pool(jobs.splice(0, N / 2), (j) => mq.ack(j)));
  await phase("retry", () => pool(jobs.splice(0, N / 4), (j) => mq.retry(j, { delayMs: 1, reason: "bench" })));
  const dead = jobs.splice(0);
  await phase("bury", () => pool(dead, (j) => mq.bury(j, "bench")));
  // half of the dead jobs removed, the other half requeued, one id per call
  await phase("remove", () =>
    pool(dead.slice(0, N / 8), async (j) => {
      if (!(await mq.remove(queue, j.id))) throw new Error(`remove ${j.id}: not removed`);
    }));
  await phase("requeue", () => pool(dead.slice(N / 8), (j) => mq.requeueDead(queue, { ids: [j.id] })));
  await phase("schedule", () => pool(ones.slice(0, N / 4), () => mq.schedule(queue, payload, { delayMs: 1 }), 1));
  await new Promise((r) => setTimeout(r, 20));
  await phase("promote", () => pool(Array.from({ length: N / 100 }, (_, i) => i), () => mq.promote(queue, 100)));
  await phase("enqueueBatchPerJob", () => mq.enqueueMany(`${queue}-batch`, Array.from({ length: N }, () => payload)), N);
  // CLAIM on a queue with a concurrency and a rate limit in force (set high, so that each call
  // claims its job: the cost of obeying the limits, not of waiting for them)
  const limited = `${queue}-limited`;
  await mq.limit(limited, { concurrency: 1_000_000, rate: { max: 1_000_000, perMs: 1, burst: 1_000_000 } });
  await mq.enqueueMany(limited, Array.from({ length: N }, () => payload));
  await phase("claimLimited", () =>
    pool(ones, async () => {
      if ((await mq.claim(limited, { leaseMs: 60_000 })) === null) throw new Error("a limited claim claimed nothing");
    }));
  return out;
}

type BullVerb = "add" | "claim" | "complete" | "addBulkPerJob";

/**
 * BullMQ 6 on the same server: `Queue.add` (the `addStandardJob` script), `Worker.getNextJob`
 * without blocking (`moveToActive`), `Job.moveToCompleted` without fetching the next job
 * (`moveToFinished`) — BullMQ's documented manual-processing calls, one script each. Jobs are
 * added with `removeOnComplete: true` (EchoMQ's ack deletes the row too); the stalled-job checker
 * and lock renewal are off so that no other script runs during a phase. Then `Queue.addBulk` of N
 * jobs (chunks of 1000, 8 in flight): its script's usec over the phase, divided by N, per job.
 */
async function measureBull(port: number, host: string, name: string) {
  const connection = { host, port, maxRetriesPerRequest: null };
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
  const worker = new Worker(name, null, {
    connection,
    autorun: false,
    skipStalledCheck: true,
    skipLockRenewal: true,
    lockDuration: 600_000,
  });
  try {
    await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
    const payload = { to: "ada@example.com", body: "x".repeat(64) };
    const token = "bench-token";
    const usec = {} as Record<BullVerb, number>;
    const profile = {} as Record<BullVerb, ReturnType<typeof insideScripts>>;
    const record = (verb: BullVerb, commands: Parameters<typeof scriptUsecPerCall>[0]): void => {
      const s = scriptUsecPerCall(commands);
      usec[verb] = s.usecPerCall;
      profile[verb] = insideScripts(commands, s.calls);
    };
    record("add", (await measured([port], () => poolN(N, IN_FLIGHT, () => queue.add("job", payload)))).cost.commands);
    const jobs: BullJob[] = [];
    const claimed = await measured([port], () =>
      poolN(N, IN_FLIGHT, async () => {
        const job = await worker.getNextJob(token, { block: false });
        if (!job) throw new Error("BullMQ getNextJob returned no job");
        jobs.push(job);
      }));
    record("claim", claimed.cost.commands);
    record("complete", (await measured([port], () => poolN(N, IN_FLIGHT, (i) => jobs[i]!.moveToCompleted("ok", token, false)))).cost.commands);
    const bulk = (await measured([port], () =>
      poolN(Math.ceil(N / BULK_CHUNK), BULK_IN_FLIGHT, (c) =>
        queue.addBulk(Array.from({ length: Math.min(BULK_CHUNK, N - c * BULK_CHUNK) }, () => ({ name: "job", data: payload })))))).cost.commands;
    const s = scriptUsecPerCall(bulk);
    if (s.calls !== N) {
      throw new Error(`BullMQ addBulk of ${N} jobs ran ${s.calls} scripts`);
    }
    usec.addBulkPerJob = (s.usecPerCall * s.calls) / N;
    profile.addBulkPerJob = insideScripts(bulk, N);
    return { usec, profile };
  } finally {
    await worker.close();
    await queue.close();
  }
}

const server = await startServer({});
if (!server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
try {
  const address = [{ host: server.host, port: server.port }];
  const rounds: Array<{ module: Record<Verb, number>; scripts: Record<Verb, number>; bull: Awaited<ReturnType<typeof measureBull>> }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round = {} as (typeof rounds)[number];
    for (const backend of ["module", "scripts"] as const) {
      const mq = await EchoMQ.connect({ addresses: address, backend, inflightRequestsLimit: 1000 });
      round[backend] = await measure(mq, server.port, `cost-${backend}-${r}`);
      await mq.close();
    }
    round.bull = await measureBull(server.port, server.host, `cost-bullmq-${r}`);
    rounds.push(round);
    console.error(
      `round ${r + 1}/${ROUNDS}: module enqueue ${round.module.enqueue} µs, batched ${round.module.enqueueBatchPerJob.toFixed(2)} µs/job; ` +
        `scripts ${round.scripts.enqueue} µs; BullMQ add ${round.bull.usec.add.toFixed(2)} µs, addBulk ${round.bull.usec.addBulkPerJob.toFixed(2)} µs/job`,
    );
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const medians = <K extends string>(rows: Array<Record<K, number>>): Record<K, number> =>
    Object.fromEntries(Object.keys(rows[0]!).map((k) => [k, median(rows.map((row) => row[k as K]))])) as Record<K, number>;
  const results = { module: medians(rounds.map((x) => x.module)), scripts: medians(rounds.map((x) => x.scripts)) };
  const bull = { usec: medians(rounds.map((x) => x.bull.usec)), profile: rounds.at(-1)!.bull.profile };
  const m = results.module!, s = results.scripts!, b = bull.usec;
  const report = {
    n: N,
    rounds: ROUNDS,
    usecPerCall: results,
    bullmq: bull.usec,
    bullmqProfile: bull.profile,
    ratios: {
      enqueue: m.enqueue / s.enqueue,
      claimAck: (m.claim + m.ack) / (s.claim + s.ack),
      enqueueVsBullAdd: m.enqueue / b.add,
      enqueueBatchPerJobVsBullAdd: m.enqueueBatchPerJob / b.add,
      enqueueBatchPerJobVsBullAddBulk: m.enqueueBatchPerJob / b.addBulkPerJob,
      scriptEnqueueBatchPerJobVsBullAddBulk: s.enqueueBatchPerJob / b.addBulkPerJob,
      scriptEnqueueVsBullAdd: s.enqueue / b.add,
      claimAckVsBull: (m.claim + m.ack) / (b.claim + b.complete),
      scriptClaimAckVsBull: (s.claim + s.ack) / (b.claim + b.complete),
    },
  };
  for (const verb of VERB_ORDER) {
    console.log(
      `${verb.padEnd(9)} module ${m[verb].toFixed(2).padStart(6)} µs   scripts ${s[verb].toFixed(2).padStart(6)} µs   ratio ${(m[verb] / s[verb]).toFixed(2)}`,
    );
  }
  for (const verb of Object.keys(b) as BullVerb[]) console.log(`bullmq ${verb.padEnd(9)} ${b[verb].toFixed(2).padStart(6)} µs`);
  console.log(JSON.stringify(report));
} finally {
  await server.stop();
}
