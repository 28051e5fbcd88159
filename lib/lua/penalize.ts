/**
 * `EMQ.PENALIZE` as Lua, steps 5–6: `meta`'s `parked` (made if missing) becomes now + penalty_ms,
 * unless a later park is in force. Reply: the park's end.
 *
 * @module
 */
import { META, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { LIMITS_LUA } from "./limits.ts";

/** The Lua twin of `EMQ.PENALIZE`. */
export const PENALIZE_LUA: string = luaScript(
  "PENALIZE",
  `
local meta, e = emq_type(KEYS[1], 'hash') if e then return e end
local now = emq_now()
if meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(now)) end
local untl = now + penalty_ms
local parked = emq_limits(meta).parked
if parked and parked >= untl then return parked end
redis.call('HSET', KEYS[1], '${META.parked}', emq_int(untl))
return untl
`,
  LIMITS_LUA,
);
