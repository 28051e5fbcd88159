/**
 * The mover PROMOTE, REAP and CLAIM share, as Lua (the twin of `native/src/verbs/move_due.rs`), in
 * two halves so that a verb checks everything before it writes anything: `emq_move_due_select`
 * (`select`) selects up to `limit` ids of a sorted set whose score is due (≤ now), ascending,
 * type-checks their rows and plans their ready pushes (each to its priority's list, `ready.ts`);
 * `emq_move_due_apply` (`apply`) moves them and marks the rows that exist `pending`. `moveDueScript` is PROMOTE and REAP whole (the twin of
 * `move_due::moved`).
 *
 * @module
 */
import type { QueueType } from "../keyspace/mod.ts";
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";

/** `emq_move_due_select(base, from, now, limit, missing, meta)` and `emq_move_due_apply(from, push, due)` (with the ready lists'). */
export const MOVE_DUE_LUA: string = `
-- Returns {ids, rows, exists, plan, freeing} (rows that are missing are added to missing), or nil
-- and the refusal. meta (its type), for expired leases only: what the jobs leaving active free.
-- size: from's size when the caller read it (0: nothing to select, not read again).
local function emq_move_due_select(base, from, now, limit, missing, meta, size)
  local ids, e = {}, nil
  if size ~= 0 then
    ids, e = emq_read('ZRANGEBYSCORE', from, '-inf', emq_int(now), 'LIMIT', 0, limit)
    if e then return nil, e end
  end
  -- nothing due in a queue without lanes: the empty plan, built without the plan's reads (the
  -- same tables emq_rows and emq_plan_rows give for no ids)
  if #ids == 0 and not emq_laned() then
    return {ids = ids, rows = {}, exists = {}, plan = {base = base, groups = {}, prio = {}, lane = {}, laned = false}}
  end
  local due, e = emq_rows(base, ids, missing) if e then return nil, e end
  due.ids = ids
  due.plan, e = emq_plan_rows(base, ids, due, missing) if e then return nil, e end
  if meta and #ids > 0 then
    local stored = {}
    for j = 1, #ids do stored[j] = due.exists[j] and redis.call('HGET', due.rows[j], '${ROW.token}') end
    due.freeing, e = emq_freeing(base, meta, missing, due.rows, stored) if e then return nil, e end
  end
  return due
end

-- push is 'LPUSH' (the head: PROMOTE) or 'RPUSH' (the tail, claimed next: REAP, expired leases,
-- whose rows count the stall). Returns the count.
local function emq_move_due_apply(from, push, due)
  if #due.ids == 0 then return 0 end
  emq_each('ZREM', from, due.ids)
  emq_lower(due.freeing)
  emq_ready_push(due.plan, push)
  for i = 1, #due.ids do
    if due.exists[i] then
      if push == 'RPUSH' then
        -- an expired lease: its row counts the stall (a malformed count starts again from 0)
        local v = redis.call('HGET', due.rows[i], '${ROW.stalls}')
        local n = 0
        if v and #v <= 15 and (v == '0' or string.find(v, '^[1-9][0-9]*$')) then n = tonumber(v) end
        redis.call('HSET', due.rows[i], '${ROW.state}', '${STATE.pending}', '${ROW.stalls}', emq_int(n + 1))
      else
        redis.call('HSET', due.rows[i], '${ROW.state}', '${STATE.pending}')
      end
    end
  end
  return #due.ids
end
`;

/**
 * PROMOTE or REAP as Lua, steps 5–6: up to limit due ids of the queue's sorted set `from` become
 * ready (each on its priority's list) with `push` (LPUSH: the head; RPUSH: the tail, claimed next);
 * a `ready` marker on wake when any moved; one event (`promoted`, `stalled`) of the ids moved. Reply:
 * the count moved.
 */
export function moveDueScript(verb: "PROMOTE" | "REAP", from: Extract<QueueType, "schedule" | "active">, push: "LPUSH" | "RPUSH"): string {
  return luaScript(
    verb,
    `
local from, pending, wake = base .. '${from}', base .. '${KEY.pending}', base .. '${KEY.wake}'
local s, e = emq_types({{from, 'zset'}, {pending, 'list'}, {wake, 'zset'}, {base .. '${KEY.events}', 'stream'}}) if e then return e end
local due, e = emq_move_due_select(base, from, emq_now(), limit, s.missing, ${from === "active" ? "s.meta" : "nil"}) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
local moved = emq_move_due_apply(from, '${push}', due)
emq_freed(due.freeing)
if moved > 0 then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
${luaEvent(verb === "PROMOTE" ? "promoted" : "stalled", { jobs: "emq_list(due.ids)" })}
return moved
`,
    MOVE_DUE_LUA,
  );
}
