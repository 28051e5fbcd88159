/**
 * Enqueue-to-handler latency and the idle cost of a worker, EchoMQ (module and scripts backends)
 * beside BullMQ, on one local server in one run.
 *
 * Latency: one job in flight at a time; the clock starts just before `enqueue` / `Queue.add` is
 * called and stops when the worker's handler starts, both read with this process's clock. The next
 * job is enqueued only after the previous one was acked (completed), after a random pause uniform
 * in [0, 20) ms, the same for every variant. Three workers, each concurrency 1 and idle between
 * jobs: EchoMQ on the module backend (an idle worker's CLAIM blocks on the server and is woken by
 * the ENQUEUE), EchoMQ on the scripts backend (an idle worker waits in `BZPOPMIN` on the queue's
 * `wake` key, then claims), and BullMQ's `Worker` (`BZPOPMIN` on its marker key, then
 * `moveToActive`). The samples are taken in `--rounds` rounds, each round every variant in turn
 * (the order rotated), so that a slow spell of this shared machine falls on all of them.
 *
 * Idle cost: a worker of concurrency 50 with nothing to do, alone on the server, over `--idle-ms`
 * (default 12000, longer than the default `blockMs` of 5000): the commands the server counted in
 * that window (`INFO commandstats` deltas, every command; the harness's own INFO / CONFIG left out,
 * bench/_util.ts `phase`). Commands that a script runs inside its EVALSHA are counted by
 * commandstats too; they are reported apart (`inner`), and `sent` is what the worker's
 * connections sent. Per backend, and BullMQ's idle `Worker` (concurrency 50) for reference.
 *
 * Options: `--samples S` per variant (default 200, after 20 warm-up jobs each), `--rounds R`
 * (default 4), `--idle-ms W` (default 12000), `--block-ms B` (EchoMQ workers' blockMs; default the
 * client's DEFAULT_BLOCK_MS).
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/latency.ts [--samples 200] [--rounds 4] [--idle-ms 12000]
 */
import { Queue, Worker as BullWorker } from "bullmq";
import { DEFAULT_BLOCK_MS, EchoMQ, type Worker } from "../client.ts";
import { command, startServer } from "../tools/embedded/mod.ts";
import { cliOptions, type CmdStat, PAYLOAD, percentile, phase, report, sleep, until } from "./_util.ts";

const opt = cliOptions({ samples: 200, rounds: 4, "idle-ms": 12000, "block-ms": DEFAULT_BLOCK_MS });
const SAMPLES = opt.samples;
const ROUNDS = Math.max(1, Math.min(opt.rounds, SAMPLES));
const IDLE_MS = opt["idle-ms"];
const BLOCK_MS = opt["block-ms"];
const WARMUP = 20;
/** The random pause before each job: uniform in [0, GAP_MS). */
const GAP_MS = 20;

interface Summary {
  samples: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  /** The five longest, ms. */
  worstMs: number[];
}

function summarize(xs: number[]): Summary {
  return {
    samples: xs.length,
    p50Ms: percentile(xs, 50),
    p90Ms: percentile(xs, 90),
    p99Ms: percentile(xs, 99),
    maxMs: Math.max(...xs),
    meanMs: xs.reduce((a, b) => a + b, 0) / xs.length,
    worstMs: [...xs].sort((a, b) => b - a).slice(0, 5),
  };
}

/** A worker under test: enqueue job `seq`, the handler's start times, the completed count. */
interface Variant {
  name: string;
  enqueue(seq: number): Promise<unknown>;
  startedAt: Map<number, number>;
  completed(): number;
  stop(): Promise<void>;
  seq: number;
  samples: number[];
}

/** Runs `count` jobs one at a time on `v` (recorded unless `warm`). */
async function oneAtATime(v: Variant, count: number, warm: boolean): Promise<void> {
  for (let i = 0; i < count; i++) {
    const seq = v.seq++;
    await sleep(Math.random() * GAP_MS);
    const before = v.completed();
    const t0 = performance.now();
    await v.enqueue(seq);
    await until(`${v.name}: job ${seq} to complete`, () => v.completed() > before, 10_000, 0.5);
    const t1 = v.startedAt.get(seq);
    if (t1 === undefined) throw new Error(`${v.name}: job ${seq} completed without its handler starting`);
    if (!warm) v.samples.push(t1 - t0);
  }
}

type Payload = { seq: number; body: string };

function emqVariant(mq: EchoMQ<Payload>, name: string, queue: string): Variant {
  const startedAt = new Map<number, number>();
  const worker: Worker<Payload> = mq.work(queue, (job) => void startedAt.set(job.payload.seq, performance.now()), {
    concurrency: 1,
    blockMs: BLOCK_MS,
  });
  return {
    name,
    enqueue: (seq) => mq.enqueue(queue, { seq, body: PAYLOAD.body }),
    startedAt,
    completed: () => worker.completed,
    stop: () => worker.stop(),
    seq: 0,
    samples: [],
  };
}

async function bullVariant(connection: object, queueName: string): Promise<Variant> {
  const queue = new Queue(queueName, { connection, defaultJobOptions: { removeOnComplete: true, removeOnFail: true } });
  const startedAt = new Map<number, number>();
  let completed = 0;
  const worker = new BullWorker(queueName, async (job) => void startedAt.set(job.data.seq, performance.now()), {
    connection,
    concurrency: 1,
  });
  worker.on("completed", () => void completed++);
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
  return {
    name: "BullMQ",
    enqueue: (seq) => queue.add("job", { seq, body: PAYLOAD.body }),
    startedAt,
    completed: () => completed,
    stop: async () => {
      await worker.close();
      await queue.close();
    },
    seq: 0,
    samples: [],
  };
}

/** What an idle worker cost the server over the window. */
interface Idle {
  windowMs: number;
  /** Every command commandstats counted, per second (harness INFO / CONFIG left out). */
  allPerSec: number;
  /** Commands the worker's connections sent, per second (commands run inside scripts left out). */
  sentPerSec: number;
  /** Commands run inside scripts (EVALSHA's TIME, HGET, …), per second. */
  innerPerSec: number;
  /**
   * Commands per second counted on the server's client connections themselves (`CLIENT LIST`
   * `tot-cmds` deltas over the window, every connection but the harness's): a check on `sentPerSec`.
   */
  connectionsPerSec: number;
  /** Per command: calls in the window. */
  byCommand: Record<string, number>;
}

/** `tot-cmds` of every client connection but the one asking: id → commands processed. */
async function connectionCommands(port: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of String(await command(port, ["CLIENT", "LIST"])).split("\n")) {
    const id = /(?:^| )id=(\d+)/.exec(line)?.[1];
    const n = /(?:^| )tot-cmds=(\d+)/.exec(line)?.[1];
    if (id === undefined || n === undefined || / cmd=client\|list /.test(line)) continue;
    out.set(id, Number(n));
  }
  return out;
}

/** Commands a client sends (the rest of commandstats ran inside EVALSHA / EVAL calls). */
const SENT =
  /^(emq\.\w+|evalsha|eval|evalsha_ro|eval_ro|fcall|bzpopmin|bzpopmax|blpop|brpop|blmove|brpoplpush|client\|.*|hello|select|ping|script\|.*|multi|exec|wait|command\|.*|module\|.*|readonly|info|config\|.*|xread|xreadgroup)$/;

async function idleCost(port: number, start: () => Promise<() => Promise<void>>): Promise<Idle> {
  const stop = await start();
  try {
    // let it settle into waiting (connections made, scripts loaded, first empty claims sent)
    await sleep(1500);
    const before = await connectionCommands(port);
    const { ms, cost } = await phase([port], () => sleep(IDLE_MS));
    const after = await connectionCommands(port);
    let perConnection = 0;
    for (const [id, n] of after) perConnection += n - (before.get(id) ?? 0);
    const s = ms / 1000;
    const entries = Object.entries(cost.commands).filter(([, v]) => v.calls > 0) as Array<[string, CmdStat]>;
    const all = entries.reduce((a, [, v]) => a + v.calls, 0);
    const sent = entries.filter(([n]) => SENT.test(n)).reduce((a, [, v]) => a + v.calls, 0);
    return {
      windowMs: ms,
      allPerSec: all / s,
      sentPerSec: sent / s,
      innerPerSec: (all - sent) / s,
      connectionsPerSec: perConnection / s,
      byCommand: Object.fromEntries(entries.map(([n, v]) => [n, v.calls])),
    };
  } finally {
    await stop();
  }
}

const server = await startServer({});
if (!server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
const latency: Record<string, Summary> = {};
const idle: Record<string, Idle> = {};
try {
  const address = [{ host: server.host, port: server.port }];
  const connection = { host: server.host, port: server.port, maxRetriesPerRequest: null };
  const mqModule = await EchoMQ.connect<Payload>({ addresses: address, backend: "module" });
  const mqScripts = await EchoMQ.connect<Payload>({ addresses: address, backend: "scripts" });
  if (mqModule.backend !== "module" || mqScripts.backend !== "scripts") throw new Error("backend not as asked");
  try {
    // ---- latency: all three workers up, one job in flight on one of them at a time ----------
    const variants: Record<string, Variant> = {
      emqModule: emqVariant(mqModule, "EchoMQ module", "lat-module"),
      emqScripts: emqVariant(mqScripts, "EchoMQ scripts", "lat-scripts"),
      bullmq: await bullVariant(connection, "lat-bullmq"),
    };
    try {
      const keys = Object.keys(variants);
      for (const k of keys) await oneAtATime(variants[k]!, WARMUP, true);
      for (let r = 0; r < ROUNDS; r++) {
        const per = Math.floor(SAMPLES / ROUNDS) + (r < SAMPLES % ROUNDS ? 1 : 0);
        for (let i = 0; i < keys.length; i++) {
          const k = keys[(i + r) % keys.length]!;
          await oneAtATime(variants[k]!, per, false);
        }
      }
      for (const k of keys) {
        latency[k] = summarize(variants[k]!.samples);
        console.error(
          `${variants[k]!.name.padEnd(15)} p50 ${latency[k].p50Ms.toFixed(2)} ms  p90 ${latency[k].p90Ms.toFixed(2)} ms  ` +
            `p99 ${latency[k].p99Ms.toFixed(2)} ms  max ${latency[k].maxMs.toFixed(2)} ms`,
        );
      }
    } finally {
      for (const v of Object.values(variants)) await v.stop();
    }

    // ---- idle cost: one worker of concurrency 50 alone on the server at a time ----------------
    for (const [key, mq] of [["emqModule", mqModule], ["emqScripts", mqScripts]] as const) {
      idle[key] = await idleCost(server.port, async () => {
        const errors: unknown[] = [];
        const w = mq.work(`idle-${key}`, () => {}, { concurrency: 50, blockMs: BLOCK_MS, onError: (e) => errors.push(e) });
        return async () => {
          await w.stop();
          if (errors.length > 0) throw new Error(`idle ${key} worker: ${String(errors[0])}`);
        };
      });
    }
    idle.bullmq = await idleCost(server.port, async () => {
      const w = new BullWorker("idle-bullmq", async () => {}, { connection, concurrency: 50 });
      await w.waitUntilReady();
      return () => w.close();
    });
    for (const [k, v] of Object.entries(idle)) {
      console.error(
        `idle ${k.padEnd(10)} ${v.allPerSec.toFixed(2)} commands/s (sent ${v.sentPerSec.toFixed(2)}/s, inside scripts ` +
          `${v.innerPerSec.toFixed(2)}/s; per connection ${v.connectionsPerSec.toFixed(2)}/s) over ${(v.windowMs / 1000).toFixed(1)} s: ${
            JSON.stringify(v.byCommand)
          }`,
      );
    }
  } finally {
    await mqModule.close();
    await mqScripts.close();
  }
} finally {
  await server.stop();
}
const b = latency.bullmq!;
report({
  samples: SAMPLES,
  warmup: WARMUP,
  rounds: ROUNDS,
  gapMs: GAP_MS,
  blockMs: BLOCK_MS,
  idleMs: IDLE_MS,
  latency,
  ratios: Object.fromEntries(
    (["emqModule", "emqScripts"] as const).map((k) => [k, {
      p50: latency[k]!.p50Ms / b.p50Ms,
      p90: latency[k]!.p90Ms / b.p90Ms,
      p99: latency[k]!.p99Ms / b.p99Ms,
      max: latency[k]!.maxMs / b.maxMs,
    }]),
  ),
  idle,
});
