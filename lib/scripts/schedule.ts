/**
 * `EMQ.SCHEDULE 2 <row> <schedule> <id> <due_ms> <payload>` as Lua: a new row in state
 * `scheduled`, its id in schedule at due_ms. Reply `1`.
 *
 * @module
 */
import { luaScript, MAX_PAYLOAD_BYTES } from "./_lua.ts";

/** The Lua twin of `EMQ.SCHEDULE` (keys: row, schedule; args: id, due_ms, payload). */
export const SCHEDULE_LUA: string = luaScript(
  "EMQ.SCHEDULE",
  `
local e = emq_shape(2, 3) if e then return e end
local _, e = emq_layout({'job:' .. ARGV[1], 'schedule'}) if e then return e end
e = emq_fence() if e then return e end
e = emq_id(ARGV[1]) if e then return e end
local due, e = emq_number(ARGV[2], 'due_ms', 0) if e then return e end
e = emq_max(ARGV[3], 'payload', ${MAX_PAYLOAD_BYTES}) if e then return e end
e = emq_type(KEYS[1], 'hash') or emq_type(KEYS[2], 'zset') if e then return e end
if redis.call('EXISTS', KEYS[1]) == 1 then return emq_err('duplicate id') end
local now = emq_now()
redis.call('HSET', KEYS[1], 'state', 'scheduled', 'payload', ARGV[3], 'attempts', '0', 'created_ms', emq_int(now), 'due_ms', emq_int(due))
redis.call('ZADD', KEYS[2], emq_int(due), ARGV[1])
return 1
`,
);
