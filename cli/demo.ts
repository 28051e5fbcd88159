/**
 * `emq demo`: producers and workers on a few queues for a few seconds, a live progress line per
 * queue, a summary that checks every job was acked or buried, and the key family of one queue
 * with its slot and owning node. With no `--url` it starts (and stops) an embedded Valkey.
 *
 * @module
 */
import process from "node:process";
import { keyspace } from "../mod.ts";
import type { Worker } from "../client.ts";
import { openTarget } from "./target.ts";
import { parseFlags, UsageError } from "./usage.ts";

const QUEUES = ["orders", "emails", "reports"] as const;
/** Share of attempts that fail at random, per queue: enough to show retries. */
const FLAKINESS: Record<(typeof QUEUES)[number], number> = { orders: 0.05, emails: 0.15, reports: 0.02 };

interface Payload {
  readonly n: number;
  /** A poison job fails every attempt and ends in `dead`. */
  readonly poison: boolean;
}

interface Tally {
  enqueued: number;
  claimed: number;
  worker: Worker<Payload> | null;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Parses the demo's flags; refuses unknown ones with a one-line error. */
function options(argv: string[]): { cluster: boolean; backend: "module" | "scripts" | "auto"; url?: string; seconds: number } {
  const parsed = parseFlags({
    args: argv,
    options: {
      cluster: { type: "boolean", default: false },
      backend: { type: "string", default: "auto" },
      url: { type: "string" },
      seconds: { type: "string", default: "5" },
    },
  }).values;
  const backend = parsed.backend;
  if (backend !== "module" && backend !== "scripts" && backend !== "auto") {
    throw new UsageError(`--backend must be module, scripts or auto, not ${JSON.stringify(backend)}`);
  }
  const seconds = Number(parsed.seconds);
  if (!(seconds > 0 && seconds <= 3600)) throw new UsageError(`--seconds must be between 0 and 3600, not ${parsed.seconds}`);
  return { cluster: parsed.cluster, backend, url: parsed.url, seconds };
}

/** Runs the demo; resolves with the exit code (1 when the totals do not balance). */
export async function demo(argv: string[]): Promise<number> {
  const opts = options(argv);
  const target = await openTarget<Payload>(opts);
  const { mq } = target;
  console.log(`emq demo: ${target.description}, backend ${mq.backend}, queues ${QUEUES.join(", ")}, ${opts.seconds}s`);
  const tallies = new Map<string, Tally>(QUEUES.map((q) => [q, { enqueued: 0, claimed: 0, worker: null }]));
  const started = performance.now();
  let producing = true;
  try {
    for (const q of QUEUES) {
      const t = tallies.get(q)!;
      t.worker = mq.work(q, async (job) => {
        t.claimed++;
        await sleep(Math.random() < 0.1 ? 2 : 0);
        if (job.payload.poison || Math.random() < FLAKINESS[q]) throw new Error(`job ${job.payload.n} failed`);
      }, {
        concurrency: 16,
        leaseMs: 10_000,
        maxAttempts: 3,
        backoff: (attempts) => 50 * attempts,
      });
    }
    const producers = QUEUES.map(async (q) => {
      const t = tallies.get(q)!;
      let n = 0;
      while (producing) {
        const batch = Array.from({ length: 100 }, () => ({ n: n++, poison: n % 150 === 0 }));
        await mq.enqueueMany(q, batch);
        t.enqueued += batch.length;
        await sleep(25);
      }
    });
    const progress = setInterval(() => render(tallies, started, false), process.stdout.isTTY ? 250 : 1000);
    await sleep(opts.seconds * 1000);
    producing = false;
    await Promise.all(producers);
    // Drain: wait until every queue's pending, active and schedule are empty (bounded).
    const deadline = performance.now() + Math.max(10_000, opts.seconds * 2000);
    for (;;) {
      const counts = await Promise.all(QUEUES.map((q) => mq.counts(q)));
      if (counts.every((c) => c.pending + c.active + c.schedule === 0) || performance.now() > deadline) break;
      await sleep(100);
    }
    clearInterval(progress);
    await Promise.all([...tallies.values()].map((t) => t.worker?.stop()));
    render(tallies, started, true);
    return await summary(target, tallies);
  } finally {
    producing = false;
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
  console.log("\nqueue      enqueued     acked      dead   retries  pending  active  schedule  balanced");
  for (const [q, t] of tallies) {
    const w = t.worker!;
    const c = await target.mq.counts(q);
    const ok = t.enqueued === w.completed + c.dead && c.dead === w.buried && c.pending + c.active + c.schedule === 0;
    balanced &&= ok;
    console.log(
      `${q.padEnd(9)} ${String(t.enqueued).padStart(9)} ${String(w.completed).padStart(9)} ${String(c.dead).padStart(9)} ` +
        `${String(w.failed - w.buried).padStart(9)} ${String(c.pending).padStart(8)} ${String(c.active).padStart(7)} ` +
        `${String(c.schedule).padStart(9)}  ${ok ? "yes" : "NO"}`,
    );
  }
  const ks = keyspace(QUEUES[0]);
  console.log(`\nkey family of queue "${ks.name}": slot ${ks.slot}, served by ${target.ownerOf(ks.slot)}`);
  for (const k of [ks.pending, ks.active, ks.schedule, ks.dead, ks.meta, `${ks.base}job:<id>`]) console.log(`  ${k}`);
  if (!balanced) console.log("\nsome totals do not balance (enqueued = acked + dead): see the table above");
  return balanced ? 0 : 1;
}
