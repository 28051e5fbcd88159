/**
 * `EMQ.ACK` as Lua, steps 5–6: the ids leave active and their rows are deleted; their deduplication
 * keys are let go. Reply: the count.
 *
 * @module
 */
import { META } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { LEASES_LUA } from "./leases.ts";

/** The Lua twin of `EMQ.ACK`. */
export const ACK_LUA: string = luaScript(
  "ACK",
  `
local active = base .. 'active'
local rows, e, going, freeing = emq_leases(base, cluster, n, id, token, {{active, 'zset'}}, '${META.acked}', 'gone')
if e then return e end
emq_let_go(going, emq_now())
emq_each('ZREM', active, id)
emq_each('DEL', nil, rows)
redis.call('HINCRBY', KEYS[1], '${META.acked}', n)
emq_freed(freeing)
return n
`,
  LEASES_LUA,
);
