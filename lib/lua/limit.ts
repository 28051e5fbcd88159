/**
 * `EMQ.LIMIT` as Lua, steps 5–6: a concurrency limit (0: none) and a rate limit (rate_max 0: none)
 * of the queue (scope 0, in `meta`), of one lane (scope 1, in its state hash; then its ring insert
 * and idle checks) or of every lane without its own (scope 2, `meta`'s `lane_concurrency` and
 * `lane_rate`); a rate other than the one in force drops its state, so it starts from a full
 * bucket, and a lane's park that state gave ends with it (scope 1: the lane's; scope 2: every
 * parked lane without its own rate, whose state is dropped too; `emq_rate_parked`: a PENALIZE
 * park holds); `ready` on wake when a claim may reach a ready job (waiting claims try the new
 * limits). Reply: 1.
 *
 * @module
 */
import { LANE, META, WAKE, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.LIMIT`. */
export const LIMIT_LUA: string = luaScript(
  "LIMIT",
  `
local pending, wake = base .. '${KEY.pending}', base .. '${KEY.wake}'
local s, e = emq_types({{pending, 'list'}, {wake, 'zset'}}) if e then return e end
if scope == 1 then
  e = emq_lane_kinds(base, {lane}, s.missing) if e then return e end
end
local parked, rate = base .. '${KEY.parked}', nil
if rate_max ~= 0 then rate = emq_int(rate_max) .. ' ' .. emq_int(rate_per_ms) .. ' ' .. emq_int(rate_burst) end
-- scope 2 replacing a default rate: the lanes it parked, each member of parked without its own rate
-- whose park is the one a claim wrote from its state under that rate (emq_rate_parked: nothing
-- changes that state while the lane is parked, so a PENALIZE park is any other time, and holds; one
-- no later than the rate's left it as it was, and ends with it), their hashes typed
local parks = {}
if scope == 2 then
  local d = emq_lane_defaults()
  if d.rate and (not rate or redis.call('HGET', KEYS[1], '${META.lane_rate}') ~= rate) then
    local k
    k, e = emq_kinds({{parked, 'zset'}}, s.missing) if e then return e end
    for _, L in ipairs(k[parked] == 'zset' and redis.call('ZRANGE', parked, 0, -1) or {}) do
      _, e = emq_kinds({{base .. '${KEY_PREFIX.lane}' .. L, 'hash'}}, s.missing) if e then return e end
      local st = emq_lane(base, L, d)
      if not emq_parse_rate(st.set['${LANE.rate}']) and emq_rate_parked(st) then parks[#parks + 1] = L end
    end
  end
end
e = emq_probe(cluster, s.missing) if e then return e end
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(emq_now())) end
-- where the limits go: a hash and its two fields (the state tat beside the rate when not scope 2)
local key, conc_f, rate_f, tat_f = KEYS[1], '${META.concurrency}', '${META.rate}', '${META.tat}'
if scope == 1 then key = base .. '${KEY_PREFIX.lane}' .. lane end
if scope == 2 then conc_f, rate_f, tat_f = '${META.lane_concurrency}', '${META.lane_rate}', nil end
if concurrency == 0 then
  redis.call('HDEL', key, conc_f)
else
  redis.call('HSET', key, conc_f, emq_int(concurrency))
end
-- scope 1: whether the lane's park is its rate's, before the rate changes
local rate_parked = scope == 1 and emq_rate_parked(emq_lane(base, lane, emq_lane_defaults()))
local dropped = true
if not rate then
  redis.call('HDEL', key, rate_f)
  if tat_f then redis.call('HDEL', key, tat_f) end
elseif redis.call('HGET', key, rate_f) ~= rate then
  redis.call('HSET', key, rate_f, rate)
  if tat_f then redis.call('HDEL', key, tat_f) end
else
  dropped = false
end
-- ends lane L's park, whose rate state is gone (scope 1: dropped above; scope 2: here, so it starts
-- from a full bucket of the new default as a lane's own new rate does), then its insert check
local function unpark(L, now, d)
  redis.call('HDEL', base .. '${KEY_PREFIX.lane}' .. L, '${LANE.tat}')
  redis.call('ZREM', parked, L)
  redis.call('HDEL', base .. '${KEY_PREFIX.lane}' .. L, '${LANE.parked}')
  emq_lane_insert(base, L, now, d)
end
if scope == 1 then
  local now, d = emq_now(), emq_lane_defaults()
  redis.call('ZADD', base .. '${KEY.lanes}', 'NX', 0, lane)
  if rate_parked and dropped then unpark(lane, now, d) end
  emq_lane_insert(base, lane, now, d)
  emq_lane_idle(base, lane, now, d)
end
if #parks > 0 then
  local now, d = emq_now(), emq_lane_defaults()
  for _, L in ipairs(parks) do
    unpark(L, now, d)
    emq_lane_insert(base, L, now, d)
    emq_lane_idle(base, L, now, d)
  end
end
if emq_ready_any(base) then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
return 1
`,
);
