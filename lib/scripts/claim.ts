/**
 * `EMQ.CLAIM 3 <pending> <active> <base> <lease_ms>` as Lua: the tail id of pending goes into
 * active at now + lease_ms, its attempts + 1. Tail ids whose row is missing are dropped.
 * Reply `[id, payload, attempts]` or nil.
 *
 * @module
 */
import { luaScript } from "./_lua.ts";

/** The Lua twin of `EMQ.CLAIM` (keys: pending, active, base; args: lease_ms). */
export const CLAIM_LUA: string = luaScript(
  "EMQ.CLAIM",
  `
local e = emq_shape(3, 1) if e then return e end
local base, e = emq_layout({'pending', 'active', ''}) if e then return e end
e = emq_fence() if e then return e end
local lease, e = emq_number(ARGV[1], 'lease_ms', 1) if e then return e end
e = emq_type(KEYS[1], 'list') or emq_type(KEYS[2], 'zset') if e then return e end
-- Walk from the tail, writing nothing, past ids whose row is missing to the first with a row.
local len = redis.call('LLEN', KEYS[1])
local skip, id, row = 0, nil, nil
while skip < len do
  local candidate = redis.call('LINDEX', KEYS[1], -1 - skip)
  local key = base .. 'job:' .. candidate
  e = emq_type(key, 'hash') if e then return e end
  if redis.call('EXISTS', key) == 1 then id, row = candidate, key break end
  skip = skip + 1
end
-- The counter as HINCRBY reads it (optional '-', digits without leading zero, within i64), and
-- room for + 1: checked here because a failing HINCRBY after the RPOPs would not be rolled back.
local count = id and redis.call('HGET', row, 'attempts')
if count then
  local digits = string.gsub(count, '^%-', '', 1)
  local max = (digits == count) and '9223372036854775807' or '9223372036854775808'
  local ok = count ~= '-0' and digits ~= '' and not string.find(digits, '[^0-9]')
    and (digits == '0' or string.sub(digits, 1, 1) ~= '0')
    and (#digits < 19 or (#digits == 19 and digits <= max))
  if not ok or count == '9223372036854775807' then
    return redis.error_reply('ERR hash value is not an integer')
  end
end
for _ = 1, skip do redis.call('RPOP', KEYS[1]) end
if id == nil then return false end
local deadline = emq_int(emq_now() + lease)
redis.call('RPOP', KEYS[1])
redis.call('ZADD', KEYS[2], deadline, id)
local attempts = redis.call('HINCRBY', row, 'attempts', 1)
redis.call('HSET', row, 'state', 'active', 'deadline_ms', deadline)
local payload = redis.call('HGET', row, 'payload')
return {id, payload, attempts}
`,
);
