/**
 * The floor under the Lua twin's SETTLE: a stand-in function (not a twin: no gates, no types, no
 * refusals, no lanes, limits, priorities, dedup, flows or retention, a fake history) that does the
 * commands a SETTLE acking K held jobs and claiming K needs on a plain queue, beside the real SETTLE
 * on the same server, alternating on fresh queues: the FCALL µs per job and commands per call of
 * each (INFO commandstats). What the real one pays beyond it is its Lua around the commands — the
 * headroom of a common-case path. Not part of `./emq test`.
 *
 * Run: node_modules/.bin/bun tools/lua_floor.ts [K, default 4] [jobs, default 4000] [rounds, default 3]
 *
 * @module
 */
import { command, startServer } from "./embedded/mod.ts";
import { luaLibrary, SCRIPTS } from "../lib/lua/mod.ts";
const server = await startServer({ module: false });
const send = (a: string[]) => command(server.port, a);
/** The stand-in: ack the held, claim want from pending's tail, the events and reads a claim makes. */
const floor = `#!lua name=floor
redis.register_function('floor', function(keys, args)
  local meta = keys[1]
  local base = string.sub(meta, 1, -5)
  local want = tonumber(args[2])
  local now = redis.call('TIME')
  now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local active, completed, pending = base .. 'active', base .. 'completed', base .. 'pending'
  local ids, status = {}, {}
  for j = 3, #args, 7 do
    local id = args[j + 1]
    local row = base .. 'job:' .. id
    local v = redis.call('HMGET', row, 'token', 'created_ms', 'due_ms', 'parent', 'opts')
    local held = v[1] == args[j + 2] and redis.call('ZSCORE', active, id)
    status[#status + 1] = held and 1 or 0
    if held then ids[#ids + 1] = id end
  end
  local at = string.format('%d', now)
  for _, id in ipairs(ids) do
    local row = base .. 'job:' .. id
    redis.call('HSET', row, 'state', 'completed', 'finished_ms', at)
    redis.call('HDEL', row, 'deadline_ms', 'token')
  end
  if #ids > 0 then
    redis.call('ZREM', active, unpack(ids))
    local z = {}
    for _, id in ipairs(ids) do z[#z + 1] = at z[#z + 1] = id end
    redis.call('ZADD', completed, unpack(z))
    redis.call('HINCRBY', meta, 'acked', #ids)
    local m = base .. 'metrics'
    local got = redis.call('HMGET', m, '1', 'last', 'first', 'run', 'wait')
    redis.call('HSET', m, '1', '1 0 0', 'run', got[4] or '0', 'wait', got[5] or '0')
    redis.call('XADD', base .. 'events', 'MAXLEN', '~', '10000', '*', 'type', 'completed', 'jobs', table.concat(ids, ' '))
  end
  local reply = {0, status}
  if want > 0 then
    local got = redis.call('LRANGE', pending, -want, -1)
    if #got > 0 then
      redis.call('RPOP', pending, #got)
      local last = redis.call('HINCRBY', meta, 'tokens', #got)
      redis.call('HINCRBY', meta, 'claimed', #got)
      local deadline = string.format('%d', now + 30000)
      local z = {}
      for k = #got, 1, -1 do
        local id = got[k]
        local row = base .. 'job:' .. id
        local f = redis.call('HMGET', row, 'attempts', 'opts', 'payload', 'state')
        local token = last - #got + (#got - k + 1)
        local attempts = tonumber(f[1] or '0') + 1
        redis.call('HSET', row, 'attempts', string.format('%d', attempts), 'state', 'active', 'deadline_ms', deadline, 'token', string.format('%d', token))
        z[#z + 1] = deadline z[#z + 1] = id
        reply[#reply + 1] = string.format('%d %d %d %d %d\\n', attempts, token, #id, #(f[2] or ''), f[3] and #f[3] or -1) .. id .. (f[2] or '') .. (f[3] or '')
      end
      redis.call('ZADD', active, unpack(z))
      redis.call('XADD', base .. 'events', 'MAXLEN', '~', '10000', '*', 'type', 'claimed', 'jobs', 'x')
    end
    redis.call('ZRANGE', base .. 'wake', 0, -1, 'WITHSCORES')
    redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')
  end
  return reply
end)`;
const r0 = await send(["FUNCTION", "LOAD", "REPLACE", floor]);
if (typeof r0 !== "string") {
  console.log(r0);
  process.exit(1);
}
const names: Record<string, string> = {};
for (const v of ["ENQUEUE", "CLAIM", "SETTLE"] as const) {
  const lib = luaLibrary(v, SCRIPTS[v]);
  await send(["FUNCTION", "LOAD", "REPLACE", lib.code]);
  names[v] = lib.name;
}
const K = Number(process.argv[2] ?? 4), JOBS = Number(process.argv[3] ?? 4000);
/** The held jobs of a CLAIM's or SETTLE's jobs. */
function held(jobs: unknown[]): { id: string; token: string }[] {
  return (jobs as string[]).map((s) => {
    const nl = s.indexOf("\n");
    const [, token, l] = s.slice(0, nl).split(" ");
    return { id: s.slice(nl + 1, nl + 1 + Number(l)), token: token! };
  });
}
let q = 0;
for (let round = 0; round < Number(process.argv[4] ?? 3); round++) {
  for (const fn of ["real", "floor"]) {
    const meta = `emq:{f${q++}}:meta`;
    for (let i = 0; i < JOBS; i += 500) {
      const a = ["FCALL", names.ENQUEUE!, "1", meta];
      for (let j = i; j < i + 500; j++) a.push(`JOB${String(j).padStart(8, "0")}`, "", "x");
      await send(a);
    }
    let jobs = held(((await send(["FCALL", names.CLAIM!, "1", meta, "30000", String(K), "0"])) as unknown[]).slice(1));
    await send(["CONFIG", "RESETSTAT"]);
    let calls = 0, done = 0;
    while (jobs.length > 0) {
      const a = ["FCALL", fn === "real" ? names.SETTLE! : "floor", "1", meta, "30000", String(K)];
      for (const j of jobs) a.push("0", j.id, j.token, "0", "", "", "");
      const r = await send(a);
      if (!Array.isArray(r)) {
        console.log(r);
        process.exit(1);
      }
      calls++;
      done += jobs.length;
      jobs = held(r.slice(2));
    }
    const info = String(await send(["INFO", "commandstats"]));
    const us = Number(/cmdstat_fcall:calls=\d+,usec=(\d+)/.exec(info)![1]);
    const cmds = [...info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].filter((m) => m[1] !== "fcall" && m[1] !== "config").reduce((n, m) => n + Number(m[2]), 0);
    console.log(
      fn.padEnd(6),
      `${(us / done).toFixed(1)} µs/job, ${(us / calls).toFixed(1)} µs/call, ${(cmds / calls).toFixed(1)} commands/call (${calls} calls)`,
    );
  }
}
await server.stop();
