/**
 * `EMQ.SCHEDULE` as Lua, steps 5–6: new rows in state `scheduled`, their ids in schedule at their
 * due_ms; the `due` marker on wake lowered to the earliest. Reply: the count.
 *
 * @module
 */
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { ADMIT_LUA } from "./admit.ts";

/** The Lua twin of `EMQ.SCHEDULE`. */
export const SCHEDULE_LUA: string = luaScript(
  "SCHEDULE",
  `
local schedule = base .. 'schedule'
local a, e = emq_admit(base, n, id, schedule, 'zset') if e then return e end
e = emq_local(cluster, a.missing) if e then return e end
local now = emq_int(emq_now())
emq_admitted(a, n, now)
local earliest = due_ms[1]
for j = 1, n do
  local due = emq_int(due_ms[j])
  redis.call('HSET', a.rows[j], '${ROW.state}', '${STATE.scheduled}', '${ROW.payload}', payload[j], '${ROW.attempts}', '0', '${ROW.created_ms}', now, '${ROW.due_ms}', due)
  redis.call('ZADD', schedule, due, id[j])
  if due_ms[j] < earliest then earliest = due_ms[j] end
end
redis.call('ZADD', base .. 'wake', 'LT', emq_int(earliest), '${WAKE.due}')
return n
`,
  ADMIT_LUA,
);
