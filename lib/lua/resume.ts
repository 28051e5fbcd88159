/**
 * `EMQ.RESUME` as Lua, steps 5–6: `paused` leaves the queue's `meta`; a `ready` marker on wake
 * when pending holds ids, so that waiting workers claim. Reply: 1 when it resumed the queue, 0 when
 * it was not paused.
 *
 * @module
 */
import { META, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.RESUME`. */
export const RESUME_LUA: string = luaScript(
  "RESUME",
  `
local pending, wake = base .. 'pending', base .. 'wake'
local s, e = emq_types({{pending, 'list'}, {wake, 'zset'}}) if e then return e end
e = emq_local(cluster, s.missing) if e then return e end
if s.meta ~= 'hash' or redis.call('HGET', KEYS[1], '${META.paused}') ~= '1' then return 0 end
redis.call('HDEL', KEYS[1], '${META.paused}')
if emq_ready_any(base) then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
return 1
`,
);
