/**
 * `EMQ.TICK` as Lua, steps 5–6: fires a scheduler, compare-and-set on its next run. Only when the
 * scheduler exists, its `next_ms` is expected_ms, the new next_ms is later and the queue is not
 * paused: one job per id is admitted by ENQUEUE's own code (`emq_admit_start`, `emq_admit_plan`,
 * `emq_pushed`) as a job carrying the scheduler's stored `opts` (ignored when they fail the options
 * gate: a hand-edited hash), with the scheduler's payload and the row naming the scheduler and its
 * run; the next run becomes next_ms. Reply: the jobs admitted (a run whose `dedup` key is held admits
 * none), or -1 (nothing written) when it did not fire. Events: `scheduler` (when it admitted jobs), then
 * `deduplicated`.
 *
 * @module
 */
import { META, ROW, SCHED } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { ADMIT_LUA } from "./admit.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.TICK`. */
export const TICK_LUA: string = luaScript(
  "TICK",
  `
local a, e = emq_admit_start(base, n, id, base .. '${KEY.pending}', 'list') if e then return e end
local sched, index = base .. '${KEY_PREFIX.scheduler}' .. name, base .. '${KEY.schedulers}'
local st, e = emq_type(sched, 'hash') if e then return e end
if st == 'none' then a.missing[#a.missing + 1] = sched end
local it, e = emq_type(index, 'zset') if e then return e end
if it == 'none' then a.missing[#a.missing + 1] = index end
e = emq_counter(sched, '${SCHED.runs}') if e then return e end
-- the scheduler's options, as its jobs' own; ones that fail the gate (a hand-edited hash) are ignored
local stored = st == 'hash' and redis.call('HGET', sched, '${SCHED.opts}') or false
if stored and not emq_options(stored) then stored = false end
local payload = st == 'hash' and redis.call('HGET', sched, '${SCHED.payload}') or ''
local opts, payloads = {}, {}
for j = 1, n do
  opts[j] = stored or ''
  payloads[j] = payload or ''
end
a, e = emq_admit_plan(a, base, n, id, 'list', stored and opts or nil) if e then return e end
e = emq_probe(cluster, a.missing) if e then return e end
if redis.call('HGET', sched, '${SCHED.next_ms}') ~= emq_int(expected_ms) or next_ms <= expected_ms
  or (a.meta == 'hash' and redis.call('HGET', KEYS[1], '${META.paused}') == '1') then
  return -1
end
local now = emq_int(a.now)
emq_admitted(a, id, now, payloads, nil, nil)
emq_pushed(a, base, id, now, function(j)
  local f = emq_fields(a, j, payloads, opts)
  f[#f + 1] = '${ROW.scheduler}'
  f[#f + 1] = name
  f[#f + 1] = '${ROW.tick_ms}'
  f[#f + 1] = emq_int(tick_ms[j])
  return f
end)
redis.call('HSET', sched, '${SCHED.next_ms}', emq_int(next_ms))
local last = nil
for _, j in ipairs(a.admitted) do if last == nil or tick_ms[j] > last then last = tick_ms[j] end end
if last then redis.call('HSET', sched, '${SCHED.last_ms}', emq_int(last)) end
redis.call('HINCRBY', sched, '${SCHED.runs}', #a.admitted)
redis.call('ZADD', index, emq_int(next_ms), name)
local admitted, folded, into = emq_admit_lists(a, id)
${luaEvent("scheduler", { name: "name", jobs: "admitted" })}
${luaEvent("deduplicated", { jobs: "folded", into: "into" })}
return #a.admitted
`,
  ADMIT_LUA,
);
