/**
 * `EMQ.RETRY` as Lua, steps 5–6: active → schedule at now + delay_ms, the reason kept on the row.
 * Reply `1`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.RETRY`. */
export const RETRY_LUA: string = luaScript(
  "RETRY",
  `
e = emq_type(row, 'hash') or emq_type(active, 'zset') or emq_type(schedule, 'zset') if e then return e end
if not redis.call('ZSCORE', active, id) or redis.call('EXISTS', row) == 0 then
  return emq_refuse['not-active']({})
end
local due = emq_int(emq_now() + delay_ms)
redis.call('ZREM', active, id)
redis.call('ZADD', schedule, due, id)
redis.call('HSET', row, 'state', 'scheduled', 'due_ms', due, 'reason', reason)
return 1
`,
);
