/**
 * Throughput from one Bun process to one local server (or a local cluster), EchoMQ beside BullMQ
 * in the same run, each pair of phases back to back (EchoMQ first in even rounds, BullMQ first in
 * odd ones):
 * - bulk admission: EchoMQ `enqueueMany` vs BullMQ `Queue.addBulk`;
 * - a worker (no-op handler, total concurrency 50) draining the jobs the bulk phase added, vs a
 *   BullMQ `Worker` (same concurrency) draining its own;
 * - single admission with 500 calls in flight: EchoMQ `enqueue` vs BullMQ `Queue.add`.
 * Every phase also reports what the server processes spent per job (`INFO cpu` user + system over
 * the phase, summed over the primaries) and what this process spent per job (`process.cpuUsage`).
 * On one server, two reference phases send the same `EMQ.ENQUEUE` commands through a bare glide
 * client (commands built before the clock starts, from the wire spec with `wireCall`): one command
 * of 1000 groups (jobs) each, 8 in flight, as `enqueueMany` sends them; and one command of one
 * group per job, 500 in flight, as `enqueue` did before it coalesced the calls in flight. The client's floor under EchoMQ's own code. And
 * glide's own client CPU per command with 1 and with 50 commands in flight (10000 PINGs each).
 * On both topologies, a reference drain: N more jobs drained by bare `EMQ.SETTLE` calls through a
 * bare glide client, one call in flight per queue, each acking every job the call before claimed
 * and claiming as many as the queue's worker has slots (no handler, no job objects, no EchoMQ
 * code in the loop): the most a worker with one call in flight can get from glide here; on one
 * server also with two calls in flight of half the slots each, as a worker of 32 slots or more
 * keeps them.
 *
 * Options: `--n N` jobs per phase (default 100000), `--rounds R` (default 5: every phase R times,
 * interleaved, fresh queues each round; a ratio is the median of its R per-round ratios, a phase's
 * figures are those of its median round), `--queues Q` (default 1; jobs spread round-robin),
 * `--backend module|scripts` (EchoMQ's backend; default module: the reference phases use the module either way),
 * `--cluster` (a local 3-primary cluster; queue names chosen so that the queues spread evenly over
 * the primaries; BullMQ gets one `{name}` hashtag prefix per queue, so it spreads the same way).
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/throughput.ts [--n 100000] [--rounds 5] [--queues 12] [--cluster]
 */
import { Decoder, GlideClient, GlideClusterClient, type GlideReturnType, type GlideString } from "@valkey/valkey-glide";
import { Queue, Worker as BullWorker } from "bullmq";
import { EchoMQ, type Worker } from "../client.ts";
import { type ClusterHandle, type ServerHandle, startCluster, startServer } from "../tools/embedded/mod.ts";
import { keyspace, newJobId, slot } from "../mod.ts";
import { wireCall } from "../lib/wire/mod.ts";
import { claimedEntry } from "../lib/client/claimed_entry.ts";
import { bullConnection, bullPrefix, cliOptions, PAYLOAD, phase, pool, report, threadCpu, until } from "./_util.ts";

const opt = cliOptions({ n: 100000, queues: 1, cluster: false, rounds: 5, backend: "module" });
if (opt.backend !== "module" && opt.backend !== "scripts") throw new Error(`--backend: module or scripts, not ${opt.backend}`);
const N = opt.n;
const Q = opt.queues;
const CLUSTER = opt.cluster;
/** Rounds of every phase; each ratio is the median of its per-round ratios. */
const ROUNDS = opt.rounds;
const CONCURRENCY = 50;
const IN_FLIGHT = 500;
/** BullMQ addBulk: jobs per call and calls in flight per queue, as EchoMQ's enqueueMany batches. */
const BULK_CHUNK = 1000;
const BULK_IN_FLIGHT = 8;
/** PINGs of the glide reference phases (one server). */
const PINGS = 10_000;
/** Longest any phase may take before the benchmark gives up. */
const PHASE_TIMEOUT_MS = 180_000;

let cluster: ClusterHandle | null = null;
let server: ServerHandle | null = null;
if (CLUSTER) cluster = await startCluster({ primaries: 3 });
else server = await startServer({});
if (!(cluster ? cluster.primaries[0]!.server.module : server!.module)) {
  throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
}
const addresses = cluster ? cluster.addresses : [{ host: server!.host, port: server!.port }];
const primaryPorts = cluster ? cluster.primaries.map((p) => p.server.port) : [server!.port];

/**
 * Q queue names with the given stem; on a cluster, picked in order from `<stem>-0`, `<stem>-1`, …
 * so that each primary serves Q / primaries of them (the same slot for EchoMQ's `emq:{name}:…` and
 * BullMQ's `{name}:name:…`).
 */
function queueNames(stem: string): string[] {
  if (!cluster) return Array.from({ length: Q }, (_, i) => `${stem}-${i}`);
  const per = Math.ceil(Q / cluster.primaries.length);
  const load = new Map<number, number>();
  const out: string[] = [];
  for (let i = 0; out.length < Q && i < 10_000; i++) {
    const name = `${stem}-${i}`;
    const port = cluster.primaryForSlot(slot(name)).server.port;
    if ((load.get(port) ?? 0) >= per) continue;
    load.set(port, (load.get(port) ?? 0) + 1);
    out.push(name);
  }
  return out;
}

/** Concurrency of worker i of Q, summing to CONCURRENCY. */
const share = (i: number): number => Math.floor(CONCURRENCY / Q) + (i < CONCURRENCY % Q ? 1 : 0);

interface PhaseReport {
  jobs: number;
  ms: number;
  jobsPerSec: number;
  /** Server process CPU (all primaries) per job, µs. */
  serverUsecPerJob: number;
  /** This process's CPU per job, µs. */
  clientUsecPerJob: number;
  /**
   * Server time per job inside the verbs themselves (commandstats usec of `emq.*`, or of
   * EVALSHA + EVAL for BullMQ's scripts); the rest of `serverUsecPerJob` is reading, parsing and
   * replying, the event loop and the server's own housekeeping.
   */
  commandUsecPerJob: number;
  /** Commandstats calls per job of the heaviest commands (a profile). */
  calls: Record<string, number>;
  /** Commandstats calls of every EchoMQ verb over the phase (not rounded). */
  verbCalls: Record<string, number>;
  /** This process's CPU per job by kind of thread, µs (`threadCpu`; Linux only, in ticks of 10 ms). */
  clientThreads: Record<string, number>;
}

async function measure(what: string, jobs: number, run: () => Promise<unknown>): Promise<PhaseReport> {
  const c0 = process.cpuUsage();
  const t0 = threadCpu();
  const { ms, cost } = await phase(primaryPorts, run);
  const c = process.cpuUsage(c0);
  const t1 = threadCpu();
  const top = Object.entries(cost.commands).sort((a, b) => b[1].usec - a[1].usec).slice(0, 6);
  const r: PhaseReport = {
    jobs,
    ms,
    jobsPerSec: jobs / (ms / 1000),
    serverUsecPerJob: cost.processUsec / jobs,
    commandUsecPerJob: Object.entries(cost.commands)
      .filter(([name]) => name.startsWith("emq.") || name === "fcall" || name === "evalsha" || name === "eval")
      .reduce((a, [, v]) => a + v.usec, 0) / jobs,
    clientUsecPerJob: (c.user + c.system) / jobs,
    calls: Object.fromEntries(top.map(([name, v]) => [name, Math.round((v.calls / jobs) * 100) / 100])),
    verbCalls: Object.fromEntries(Object.entries(cost.commands).filter(([n]) => n.startsWith("emq.")).map(([n, v]) => [n, v.calls])),
    clientThreads: Object.fromEntries(Object.entries(t1).map(([k, v]) => [k, (v - (t0[k] ?? 0)) / jobs])),
  };
  const threads = Object.entries(r.clientThreads).filter(([, v]) => v >= 0.05).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ");
  console.error(
    `${what.padEnd(26)} ${Math.round(r.jobsPerSec).toString().padStart(7)} jobs/s  ` +
      `server ${r.serverUsecPerJob.toFixed(1)} µs/job  client ${r.clientUsecPerJob.toFixed(1)} µs/job${threads === "" ? "" : ` (${threads})`}`,
  );
  return r;
}

const perQueue = (i: number): number => Math.floor(N / Q) + (i < N % Q ? 1 : 0);
const firstNames = queueNames("tp-bulk0");
const emqSlots = firstNames.map((q) => slot(q));
const spread = cluster ? cluster.primaries.map((p) => firstNames.filter((q) => cluster!.primaryForSlot(slot(q)) === p).length) : [Q];

const mq = await EchoMQ.connect<typeof PAYLOAD>({ addresses: [...addresses], cluster: CLUSTER, backend: opt.backend });
const connection = bullConnection(addresses, CLUSTER);
const bullQueue = (name: string): Queue =>
  new Queue(name, {
    connection,
    prefix: bullPrefix(name, CLUSTER),
    defaultJobOptions: { removeOnComplete: true, removeOnFail: true },
  });

/**
 * Every path of both libraries once, unmeasured, on queues of their own: bulk and single
 * admission, then a worker draining them (the JIT warms up; BullMQ's scripts get loaded).
 */
async function warmUp(): Promise<void> {
  const n = Math.min(20_000, Math.max(100, Math.floor(N / 5)));
  const q = "warm-emq", name = "warm-bullmq";
  const queue = bullQueue(name);
  try {
    await mq.retain(q, { completedMax: 0 });
    await mq.enqueueMany(q, Array.from({ length: n }, () => PAYLOAD));
    await pool(n, IN_FLIGHT, () => mq.enqueue(q, PAYLOAD));
    await pool(
      Math.ceil(n / BULK_CHUNK),
      BULK_IN_FLIGHT,
      (c) => queue.addBulk(Array.from({ length: Math.min(BULK_CHUNK, n - c * BULK_CHUNK) }, () => ({ name: "job", data: PAYLOAD }))),
    );
    await pool(n, IN_FLIGHT, () => queue.add("job", PAYLOAD));
    const w = mq.work(q, () => {}, { concurrency: CONCURRENCY, leaseMs: 60_000 });
    await until("the warm-up EchoMQ worker", () => w.completed >= 2 * n, PHASE_TIMEOUT_MS, 5);
    await w.stop();
    let done = 0;
    const bw = new BullWorker(name, async () => {}, { connection, prefix: bullPrefix(name, CLUSTER), concurrency: CONCURRENCY });
    bw.on("completed", () => void done++);
    await until("the warm-up BullMQ worker", () => done >= 2 * n, PHASE_TIMEOUT_MS, 5);
    await bw.close();
  } finally {
    await queue.close();
  }
}

/** One round of every phase on fresh queues (names carry the round number). */
async function round(r: number): Promise<Record<string, PhaseReport>> {
  const results: Record<string, PhaseReport> = {};
  const emqNames = { bulk: queueNames(`tp-bulk${r}`), one: queueNames(`tp-one${r}`) };
  const bullNames = { bulk: queueNames(`bq-bulk${r}`), one: queueNames(`bq-one${r}`) };
  const bq = { bulk: bullNames.bulk.map(bullQueue), one: bullNames.one.map(bullQueue) };
  try {
    await Promise.all([...bq.bulk, ...bq.one].map((q) => q.waitUntilReady()));
    // an ack deletes the job's row, as BullMQ's removeOnComplete: true does; both write their events
    await Promise.all([...emqNames.bulk, ...emqNames.one].map((q) => mq.retain(q, { completedMax: 0 })));

    // Each pair runs back to back; odd rounds run BullMQ's phase first.
    const pair = async (emq: () => Promise<void>, bull: () => Promise<void>): Promise<void> => {
      if (r % 2 === 0) {
        await emq();
        await bull();
      } else {
        await bull();
        await emq();
      }
    };

    // Bulk admission.
    await pair(async () => {
      results.emqEnqueueMany = await measure(
        "EchoMQ enqueueMany",
        N,
        () => Promise.all(emqNames.bulk.map((q, i) => mq.enqueueMany(q, Array.from({ length: perQueue(i) }, () => PAYLOAD)))),
      );
    }, async () => {
      results.bullAddBulk = await measure("BullMQ addBulk", N, () =>
        Promise.all(bq.bulk.map((queue, i) => {
          const n = perQueue(i);
          return pool(Math.ceil(n / BULK_CHUNK), BULK_IN_FLIGHT, (c) =>
            queue.addBulk(Array.from({ length: Math.min(BULK_CHUNK, n - c * BULK_CHUNK) }, () => ({ name: "job", data: PAYLOAD }))));
        })));
    });

    // Draining what the bulk phase added.
    await pair(async () => {
      results.emqWorker = await measure(`EchoMQ worker (c=${CONCURRENCY})`, N, async () => {
        const workers: Worker<typeof PAYLOAD>[] = emqNames.bulk.map((q, i) => mq.work(q, () => {}, { concurrency: share(i), leaseMs: 60_000 }));
        const done = (): number => workers.reduce((a, w) => a + w.completed, 0);
        await until("the EchoMQ workers to drain", () => done() >= N, PHASE_TIMEOUT_MS, 5);
        await Promise.all(workers.map((w) => w.stop()));
      });
    }, async () => {
      const bullWorkers = bullNames.bulk.map((name, i) =>
        new BullWorker(name, async () => {}, {
          connection,
          prefix: bullPrefix(name, CLUSTER),
          concurrency: share(i),
          autorun: false,
        })
      );
      await Promise.all(bullWorkers.map((w) => w.waitUntilReady()));
      let bullDone = 0;
      for (const w of bullWorkers) w.on("completed", () => void bullDone++);
      results.bullWorker = await measure(`BullMQ Worker (c=${CONCURRENCY})`, N, async () => {
        for (const w of bullWorkers) void w.run();
        await until("the BullMQ workers to drain", () => bullDone >= N, PHASE_TIMEOUT_MS, 5);
      });
      await Promise.all(bullWorkers.map((w) => w.close()));
    });

    // Single admission, 500 in flight.
    await pair(async () => {
      results.emqEnqueue500 = await measure(
        `EchoMQ enqueue (${IN_FLIGHT} in flight)`,
        N,
        () => pool(N, IN_FLIGHT, (i) => mq.enqueue(emqNames.one[i % Q]!, PAYLOAD)),
      );
    }, async () => {
      results.bullAdd500 = await measure(`BullMQ add (${IN_FLIGHT} in flight)`, N, () => pool(N, IN_FLIGHT, (i) => bq.one[i % Q]!.add("job", PAYLOAD)));
    });

    // The drain floor: N more jobs drained by bare SETTLE calls (unmeasured admission first), with
    // one call in flight per queue, then (one server) two calls of half the slots each.
    const floorNames = queueNames(`tp-floor-drain${r}`);
    const floorNames2 = CLUSTER ? [] : queueNames(`tp-floor-drain2-${r}`);
    await Promise.all([...floorNames, ...floorNames2].map(async (q, i) => {
      await mq.retain(q, { completedMax: 0 });
      await mq.enqueueMany(q, Array.from({ length: perQueue(i % Q) }, () => PAYLOAD));
    }));
    {
      const g = CLUSTER
        ? await GlideClusterClient.createClient({ addresses: [...addresses], requestTimeout: 10_000 })
        : await GlideClient.createClient({ addresses: [...addresses], requestTimeout: 10_000 });
      /** Drains `names` by bare SETTLE calls, `loops` calls in flight per queue, each for 1/`loops` of its worker's slots. */
      const bareDrain = async (names: string[], loops: number): Promise<void> => {
        let settled = 0;
        await Promise.all(names.flatMap((q, i) =>
          Array.from({ length: loops }, async () => {
            const ks = keyspace(q);
            const meta = ks.meta;
            const slots = Math.ceil(share(i) / loops);
            let held: Array<[GlideString, number]> = [];
            for (let first = true;; first = false) {
              // a SETTLE carries at least one settlement: the first call is a CLAIM
              const call = first ? wireCall("CLAIM", ks, { lease_ms: 60_000, count: slots, block_ms: 0 }) : wireCall(
                "SETTLE",
                ks,
                { lease_ms: 60_000, want: slots },
                held.map(([id, token]) => ({ op: 0, id, token, delay_ms: 0, reason: "", result: "", failure: "" })),
              );
              const args: GlideString[] = [`EMQ.${call.verb}`, "1", meta, ...call.args];
              const reply = (g instanceof GlideClusterClient
                ? await g.customCommand(args, { route: { type: "primarySlotKey", key: meta }, decoder: Decoder.Bytes })
                : await g.customCommand(args, { decoder: Decoder.Bytes })) as GlideReturnType[];
              if (!first) { for (const status of reply[1] as number[]) settled += status === 1 ? 1 : 0; }
              // (the id is a view into glide's reply buffer: sent back as it is, not copied)
              held = (reply.slice(first ? 1 : 2) as Uint8Array[]).map((entry) => {
                const job = claimedEntry(entry)!;
                return [job.id as GlideString, job.token];
              });
              if (held.length === 0) {
                break;
              }
            }
          })
        ));
        if (settled !== N) throw new Error(`the bare SETTLE drain settled ${settled} of ${N}`);
      };
      try {
        results.glideDrain = await measure("bare glide SETTLE drain", N, () => bareDrain(floorNames, 1));
        if (!CLUSTER) results.glideDrain2 = await measure("bare glide SETTLE drain, 2 in flight", N, () => bareDrain(floorNames2, 2));
      } finally {
        g.close();
      }
    }

    // The glide floor: the same ENQUEUE commands, built beforehand, through a bare GlideClient.
    if (!CLUSTER) {
      const g = await GlideClient.createClient({ addresses: [...addresses], requestTimeout: 5000 });
      try {
        // `groups` jobs per command, each command `EMQ.ENQUEUE 1 <meta> (<id> <opts> <payload>)…`
        const commands = (q: string, groups: number): GlideString[][] => {
          const ks = keyspace(q);
          const payload = JSON.stringify(PAYLOAD);
          return Array.from({ length: Math.ceil(N / groups) }, (_, c) => {
            const jobs = Array.from({ length: Math.min(groups, N - c * groups) }, () => ({ id: newJobId(), opts: "", payload }));
            const call = wireCall("ENQUEUE", ks, {}, jobs);
            return [`EMQ.${call.verb}`, String(call.keys.length), ...call.keys, ...call.args];
          });
        };
        const batched = commands(`tp-floor-batch${r}`, BULK_CHUNK);
        results.glideBatch = await measure(`bare glide ENQUEUE ×${BULK_CHUNK}`, N, () =>
          pool(batched.length, BULK_IN_FLIGHT, async (c) => {
            if (await g.customCommand(batched[c]!) !== Math.min(BULK_CHUNK, N - c * BULK_CHUNK)) throw new Error("ENQUEUE: unexpected reply");
          }));
        const single = commands(`tp-floor-one${r}`, 1);
        results.glideSingle = await measure(`bare glide ENQUEUE (${IN_FLIGHT})`, N, () => pool(N, IN_FLIGHT, (i) => g.customCommand(single[i]!)));
        // glide's client cost per command with 1 and with 50 commands in flight (a job here is a PING)
        results.glidePing1 = await measure("bare glide PING (1)", PINGS, () => pool(PINGS, 1, () => g.customCommand(["PING"])));
        results.glidePing50 = await measure("bare glide PING (50)", PINGS, () => pool(PINGS, 50, () => g.customCommand(["PING"])));
      } finally {
        g.close();
      }
    }

    // Sanity: everything drained, everything admitted.
    let left = 0;
    for (const q of [...emqNames.bulk, ...floorNames, ...floorNames2]) left += (await mq.counts(q)).pending;
    if (left !== 0) throw new Error(`EchoMQ left ${left} jobs pending`);
    let admitted = 0;
    for (const q of emqNames.one) admitted += (await mq.counts(q)).pending;
    if (admitted !== N) throw new Error(`EchoMQ admitted ${admitted} of ${N}`);
    return results;
  } finally {
    await Promise.all([...bq.bulk, ...bq.one].map((q) => q.close()));
  }
}

const rounds: Array<Record<string, PhaseReport>> = [];
try {
  await warmUp();
  for (let r = 0; r < ROUNDS; r++) {
    console.error(`round ${r + 1}/${ROUNDS}`);
    // No FLUSHALL between rounds: the phase after one pays for regrowing the server's main hash
    // table from empty (measured: ≈ 8 µs more server CPU per job), which would favour whichever
    // library goes second. The single-admission phases leave their jobs (a few hundred MB by the end).
    rounds.push(await round(r));
  }
} finally {
  await mq.close();
  if (CLUSTER) await connection.quit().catch(() => {});
  await cluster?.stop();
  await server?.stop();
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
/** Per phase: the round with the median jobs/s. */
const phases: Record<string, PhaseReport> = {};
for (const k of Object.keys(rounds[0]!)) {
  const sorted = rounds.map((x) => x[k]!).sort((a, b) => a.jobsPerSec - b.jobsPerSec);
  phases[k] = sorted[Math.floor((sorted.length - 1) / 2)]!;
}
/** A ratio of two phases: its median over the rounds (each round's phases ran back to back). */
const ratio = (a: string, b: string): { median: number; rounds: number[] } => {
  const xs = rounds.map((x) => x[a]!.jobsPerSec / x[b]!.jobsPerSec);
  return { median: median(xs), rounds: xs };
};
const ratios = {
  enqueueManyVsAddBulk: ratio("emqEnqueueMany", "bullAddBulk"),
  enqueueVsAdd: ratio("emqEnqueue500", "bullAdd500"),
  workerVsBullWorker: ratio("emqWorker", "bullWorker"),
  floorVsBullWorker: ratio("glideDrain", "bullWorker"),
  ...(CLUSTER ? {} : { floor2VsBullWorker: ratio("glideDrain2", "bullWorker") }),
};
report({
  backend: opt.backend,
  n: N,
  queues: Q,
  cluster: CLUSTER,
  primaries: primaryPorts.length,
  spread,
  slots: emqSlots,
  concurrency: CONCURRENCY,
  inFlight: IN_FLIGHT,
  bulkChunk: BULK_CHUNK,
  bulkInFlight: BULK_IN_FLIGHT,
  rounds: ROUNDS,
  phases,
  allRounds: rounds,
  ratios: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, v.median])),
  ratioRounds: Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, v.rounds])),
});
