/**
 * The ready lists as Lua (the twin of `native/src/verbs/ready.rs`): a job of priority 0 is ready in
 * `pending`, one of priority p ≥ 1 in `ready:<p>:`, with p in the sorted set `levels:` while that
 * list holds ids and `meta`'s `prioritized` counting them. Every verb that makes jobs ready pushes
 * them through one plan — step 5 reads each job's priority and types the lists it will write,
 * step 6 pushes — and CLAIM pops the levels in order (`claim.ts`). Docs: docs/WIRE.md, "Priorities".
 *
 * @module
 */
import { MAX_PRIORITY, META, ROW } from "../wire/mod.ts";

/** `emq_priority`, `emq_level`, `emq_ready_plan`, `emq_plan_rows`, `emq_ready_push`, `emq_ready_any`. */
export const READY_LUA: string = `
-- A row's priority: its field as an admission writes it (1 to ${MAX_PRIORITY}, no leading zero), else 0.
local function emq_priority(row)
  local v = redis.call('HGET', row, '${ROW.priority}')
  if not v or #v > 7 or not string.find(v, '^[1-9][0-9]*$') then return 0 end
  local p = tonumber(v)
  if p > ${MAX_PRIORITY} then return 0 end
  return p
end

-- The ready list of priority p.
local function emq_level(base, p)
  if p == 0 then return base .. 'pending' end
  return base .. 'ready:' .. p .. ':'
end

-- Step 5 of making jobs ready: each job's priority (prios[j] when given, else its row's; a missing
-- row, false in rows, is 0), and for priorities >= 1 the types of levels: and of their lists
-- (missing ones listed) and meta's prioritized counter. Returns the plan {base, lists = {[p] =
-- ids}, order = {p, ...}, prio = {p by place}}, or nil and the refusal.
local function emq_ready_plan(base, ids, rows, missing, prios)
  local plan = {base = base, lists = {}, order = {}, prio = {}}
  local wanted = {}
  for j, id in ipairs(ids) do
    local p = prios and prios[j] or (rows[j] and emq_priority(rows[j]) or 0)
    plan.prio[j] = p
    if not plan.lists[p] then
      plan.lists[p] = {}
      plan.order[#plan.order + 1] = p
      if p > 0 then wanted[#wanted + 1] = {emq_level(base, p), 'list'} end
    end
    table.insert(plan.lists[p], id)
  end
  if #wanted > 0 then
    table.insert(wanted, 1, {base .. 'levels:', 'zset'})
    local _, e = emq_kinds(wanted, missing) if e then return nil, e end
    e = emq_counter(KEYS[1], '${META.prioritized}') if e then return nil, e end
  end
  return plan
end

-- emq_ready_plan of ids whose rows emq_rows typed (r: {rows, exists}).
local function emq_plan_rows(base, ids, r, missing)
  local rows = {}
  for j = 1, #ids do rows[j] = r.exists[j] and r.rows[j] end
  return emq_ready_plan(base, ids, rows, missing)
end

-- Step 6: the plan's ids pushed on their lists with push ('LPUSH': the head; 'RPUSH': the tail,
-- claimed next of its level), in order; levels: and prioritized follow.
local function emq_ready_push(plan, push)
  for _, p in ipairs(plan.order) do
    local ids = plan.lists[p]
    emq_each(push, emq_level(plan.base, p), ids)
    if p > 0 then
      redis.call('ZADD', plan.base .. 'levels:', p, p)
      redis.call('HINCRBY', KEYS[1], '${META.prioritized}', #ids)
    end
  end
end

-- Whether the queue has a ready job (in pending, or counted in prioritized: decimal digits, not all 0).
local function emq_ready_any(base)
  if redis.call('LLEN', base .. 'pending') > 0 then return true end
  local v = redis.call('HGET', KEYS[1], '${META.prioritized}')
  return v ~= false and string.find(v, '^[0-9]+$') ~= nil and string.find(v, '[1-9]') ~= nil
end
`;
