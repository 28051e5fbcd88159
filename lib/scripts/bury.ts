/**
 * `EMQ.BURY 3 <row> <active> <dead> <id> <reason>` as Lua: active → dead at now, the reason kept
 * on the row. Reply `1`.
 *
 * @module
 */
import { luaScript, MAX_REASON_BYTES } from "./_lua.ts";

/** The Lua twin of `EMQ.BURY` (keys: row, active, dead; args: id, reason). */
export const BURY_LUA: string = luaScript(
  "EMQ.BURY",
  `
local e = emq_shape(3, 2) if e then return e end
local _, e = emq_layout({'job:' .. ARGV[1], 'active', 'dead'}) if e then return e end
e = emq_fence() if e then return e end
e = emq_id(ARGV[1]) if e then return e end
e = emq_max(ARGV[2], 'reason', ${MAX_REASON_BYTES}) if e then return e end
e = emq_type(KEYS[1], 'hash') or emq_type(KEYS[2], 'zset') or emq_type(KEYS[3], 'zset') if e then return e end
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) or redis.call('EXISTS', KEYS[1]) == 0 then
  return emq_err('job is not active')
end
local now = emq_int(emq_now())
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], now, ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'dead', 'reason', ARGV[2], 'buried_ms', now)
return 1
`,
);
