/**
 * `EMQ.BURY` as Lua, steps 5–6: each job goes active → dead at now, its reason kept. Reply: the
 * count.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { LEASES_LUA } from "./leases.ts";

/** The Lua twin of `EMQ.BURY`. */
export const BURY_LUA: string = luaScript(
  "BURY",
  `
local active, dead = base .. 'active', base .. 'dead'
local rows, e = emq_leases(base, cluster, n, id, token, {{active, 'zset'}, {dead, 'zset'}}, 'buried') if e then return e end
local now = emq_int(emq_now())
emq_each('ZREM', active, id)
for j = 1, n do
  redis.call('ZADD', dead, now, id[j])
  redis.call('HSET', rows[j], 'state', 'dead', 'reason', reason[j], 'buried_ms', now)
end
redis.call('HINCRBY', KEYS[1], 'buried', n)
return n
`,
  LEASES_LUA,
);
