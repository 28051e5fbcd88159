/**
 * `EMQ.RESUME` as Lua, steps 5–6: lane empty, `meta`'s `paused` flag deleted and `ready` on wake
 * when a claim may reach a ready job; else the lane's `paused` deleted, then its ring insert and
 * idle checks; a `resumed` event when it resumed. Reply: 1 when it resumed, 0 when not paused.
 *
 * @module
 */
import { LANE, META, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.RESUME`. */
export const RESUME_LUA: string = luaScript(
  "RESUME",
  `
local pending, wake = base .. '${KEY.pending}', base .. '${KEY.wake}'
local s, e = emq_types({{pending, 'list'}, {wake, 'zset'}}) if e then return e end
if lane ~= '' then
  e = emq_lane_kinds(base, {lane}, s.missing) if e then return e end
end
e = emq_events_open(base, s.missing) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
if s.meta ~= 'hash' then return 0 end
if lane ~= '' then
  local key = base .. '${KEY_PREFIX.lane}' .. lane
  if redis.call('HGET', key, '${LANE.paused}') ~= '1' then return 0 end
  redis.call('HDEL', key, '${LANE.paused}')
  local now, d = emq_now(), emq_lane_defaults()
  emq_lane_insert(base, lane, now, d)
  emq_lane_idle(base, lane, now, d)
  ${luaEvent("resumed", { lane: "lane" })}
  return 1
end
if redis.call('HGET', KEYS[1], '${META.paused}') ~= '1' then return 0 end
redis.call('HDEL', KEYS[1], '${META.paused}')
if emq_ready_any(base) then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
${luaEvent("resumed", { lane: "lane" })}
return 1
`,
);
