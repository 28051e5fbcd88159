/**
 * `EMQ.FLOW` as Lua, steps 5–6: a parent waiting for its children (state `waiting`, in `waiting`,
 * its fan-in state on its row); each child in this queue made at once (pending, naming its
 * parent), each child in another queue a `child` entry of this queue's outbox (docs/design/flows.md).
 * Reply: the children made here. The twin of `native/src/verbs/flow.rs`.
 *
 * @module
 */
import { META, ROW, STATE, WAKE, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { FLOW_FIELDS } from "./flows.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.FLOW`. */
export const FLOW_LUA: string = luaScript(
  "FLOW",
  `
local all = {parent}
for j = 1, n do all[j + 1] = id[j] end
local e = emq_repeated(n + 1, all) if e then return e end
local own = string.sub(base, 6, -3)
local here, rows, missing = {}, {}, {}
for j = 1, n do
  if queue[j] == own then here[#here + 1] = j end
end
local made = {parent}
for _, j in ipairs(here) do made[#made + 1] = id[j] end
for k, x in ipairs(made) do
  rows[k] = base .. '${KEY_PREFIX.job}' .. x
  local found, e = emq_read('EXISTS', rows[k]) if e then return e end
  if found == 1 then return emq_refuse['duplicate']({id = x}) end
  missing[#missing + 1] = rows[k]
end
local pending, wake, waiting, outbox = base .. '${KEY.pending}', base .. '${KEY.wake}', base .. '${KEY.waiting}', base .. '${KEY.outbox}'
local s, e = emq_types({{pending, 'list'}, {wake, 'zset'}, {waiting, 'zset'}, {outbox, 'zset'}}) if e then return e end
for _, k in ipairs(s.missing) do missing[#missing + 1] = k end
e = emq_counter(KEYS[1], '${META.enqueued}') if e then return e end
local plan
if #here > 0 then
  local zeros, blanks = {}, {}
  for k = 1, #here do zeros[k], blanks[k] = 0, '' end
  plan, e = emq_ready_plan(base, {unpack(made, 2)}, {}, missing, zeros, blanks) if e then return e end
end
e = emq_probe(cluster, missing) if e then return e end

local at = emq_int(emq_now())
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', at) end
redis.call('HINCRBY', KEYS[1], '${META.enqueued}', 1 + #here)
redis.call('HSET', rows[1], '${ROW.state}', '${STATE.waiting}', '${ROW.payload}', payload, '${ROW.attempts}', '0',
  '${ROW.created_ms}', at, '${ROW.children}', emq_int(n), '${ROW.finished}', '0')
-- the edges in runs that stay under Lua's stack limit
for from = 1, n, 1000 do
  local f = {}
  for j = from, math.min(from + 999, n) do
    f[#f + 1] = '${FLOW_FIELDS.child}' .. (j - 1)
    f[#f + 1] = queue[j] .. '\\0' .. id[j] .. '\\0' .. emq_int(policy[j])
  end
  redis.call('HSET', rows[1], unpack(f))
end
redis.call('ZADD', waiting, at, parent)
if #here > 0 then
  local was_empty = not emq_ready_any(base)
  for k, j in ipairs(here) do
    redis.call('HSET', rows[k + 1], '${ROW.state}', '${STATE.pending}', '${ROW.payload}', body[j], '${ROW.attempts}', '0',
      '${ROW.created_ms}', at, '${ROW.parent}', own .. '\\0' .. parent .. '\\0' .. (j - 1))
  end
  emq_ready_push(plan, 'LPUSH')
  if was_empty then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
end
for j = 1, n do
  if queue[j] ~= own then
    redis.call('ZADD', outbox, at, table.concat({'child', queue[j], id[j], own, parent, j - 1, body[j]}, '\\0'))
  end
end
return #here
`,
);
