/**
 * `EMQ.SCHEDULE` as Lua, steps 5–6: new rows in state `scheduled`, their ids in schedule at their
 * due_ms; the `due` marker on wake lowered to the earliest. A job whose `dedup` key is held is not
 * admitted; a debounced one moves its scheduled holder to its own due time (`admit.ts`). Events:
 * `scheduled`, then `deduplicated`. Reply:
 * the count, or `{admitted, place, holder, outcome…}` when a job carried a key.
 *
 * @module
 */
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { ADMIT_LUA } from "./admit.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";

/** The Lua twin of `EMQ.SCHEDULE`. */
export const SCHEDULE_LUA: string = luaScript(
  "SCHEDULE",
  `
local schedule = base .. '${KEY.schedule}'
local a, e = emq_admit(base, n, id, schedule, 'zset', opts) if e then return e end
e = emq_probe(cluster, a.missing) if e then return e end
local now = emq_int(a.now)
local earliest = emq_admitted(a, id, now, payload, due_ms, schedule)
if earliest == 0 then earliest = nil end
for _, j in ipairs(a.admitted) do
  -- an admitted job's due time is its source's: its own, or the last job debounced into it
  local at = due_ms[a.source[j]]
  local due = emq_int(at)
  local row = {'${ROW.state}', '${STATE.scheduled}'}
  for _, f in ipairs(emq_fields(a, j, payload, opts)) do row[#row + 1] = f end
  row[#row + 1] = '${ROW.attempts}'
  row[#row + 1] = '0'
  row[#row + 1] = '${ROW.created_ms}'
  row[#row + 1] = now
  row[#row + 1] = '${ROW.due_ms}'
  row[#row + 1] = due
  redis.call('HSET', a.rows[j], unpack(row))
  redis.call('ZADD', schedule, due, id[j])
  if earliest == nil or at < earliest then earliest = at end
end
if earliest then redis.call('ZADD', base .. '${KEY.wake}', 'LT', emq_int(earliest), '${WAKE.due}') end
local admitted, folded, into = emq_admit_lists(a, id)
${luaEvent("scheduled", { jobs: "admitted" })}
${luaEvent("deduplicated", { jobs: "folded", into: "into" })}
return emq_admit_reply(a)
`,
  ADMIT_LUA,
);
