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
 * Cases: a plain queue; the same with a queue concurrency and rate limit; 10 lanes; 10 lanes with
 * those limits on the queue and on every lane (set high, so that every call claims: the cost of
 * obeying them, as bench/lanes.ts). Needs `valgrind` (with `callgrind_control`,
 * `callgrind_annotate`) on PATH; not part of `./emq bench`.
 *
 * Prints a table, then a JSON report on the last line.
 *
 * Run: node_modules/.bin/bun bench/claim_instructions.ts [--n 2000] [--count 1] [--backend module|scripts|both]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EchoMQ } from "../client.ts";
import { moduleIfBuilt, startServer } from "../tools/embedded/mod.ts";
import { cliOptions } from "./_util.ts";

const opt = cliOptions({ n: 2000, count: 1, backend: "both" });
const WARM = 20;
const HIGH = { concurrency: 1_000_000, rate: { max: 1_000_000, perMs: 1, burst: 1_000_000 } };
const CASES = ["plain", "limits", "lanes10", "lanes10+limits"] as const;
type Case = (typeof CASES)[number];
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

/** Inclusive Ir of `call()` per claimed job over the claims of one case on a fresh server under callgrind. */
async function measure(backend: Backend, c: Case): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "emq-callgrind-"));
  const server = await startServer({
    module: backend === "module" ? mod : false,
    launcher: ["valgrind", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${dir}/cg.%p.out`],
    readyTimeoutMs: 120_000,
  });
  try {
    const mq = await EchoMQ.connect({ addresses: [{ host: server.host, port: server.port }], backend, requestTimeout: 60_000 });
    try {
      const q = `ci-${c}`;
      const lanes = c.startsWith("lanes10");
      if (c.endsWith("limits")) {
        await mq.limit(q, HIGH);
        if (lanes) await mq.limit(q, HIGH, { perLane: true });
      }
      const lane = lanes ? (_: unknown, i: number): string => `t${i % 10}` : undefined;
      const total = (opt.n + WARM) * opt.count;
      for (let at = 0; at < total; at += 1000) {
        await mq.enqueueMany(q, Array.from({ length: Math.min(1000, total - at) }, (_, i) => at + i), { lane });
      }
      const claim = async (): Promise<void> => {
        const n = (await mq.claimMany(q, opt.count, { leaseMs: 600_000 })).length;
        if (n !== opt.count) throw new Error(`${q}: a claim claimed ${n} of ${opt.count}`);
      };
      for (let i = 0; i < WARM; i++) await claim();
      run("callgrind_control", ["-i", "on", String(server.pid)]);
      for (let i = 0; i < opt.n; i++) await claim();
      run("callgrind_control", ["-i", "off", String(server.pid)]);
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
    return Number(line.trim().split(/\s+/)[0]!.replaceAll(",", "")) / (opt.n * opt.count);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const backends: Backend[] = opt.backend === "both" ? ["module", "scripts"] : [opt.backend as Backend];
const report: Record<string, Record<Case, number>> = {};
for (const backend of backends) {
  const row = {} as Record<Case, number>;
  for (const c of CASES) {
    row[c] = Math.round(await measure(backend, c));
    console.error(`${backend} ${c}: ${row[c].toLocaleString("en")} Ir per claimed job`);
  }
  report[backend] = row;
}
console.log(`| Ir per claimed job (\`call()\`, ${opt.count} per CLAIM) | ${CASES.join(" | ")} | limits ÷ plain | lanes ÷ plain | lanes + limits ÷ plain |`);
console.log(`| --- |${" ---: |".repeat(CASES.length + 3)}`);
for (const [backend, row] of Object.entries(report)) {
  const r = (x: number): string => `${(x / row.plain).toFixed(2)}×`;
  console.log(`| ${backend} | ${CASES.map((c) => row[c].toLocaleString("en")).join(" | ")} | ${r(row.limits)} | ${r(row.lanes10)} | ${r(row["lanes10+limits"])} |`);
}
console.log(JSON.stringify({ n: opt.n, count: opt.count, report }));
