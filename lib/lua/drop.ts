/**
 * `EMQ.DROP` as Lua, steps 5–6: the queue is deleted, up to limit schedulers and jobs a call
 * (schedulers, then pending, scheduled, dead and completed jobs), and once none is left every key of
 * the queue, `meta` and the events stream included — but the outbox's entries others wait for (a
 * dropped parent's cancels, a dropped child's `removed` outcome, outcomes not relayed yet); refused
 * while a job is active. Reply: the schedulers and jobs deleted (fewer than limit: the queue is gone).
 *
 * @module
 */
import { ROW, STATE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { FLOWS_LUA } from "./flows.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.DROP`. */
export const DROP_LUA: string = luaScript(
  "DROP",
  `
local _, e = emq_type(KEYS[1], 'hash') if e then return e end
local keys, kinds, missing = {}, {}, {}
for _, k in ipairs({{'${KEY.pending}', 'list'}, {'${KEY.schedule}', 'zset'}, {'${KEY.dead}', 'zset'}, {'${KEY.completed}', 'zset'}, {'${KEY.active}', 'zset'}, {'${KEY.wake}', 'zset'}, {'${KEY.schedulers}', 'zset'}, {'${KEY.dedup}', 'hash'}, {'${KEY.dedup_ttl}', 'zset'}, {'${KEY.events}', 'stream'}, {'${KEY.waiting}', 'zset'}, {'${KEY.outbox}', 'zset'}, {'${KEY.metrics}', 'hash'}}) do
  keys[k[1]] = base .. k[1]
  local t, e = emq_type(keys[k[1]], k[2]) if e then return e end
  kinds[k[1]] = t
  if t == 'none' then missing[#missing + 1] = keys[k[1]] end
end
local busy = kinds['${KEY.active}'] == 'zset' and redis.call('ZRANGE', keys['${KEY.active}'], 0, 49) or {}
-- schedulers first (so that no tick admits a job while the queue is dropped), then jobs
local scheds = {}
if kinds['${KEY.schedulers}'] == 'zset' then
  for _, name in ipairs(redis.call('ZRANGE', keys['${KEY.schedulers}'], 0, limit - 1)) do
    local key = base .. '${KEY_PREFIX.scheduler}' .. name
    local t, e = emq_type(key, 'hash') if e then return e end
    if t == 'none' then missing[#missing + 1] = key end
    scheds[#scheds + 1] = {name = name, key = key}
  end
end
limit = limit - #scheds
-- every lane's ready lists (the default lane's first, pending first), lowest priority first; a
-- lane's keys (its state, its levels) go with the queue
local lists, lanekeys = {}, {}
local names = {''}
local lk, e = emq_type(base .. '${KEY.lanes}', 'zset') if e then return e end
if lk == 'zset' then
  for _, L in ipairs(redis.call('ZRANGE', base .. '${KEY.lanes}', 0, -1)) do
    if L ~= '' then names[#names + 1] = L end
  end
end
for _, L in ipairs(names) do
  local levels = base .. '${KEY_PREFIX.levels}' .. L
  local t, e = emq_type(levels, 'zset') if e then return e end
  local ps = {0}
  if t == 'zset' then
    for _, m in ipairs(redis.call('ZRANGE', levels, 0, -1)) do
      local p = emq_parse_priority(m)
      if p > 0 then ps[#ps + 1] = p end
    end
  end
  for _, p in ipairs(ps) do
    local list = emq_ready(base, L, p)
    if not kinds[list] then
      local t, e = emq_type(list, 'list') if e then return e end
      keys[list], kinds[list] = list, t
    end
    lists[#lists + 1] = list
  end
  lanekeys[#lanekeys + 1] = levels
  lanekeys[#lanekeys + 1] = base .. '${KEY_PREFIX.lane}' .. L
end
for _, k in ipairs({'${KEY.ring}', '${KEY.lanes}', '${KEY.parked}'}) do lanekeys[#lanekeys + 1] = base .. k end
local victims = {}
local sets = {}
for _, l in ipairs(lists) do sets[#sets + 1] = l end
sets[#sets + 1] = '${KEY.schedule}'
sets[#sets + 1] = '${KEY.dead}'
sets[#sets + 1] = '${KEY.completed}'
sets[#sets + 1] = '${KEY.waiting}'
for _, set in ipairs(sets) do
  local left = limit - #victims
  if left > 0 and kinds[set] ~= 'none' then
    local listed = set ~= '${KEY.schedule}' and set ~= '${KEY.dead}' and set ~= '${KEY.completed}' and set ~= '${KEY.waiting}'
    local ids = listed and redis.call('LRANGE', keys[set], 0, left - 1) or redis.call('ZRANGE', keys[set], 0, left - 1)
    for _, id in ipairs(ids) do
      local row = base .. '${KEY_PREFIX.job}' .. id
      local _, e = emq_read('EXISTS', row) if e then return e end
      victims[#victims + 1] = {set = set, listed = listed, id = id, row = row}
    end
  end
end
e = emq_probe(cluster, missing) if e then return e end
if #busy > 0 then return emq_refuse['active']({ids = table.concat(busy, ' ')}) end
-- flows: a waiting parent's children elsewhere cancelled, an unfinished child's parent elsewhere
-- told (those here go with the queue)
local own = string.sub(base, 6, -3)
for _, v in ipairs(victims) do
  if v.listed then redis.call('LPOP', keys[v.set]) else redis.call('ZREM', keys[v.set], v.id) end
  if redis.call('TYPE', v.row)['ok'] == 'hash' then
    if v.set == '${KEY.waiting}' then emq_flow_cancel_unfinished(base, v.row, v.id, false) end
    local st = redis.call('HGET', v.row, '${ROW.state}')
    local named = redis.call('HGET', v.row, '${ROW.parent}')
    local p = named and emq_flow_fields(named, 3)
    if (st == '${STATE.pending}' or st == '${STATE.scheduled}' or st == '${STATE.waiting}') and p and p[1] ~= own then
      emq_flow_settled(base, 1, {v.id}, {v.row}, 'removed', {''})
    end
  end
  redis.call('DEL', v.row)
end
for _, v in ipairs(scheds) do
  redis.call('ZREM', keys['${KEY.schedulers}'], v.name)
  redis.call('DEL', v.key)
end
if #victims < limit then
  redis.call('DEL', keys['${KEY.pending}'], keys['${KEY.schedule}'], keys['${KEY.dead}'], keys['${KEY.completed}'], keys['${KEY.wake}'], keys['${KEY.schedulers}'], keys['${KEY.dedup}'], keys['${KEY.dedup_ttl}'], keys['${KEY.events}'], keys['${KEY.waiting}'], keys['${KEY.metrics}'], KEYS[1])
  emq_each('DEL', nil, lanekeys)
  -- the outbox keeps what others wait for (outcomes, cancels): only creations go
  local outbox = base .. '${KEY.outbox}'
  if redis.call('TYPE', outbox)['ok'] == 'zset' then
    for _, x in ipairs(redis.call('ZRANGE', outbox, 0, -1)) do
      if string.sub(x, 1, 6) == 'child\\0' then redis.call('ZREM', outbox, x) end
    end
  end
end
return #victims + #scheds
`,
  FLOWS_LUA,
);
