/**
 * `emq demo`: producers and workers on a few queues for a few seconds, a live progress line per
 * queue, a summary that checks every job was acked or buried, and the key family of one queue
 * with its slot and owning node. With no `--url` it starts (and stops) an embedded Valkey.
 *
 * @module
 */
import process from "node:process";
import { keyspace } from "../mod.ts";
import type { EchoMQ, Worker } from "../client.ts";
import { openTarget, type TargetOptions } from "./target.ts";
import { parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "../lib/cli/usage.ts";

const QUEUES = ["orders", "emails", "reports"] as const;
/** Share of attempts that fail at random, per queue: enough to show retries. */
const FLAKINESS: Record<(typeof QUEUES)[number], number> = { orders: 0.05, emails: 0.15, reports: 0.02 };

/** A demo job. */
export interface Payload {
  readonly n: number;
  /** A poison job fails every attempt and ends in `dead`. */
  readonly poison: boolean;
}

/** One queue's traffic so far. */
export interface Tally {
  enqueued: number;
  claimed: number;
  worker: Worker<Payload> | null;
}

/** How hard {@link startTraffic} drives its queues. */
export interface Pace {
  /** Jobs per enqueueMany. */
  readonly batch: number;
  /** Pause between batches, ms. */
  readonly pauseMs: number;
  /** Every `poisonEvery`-th job fails every attempt (and ends in `dead`). */
  readonly poisonEvery: number;
  /** Worker concurrency per queue. */
  readonly concurrency: number;
  /** A handler's run in ms, drawn per job. */
  handlerMs(): number;
  /** Producers skip a batch while pending holds this many jobs or more (none: never skip). */
  readonly maxPending?: number;
  /** Worker errors (default: the worker's own, a line on stderr). */
  readonly onError?: (error: unknown) => void;
  /** A producer's failed batch: rethrown when absent (the producer stops), else reported and retried. */
  readonly onProducerError?: (error: unknown) => void;
}

/** The pace of `emq demo`: as fast as it goes. */
export const DEMO_PACE: Pace = {
  batch: 100,
  pauseMs: 25,
  poisonEvery: 150,
  concurrency: 16,
  handlerMs: () => (Math.random() < 0.1 ? 2 : 0),
};

/** Producers and workers running in this process. */
export interface Traffic {
  /** Per queue: enqueued, claimed, its worker. */
  readonly tallies: Map<string, Tally>;
  /** Stops the producers; resolves when their last batch landed (rejects with a producer's error). */
  stopProducing(): Promise<void>;
  /** Stops the producers, then the workers (in-flight jobs finish and settle). */
  stop(): Promise<void>;
}

/**
 * `emq demo`'s producers and workers on `queues` (name → share of attempts that fail at random),
 * in this process: batches of jobs, every `poisonEvery`-th a poison one; workers with retries
 * and backoff that bury after 3 attempts. Runs until stopped.
 */
export function startTraffic(mq: EchoMQ<Payload>, queues: Readonly<Record<string, number>>, pace: Pace): Traffic {
  const names = Object.keys(queues);
  const tallies = new Map<string, Tally>(names.map((q) => [q, { enqueued: 0, claimed: 0, worker: null }]));
  let producing = true;
  for (const q of names) {
    const t = tallies.get(q)!;
    t.worker = mq.work(q, async (job) => {
      t.claimed++;
      await sleep(pace.handlerMs());
      if (job.payload.poison || Math.random() < queues[q]!) throw new Error(`job ${job.payload.n} failed`);
      return { n: job.payload.n, attempts: job.attempts }; // its result: kept with the completed job
    }, {
      concurrency: pace.concurrency,
      leaseMs: 10_000,
      maxAttempts: 3,
      backoff: (attempts) => 50 * attempts,
      ...(pace.onError ? { onError: pace.onError } : {}),
    });
  }
  const producers = Promise.all(names.map(async (q) => {
    const t = tallies.get(q)!;
    let n = 0;
    while (producing) {
      try {
        if (pace.maxPending === undefined || (await mq.counts(q)).pending < pace.maxPending) {
          const batch = Array.from({ length: pace.batch }, () => ({ n: n++, poison: n % pace.poisonEvery === 0 }));
          // four tenants' lanes: claims serve them round-robin
          await mq.enqueueMany(q, batch, { lane: (job) => `tenant-${job.n % 4}` });
          t.enqueued += batch.length;
        }
      } catch (e) {
        if (!pace.onProducerError) throw e;
        pace.onProducerError(e);
        await sleep(1000);
      }
      await sleep(pace.pauseMs);
    }
  }));
  const stopProducing = (): Promise<void> => {
    producing = false;
    return producers.then(() => undefined);
  };
  return {
    tallies,
    stopProducing,
    stop: async () => {
      await stopProducing().catch(() => undefined);
      await Promise.all([...tallies.values()].map((t) => t.worker?.stop()));
    },
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Parses the demo's flags; refuses unknown ones with a one-line error. */
function options(argv: string[]): TargetOptions & { seconds: number } {
  const parsed = parseFlags({
    args: argv,
    options: {
      ...SERVER_FLAGS,
      backend: { type: "string", default: "auto" },
      seconds: { type: "string", default: "5" },
    },
  }).values;
  const backend = parsed.backend;
  if (backend !== "module" && backend !== "scripts" && backend !== "auto") {
    throw new UsageError(`--backend must be module, scripts or auto, not ${JSON.stringify(backend)}`);
  }
  const seconds = Number(parsed.seconds);
  if (!(seconds > 0 && seconds <= 3600)) throw new UsageError(`--seconds must be between 0 and 3600, not ${parsed.seconds}`);
  return { ...serverFlags(parsed), backend, seconds };
}

/** Runs the demo; resolves with the exit code (1 when the totals do not balance). */
export async function demo(argv: string[]): Promise<number> {
  const opts = options(argv);
  const target = await openTarget<Payload>(opts);
  const { mq } = target;
  // On a server of the user's (--url), queues of this run's own, dropped at the end: nothing left behind.
  const prefix = opts.url === undefined ? "" : `emq-demo-${Math.random().toString(36).slice(2, 8)}-`;
  const queues = Object.fromEntries(QUEUES.map((q) => [`${prefix}${q}`, FLAKINESS[q]]));
  console.log(`emq demo: ${target.description}, backend ${mq.backend}, queues ${Object.keys(queues).join(", ")}, ${opts.seconds}s`);
  const started = performance.now();
  const traffic = startTraffic(mq, queues, DEMO_PACE);
  const { tallies } = traffic;
  try {
    const progress = setInterval(() => render(tallies, started, false), process.stdout.isTTY ? 250 : 1000);
    await sleep(opts.seconds * 1000);
    await traffic.stopProducing();
    // Drain: wait until every queue's pending, active and schedule are empty (bounded).
    const deadline = performance.now() + Math.max(10_000, opts.seconds * 2000);
    for (;;) {
      const counts = await Promise.all([...tallies.keys()].map((q) => mq.counts(q)));
      if (counts.every((c) => c.pending + c.active + c.schedule === 0) || performance.now() > deadline) break;
      await sleep(100);
    }
    clearInterval(progress);
    await Promise.all([...tallies.values()].map((t) => t.worker?.stop()));
    render(tallies, started, true);
    return await summary(target, tallies);
  } finally {
    await traffic.stop();
    if (prefix !== "") {
      const dropped = await Promise.allSettled(Object.keys(queues).map((q) => mq.drop(q)));
      const failed = dropped.flatMap((d, i) => d.status === "rejected" ? [Object.keys(queues)[i]] : []);
      console.log(
        failed.length === 0
          ? `dropped the demo's queues from ${target.description}`
          : `could not drop ${failed.join(", ")}: drop them with emq drop <queue> --url … --yes`,
      );
    }
    await target.close();
  }
}

function render(tallies: Map<string, Tally>, started: number, final: boolean): void {
  const secs = (performance.now() - started) / 1000;
  const parts = [...tallies].map(([q, t]) => {
    const w = t.worker!;
    return `${q} enq ${t.enqueued} claim ${t.claimed} ack ${w.completed} retry ${w.failed - w.buried} dead ${w.buried} ${Math.round(w.completed / secs)}/s`;
  });
  const line = `${secs.toFixed(1).padStart(5)}s | ${parts.join(" | ")}`;
  if (process.stdout.isTTY && !final) process.stdout.write(`\r${line}\x1b[K`);
  else console.log(process.stdout.isTTY ? `\r${line}\x1b[K` : line);
}

async function summary(target: Awaited<ReturnType<typeof openTarget<Payload>>>, tallies: Map<string, Tally>): Promise<number> {
  let balanced = true;
  const width = Math.max(9, ...[...tallies.keys()].map((q) => q.length));
  console.log(`\n${"queue".padEnd(width)}  enqueued     acked      dead   retries  pending  active  schedule  balanced`);
  for (const [q, t] of tallies) {
    const w = t.worker!;
    const c = await target.mq.counts(q);
    const ok = t.enqueued === w.completed + c.dead && c.dead === w.buried && c.pending + c.active + c.schedule === 0;
    balanced &&= ok;
    console.log(
      `${q.padEnd(width)} ${String(t.enqueued).padStart(9)} ${String(w.completed).padStart(9)} ${String(c.dead).padStart(9)} ` +
        `${String(w.failed - w.buried).padStart(9)} ${String(c.pending).padStart(8)} ${String(c.active).padStart(7)} ` +
        `${String(c.schedule).padStart(9)}  ${ok ? "yes" : "NO"}`,
    );
  }
  const ks = keyspace([...tallies.keys()][0]!);
  console.log(`\nkey family of queue "${ks.name}": slot ${ks.slot}, served by ${await target.ownerOf(ks.slot)}`);
  for (const k of [ks.pending, ks.active, ks.schedule, ks.dead, ks.meta, `${ks.base}job:<id>`]) console.log(`  ${k}`);
  if (!balanced) console.log("\nsome totals do not balance (enqueued = acked + dead): see the table above");
  return balanced ? 0 : 1;
}
