/**
 * The ready lists as Lua (the twin of `native/src/verbs/ready.rs`): a job of lane L (`""`: the
 * default lane) and priority p is ready in `ready:<p>:<L>` — the default lane's priority 0 is
 * `pending` — with p ≥ 1 in the sorted set `levels:<L>` while that list holds ids and `meta`'s
 * `prioritized` counting every ready job outside `pending`. Every verb that makes jobs ready
 * pushes them through one plan — step 5 reads each job's lane and priority and types the keys it
 * will write, step 6 pushes, and in a laned queue keeps each lane's backlog and ring place
 * (`lanes.ts`) — and CLAIM pops the levels in order (`claim.ts`). Docs: docs/WIRE.md,
 * "Priorities" and "Lanes".
 *
 * @module
 */
import { MAX_PRIORITY, META, ROW } from "../wire/mod.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** `emq_priority`, `emq_ready`, `emq_ready_plan`, `emq_plan_rows`, `emq_ready_push`, `emq_ready_any`. */
export const READY_LUA: string = `
-- A priority as an admission writes it (1 to ${MAX_PRIORITY}, no leading zero), else 0.
local function emq_parse_priority(v)
  if not v or #v > 7 or not string.find(v, '^[1-9][0-9]*$') then return 0 end
  local p = tonumber(v)
  if p > ${MAX_PRIORITY} then return 0 end
  return p
end

-- A row's priority (its field; 0 when none).
local function emq_priority(row)
  return emq_parse_priority(redis.call('HGET', row, '${ROW.priority}'))
end

-- The ready list of lane L at priority p.
local function emq_ready(base, L, p)
  if p == 0 and L == '' then return base .. '${KEY.pending}' end
  return base .. '${KEY_PREFIX.ready}' .. p .. ':' .. L
end

-- Step 5 of making jobs ready: each job's lane and priority (lanes[j] / prios[j] when given, else
-- its row's; a missing row, false in rows, is the default lane at 0), grouped by (lane, priority)
-- in first-seen order, and the types of what the pushes write: each list but pending, levels:<L>
-- for priorities >= 1, meta's prioritized; in a laned queue (or one this call makes laned:
-- begins) the lanes' keys. Returns the plan {base, groups = {{lane, p, list, ids}...}, prio = {p
-- by place}, lane = {L by place}, laned, begins, now, d}, or nil and the refusal.
local function emq_ready_plan(base, ids, rows, missing, prios, lanes)
  local plan = {base = base, groups = {}, prio = {}, lane = {}, laned = emq_laned() ~= nil}
  local at, wanted, names, outside = {}, {}, {}, false
  for j, id in ipairs(ids) do
    local p = prios and prios[j] or (rows[j] and emq_priority(rows[j]) or 0)
    local L = lanes and lanes[j] or (rows[j] and emq_lane_name(redis.call('HGET', rows[j], '${ROW.lane}')) or '')
    plan.prio[j], plan.lane[j] = p, L
    local k = p .. ':' .. L
    local g = at[k]
    if not g then
      g = {lane = L, p = p, list = emq_ready(base, L, p), ids = {}}
      at[k] = g
      plan.groups[#plan.groups + 1] = g
      if g.list ~= base .. '${KEY.pending}' then
        outside = true
        wanted[#wanted + 1] = {g.list, 'list'}
      end
      if p > 0 then wanted[#wanted + 1] = {base .. '${KEY_PREFIX.levels}' .. L, 'zset'} end
      if not names[L] then
        names[L] = true
        names[#names + 1] = L
      end
      if L ~= '' and not plan.laned then plan.begins = true end
    end
    table.insert(g.ids, id)
  end
  if #wanted > 0 then
    local _, e = emq_kinds(wanted, missing) if e then return nil, e end
  end
  if outside then
    local e = emq_counter(KEYS[1], '${META.prioritized}') if e then return nil, e end
  end
  if plan.begins then
    if not names[''] then names[#names + 1] = '' end
    local e = emq_counter(KEYS[1], '${META.prioritized}') if e then return nil, e end
  end
  if plan.laned or plan.begins then
    local e = emq_lane_kinds(base, names, missing) if e then return nil, e end
    plan.now, plan.d = emq_now(), emq_lane_defaults()
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
-- claimed next of its level), group by group; levels:<L> and prioritized follow, and in a laned
-- queue each group's lane gets its backlog and its ring insert check (after the queue becomes
-- laned, when the plan begins it).
local function emq_ready_push(plan, push)
  local base = plan.base
  if plan.begins then emq_laning(base, plan.now, plan.d) end
  for _, g in ipairs(plan.groups) do
    emq_each(push, g.list, g.ids)
    if g.p > 0 then redis.call('ZADD', base .. '${KEY_PREFIX.levels}' .. g.lane, g.p, g.p) end
    if g.list ~= base .. '${KEY.pending}' then redis.call('HINCRBY', KEYS[1], '${META.prioritized}', #g.ids) end
    if plan.laned or plan.begins then
      emq_add_ready(base, g.lane, #g.ids)
      emq_lane_insert(base, g.lane, plan.now, plan.d)
    end
  end
end

-- Whether the queue has a ready job a claim may reach: laned, a lane in the ring; else one in
-- pending (its length: pending, when the caller read it) or counted in prioritized (decimal
-- digits, not all 0).
local function emq_ready_any(base, pending)
  if emq_laned() then return redis.call('LLEN', base .. '${KEY.ring}') > 0 end
  if (pending or redis.call('LLEN', base .. '${KEY.pending}')) > 0 then return true end
  local v = emq_meta_get('${META.prioritized}')
  return v ~= false and string.find(v, '^[0-9]+$') ~= nil and string.find(v, '[1-9]') ~= nil
end
`;
