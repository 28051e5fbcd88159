/**
 * `EMQ.RUN` as Lua, steps 5–6 (the twin of `native/src/verbs/run.rs`): scheduled jobs run now —
 * each id (each must be in schedule) moves to the head of pending, its row `pending` and due now,
 * as a promotion puts a due job; a `ready` marker on wake when pending was empty; one `promoted` event. Reply: how many
 * moved.
 *
 * @module
 */
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";

/** The Lua twin of `EMQ.RUN`. */
export const RUN_LUA: string = luaScript(
  "RUN",
  `
local e = emq_repeated(n, id) if e then return e end
local schedule, pending, wake = base .. 'schedule', base .. 'pending', base .. 'wake'
local s, e = emq_types({{schedule, 'zset'}, {pending, 'list'}, {wake, 'zset'}, {base .. 'events', 'stream'}}) if e then return e end
local missing = s.missing
local r, e = emq_rows(base, id, missing) if e then return e end
local rows, exists = r.rows, r.exists
local stray = emq_members(schedule, id, false)
local plan, e = emq_plan_rows(base, id, r, missing) if e then return e end
e = emq_local(cluster, missing) if e then return e end
if #stray > 0 then return emq_refuse['not-scheduled']({ids = table.concat(stray, ' ')}) end
local now = emq_int(emq_now())
local was_empty = not emq_ready_any(base)
emq_each('ZREM', schedule, id)
emq_ready_push(plan, 'LPUSH')
for j = 1, n do
  if exists[j] then redis.call('HSET', rows[j], '${ROW.state}', '${STATE.pending}', '${ROW.due_ms}', now) end
end
if was_empty then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
${luaEvent("promoted", { jobs: "emq_list(id)" })}
return n
`,
);
