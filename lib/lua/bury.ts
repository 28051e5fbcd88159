/**
 * `EMQ.BURY` as Lua, steps 5–6: each job goes active → dead at now, its reason kept; then the dead
 * set is trimmed to the queue's retention; one `dead` event per job. Reply: the count.
 *
 * @module
 */
import { META, ROW, STATE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { LEASES_LUA } from "./leases.ts";
import { RETENTION_LUA } from "./retention.ts";

/** The Lua twin of `EMQ.BURY`. */
export const BURY_LUA: string = luaScript(
  "BURY",
  `
local active, dead = base .. 'active', base .. 'dead'
local structures = {{active, 'zset'}, {dead, 'zset'}, {base .. 'events', 'stream'}}
local rows, e, going, freeing = emq_leases(base, cluster, n, id, token, structures, '${META.buried}', 'gone')
if e then return e end
local now = emq_now()
local victims, e = emq_trim_select(base, 'dead', now, n) if e then return e end
local at = emq_int(now)
emq_let_go(going, now)
emq_each('ZREM', active, id)
for j = 1, n do
  redis.call('ZADD', dead, at, id[j])
  redis.call('HSET', rows[j], '${ROW.state}', '${STATE.dead}', '${ROW.reason}', reason[j], '${ROW.buried_ms}', at)
end
redis.call('HINCRBY', KEYS[1], '${META.buried}', n)
emq_trim(base, 'dead', victims)
emq_freed(freeing)
for j = 1, n do
  ${luaEvent("dead", { jobs: "id[j]", reason: "reason[j]" })}
end
return n
`,
  LEASES_LUA + RETENTION_LUA,
);
