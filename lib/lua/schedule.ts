/**
 * `EMQ.SCHEDULE` as Lua, steps 5–6: a new row in state `scheduled`, its id in schedule at due_ms.
 * Reply `1`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.SCHEDULE`. */
export const SCHEDULE_LUA: string = luaScript(
  "SCHEDULE",
  `
e = emq_type(row, 'hash') or emq_type(schedule, 'zset') if e then return e end
if redis.call('EXISTS', row) == 1 then return emq_refuse['duplicate']({}) end
local due = emq_int(due_ms)
redis.call('HSET', row, 'state', 'scheduled', 'payload', payload, 'attempts', '0', 'created_ms', emq_int(emq_now()), 'due_ms', due)
redis.call('ZADD', schedule, due, id)
return 1
`,
);
