/**
 * `EMQ.PAUSE` as Lua, steps 5–6: the queue's `meta` says `paused 1` (made if missing). Reply: 1
 * when it paused the queue, 0 when it was paused already.
 *
 * @module
 */
import { META, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.PAUSE`. */
export const PAUSE_LUA: string = luaScript(
  "PAUSE",
  `
local meta, e = emq_type(KEYS[1], 'hash') if e then return e end
if meta == 'hash' and redis.call('HGET', KEYS[1], '${META.paused}') == '1' then return 0 end
if meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(emq_now())) end
redis.call('HSET', KEYS[1], '${META.paused}', '1')
return 1
`,
);
