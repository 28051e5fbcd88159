/**
 * `EMQ.PROMOTE` as Lua, steps 5–6: up to limit due ids move from schedule to the head of pending.
 * Reply: the count moved.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { MOVE_DUE_LUA } from "./move_due.ts";

/** The Lua twin of `EMQ.PROMOTE`. */
export const PROMOTE_LUA: string = luaScript(
  "PROMOTE",
  `
local schedule, pending, wake = base .. 'schedule', base .. 'pending', base .. 'wake'
local missing = {}
local _, e = emq_type(KEYS[1], 'hash') if e then return e end
for _, k in ipairs({{schedule, 'zset'}, {pending, 'list'}, {wake, 'zset'}}) do
  local t, e = emq_type(k[1], k[2]) if e then return e end
  if t == 'none' then missing[#missing + 1] = k[1] end
end
local due, e = emq_due(base, schedule, emq_now(), limit, missing) if e then return e end
e = emq_local(cluster, missing) if e then return e end
local moved = emq_move(schedule, pending, 'LPUSH', due)
if moved > 0 then redis.call('ZADD', wake, 0, 'ready') end
return moved
`,
  MOVE_DUE_LUA,
);
