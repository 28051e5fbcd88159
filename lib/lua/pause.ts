/**
 * `EMQ.PAUSE` as Lua, steps 5–6: lane empty, `meta`'s `paused` flag (CLAIM hands out nothing
 * while it is set); else the lane's `paused` (claims skip the lane). A `paused` event when it paused.
 * Reply: 1 when it paused, 0 when already paused.
 *
 * @module
 */
import { LANE, META, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.PAUSE`. */
export const PAUSE_LUA: string = luaScript(
  "PAUSE",
  `
local key, field = KEYS[1], '${META.paused}'
local s, e = emq_types(lane == '' and {} or {{base .. '${KEY.lanes}', 'zset'}, {base .. '${KEY_PREFIX.lane}' .. lane, 'hash'}}) if e then return e end
e = emq_events_open(base, s.missing) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
if lane ~= '' then key, field = base .. '${KEY_PREFIX.lane}' .. lane, '${LANE.paused}' end
if redis.call('HGET', key, field) == '1' then return 0 end
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(emq_now())) end
redis.call('HSET', key, field, '1')
if lane ~= '' then redis.call('ZADD', base .. '${KEY.lanes}', 'NX', 0, lane) end
${luaEvent("paused", { lane: "lane" })}
return 1
`,
);
