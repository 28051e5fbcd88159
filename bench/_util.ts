/**
 * Shared helpers of the benchmarks (not a benchmark itself): server statistics from
 * `INFO commandstats` / `INFO cpu` over a phase, bounded concurrency, percentiles, and the BullMQ
 * connection options used beside EchoMQ.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { Cluster } from "ioredis";
import { command, infoFields } from "../tools/embedded/mod.ts";

/** One command's line of INFO commandstats. */
export interface CmdStat {
  calls: number;
  usec: number;
}

/** Every `cmdstat_<name>` of one server: name → { calls, usec }. */
export async function commandStats(port: number): Promise<Record<string, CmdStat>> {
  const fields = infoFields(await command(port, ["INFO", "commandstats"]));
  const out: Record<string, CmdStat> = {};
  for (const [k, raw] of Object.entries(fields)) {
    if (!k.startsWith("cmdstat_")) continue;
    const kv = Object.fromEntries(raw.split(",").map((p) => p.split("=") as [string, string]));
    out[k.slice("cmdstat_".length)] = { calls: Number(kv.calls), usec: Number(kv.usec) };
  }
  return out;
}

/** The server process's CPU seconds so far (user + system, `INFO cpu`). */
export async function serverCpu(port: number): Promise<number> {
  const f = infoFields(await command(port, ["INFO", "cpu"]));
  return Number(f["used_cpu_user"]) + Number(f["used_cpu_sys"]);
}

/** Commands that only the harness sends between phases; left out of the sums. */
const HARNESS = new Set(["config|resetstat", "info", "config", "ping", "cluster|info", "cluster|slots", "cluster|nodes"]);

/** What the servers spent over one phase. */
export interface PhaseCost {
  /** Commandstats per command, summed over the servers (harness commands left out). */
  commands: Record<string, CmdStat>;
  /** Server process CPU over the phase in µs (user + system; includes reading and writing sockets). */
  processUsec: number;
}

/**
 * Measures what `ports` (the primaries) spend while `run` runs: `CONFIG RESETSTAT` and a CPU
 * reading before, `INFO commandstats` and a CPU reading after.
 */
export async function phase<T>(ports: number[], run: () => Promise<T>): Promise<{ result: T; ms: number; cost: PhaseCost }> {
  await Promise.all(ports.map((p) => command(p, ["CONFIG", "RESETSTAT"])));
  const cpu0 = await Promise.all(ports.map(serverCpu));
  const t0 = performance.now();
  const result = await run();
  const ms = performance.now() - t0;
  const cpu1 = await Promise.all(ports.map(serverCpu));
  const stats = await Promise.all(ports.map(commandStats));
  const commands: Record<string, CmdStat> = {};
  for (const s of stats) {
    for (const [name, v] of Object.entries(s)) {
      if (HARNESS.has(name)) continue;
      const c = (commands[name] ??= { calls: 0, usec: 0 });
      c.calls += v.calls;
      c.usec += v.usec;
    }
  }
  const processUsec = cpu1.reduce((a, c, i) => a + (c - cpu0[i]!) * 1e6, 0);
  return { result, ms, cost: { commands, processUsec } };
}

/**
 * This process's CPU so far by kind of thread, µs (Linux `/proc/self/task`; empty elsewhere): `main`
 * (the JavaScript thread), `jit` (JavaScriptCore's compiler threads), `gc` (its heap helpers),
 * `glide` (glide's Rust runtime) and `other`. Where a phase's client CPU goes, beside
 * `process.cpuUsage`'s total.
 */
export function threadCpu(): Record<string, number> {
  const out: Record<string, number> = {};
  let tasks: string[];
  try {
    tasks = readdirSync("/proc/self/task");
  } catch {
    return out;
  }
  const tick = 1e6 / 100; // USER_HZ: 100 on Linux
  for (const t of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${t}/stat`, "utf8");
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const kind = t === String(process.pid) ? "main" : /^JIT/.test(name) ? "jit" : /^Heap|^GC/.test(name) ? "gc" : /^glide/.test(name) ? "glide" : "other";
    out[kind] = (out[kind] ?? 0) + (Number(fields[11]) + Number(fields[12])) * tick;
  }
  return out;
}

/** usec per call of the script lines (EVALSHA + EVAL, NOSCRIPT fallbacks included). */
export function scriptUsecPerCall(commands: Record<string, CmdStat>): { calls: number; usecPerCall: number } {
  const a = commands["evalsha"] ?? { calls: 0, usec: 0 };
  const b = commands["eval"] ?? { calls: 0, usec: 0 };
  const calls = a.calls + b.calls;
  if (calls === 0) throw new Error("no EVALSHA / EVAL calls in this phase");
  return { calls, usecPerCall: (a.usec + b.usec) / calls };
}

/** Commands run inside scripts over a phase, per script call, heaviest first (a profile). */
export function insideScripts(
  commands: Record<string, CmdStat>,
  scriptCalls: number,
  top = 8,
): Array<{ command: string; callsPerScript: number; usecPerScript: number }> {
  return Object.entries(commands)
    .filter(([n]) => n !== "evalsha" && n !== "eval" && !n.startsWith("emq.") && !n.startsWith("script"))
    .map(([command, v]) => ({ command, callsPerScript: v.calls / scriptCalls, usecPerScript: v.usec / scriptCalls }))
    .sort((a, b) => b.usecPerScript - a.usecPerScript)
    .slice(0, top);
}

/** Runs `task(i)` for i in [0, n) with at most `inFlight` at once. */
export async function pool(n: number, inFlight: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, async () => {
    while (next < n) await task(next++);
  }));
}

/** The q-th percentile (0..100) of `xs` (nearest rank). */
export function percentile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((q / 100) * s.length) - 1))]!;
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` or `timeoutMs` passes (then throws with `what`). */
export async function until(what: string, done: () => boolean, timeoutMs: number, stepMs = 2): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(stepMs);
  }
}

/** The payload every benchmark enqueues (≈ 90 bytes of JSON). */
export const PAYLOAD = { to: "ada@example.com", body: "x".repeat(64) };

/**
 * BullMQ connection options: plain `{ host, port }` on a standalone server (BullMQ opens its own
 * ioredis connections), or an ioredis `Cluster` on a cluster.
 */
export function bullConnection(addresses: ReadonlyArray<{ host: string; port: number }>, cluster: boolean): any {
  if (!cluster) return { host: addresses[0]!.host, port: addresses[0]!.port, maxRetriesPerRequest: null };
  return new Cluster(addresses.map((a) => ({ host: a.host, port: a.port })), {
    redisOptions: { maxRetriesPerRequest: null },
    enableReadyCheck: true,
  });
}

/** The BullMQ key prefix of queue `name`: a hashtag of its own on a cluster, `bull` otherwise. */
export function bullPrefix(name: string, cluster: boolean): string {
  return cluster ? `{${name}}` : "bull";
}

/** Prints `report` as the last line (what bench/run.ts reads) and exits. */
export function report(value: unknown): never {
  console.log(JSON.stringify(value));
  process.exit(0);
}

/** The value type of a command-line option whose default is `D`: see {@link cliOptions}. */
type OptionValue<D> = D extends number ? number : D extends boolean ? boolean : D extends string ? string : string | undefined;

/**
 * A benchmark's command-line options (`--name value`, `--flag`), each typed by its default: a
 * number is read as a number, a string as text, a boolean is a flag, `undefined` an optional text.
 */
export function cliOptions<const T extends Record<string, number | string | boolean | undefined>>(
  defaults: T,
): { [K in keyof T]: OptionValue<T[K]> } {
  const options: ParseArgsConfig["options"] = {};
  for (const [name, d] of Object.entries(defaults)) {
    options[name] = typeof d === "boolean" ? { type: "boolean", default: d } : d === undefined ? { type: "string" } : { type: "string", default: String(d) };
  }
  const { values } = parseArgs({ args: process.argv.slice(2), options });
  const read = Object.entries(defaults).map(([name, d]) => [name, typeof d === "number" ? Number(values[name]) : values[name]]);
  return Object.fromEntries(read) as { [K in keyof T]: OptionValue<T[K]> };
}
