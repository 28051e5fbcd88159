/**
 * `EMQ.RETRY` as Lua, steps 5–6: each job goes active → schedule at now + its delay_ms, or with
 * delay_ms 0 straight to the head of pending (ready now), its reason kept and its failure (the
 * error) among the row's newest failures; the `due` marker on wake
 * lowered to the earliest scheduled, `ready` written when pending was empty; one `retried` event per job
 * (`until`: when it is due again). Reply: the count.
 *
 * The steps are one function, `emq_retry_part` ({@link RETRY_PART_LUA}): step 5, then step 6 as
 * a closure (RETRY runs it at once, SETTLE after every part's checks). Whether pending was empty is
 * read by the closure, before its first write: after the writes of SETTLE's parts before it.
 *
 * @module
 */
import { META, ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";
import { FAILURE_LUA } from "./ring.ts";
import { LEASES_LUA } from "./leases.ts";

/**
 * `emq_retry_part(base, cluster, n, id, token, delay_ms, reason, failure)`: RETRY's step 5 on n
 * jobs; a function doing its step 6 (returning the count), or nil and the refusal. After
 * {@link LEASES_LUA} and {@link FAILURE_LUA}.
 */
export const RETRY_PART_LUA: string = `
local function emq_retry_part(base, cluster, n, id, token, delay_ms, reason, failure)
  local active, schedule, pending, wake = base .. '${KEY.active}', base .. '${KEY.schedule}', base .. '${KEY.pending}', base .. '${KEY.wake}'
  local structures = {{active, 'zset'}, {schedule, 'zset'}, {pending, 'list'}, {wake, 'zset'}, {base .. '${KEY.events}', 'stream'}}
  local rows, e, _, freeing, hist = emq_held(base, cluster, n, id, token, structures, '${META.retried}', 'active')
  if e then return nil, e end
  -- the jobs ready now (delay 0) go on their priority's list
  local now_ids, now_rows, missing = {}, {}, {}
  for j = 1, n do
    if delay_ms[j] == 0 then
      now_ids[#now_ids + 1] = id[j]
      now_rows[#now_rows + 1] = rows[j]
    end
  end
  local plan, e = emq_ready_plan(base, now_ids, now_rows, missing) if e then return nil, e end
  e = emq_probe(cluster, missing) if e then return nil, e end
  return function()
    local now = emq_now()
    local was_empty = not emq_ready_any(base)
    local earliest, ready = nil, #now_ids > 0
    emq_each('ZREM', active, id)
    emq_lower(freeing)
    emq_ready_push(plan, 'LPUSH')
    for j = 1, n do
      local due = now + delay_ms[j]
      if delay_ms[j] == 0 then
        redis.call('HSET', rows[j], '${ROW.state}', '${STATE.pending}', '${ROW.due_ms}', emq_int(due), '${ROW.delay_ms}', emq_int(delay_ms[j]), '${ROW.reason}', reason[j])
      else
        if not earliest or due < earliest then earliest = due end
        redis.call('ZADD', schedule, emq_int(due), id[j])
        redis.call('HSET', rows[j], '${ROW.state}', '${STATE.scheduled}', '${ROW.due_ms}', emq_int(due), '${ROW.delay_ms}', emq_int(delay_ms[j]), '${ROW.reason}', reason[j])
      end
      emq_failure(rows[j], failure[j])
    end
    redis.call('HINCRBY', KEYS[1], '${META.retried}', n)
    emq_history_add(hist, n)
    if earliest then redis.call('ZADD', wake, 'LT', emq_int(earliest), '${WAKE.due}') end
    if ready and was_empty then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
    emq_freed(freeing)
    for j = 1, n do
      ${luaEvent("retried", { jobs: "id[j]", reason: "reason[j]", until: "now + delay_ms[j]" })}
    end
    return n
  end
end
`;

/** The Lua twin of `EMQ.RETRY`. */
export const RETRY_LUA: string = luaScript(
  "RETRY",
  `
local write, e = emq_retry_part(base, cluster, n, id, token, delay_ms, reason, failure) if e then return e end
return write()
`,
  LEASES_LUA + FAILURE_LUA + RETRY_PART_LUA,
);
