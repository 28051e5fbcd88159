/**
 * `EMQ.RETAIN` as Lua, steps 5–6: the queue's retention of dead jobs in its `meta` (made if
 * missing), applied at once: the oldest dead jobs past it are deleted, at most a thousand per call.
 * Reply: how many.
 *
 * @module
 */
import { META, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { RETENTION_LUA } from "./retention.ts";

/** The Lua twin of `EMQ.RETAIN`. */
export const RETAIN_LUA: string = luaScript(
  "RETAIN",
  `
local dead = base .. 'dead'
local s, e = emq_types({{dead, 'zset'}}) if e then return e end
local now = emq_now()
local victims, e = emq_trim_pick(base, dead, now, 0, dead_max, dead_age_ms) if e then return e end
e = emq_local(cluster, s.missing) if e then return e end
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(now)) end
redis.call('HSET', KEYS[1], '${META.dead_max}', emq_int(dead_max), '${META.dead_age_ms}', emq_int(dead_age_ms))
emq_trim(dead, victims)
return #victims.ids
`,
  RETENTION_LUA,
);
