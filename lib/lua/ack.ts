/**
 * `EMQ.ACK` as Lua, steps 5–6: the ids leave active. When the queue keeps completed jobs
 * (`meta`'s `completed_max`, absent: {@link COMPLETED_MAX_DEFAULT}; 0: none) each row stays, state
 * `completed`, with its finish time and the result (when not empty), its id in `completed`, and
 * the completed set is trimmed to the queue's retention (`retention.ts`); else the rows are
 * deleted (a flow child's becomes a tombstone: a second delivery of its creation makes nothing). Their deduplication keys are let go; one `completed` event. Reply: the count.
 *
 * The steps are one function, `emq_ack_part` ({@link ACK_PART_LUA}), which runs step 5 and hands
 * back step 6 as a closure: ACK's script runs it at once, SETTLE (`settle.ts`) after every part's
 * checks.
 *
 * @module
 */
import { COMPLETED_MAX_DEFAULT, EVENT_RESULT_MAX_BYTES, META, ROW, STATE, TOKENS_PER_MS, type Verb } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";
import { FLOWS_LUA } from "./flows.ts";
import { LEASES_LUA } from "./leases.ts";
import { RETENTION_LUA } from "./retention.ts";

/**
 * `emq_ack_part(base, cluster, n, id, token, result)`: ACK's step 5 on n jobs (none twice); a
 * function doing its step 6 (returning the count), or nil and the refusal. After
 * {@link LEASES_LUA} and {@link RETENTION_LUA}.
 */
export const ACK_PART_LUA: string = `
-- The completed entry's results: each result as <length>:<bytes>, in the order of the ids (-1: one
-- longer than ${EVENT_RESULT_MAX_BYTES} bytes, read from its row); '' when every result is empty.
local function emq_results(result)
  local out, any = {}, false
  for j, r in ipairs(result) do
    if r ~= '' then any = true end
    if #r > ${EVENT_RESULT_MAX_BYTES} then out[j] = '-1:' else out[j] = #r .. ':' .. r end
  end
  if not any then return '' end
  return table.concat(out)
end

-- A kept acked job's row: completed at \`at\` with its result (none when empty), its lease gone; the
-- token stays: the claim's time (token / ${TOKENS_PER_MS}) after the settle. (ACK's and SETTLE's
-- common case alike.)
local function emq_completed_row(row, at, result)
  if result == '' then
    redis.call('HSET', row, '${ROW.state}', '${STATE.completed}', '${ROW.finished_ms}', at)
  else
    redis.call('HSET', row, '${ROW.state}', '${STATE.completed}', '${ROW.finished_ms}', at, '${ROW.result}', result)
  end
  redis.call('HDEL', row, '${ROW.deadline_ms}')
end

local function emq_ack_part(base, cluster, n, id, token, result)
  local rows, e, going, freeing, hist = emq_held_for_good(base, cluster, n, id, token, '${KEY.completed}', '${META.acked}')
  if e then return nil, e end
  local now = emq_now()
  local keep = emq_kept('${KEY.completed}') > 0
  local victims
  if keep then
    victims, e = emq_retention_select(base, '${KEY.completed}', now, n) if e then return nil, e end
  end
  return function()
    emq_let_go(going, now)
    emq_each('ZREM', base .. '${KEY.active}', id)
    emq_flow_settled(base, n, id, rows, 'completed', result)
    if keep then
      emq_keep_in(base, '${KEY.completed}', now, n, id, victims, function(j, at) emq_completed_row(rows[j], at, result[j]) end)
    else
      -- a flow's child leaves a tombstone: a second delivery of its creation (its relay died
      -- between APPLY and UNBOX) must not make it again
      local parents = {}
      for j = 1, n do parents[j] = redis.call('HGET', rows[j], '${ROW.parent}') end
      emq_each('DEL', nil, rows)
      for j = 1, n do
        if parents[j] then emq_flow_tombstone(rows[j], parents[j]) end
      end
    end
    redis.call('HINCRBY', KEYS[1], '${META.acked}', n)
    emq_history_add(hist, n)
    emq_freed(freeing)
    ${luaEvent("completed", { jobs: "emq_list(id)", results: "emq_results(result)" })}
    return n
  end
end
`;

/**
 * The script of a settling verb whose steps are one part function (`ACK`: `call` is
 * `emq_ack_part(base, cluster, n, id, token, result)`, defined in `functions`): step 5, then at
 * once the step 6 it hands back.
 */
export function luaPartScript(verb: Verb, call: string, functions: string): string {
  return luaScript(
    verb,
    `
local write, e = ${call} if e then return e end
return write()
`,
    functions,
  );
}

/** The Lua twin of `EMQ.ACK`. */
export const ACK_LUA: string = luaPartScript(
  "ACK",
  "emq_ack_part(base, cluster, n, id, token, result)",
  LEASES_LUA + RETENTION_LUA + FLOWS_LUA + ACK_PART_LUA,
);
