/**
 * F2 of issue 36: flows on a local 3-primary cluster, EchoMQ beside BullMQ's `FlowProducer` in one
 * run. `--flows` flows, each a parent in one queue and one child in each of 12 queues spread evenly
 * over the primaries (EchoMQ: `emq:{<queue>}:…`, each queue in its own slot, every edge through the
 * parent's outbox; BullMQ: every queue under one shared hashtag prefix `{f2}`, the only way its
 * flows run on a cluster, so all of them live on one primary). Workers of concurrency
 * `--concurrency` (50) in all (shared over the 13 queues; EchoMQ's relay every `--relay-ms`),
 * `--in-flight` adds at a time.
 * Flows/s: flows ÷ (the first add → the last parent's handler done).
 *
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * `--systems module` runs one system alone (e.g. under `bun --cpu-prof`); `--profile` prints, per round, the
 * server commands per flow and the client's CPU per flow by thread (JavaScript, glide, GC, JIT).
 *
 * Run: node_modules/.bin/bun bench/flows_cluster.ts [--flows 300] [--rounds 2] [--relay-ms 20] [--in-flight 20] [--systems module,bullmq] [--profile]
 */
import { GlideClusterClient } from "@valkey/valkey-glide";
import { FlowProducer, Worker as BullWorker } from "bullmq";
import { EchoMQ, type Worker } from "../client.ts";
import { slot } from "../mod.ts";
import { startCluster } from "../tools/embedded/mod.ts";
import { bullConnection, cliOptions, PAYLOAD, phase, type PhaseCost, pool, report, sleep, threadCpu, until } from "./_util.ts";

const opt = cliOptions({ flows: 300, rounds: 2, "relay-ms": 20, "in-flight": 20, systems: "module,scripts,bullmq", profile: false, concurrency: 50 });
const QUEUES = 12;
/** The workers' concurrency in all (both systems alike), shared over the 13 queues. */
const CONCURRENCY = opt.concurrency;
const BULL_PREFIX = "{f2}";

const cluster = await startCluster({ primaries: 3 });
if (!cluster.primaries[0]!.server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
const addresses = [...cluster.addresses];
const ports = cluster.primaries.map((p) => p.server.port);

/** 12 child queue names with this stem, 4 on each primary, and a parent queue. */
function names(stem: string): { parent: string; children: string[] } {
  const per = QUEUES / cluster.primaries.length;
  const load = new Map<number, number>();
  const children: string[] = [];
  for (let i = 0; children.length < QUEUES; i++) {
    const name = `${stem}-c${i}`;
    const port = cluster.primaryForSlot(slot(name)).server.port;
    if ((load.get(port) ?? 0) >= per) continue;
    load.set(port, (load.get(port) ?? 0) + 1);
    children.push(name);
  }
  return { parent: `${stem}-p`, children };
}

/** Concurrency of each of the 13 workers, summing to CONCURRENCY. */
const share = (i: number): number => Math.floor(CONCURRENCY / (QUEUES + 1)) + (i < CONCURRENCY % (QUEUES + 1) ? 1 : 0);

/** One round's figures. */
interface F2 {
  readonly flowsPerSec: number;
  readonly serverUsecPerFlow: number;
  /** This process's CPU (user + system, every thread: workers, relays, producer, glide) per flow. */
  readonly clientUsecPerFlow: number;
}

/** glide requests sent (a command, or a batch: each one message to glide's core), counted with `--profile`. */
let requests = 0;
if (opt.profile) {
  const proto = GlideClusterClient.prototype as unknown as Record<"customCommand" | "exec", (...a: unknown[]) => unknown>;
  for (const m of ["customCommand", "exec"] as const) {
    const f = proto[m];
    proto[m] = function (this: unknown, ...a: unknown[]): unknown {
      requests++;
      return f.apply(this, a);
    };
  }
}

/** With `--profile`: the server's commands per flow and this process's CPU per flow by thread. */
function profile(what: string, cost: PhaseCost, threads0: Record<string, number>, requests0: number, flows: number): void {
  if (!opt.profile) return;
  const threads1 = threadCpu();
  const calls = Object.entries(cost.commands).sort((a, b) => b[1].calls - a[1].calls)
    .map(([n, v]) => `${n} ${(v.calls / flows).toFixed(2)}`);
  const cpu = Object.keys(threads1).map((k) => `${k} ${((threads1[k]! - (threads0[k] ?? 0)) / flows).toFixed(0)}`);
  console.error(
    `  ${what}: glide requests per flow ${((requests - requests0) / flows).toFixed(2)}; commands per flow: ${calls.join(", ")}\n` +
      `  ${what}: client µs per flow by thread: ${cpu.join(", ")}`,
  );
}

/** This process's CPU in µs since `from` (`process.cpuUsage`). */
const clientUsec = (from: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(from);
  return u.user + u.system;
};

async function emq(mq: EchoMQ<unknown>, stem: string, flows: number): Promise<F2> {
  const { parent, children } = names(stem);
  let done = 0;
  const relay = { intervalMs: opt["relay-ms"] };
  const workers: Worker<unknown>[] = children.map((q, i) => mq.work(q, () => ({ ok: true }), { concurrency: share(i + 1), relay }));
  workers.push(mq.work(parent, () => void done++, { concurrency: share(0), relay }));
  // the clock starts once every worker's own connection is open, as BullMQ's workers are awaited
  // ready (waitUntilReady) before theirs: making 13 connections is no part of a flow's cost
  const queues = new Set([parent, ...children]);
  const connecting = performance.now();
  while (new Set((await mq.workers()).filter((w) => queues.has(w.queue)).map((w) => w.queue)).size < queues.size) {
    if (performance.now() - connecting > 30_000) throw new Error(`${stem}'s workers did not connect`);
    await sleep(5);
  }
  const cpu0 = process.cpuUsage();
  const threads0 = threadCpu();
  const requests0 = requests;
  const { ms, cost } = await phase(ports, async () => {
    await pool(
      flows,
      opt["in-flight"],
      () => mq.flow({ queue: parent, payload: PAYLOAD, children: children.map((queue) => ({ queue, payload: PAYLOAD })) }),
    );
    await until(`${stem}'s parents`, () => done >= flows, 600_000, 2);
  });
  const client = clientUsec(cpu0);
  profile(stem, cost, threads0, requests0, flows);
  await Promise.all(workers.map((w) => w.stop()));
  return { flowsPerSec: flows / (ms / 1000), serverUsecPerFlow: cost.processUsec / flows, clientUsecPerFlow: client / flows };
}

async function bull(stem: string, flows: number): Promise<F2> {
  const { parent, children } = names(stem);
  const connection = bullConnection(addresses, true);
  const producer = new FlowProducer({ connection, prefix: BULL_PREFIX });
  let done = 0;
  const workers: BullWorker[] = children.map((q, i) =>
    new BullWorker(q, async () => ({ ok: true }), { connection, prefix: BULL_PREFIX, concurrency: share(i + 1) })
  );
  workers.push(new BullWorker(parent, async () => void done++, { connection, prefix: BULL_PREFIX, concurrency: share(0) }));
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  try {
    const cpu0 = process.cpuUsage();
    const threads0 = threadCpu();
    const requests0 = requests;
    const { ms, cost } = await phase(ports, async () => {
      await pool(flows, opt["in-flight"], () =>
        producer.add({
          name: "parent",
          queueName: parent,
          data: PAYLOAD,
          children: children.map((queueName) => ({ name: "child", queueName, data: PAYLOAD })),
        }));
      await until(`${stem}'s parents`, () => done >= flows, 600_000, 2);
    });
    const client = clientUsec(cpu0);
    profile(stem, cost, threads0, requests0, flows);
    return { flowsPerSec: flows / (ms / 1000), serverUsecPerFlow: cost.processUsec / flows, clientUsecPerFlow: client / flows };
  } finally {
    await Promise.all([...workers.map((w) => w.close()), producer.close()]);
    await connection.quit();
  }
}

const clients = {
  module: await EchoMQ.connect({ addresses, cluster: true, backend: "module" }),
  scripts: await EchoMQ.connect({ addresses, cluster: true, backend: "scripts" }),
};
const ALL = ["module", "scripts", "bullmq"] as const;
const systems = ALL.filter((s) => opt.systems.split(",").includes(s));
const run1 = (s: (typeof ALL)[number], stem: string, flows = opt.flows): Promise<F2> => s === "bullmq" ? bull(stem, flows) : emq(clients[s], stem, flows);
// one unmeasured pass each, alike: JIT, scripts loaded, connections open
for (const s of systems) await run1(s, `w-${s}`, Math.min(opt.flows, 300));

const seen: Record<string, F2[]> = { module: [], scripts: [], bullmq: [] };
for (let r = 0; r < opt.rounds; r++) {
  for (const s of systems) {
    const m = await run1(s, `f2-${s}-${r}`);
    seen[s]!.push(m);
    console.error(
      `F2 round ${r} ${s.padEnd(8)} ${m.flowsPerSec.toFixed(1)} flows/s, server ${m.serverUsecPerFlow.toFixed(0)} µs/flow, ` +
        `client ${m.clientUsecPerFlow.toFixed(0)} µs/flow`,
    );
  }
}
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const ratios = (s: "module" | "scripts"): number[] => seen[s]!.map((m, r) => m.flowsPerSec / (seen.bullmq![r]?.flowsPerSec ?? NaN));

await clients.module.close();
await clients.scripts.close();
await cluster.stop();
report({
  flows: opt.flows,
  queues: QUEUES,
  rounds: opt.rounds,
  relayMs: opt["relay-ms"],
  inFlight: opt["in-flight"],
  perRound: seen,
  moduleOverBullmq: { rounds: ratios("module"), median: median(ratios("module")) },
  scriptsOverBullmq: { rounds: ratios("scripts"), median: median(ratios("scripts")) },
});
