/**
 * `EMQ.LIMIT` as Lua, steps 5–6: the queue's concurrency limit (0: none) and rate limit (rate_max
 * 0: none) in `meta` (made if missing); a rate other than the one in force drops its state, so it
 * starts from a full bucket; `ready` on wake when pending holds ids (waiting claims try the new
 * limits). Reply: 1.
 *
 * @module
 */
import { META, WAKE, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.LIMIT`. */
export const LIMIT_LUA: string = luaScript(
  "LIMIT",
  `
local pending, wake = base .. 'pending', base .. 'wake'
local s, e = emq_types({{pending, 'list'}, {wake, 'zset'}}) if e then return e end
e = emq_local(cluster, s.missing) if e then return e end
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(emq_now())) end
if concurrency == 0 then
  redis.call('HDEL', KEYS[1], '${META.concurrency}')
else
  redis.call('HSET', KEYS[1], '${META.concurrency}', emq_int(concurrency))
end
if rate_max == 0 then
  redis.call('HDEL', KEYS[1], '${META.rate}', '${META.tat}')
else
  local rate = emq_int(rate_max) .. ' ' .. emq_int(rate_per_ms) .. ' ' .. emq_int(rate_burst)
  if redis.call('HGET', KEYS[1], '${META.rate}') ~= rate then
    redis.call('HSET', KEYS[1], '${META.rate}', rate)
    redis.call('HDEL', KEYS[1], '${META.tat}')
  end
end
if emq_ready_any(base) then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
return 1
`,
);
