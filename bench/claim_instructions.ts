/**
 * Server instructions per CLAIM (issue 19 §4: a claim with lanes and limits on ≤ 1.3× a plain
 * claim), counted by callgrind. CPU time per call moves 2–3× between runs on a shared machine;
 * instructions do not, so this is the figure that tells two builds (or two cases) apart.
 *
 * Each case gets a fresh `valkey-server` under `valgrind --tool=callgrind` with instrumentation
 * off; the queue is filled, 20 claims run unmeasured, then instrumentation is on for `--n` one-job
 * CLAIMs of `--count` jobs each (1 by default; a worker claims its free slots at once) sent one
 * after another, and the figure is the inclusive instructions (Ir) of the server's `call()` (the
 * commands themselves, not the event loop or the sockets) per claimed job.
 * Cases: a plain queue; the same with a queue concurrency and rate limit; 10 lanes (`--lanes`); those lanes with
 * those limits on the queue and on every lane (set high, so that every call claims: the cost of
 * obeying them, as bench/lanes.ts). With `--drain`, each case is a worker's drain instead: a worker
 * of concurrency 50 runs `--n` jobs of the queue, which keeps no completed jobs (its SETTLEs and
 * CLAIMs, as bench/throughput.ts's), and the figure is the server's instructions per job of the
 * whole drain. Needs `valgrind` (with `callgrind_control`, `callgrind_annotate`) on
 * PATH; not part of `./emq bench`.
 *
 * Prints a table, then a JSON report on the last line.
 *
 * Run: node_modules/.bin/bun bench/claim_instructions.ts [--n 2000] [--count 1] [--backend module|scripts|both] [--drain] [--lanes 10]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EchoMQ } from "../client.ts";
import { moduleIfBuilt, startServer } from "../tools/embedded/mod.ts";
import { cliOptions } from "./_util.ts";

const opt = cliOptions({ n: 2000, count: 1, backend: "both", drain: false, lanes: 10 });
const WARM = 20;
const HIGH = { concurrency: 1_000_000, rate: { max: 1_000_000, perMs: 1, burst: 1_000_000 } };
const CASES = ["plain", "limits", "lanes", "lanes+limits"] as const;
type Case = (typeof CASES)[number];
/** A draining worker's slots (bench/throughput.ts's). */
const DRAIN_CONCURRENCY = 50;
type Backend = "module" | "scripts";

for (const tool of ["valgrind", "callgrind_control", "callgrind_annotate"]) {
  if (spawnSync(tool, ["--version"]).error) throw new Error(`${tool} is not on PATH (Debian: apt-get install valgrind)`);
}
const mod = moduleIfBuilt();
if (!mod) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");

/** `tool args…`, its stdout; throws with its stderr when it fails. */
function run(tool: string, args: string[]): string {
  const r = spawnSync(tool, args, { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${tool} ${args.join(" ")}: ${r.stderr || r.error}`);
  return r.stdout;
}

/**
 * Queue `q` set up as case `c` (its limits), with `n` jobs enqueued; in the laned cases job i is
 * in lane i mod `--lanes`, and every lane gets one (at least `--lanes` jobs, as bench/lanes.ts).
 */
async function prepare(mq: EchoMQ<number>, q: string, c: Case, n: number): Promise<void> {
  const lanes = c.startsWith("lanes");
  if (c.endsWith("limits")) {
    await mq.limit(q, HIGH);
    if (lanes) await mq.limit(q, HIGH, { perLane: true });
  }
  const lane = lanes ? (_: unknown, i: number): string => `t${i % opt.lanes}` : undefined;
  const jobs = lanes ? Math.max(n, opt.lanes) : n;
  for (let at = 0; at < jobs; at += 1000) {
    await mq.enqueueMany(q, Array.from({ length: Math.min(1000, jobs - at) }, (_, i) => at + i), { lane });
  }
}

/** `--n` claims of `--count` jobs on queue `q` (case `c`), instrumented (callgrind on in server `pid`) after the warm-up. */
async function claims(mq: EchoMQ<number>, q: string, c: Case, pid: string): Promise<void> {
  await prepare(mq, q, c, (opt.n + WARM) * opt.count);
  const claim = async (): Promise<void> => {
    const n = (await mq.claimMany(q, opt.count, { leaseMs: 600_000 })).length;
    if (n !== opt.count) throw new Error(`${q}: a claim claimed ${n} of ${opt.count}`);
  };
  for (let i = 0; i < WARM; i++) await claim();
  run("callgrind_control", ["-i", "on", pid]);
  for (let i = 0; i < opt.n; i++) await claim();
  run("callgrind_control", ["-i", "off", pid]);
}

/**
 * A worker's drain of queue `q` (case `c`, keeping no completed jobs): 1,000 jobs run unmeasured,
 * then a new worker runs the rest, `--n` or a few fewer, instrumented (server `pid`). Returns how
 * many it ran.
 */
async function drain(mq: EchoMQ<number>, q: string, c: Case, pid: string): Promise<number> {
  const warm = 1000;
  await mq.retain(q, { completedMax: 0 });
  await prepare(mq, q, c, opt.n + warm);
  const runUntil = async (done: (completed: number) => boolean): Promise<number> => {
    const w = mq.work(q, () => {}, { concurrency: DRAIN_CONCURRENCY, leaseMs: 600_000 });
    while (!done(w.completed)) await new Promise((r) => setTimeout(r, 20));
    await w.stop();
    return w.completed;
  };
  const warmed = await runUntil((n) => n >= warm);
  run("callgrind_control", ["-i", "on", pid]);
  const measured = await runUntil((n) => n >= opt.n + warm - warmed);
  run("callgrind_control", ["-i", "off", pid]);
  return measured;
}

/**
 * Inclusive Ir of `call()` per job over one case on a fresh server under callgrind: per claimed
 * job of its claims, or (`--drain`) per job of a drain.
 */
async function measure(backend: Backend, c: Case): Promise<number> {
  let jobs = 0;
  const dir = mkdtempSync(join(tmpdir(), "emq-callgrind-"));
  const server = await startServer({
    module: backend === "module" ? mod : false,
    launcher: ["valgrind", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${dir}/cg.%p.out`],
    readyTimeoutMs: 120_000,
  });
  try {
    const mq = await EchoMQ.connect<number>({ addresses: [{ host: server.host, port: server.port }], backend, requestTimeout: 60_000 });
    try {
      const q = `ci-${c}`;
      if (opt.drain) {
        jobs = await drain(mq, q, c, String(server.pid));
      } else {
        await claims(mq, q, c, String(server.pid));
        jobs = opt.n * opt.count;
      }
      run("callgrind_control", ["-d", String(server.pid)]);
    } finally {
      await mq.close();
    }
  } finally {
    await server.stop().catch(() => {});
  }
  try {
    const dump = readdirSync(dir).find((f) => /^cg\.\d+\.out\.1$/.test(f));
    if (dump === undefined) throw new Error(`no callgrind dump in ${dir}`);
    const text = run("callgrind_annotate", ["--inclusive=yes", "--threshold=100", join(dir, dump)]);
    const line = text.split("\n").find((l) => /\s(\S+:)?call \[/.test(l));
    if (line === undefined) throw new Error(`callgrind_annotate of ${dump}: no line for call()`);
    return Number(line.trim().split(/\s+/)[0]!.replaceAll(",", "")) / jobs;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const backends: Backend[] = opt.backend === "both" ? ["module", "scripts"] : [opt.backend as Backend];
const report: Record<string, Record<Case, number>> = {};
const per = opt.drain ? "job drained" : "claimed job";
for (const backend of backends) {
  const row = {} as Record<Case, number>;
  for (const c of CASES) {
    row[c] = Math.round(await measure(backend, c));
    console.error(`${backend} ${c}: ${row[c].toLocaleString("en")} Ir per ${per}`);
  }
  report[backend] = row;
}
const what = opt.drain ? `a worker's drain, concurrency ${DRAIN_CONCURRENCY}` : `${opt.count} per CLAIM`;
const named = (c: Case): string => c.replace("lanes", `${opt.lanes} lanes`).replace("+", " + ");
console.log(`| Ir per ${per} (\`call()\`, ${what}) | ${CASES.map(named).join(" | ")} | limits ÷ plain | lanes ÷ plain | lanes + limits ÷ plain |`);
console.log(`| --- |${" ---: |".repeat(CASES.length + 3)}`);
for (const [backend, row] of Object.entries(report)) {
  const r = (x: number): string => `${(x / row.plain).toFixed(2)}×`;
  console.log(`| ${backend} | ${CASES.map((c) => row[c].toLocaleString("en")).join(" | ")} | ${r(row.limits)} | ${r(row.lanes)} | ${r(row["lanes+limits"])} |`);
}
console.log(JSON.stringify({ n: opt.n, count: opt.count, drain: opt.drain, lanes: opt.lanes, report }));
