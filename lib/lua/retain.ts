/**
 * `EMQ.RETAIN` as Lua, steps 5–6: the queue's retention of dead jobs in its `meta` (made if
 * missing); the next BURY or CLAIM applies it. Reply 1.
 *
 * @module
 */
import { META, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.RETAIN`. */
export const RETAIN_LUA: string = luaScript(
  "RETAIN",
  `
local meta, e = emq_type(KEYS[1], 'hash') if e then return e end
if meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(emq_now())) end
redis.call('HSET', KEYS[1], '${META.dead_max}', emq_int(dead_max), '${META.dead_age_ms}', emq_int(dead_age_ms))
return 1
`,
);
