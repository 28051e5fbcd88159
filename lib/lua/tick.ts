/**
 * `EMQ.TICK` as Lua, steps 5–6: fires a scheduler, compare-and-set on its next run. Only when the
 * scheduler exists, its `next_ms` is expected_ms, the new next_ms is later and the queue is not
 * paused: one job per id is admitted by ENQUEUE's own code (`emq_admit`, `emq_pushed`), with the
 * scheduler's payload and the row naming the scheduler and its run; the next run becomes next_ms.
 * Reply: the jobs admitted, or -1 (nothing written) when it did not fire.
 *
 * @module
 */
import { META, ROW, SCHED } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { ADMIT_LUA } from "./admit.ts";

/** The Lua twin of `EMQ.TICK`. */
export const TICK_LUA: string = luaScript(
  "TICK",
  `
local a, e = emq_admit(base, n, id, base .. 'pending', 'list', nil) if e then return e end
local sched, index = base .. 'scheduler:' .. name, base .. 'schedulers'
local st, e = emq_type(sched, 'hash') if e then return e end
if st == 'none' then a.missing[#a.missing + 1] = sched end
local it, e = emq_type(index, 'zset') if e then return e end
if it == 'none' then a.missing[#a.missing + 1] = index end
e = emq_counter(sched, '${SCHED.runs}') if e then return e end
e = emq_local(cluster, a.missing) if e then return e end
if redis.call('HGET', sched, '${SCHED.next_ms}') ~= emq_int(expected_ms) or next_ms <= expected_ms
  or (a.meta == 'hash' and redis.call('HGET', KEYS[1], '${META.paused}') == '1') then
  return -1
end
local payload = redis.call('HGET', sched, '${SCHED.payload}') or ''
local now = emq_int(a.now)
emq_admitted(a, id, now, nil, nil, nil)
emq_pushed(a, base, id, now, function(j)
  return {'${ROW.payload}', payload, '${ROW.scheduler}', name, '${ROW.tick_ms}', emq_int(tick_ms[j])}
end)
redis.call('HSET', sched, '${SCHED.next_ms}', emq_int(next_ms))
local last = nil
for j = 1, n do if last == nil or tick_ms[j] > last then last = tick_ms[j] end end
if last then redis.call('HSET', sched, '${SCHED.last_ms}', emq_int(last)) end
redis.call('HINCRBY', sched, '${SCHED.runs}', n)
redis.call('ZADD', index, emq_int(next_ms), name)
return n
`,
  ADMIT_LUA,
);
