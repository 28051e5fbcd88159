/**
 * Where the Lua twin's server time goes, per shared function: each verb's function library is
 * replaced on a server (same name, so a client's FCALLs reach it) by a copy in which every shared
 * function, the verb's body and every `redis.call` / `redis.pcall` are timed with `os.clock`
 * (inclusive and self time, calls). The timing itself costs about 1 µs per timed call, so read
 * the self times as a ranking, not as figures. Not part of `./emq test`.
 *
 * `--plain`: no timed copies, the FCALLs' real server µs per job (INFO commandstats) of drains at
 * concurrency 50, 4 (about a cluster's SETTLE) and 1.
 *
 * Run: node_modules/.bin/bun tools/lua_profile.ts [jobs] [rows, default 30] [--plain]   (one-job enqueues, then a drain at
 * concurrency 50, then a drain of jobs / 10 at concurrency 1 (a call's fixed cost), scripts backend, on an
 * embedded server; prints the top functions per verb)
 *
 * @module
 */
import { EchoMQ } from "../client.ts";
import { luaLibrary, SCRIPTS } from "../lib/lua/mod.ts";
import type { Verb } from "../lib/wire/mod.ts";
import { command, startServer } from "./embedded/mod.ts";

const PROLOGUE = `
local function emqp_clock() return os.clock() end
local EMQP = {}
local emqp_stack = {0}
local function emqp_pack(...) return {n = select('#', ...), ...} end
local function emqp_enter() emqp_stack[#emqp_stack + 1] = 0 return emqp_clock() end
local function emqp_leave(name, t0)
  local dt = emqp_clock() - t0
  local c = emqp_stack[#emqp_stack]
  emqp_stack[#emqp_stack] = nil
  emqp_stack[#emqp_stack] = emqp_stack[#emqp_stack] + dt
  local s = EMQP[name]
  if not s then s = {0, 0, 0} EMQP[name] = s end
  s[1], s[2], s[3] = s[1] + 1, s[2] + dt, s[3] + dt - c
end
local function emqp_wrap(name, f)
  return function(...)
    local t0 = emqp_enter()
    local r = emqp_pack(f(...))
    emqp_leave(name, t0)
    return unpack(r, 1, r.n)
  end
end
-- a redis.call or redis.pcall, timed under its command's name
local function emqp_command(kind, send)
  return function(...)
    local t0 = emqp_enter()
    local r = send(...)
    emqp_leave(kind .. ' ' .. string.upper((...)), t0)
    return r
  end
end
local emqp_call = emqp_command('call', function(...) return redis.call(...) end)
local emqp_pcall = emqp_command('pcall', function(...) return redis.pcall(...) end)
`;

/** The profiled copy of a verb's library (same name). */
function profiledLibrary(verb: Verb): { name: string; code: string } {
  const lib = luaLibrary(verb, SCRIPTS[verb]);
  let code = lib.code.replaceAll("redis.call(", "emqp_call(").replaceAll("redis.pcall(", "emqp_pcall(");
  const lines = code.split("\n");
  const reg = lines.findIndex((l) => l.startsWith("redis.register_function{"));
  const names = [...new Set(lines.slice(0, reg).flatMap((l) => /^local function (\w+)\(/.exec(l)?.[1] ?? []))];
  const wraps = names.map((n) => `${n} = emqp_wrap('${n}', ${n})`);
  lines[reg] = lines[reg]!.replace("callback = function(keys, args)", "callback = emqp_wrap('=" + verb + "', function(keys, args)");
  const last = lines.lastIndexOf("end}");
  lines[last] = "end)}";
  const dump = `redis.register_function{function_name = 'emqp_dump_${verb.toLowerCase()}', callback = function(k, a)
  local out = {}
  for name, s in pairs(EMQP) do out[#out + 1] = name .. ' ' .. s[1] .. ' ' .. string.format('%.6f %.6f', s[2], s[3]) end
  if a[1] == 'reset' then EMQP = {} end
  return out
end}`;
  code = [lines[0], lines[1], PROLOGUE, ...lines.slice(2, reg), ...wraps, ...lines.slice(reg), dump].join("\n");
  return { name: lib.name, code };
}

type Send = (args: string[]) => Promise<unknown>;

/** Replaces every verb's library on a server by its profiled copy. */
async function profileLibraries(send: Send, verbs: Verb[] = Object.keys(SCRIPTS) as Verb[]): Promise<void> {
  for (const v of verbs) {
    const reply = await send(["FUNCTION", "LOAD", "REPLACE", profiledLibrary(v).code]);
    if (reply instanceof Error) throw new Error(`${v}'s profiled library: ${reply.message}`);
  }
}

/** Per verb, its top functions by self time (per job when `jobs` is given, else per call); the counters reset. */
async function dumpProfiles(send: Send, verbs: Verb[] = Object.keys(SCRIPTS) as Verb[], jobs = 0): Promise<string> {
  const out: string[] = [];
  for (const v of verbs) {
    const rows = ((await send(["FCALL", `emqp_dump_${v.toLowerCase()}`, "0", "reset"])) as string[]).map((r) => {
      const parts = r.split(" ");
      const [n, incl, self] = parts.slice(-3);
      const name = parts.slice(0, -3).join(" ");
      return { name: name!, n: Number(n), incl: Number(incl) * 1e6, self: Number(self) * 1e6 };
    });
    const top = rows.find((r) => r.name === `=${v}`);
    if (!top) continue;
    rows.sort((a, b) => b.self - a.self);
    const per = jobs || top.n;
    // the server commands the verb runs (every redis.call / pcall): a count no load changes
    const commands = rows.filter((r) => /^p?call /.test(r.name)).reduce((n, r) => n + r.n, 0);
    out.push(
      `== ${v}: ${top.n} calls, ${(top.incl / per).toFixed(2)} µs per ${jobs ? "job" : "call"} inclusive (profiler overhead included), ` +
        `${(commands / per).toFixed(2)} server commands per ${jobs ? "job" : "call"}`,
    );
    // every command by its count, the most frequent first (what a cut removes)
    const counted = rows.filter((r) => /^p?call /.test(r.name)).sort((a, b) => b.n - a.n);
    out.push(`  commands: ${counted.map((r) => `${r.name.replace(/^p?call /, (m) => m === "pcall " ? "p:" : "")} ${(r.n / per).toFixed(2)}`).join(", ")}`);
    for (const r of rows.slice(0, ROWS)) {
      out.push(
        `  ${r.name.padEnd(28)} ${(r.n / per).toFixed(2).padStart(6)}/${jobs ? "job" : "call"}  self ${(r.self / per).toFixed(2).padStart(6)} µs  incl ${
          (r.incl / per).toFixed(2).padStart(6)
        }`,
      );
    }
  }
  return out.join("\n");
}

const args = process.argv.slice(2).filter((a) => a !== "--plain");
/** `--plain`: no timed copies; the real server time of the verbs' FCALLs (INFO commandstats) per job, by drain concurrency. */
const PLAIN = process.argv.includes("--plain");
const N = Number(args[0] ?? 3000);
/** Functions listed per verb (the top by self time). */
const ROWS = Number(args[1] ?? 30);
const server = await startServer({ module: false });
const send: Send = (a) => command(server.port, a);
const mq = await EchoMQ.connect({ addresses: [{ host: server.host, port: server.port }], backend: "scripts" });

/** Jobs enqueued one a call into `queue`, then drained at `concurrency`. */
async function drain(queue: string, jobs: number, concurrency: number, before: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < jobs; i++) await mq.enqueue(queue, { i });
  await before();
  let done = 0;
  const worker = mq.work(queue, () => void done++, { concurrency });
  while (done < jobs) await new Promise((r) => setTimeout(r, 20));
  await worker.stop();
}

/** The FCALLs' calls and µs since the last reset (INFO commandstats). */
async function fcalls(): Promise<{ calls: number; usec: number }> {
  const info = String(await send(["INFO", "commandstats"]));
  const m = /cmdstat_fcall:calls=(\d+),usec=(\d+)/.exec(info);
  return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
}

if (PLAIN) {
  const reset = () => send(["CONFIG", "RESETSTAT"]);
  await reset();
  for (let i = 0; i < N; i++) await mq.enqueue("e", { i });
  const e = await fcalls();
  console.log(`ENQUEUE one a call: ${(e.usec / e.calls).toFixed(2)} µs per call`);
  for (const [concurrency, jobs] of [[50, N], [4, Math.floor(N / 2)], [1, Math.floor(N / 10)]] as const) {
    await drain(`q${concurrency}`, jobs, concurrency, reset);
    const f = await fcalls();
    console.log(`drain at ${concurrency}: ${(f.usec / jobs).toFixed(2)} µs per job, ${(f.usec / f.calls).toFixed(2)} µs per call (${f.calls} calls)`);
  }
} else {
  await profileLibraries(send);
  for (let i = 0; i < N; i++) await mq.enqueue("q", { i });
  console.log(await dumpProfiles(send, ["ENQUEUE"]));
  await drain("q", N, 50, async () => {});
  console.log(await dumpProfiles(send, ["CLAIM", "SETTLE", "ACK", "EXTEND"], N));
  // one job per call (concurrency 1): a call's fixed cost, what a cluster's small settles pay
  const M = Math.max(1, Math.floor(N / 10));
  await drain("q1", M, 1, () => dumpProfiles(send, ["ENQUEUE"]));
  console.log("-- concurrency 1 --");
  console.log(await dumpProfiles(send, ["CLAIM", "SETTLE", "ACK", "EXTEND"], M));
}
await mq.close();
await server.stop();
