/**
 * `EMQ.RETRY` as Lua, steps 5–6: each job goes active → schedule at now + its delay_ms, its reason
 * kept; the `due` marker on wake lowered to the earliest. Reply: the count.
 *
 * @module
 */
import { META, ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { LEASES_LUA } from "./leases.ts";

/** The Lua twin of `EMQ.RETRY`. */
export const RETRY_LUA: string = luaScript(
  "RETRY",
  `
local active, schedule, wake = base .. 'active', base .. 'schedule', base .. 'wake'
local rows, e = emq_leases(base, cluster, n, id, token, {{active, 'zset'}, {schedule, 'zset'}, {wake, 'zset'}}, '${META.retried}')
if e then return e end
local now = emq_now()
local earliest = now + delay_ms[1]
emq_each('ZREM', active, id)
for j = 1, n do
  local due = now + delay_ms[j]
  if due < earliest then earliest = due end
  redis.call('ZADD', schedule, emq_int(due), id[j])
  redis.call('HSET', rows[j], '${ROW.state}', '${STATE.scheduled}', '${ROW.due_ms}', emq_int(due), '${ROW.reason}', reason[j])
end
redis.call('HINCRBY', KEYS[1], '${META.retried}', n)
redis.call('ZADD', wake, 'LT', emq_int(earliest), '${WAKE.due}')
return n
`,
  LEASES_LUA,
);
