/**
 * `EMQ.LIMIT` as Lua, steps 5–6: a concurrency limit (0: none) and a rate limit (rate_max 0: none)
 * of the queue (scope 0, in `meta`), of one lane (scope 1, in its state hash; then its ring insert
 * and idle checks) or of every lane without its own (scope 2, `meta`'s `lane_concurrency` and
 * `lane_rate`; in a laned queue every lane then visited: a changed default rate drops the state of
 * the lanes that take it and ends their parks at its next token, then each lane's ring insert and
 * idle checks); a rate other than the one in force drops its state, so it starts from a full
 * bucket, and a lane's own park that state gave ends with it (scope 1, `emq_rate_parked`: a PENALIZE
 * park holds); `ready` on wake when a claim may reach a ready job (waiting claims try the new limits).
 * Reply: 1.
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
-- scope 2 on a laned queue visits every lane of lanes (each hash typed, with ring and parked), so
-- that a raised default reaches the lanes out of the ring (evicted at the old concurrency, parked
-- at the old rate). O(lanes): LIMIT is an operator's verb, never on a claim's path.
local every = {}
if scope == 2 and s.meta == 'hash' and emq_laned() then
  local lanes = base .. '${KEY.lanes}'
  local t, e = emq_type(lanes, 'zset') if e then return e end
  if t == 'zset' then every = redis.call('ZRANGE', lanes, 0, -1) end
  e = emq_lane_kinds(base, every, s.missing) if e then return e end
  local _, e = emq_kinds({{base .. '${KEY.parked}', 'zset'}}, s.missing) if e then return e end
end
e = emq_probe(cluster, s.missing) if e then return e end
-- the defaults before the call: a lane parked at the old rate's next token is let go
local old = scope == 2 and emq_lane_defaults()
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
  -- removed: only a rate that was there (a lane without its own keeps the default's state)
  dropped = redis.call('HEXISTS', key, rate_f) == 1
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
if scope == 2 then
  local now, d = emq_now(), emq_lane_defaults()
  local o, r = old.rate, d.rate
  local changed = not (o == nil and r == nil or o and r and o.max == r.max and o.per == r.per and o.burst == r.burst)
  for _, L in ipairs(every) do
    local st = emq_lane(base, L, old)
    -- a lane that takes the default rate (none of its own) and whose rate changed: its state goes
    -- (a new rate starts from a full bucket) and a park at the old rate's next token ends (a
    -- penalty that outlasts it is kept)
    if changed and not emq_parse_rate(st.set['${LANE.rate}']) then
      if st.parked and old.rate and st.q and emq_next_token(old.rate, st.q, st.r) == st.parked then
        redis.call('ZREM', base .. '${KEY.parked}', L)
        redis.call('HDEL', st.key, '${LANE.parked}')
      end
      if st.set['${LANE.tat}'] then redis.call('HDEL', st.key, '${LANE.tat}') end
    end
    emq_lane_insert(base, L, now, d)
    emq_lane_idle(base, L, now, d)
  end
end
if emq_ready_any(base) then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
return 1
`,
);
