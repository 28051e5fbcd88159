/**
 * What events and kept results cost the server (issue 21 §2), on one embedded server in one run:
 * server CPU per full job (enqueue, claim, ack: `INFO cpu` user + system of the server process over
 * the phase, divided by the jobs) for
 *
 * - EchoMQ (module and scripts) with the wire-10 defaults: events on (10,000 entries kept) and the
 *   last 1,000 completed jobs kept with their results;
 * - the same with events off (`eventsMax: 0`), completed jobs still kept;
 * - the same with neither (`eventsMax: 0, completedMax: 0`: wire 9's cost);
 * - BullMQ's `Queue.add` + `Worker`, which always writes its events stream (`removeOnComplete:
 *   1000`, the same bound on completed jobs).
 *
 * Each job is admitted one per call (200 in flight) and drained by one worker of concurrency 50
 * whose handler returns a small result. Phases interleave per round (their order rotates); the
 * median of the rounds is reported with every round. Targets: events on ≤ 1.3× events off, and ≤
 * 0.3× BullMQ's.
 *
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/events.ts [--n 20000] [--rounds 3]
 */
import { Queue, Worker as BullWorker } from "bullmq";
import { EchoMQ } from "../client.ts";
import { startServer } from "../tools/embedded/mod.ts";
import { bullConnection, cliOptions, PAYLOAD, phase, pool, report, until } from "./_util.ts";

const opt = cliOptions({ n: 20000, rounds: 3 });
const IN_FLIGHT = 200;
const CONCURRENCY = 50;
const RESULT = { ok: true, n: 42 };

const server = await startServer({});
if (!server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
const addresses = [{ host: server.host, port: server.port }];
const ports = [server.port];

/** The EchoMQ variants: a backend and the queue's retention of completed jobs and events. */
const VARIANTS = {
  moduleEvents: { backend: "module", retain: {} },
  moduleNoEvents: { backend: "module", retain: { eventsMax: 0 } },
  moduleNeither: { backend: "module", retain: { eventsMax: 0, completedMax: 0 } },
  scriptsEvents: { backend: "scripts", retain: {} },
  scriptsNoEvents: { backend: "scripts", retain: { eventsMax: 0 } },
  scriptsNeither: { backend: "scripts", retain: { eventsMax: 0, completedMax: 0 } },
} as const;
type Phase = keyof typeof VARIANTS | "bullmq";
const PHASES: Phase[] = [...(Object.keys(VARIANTS) as Array<keyof typeof VARIANTS>), "bullmq"];

const clients = {
  module: await EchoMQ.connect({ addresses, backend: "module" }),
  scripts: await EchoMQ.connect({ addresses, backend: "scripts" }),
};
const connection = bullConnection(addresses, false);

/** Server µs per full job of one EchoMQ variant on a fresh queue. */
async function emqPhase(name: keyof typeof VARIANTS, q: string): Promise<number> {
  const v = VARIANTS[name];
  const mq = clients[v.backend];
  await mq.retain(q, v.retain);
  const { cost } = await phase(ports, async () => {
    const w = mq.work(q, () => RESULT, { concurrency: CONCURRENCY, leaseMs: 60_000 });
    await pool(opt.n, IN_FLIGHT, () => mq.enqueue(q, PAYLOAD));
    await until(`${name}'s worker`, () => w.completed >= opt.n, 600_000, 5);
    await w.stop();
  });
  return cost.processUsec / opt.n;
}

/** Server µs per full job of BullMQ on a fresh queue. */
async function bullPhase(name: string): Promise<number> {
  const queue = new Queue(name, { connection, defaultJobOptions: { removeOnComplete: 1000, removeOnFail: 1000 } });
  await queue.waitUntilReady();
  try {
    const { cost } = await phase(ports, async () => {
      let done = 0;
      const w = new BullWorker(name, async () => RESULT, { connection, concurrency: CONCURRENCY });
      w.on("completed", () => void done++);
      await pool(opt.n, IN_FLIGHT, () => queue.add("job", PAYLOAD));
      await until("BullMQ's worker", () => done >= opt.n, 600_000, 5);
      await w.close();
    });
    return cost.processUsec / opt.n;
  } finally {
    await queue.close();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

// One unmeasured pass of every phase warms the JIT and loads every script.
const rounds: Array<Record<Phase, number>> = [];
for (let r = -1; r < opt.rounds; r++) {
  const out = {} as Record<Phase, number>;
  const order = PHASES.map((_, i) => PHASES[(i + Math.max(r, 0)) % PHASES.length]!);
  for (const p of order) {
    const q = `ev-${p}-${r + 1}`;
    out[p] = p === "bullmq" ? await bullPhase(q) : await emqPhase(p, q);
    console.error(`round ${r + 1} ${p.padEnd(16)} ${out[p].toFixed(1)} µs/job`);
  }
  if (r >= 0) rounds.push(out);
}

const med = Object.fromEntries(PHASES.map((p) => [p, median(rounds.map((r) => r[p]))])) as Record<Phase, number>;
const ratios = {
  moduleOnOverOff: med.moduleEvents / med.moduleNoEvents,
  scriptsOnOverOff: med.scriptsEvents / med.scriptsNoEvents,
  moduleOnOverBullmq: med.moduleEvents / med.bullmq,
  scriptsOnOverBullmq: med.scriptsEvents / med.bullmq,
  moduleOnOverNeither: med.moduleEvents / med.moduleNeither,
  scriptsOnOverNeither: med.scriptsEvents / med.scriptsNeither,
};
console.error(JSON.stringify(ratios));
await clients.module.close();
await clients.scripts.close();
await server.stop();
report({ n: opt.n, rounds, median: med, ratios });
