/**
 * `EMQ.REQUEUE` as Lua, steps 5–6: dead jobs go back to the head of pending with a fresh attempt
 * budget — the ids given (each must be dead), or without ids up to limit, oldest first; one `requeued` event. Reply: how
 * many moved.
 *
 * @module
 */
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";

/** The Lua twin of `EMQ.REQUEUE`. */
export const REQUEUE_LUA: string = luaScript(
  "REQUEUE",
  `
local e = emq_repeated(n, id) if e then return e end
local dead, pending, wake = base .. 'dead', base .. 'pending', base .. 'wake'
local s, e = emq_types({{dead, 'zset'}, {pending, 'list'}, {wake, 'zset'}, {base .. 'events', 'stream'}}) if e then return e end
local missing = s.missing
local ids = id
if n == 0 then ids = redis.call('ZRANGE', dead, 0, limit - 1) end
local r, e = emq_rows(base, ids, missing) if e then return e end
local rows, exists = r.rows, r.exists
local stray = n > 0 and emq_members(dead, ids, false) or {}
local plan, e = emq_plan_rows(base, ids, r, missing) if e then return e end
e = emq_local(cluster, missing) if e then return e end
if #stray > 0 then return emq_refuse['not-dead']({ids = table.concat(stray, ' ')}) end
if #ids == 0 then return 0 end
local was_empty = not emq_ready_any(base)
emq_each('ZREM', dead, ids)
emq_ready_push(plan, 'LPUSH')
for j = 1, #ids do
  if exists[j] then
    redis.call('HSET', rows[j], '${ROW.state}', '${STATE.pending}', '${ROW.attempts}', '0')
    redis.call('HDEL', rows[j], '${ROW.reason}', '${ROW.buried_ms}')
  end
end
if was_empty then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
${luaEvent("requeued", { jobs: "emq_list(ids)" })}
return #ids
`,
);
