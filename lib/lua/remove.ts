/**
 * `EMQ.REMOVE` as Lua, steps 5–6: pending, scheduled, dead and completed jobs are deleted, wherever
 * they are; an active job refuses the call (its worker holds it). Their deduplication keys are let
 * go; one `removed` event of the ids that had a row (`cleaned` with cleaned 1: a clean). A lane left without ready jobs leaves the ring
 * (and goes idle); once no ready job is left for a claim, the `ready` marker leaves `wake`. A
 * flow's parent has its unfinished children cancelled; a flow's child leaves a tombstone in place of
 * its row. Reply: how many were removed (an id without a row counts 0).
 *
 * @module
 */
import { LANE, META, ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { DEDUP_LUA } from "./dedup.ts";
import { FLOWS_LUA } from "./flows.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/**
 * `emq_unready(base, plan, j, x, pending)` and `emq_unready_lanes(base, plan, left)`: REMOVE's and
 * CANCEL's removal of ready jobs (the twin of `native/src/verbs/ready.rs`'s `remove`).
 */
export const UNREADY_LUA: string = `
-- Job j of an emq_plan_rows plan (its id x) leaves its ready list (pending: the queue's pending
-- key, or false when missing), with prioritized and its lane's levels: kept; its lane when it was
-- there, else nil.
local function emq_unready(base, plan, j, x, pending)
  local p, L = plan.prio[j], plan.lane[j]
  local list = emq_ready(base, L, p)
  if list == base .. '${KEY.pending}' then
    if pending and redis.call('LREM', pending, 0, x) > 0 then return L end
  elseif redis.call('LREM', list, 0, x) > 0 then
    redis.call('HINCRBY', KEYS[1], '${META.prioritized}', -1)
    if p > 0 and redis.call('LLEN', list) == 0 then redis.call('ZREM', base .. '${KEY_PREFIX.levels}' .. L, emq_int(p)) end
    return L
  end
  return nil
end

-- After emq_unready, a laned queue: each lane that lost a ready job (left), its backlog; one left
-- without any leaves the ring wherever it is (LREM is O(ring length): an operator's verb, never on
-- a claim's path), then its idle check.
local function emq_unready_lanes(base, plan, left)
  if not plan.laned then return end
  local now, d = emq_now(), emq_lane_defaults()
  for _, L in ipairs(left) do emq_add_ready(base, L, -1) end
  for _, L in ipairs(left) do
    local key = base .. '${KEY_PREFIX.lane}' .. L
    if emq_backlog(base, L) <= 0 and redis.call('HGET', key, '${LANE.ring}') == '1' then
      redis.call('LREM', base .. '${KEY.ring}', 0, L)
      redis.call('HDEL', key, '${LANE.ring}')
    end
    emq_lane_idle(base, L, now, d)
  end
end
`;

/** The Lua twin of `EMQ.REMOVE`. */
export const REMOVE_LUA: string = luaScript(
  "REMOVE",
  `
local e = emq_repeated(n, id) if e then return e end
local keys = {pending = base .. '${KEY.pending}', schedule = base .. '${KEY.schedule}', dead = base .. '${KEY.dead}', completed = base .. '${KEY.completed}', active = base .. '${KEY.active}'}
local wake = base .. '${KEY.wake}'
local waiting = base .. '${KEY.waiting}'
local s, e = emq_types({{keys.pending, 'list'}, {keys.schedule, 'zset'}, {keys.dead, 'zset'}, {keys.completed, 'zset'}, {keys.active, 'zset'}, {wake, 'zset'}, {base .. '${KEY.events}', 'stream'}, {waiting, 'zset'}})
if e then return e end
local missing, sets = s.missing, {}
for set, key in pairs(keys) do sets[set] = s.kinds[key] ~= 'none' and key or false end
local r, e = emq_rows(base, id, missing) if e then return e end
local rows, found = r.rows, r.exists
local busy = sets.active and emq_members(sets.active, id, true) or {}
local jobs = {}
for j = 1, n do
  if found[j] then jobs[#jobs + 1] = {id[j], rows[j]} end
end
local going, e = emq_letting_go(base, jobs, missing) if e then return e end
-- a ready job is on its lane's list of its priority
local plan, e = emq_plan_rows(base, id, r, missing) if e then return e end
e = emq_probe(cluster, missing) if e then return e end
if #busy > 0 then return emq_refuse['active']({ids = table.concat(busy, ' ')}) end
emq_let_go(going, emq_now())
local removed, left, gone = 0, {}, {}
for j = 1, n do
  if found[j] then
    local L = emq_unready(base, plan, j, id[j], sets.pending)
    if L then left[#left + 1] = L end
    if sets.schedule then redis.call('ZREM', sets.schedule, id[j]) end
    if sets.dead then redis.call('ZREM', sets.dead, id[j]) end
    if sets.completed then redis.call('ZREM', sets.completed, id[j]) end
    if s.kinds[waiting] == 'zset' then redis.call('ZREM', waiting, id[j]) end
    -- a flow's child not finished yet (a child parent still waiting too): its parent counts it as finished, 'removed'
    local st, parent = redis.call('HGET', rows[j], '${ROW.state}'), redis.call('HGET', rows[j], '${ROW.parent}')
    if (st == '${STATE.pending}' or st == '${STATE.scheduled}' or st == '${STATE.waiting}') and parent then
      emq_flow_settled(base, 1, {id[j]}, {rows[j]}, 'removed', {''})
    end
    -- a flow's parent: its unfinished children are cancelled
    if redis.call('HGET', rows[j], '${ROW.children}') then emq_flow_cancel_unfinished(base, rows[j], id[j], true) end
    redis.call('DEL', rows[j])
    -- a flow's child, finished or not, leaves a tombstone: a second delivery of its creation (its
    -- relay died between APPLY and UNBOX) must not make it again
    if parent then emq_flow_tombstone(rows[j], parent) end
    removed = removed + 1
    gone[removed] = id[j]
  end
end
emq_unready_lanes(base, plan, left)
-- the last ready job a claim could reach gone: no 'ready' marker left for workers to wake on
if #left > 0 and not emq_ready_any(base) then redis.call('ZREM', wake, '${WAKE.ready}') end
if cleaned == 1 then
  ${luaEvent("cleaned", { jobs: "emq_list(gone)" })}
else
  ${luaEvent("removed", { jobs: "emq_list(gone)" })}
end
return removed
`,
  DEDUP_LUA + UNREADY_LUA + FLOWS_LUA,
);
