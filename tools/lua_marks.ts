/**
 * Where a SETTLE of the Lua twin spends its server time, by stretch of code: the SETTLE library is
 * loaded on an embedded server (scripts only) with `os.clock` read at each marked line (a mark: a
 * piece of a line of the library's code; the marks in the order of the code, the shared functions
 * first, then the verb's own steps), and each stretch's CPU time is summed from the mark read
 * before it in the call to its own (what `tools/lua_profile.ts` cannot give: it times every
 * shared function, at about 1 µs per timed call, which outweighs most of them). A stretch is
 * named by the mark that ends it; `99 end` is the last one (to the reply). Jobs are enqueued, K
 * claimed, then SETTLE acks the K held and claims K again until none is left: K = 4 is a cluster's
 * worker of 12 queues (a SETTLE carries about 4 jobs). Not part of `./emq test`.
 *
 * Run: node_modules/.bin/bun tools/lua_marks.ts "<mark>|<mark>|…" [K, default 4] [jobs, default 4000]
 *
 * @module
 */
import { luaLibrary, SCRIPTS } from "../lib/lua/mod.ts";
import { command, startServer } from "./embedded/mod.ts";

/** The library's code with a clock read before each marked line, and a function dumping the sums (`emqm_dump`). */
function instrument(code: string, marks: readonly string[]): string {
  const out: string[] = [];
  let next = 0;
  for (const line of code.split("\n")) {
    if (line === "local KEYS, ARGV") {
      out.push(
        line,
        "local EMQM, emqm_last = {}, 0",
        "local function emqm(k) local t = os.clock() EMQM[k] = (EMQM[k] or 0) + t - emqm_last emqm_last = t end",
      );
      continue;
    }
    if (line === "KEYS, ARGV = keys, args") {
      out.push(line, "emqm_last = os.clock()");
      continue;
    }
    if (next < marks.length && line.includes(marks[next]!)) {
      out.push(`emqm(${JSON.stringify(`${String(next).padStart(2, "0")} ${marks[next]!.slice(0, 40)}`)})`);
      next++;
    }
    out.push(line);
  }
  if (next < marks.length) throw new Error(`no line holds the mark ${JSON.stringify(marks[next])} (after the marks before it)`);
  return out.join("\n")
    .replace(/\nreturn reply\nend\}\n$/, "\nemqm('99 end')\nreturn reply\nend}\n")
    .concat(
      "redis.register_function('emqm_dump', function() local o = {} for k, v in pairs(EMQM) do " +
        "o[#o + 1] = k .. '\\t' .. string.format('%.6f', v) end EMQM = {} return o end)\n",
    );
}

/** The held jobs of CLAIM's or SETTLE's jobs (each `<attempts> <token> <id length> …\n<id>…`). */
function held(jobs: unknown[]): { id: string; token: string }[] {
  return (jobs as string[]).map((s) => {
    const nl = s.indexOf("\n");
    const [, token, idLength] = s.slice(0, nl).split(" ");
    return { id: s.slice(nl + 1, nl + 1 + Number(idLength)), token: token! };
  });
}

const marks = (process.argv[2] ?? "").split("|").filter((m) => m !== "");
const K = Number(process.argv[3] ?? 4);
const JOBS = Number(process.argv[4] ?? 4000);
const server = await startServer({ module: false });
const send = (a: string[]) => command(server.port, a);
const names: Record<string, string> = {};
for (const verb of ["ENQUEUE", "CLAIM", "SETTLE"] as const) {
  const lib = luaLibrary(verb, SCRIPTS[verb]);
  const reply = await send(["FUNCTION", "LOAD", "REPLACE", verb === "SETTLE" ? instrument(lib.code, marks) : lib.code]);
  if (typeof reply !== "string") throw new Error(`${verb}'s library: ${String((reply as Error)?.message ?? reply)}`);
  names[verb] = lib.name;
}
const meta = "emq:{marks}:meta";
for (let i = 0; i < JOBS; i += 500) {
  const call = ["FCALL", names.ENQUEUE!, "1", meta];
  for (let j = i; j < Math.min(i + 500, JOBS); j++) call.push(`JOB${String(j).padStart(8, "0")}`, "", "x");
  await send(call);
}
let jobs = held(((await send(["FCALL", names.CLAIM!, "1", meta, "30000", String(K), "0"])) as unknown[]).slice(1));
await send(["CONFIG", "RESETSTAT"]);
let calls = 0;
while (jobs.length > 0) {
  const call = ["FCALL", names.SETTLE!, "1", meta, "30000", String(K)];
  for (const j of jobs) call.push("0", j.id, j.token, "0", "", "", "");
  const reply = await send(call);
  if (!Array.isArray(reply)) throw new Error(`SETTLE: ${String((reply as Error)?.message ?? reply)}`);
  calls++;
  jobs = held(reply.slice(2));
}
const info = String(await send(["INFO", "commandstats"]));
const usec = Number(/cmdstat_fcall:calls=\d+,usec=(\d+)/.exec(info)?.[1] ?? 0);
const rows = ((await send(["FCALL", "emqm_dump", "0"])) as string[]).map((r) => r.split("\t")).sort();
let total = 0;
for (const [name, seconds] of rows) {
  const us = Number(seconds) * 1e6 / calls;
  total += us;
  console.log(`${name!.padEnd(46)} ${us.toFixed(2).padStart(8)} µs per call`);
}
console.log(`marked ${total.toFixed(1)} µs per call (CPU); FCALL ${(usec / calls).toFixed(1)} µs per call (commandstats, wall); ${calls} calls`);
await server.stop();
