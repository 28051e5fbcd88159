/**
 * `EMQ.CANCEL` as Lua, steps 5–6: cancels jobs from anywhere. A pending or scheduled job leaves
 * its ready list or the schedule, a flow's waiting parent leaves `waiting` (its unfinished children
 * cancelled, as REMOVE's), an active job leaves active (its token kept: its worker's settle is
 * refused as for a lost lease, its EXTEND `cancelled`), and each is buried with the reason and
 * `cancelled_ms`; a flow's child cancelled tells its parent as a failure with the reason (under its
 * policy, as BURY's settle hook); a finished job (completed or dead) is left as it is. Reply: one
 * status per id (0 no row, 1 waited, 2 active, 3 left). One `cancelled` event.
 *
 * @module
 */
import { META, ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { DEDUP_LUA } from "./dedup.ts";
import { luaEvent } from "./events.ts";
import { FLOWS_LUA } from "./flows.ts";
import { KEY } from "./keys.ts";
import { UNREADY_LUA } from "./remove.ts";

/** The Lua twin of `EMQ.CANCEL`. */
export const CANCEL_LUA: string = luaScript(
  "CANCEL",
  `
local e = emq_repeated(n, id) if e then return e end
local pending, schedule, dead = base .. '${KEY.pending}', base .. '${KEY.schedule}', base .. '${KEY.dead}'
local completed, active = base .. '${KEY.completed}', base .. '${KEY.active}'
local wake, waiting = base .. '${KEY.wake}', base .. '${KEY.waiting}'
local s, e = emq_types({{pending, 'list'}, {schedule, 'zset'}, {dead, 'zset'}, {completed, 'zset'}, {active, 'zset'}, {wake, 'zset'}, {base .. '${KEY.events}', 'stream'}, {waiting, 'zset'}})
if e then return e end
local missing = s.missing
local r, e = emq_rows(base, id, missing) if e then return e end
local rows = r.rows
local function within(key, x) return redis.call('ZSCORE', key, x) ~= false end
-- each job's status as its sets say (0 no row, 1 waited, 2 active, 3 left); a row in none of them
-- is tried on its ready list; a flow's parent waiting for its children leaves waiting instead
local status, jobs, ran, tokens, parents = {}, {}, {}, {}, {}
for j = 1, n do
  if not r.exists[j] then status[j] = 0
  elseif within(active, id[j]) then status[j] = 2
  elseif within(dead, id[j]) or within(completed, id[j]) then status[j] = 3
  else status[j] = 1 end
  parents[j] = status[j] == 1 and within(waiting, id[j])
  if status[j] == 1 or status[j] == 2 then jobs[#jobs + 1] = {id[j], rows[j]} end
  if status[j] == 2 then
    ran[#ran + 1] = rows[j]
    tokens[#ran] = redis.call('HGET', rows[j], '${ROW.token}')
  end
end
local going, e = emq_letting_go(base, jobs, missing) if e then return e end
-- a ready job is on its lane's list of its priority
local plan, e = emq_plan_rows(base, id, r, missing) if e then return e end
-- the active ones free a slot of a limited queue and lower their lane's active, as BURY's
local freeing
if #ran > 0 then
  freeing, e = emq_freeing(base, s.meta, missing, ran, tokens) if e then return e end
end
e = emq_counter(KEYS[1], '${META.buried}') if e then return e end
e = emq_probe(cluster, missing) if e then return e end
local now = emq_now()
emq_let_go(going, now)
local at = emq_int(now)
local gone, left, grows = {}, {}, {}
for j = 1, n do
  local st = status[j]
  if st == 2 then
    redis.call('ZREM', active, id[j])
  elseif parents[j] then
    redis.call('ZREM', waiting, id[j])
  elseif st == 1 and within(schedule, id[j]) then
    redis.call('ZREM', schedule, id[j])
  elseif st == 1 then
    local L = emq_unready(base, plan, j, id[j], s.kinds[pending] ~= 'none' and pending)
    if L then left[#left + 1] = L else status[j] = 3 end
  end
  if status[j] == 1 or status[j] == 2 then
    gone[#gone + 1] = id[j]
    grows[#gone] = rows[j]
    redis.call('ZADD', dead, now, id[j])
    redis.call('HSET', rows[j], '${ROW.state}', '${STATE.dead}', '${ROW.reason}', reason, '${ROW.buried_ms}', at, '${ROW.cancelled_ms}', at)
  end
end
emq_unready_lanes(base, plan, left)
emq_lower(freeing)
if #gone > 0 then redis.call('HINCRBY', KEYS[1], '${META.buried}', #gone) end
-- after buried was written: a parent buried by a child's policy counts on top (as BURY's)
for j = 1, n do
  if parents[j] then emq_flow_cancel_unfinished(base, rows[j], id[j], true) end
end
local reasons = {}
for k = 1, #gone do reasons[k] = reason end
emq_flow_settled(base, #gone, gone, grows, 'failed', reasons)
-- the last ready job a claim could reach gone: no 'ready' marker left for workers to wake on
if #left > 0 and not emq_ready_any(base) then redis.call('ZREM', wake, '${WAKE.ready}') end
emq_freed(freeing)
if #gone > 0 then
  ${luaEvent("cancelled", { jobs: "emq_list(gone)", reason: "reason" })}
end
return status
`,
  DEDUP_LUA + UNREADY_LUA + FLOWS_LUA,
);
