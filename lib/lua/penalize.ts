/**
 * `EMQ.PENALIZE` as Lua, steps 5–6: lane empty, the queue is parked (`meta`'s `parked`); else the
 * lane (its `parked`, and its member of `parked`): claims hand out nothing of it until now +
 * penalty_ms. A longer park in force is kept. A `penalized` event, whose `until` is the park in force
 * after the call (the longer one kept, then). Reply: the time the park ends.
 *
 * @module
 */
import { LANE, META, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.PENALIZE`. */
export const PENALIZE_LUA: string = luaScript(
  "PENALIZE",
  `
local lk = base .. '${KEY_PREFIX.lane}' .. lane
local s, e = emq_types(lane == '' and {} or {{base .. '${KEY.lanes}', 'zset'}, {base .. '${KEY.parked}', 'zset'}, {lk, 'hash'}}) if e then return e end
e = emq_events_open(base, s.missing) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
local now = emq_now()
local untl = now + penalty_ms
-- the queue's park, or the lane's (not \`a and b or c\`: a queue without a park would read the default lane's)
local parked
if lane == '' then
  parked = emq_limits_read(s.meta).parked
else
  parked = emq_limits_parse(function(f) return redis.call('HGET', lk, f) end).parked
end
if parked and parked >= untl then
  ${luaEvent("penalized", { lane: "lane", until: "parked" })}
  return parked
end
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(now)) end
if lane == '' then
  redis.call('HSET', KEYS[1], '${META.parked}', emq_int(untl))
  ${luaEvent("penalized", { lane: "lane", until: "untl" })}
  return untl
end
redis.call('HSET', lk, '${LANE.parked}', emq_int(untl))
redis.call('ZADD', base .. '${KEY.parked}', untl, lane)
redis.call('ZADD', base .. '${KEY.lanes}', 'NX', 0, lane)
${luaEvent("penalized", { lane: "lane", until: "untl" })}
return untl
`,
);
