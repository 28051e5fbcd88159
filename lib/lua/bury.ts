/**
 * `EMQ.BURY` as Lua, steps 5–6: active → dead at now, the reason kept on the row. Reply `1`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.BURY`. */
export const BURY_LUA: string = luaScript(
  "BURY",
  `
e = emq_type(row, 'hash') or emq_type(active, 'zset') or emq_type(dead, 'zset') if e then return e end
if not redis.call('ZSCORE', active, id) or redis.call('EXISTS', row) == 0 then
  return emq_refuse['not-active']({})
end
local now = emq_int(emq_now())
redis.call('ZREM', active, id)
redis.call('ZADD', dead, now, id)
redis.call('HSET', row, 'state', 'dead', 'reason', reason, 'buried_ms', now)
return 1
`,
);
