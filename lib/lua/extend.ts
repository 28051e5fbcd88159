/**
 * `EMQ.EXTEND` as Lua, steps 5–6: each job's lease runs until now + lease_ms. Reply: the count.
 * Jobs not held that CANCEL buried under the call's token refuse it `cancelled` (before `lease-lost`).
 *
 * @module
 */
import { ROW } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";
import { LEASES_LUA } from "./leases.ts";

/** The Lua twin of `EMQ.EXTEND`. */
export const EXTEND_LUA: string = luaScript(
  "EXTEND",
  `
local active = base .. '${KEY.active}'
local rows, e, stale = emq_held(base, cluster, n, id, token, {{active, 'zset'}})
if stale then
  -- the jobs CANCEL buried under the call's token: cancelled, before lease-lost
  local lost, cancelled = {}, {}
  for _, x in ipairs(stale) do lost[x] = true end
  for j = 1, n do
    local row = base .. '${KEY_PREFIX.job}' .. id[j]
    if lost[id[j]] and redis.call('EXISTS', row) == 1 and redis.call('HEXISTS', row, '${ROW.cancelled_ms}') == 1
      and redis.call('HGET', row, '${ROW.token}') == emq_int(token[j]) then
      cancelled[#cancelled + 1] = id[j]
    end
  end
  if #cancelled > 0 then return emq_refuse['cancelled']({ids = table.concat(cancelled, ' ')}) end
end
if e then return e end
local deadline = emq_int(emq_now() + lease_ms)
for j = 1, n do
  redis.call('ZADD', active, deadline, id[j])
  redis.call('HSET', rows[j], '${ROW.deadline_ms}', deadline)
end
return n
`,
  LEASES_LUA,
);
