/**
 * `EMQ.EXTEND` as Lua, steps 5–6: each job's lease runs until now + lease_ms. Reply: the count.
 *
 * @module
 */
import { ROW } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { KEY } from "./keys.ts";
import { LEASES_LUA } from "./leases.ts";

/** The Lua twin of `EMQ.EXTEND`. */
export const EXTEND_LUA: string = luaScript(
  "EXTEND",
  `
local active = base .. '${KEY.active}'
local rows, e = emq_held(base, cluster, n, id, token, {{active, 'zset'}}) if e then return e end
local deadline = emq_int(emq_now() + lease_ms)
for j = 1, n do
  redis.call('ZADD', active, deadline, id[j])
  redis.call('HSET', rows[j], '${ROW.deadline_ms}', deadline)
end
return n
`,
  LEASES_LUA,
);
