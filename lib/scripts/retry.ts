/**
 * `EMQ.RETRY 3 <row> <active> <schedule> <id> <delay_ms> <reason>` as Lua: active → schedule at
 * now + delay_ms, the reason kept on the row. Reply `1`.
 *
 * @module
 */
import { luaScript, MAX_REASON_BYTES } from "./_lua.ts";

/** The Lua twin of `EMQ.RETRY` (keys: row, active, schedule; args: id, delay_ms, reason). */
export const RETRY_LUA: string = luaScript(
  "EMQ.RETRY",
  `
local e = emq_shape(3, 3) if e then return e end
local _, e = emq_layout({'job:' .. ARGV[1], 'active', 'schedule'}) if e then return e end
e = emq_fence() if e then return e end
e = emq_id(ARGV[1]) if e then return e end
local delay, e = emq_number(ARGV[2], 'delay_ms', 1) if e then return e end
e = emq_max(ARGV[3], 'reason', ${MAX_REASON_BYTES}) if e then return e end
e = emq_type(KEYS[1], 'hash') or emq_type(KEYS[2], 'zset') or emq_type(KEYS[3], 'zset') if e then return e end
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) or redis.call('EXISTS', KEYS[1]) == 0 then
  return emq_err('job is not active')
end
local due = emq_int(emq_now() + delay)
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], due, ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'scheduled', 'due_ms', due, 'reason', ARGV[3])
return 1
`,
);
