/**
 * `EMQ.REAP 3 <active> <pending> <base> <limit>` as Lua: up to limit ids whose lease expired
 * (score ≤ now, ascending) go back to the tail of pending, to be claimed next. Reply: the count.
 *
 * @module
 */
import { luaScript } from "./_lua.ts";

/** The Lua twin of `EMQ.REAP` (keys: active, pending, base; args: limit). */
export const REAP_LUA: string = luaScript(
  "EMQ.REAP",
  `
local e = emq_shape(3, 1) if e then return e end
local base, e = emq_layout({'active', 'pending', ''}) if e then return e end
e = emq_fence() if e then return e end
local limit, e = emq_number(ARGV[1], 'limit', 1) if e then return e end
e = emq_type(KEYS[1], 'zset') or emq_type(KEYS[2], 'list') if e then return e end
local now = emq_now()
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', emq_int(now), 'LIMIT', 0, limit)
local rows, e = emq_rows(base, ids) if e then return e end
for i, id in ipairs(ids) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('RPUSH', KEYS[2], id)
  if redis.call('EXISTS', rows[i]) == 1 then redis.call('HSET', rows[i], 'state', 'pending') end
end
return #ids
`,
);
