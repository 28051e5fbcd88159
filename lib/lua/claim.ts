/**
 * `EMQ.CLAIM` as Lua, steps 5–6: the tail id of pending goes into
 * active at now + lease_ms, its attempts + 1. Tail ids whose row is missing are dropped.
 * Reply `[id, payload, attempts]` or nil.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.CLAIM`. */
export const CLAIM_LUA: string = luaScript(
  "CLAIM",
  `
e = emq_type(pending, 'list') or emq_type(active, 'zset') if e then return e end
-- Walk from the tail, writing nothing, past ids whose row is missing to the first with a row.
local len = redis.call('LLEN', pending)
local skip, id, row = 0, nil, nil
while skip < len do
  local candidate = redis.call('LINDEX', pending, -1 - skip)
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
    return emq_refuse['counter']({})
  end
end
for _ = 1, skip do redis.call('RPOP', pending) end
if id == nil then return false end
local deadline = emq_int(emq_now() + lease_ms)
redis.call('RPOP', pending)
redis.call('ZADD', active, deadline, id)
local attempts = redis.call('HINCRBY', row, 'attempts', 1)
redis.call('HSET', row, 'state', 'active', 'deadline_ms', deadline)
local payload = redis.call('HGET', row, 'payload')
return {id, payload, attempts}
`,
);
