/**
 * `EMQ.BURY` as Lua, steps 5–6: each job goes active → dead at now, its reason kept (and its
 * failure among the row's newest failures); then the dead
 * set is trimmed to the queue's retention; one `dead` event per job. Reply: the count.
 *
 * The steps are one function, `emq_bury_part` ({@link BURY_PART_LUA}): step 5, then step 6 as a
 * closure (BURY runs it at once, SETTLE after every part's checks).
 *
 * @module
 */
import { META, ROW, STATE } from "../wire/mod.ts";
import { luaPartScript } from "./ack.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";
import { FLOWS_LUA } from "./flows.ts";
import { FAILURE_LUA } from "./ring.ts";
import { LEASES_LUA } from "./leases.ts";
import { RETENTION_LUA } from "./retention.ts";

/**
 * `emq_bury_part(base, cluster, n, id, token, reason, failure)`: BURY's step 5 on n jobs; a
 * function doing its step 6 (returning the count), or nil and the refusal. After
 * {@link LEASES_LUA}, {@link RETENTION_LUA} and {@link FAILURE_LUA}.
 */
export const BURY_PART_LUA: string = `
local function emq_bury_part(base, cluster, n, id, token, reason, failure)
  local rows, e, going, freeing, hist = emq_held_for_good(base, cluster, n, id, token, '${KEY.dead}', '${META.buried}')
  if e then return nil, e end
  local now = emq_now()
  local victims, e = emq_retention_select(base, '${KEY.dead}', now, n) if e then return nil, e end
  return function()
    emq_let_go(going, now)
    emq_each('ZREM', base .. '${KEY.active}', id)
    redis.call('HINCRBY', KEYS[1], '${META.buried}', n)
    emq_history_add(hist, n)
    emq_keep_in(base, '${KEY.dead}', now, n, id, victims, function(j, at)
      redis.call('HSET', rows[j], '${ROW.state}', '${STATE.dead}', '${ROW.reason}', reason[j], '${ROW.buried_ms}', at)
      emq_failure(rows[j], failure[j])
    end)
    emq_flow_settled(base, n, id, rows, 'failed', reason)
    emq_freed(freeing)
    for j = 1, n do
      ${luaEvent("dead", { jobs: "id[j]", reason: "reason[j]" })}
    end
    return n
  end
end
`;

/** The Lua twin of `EMQ.BURY`. */
export const BURY_LUA: string = luaPartScript(
  "BURY",
  "emq_bury_part(base, cluster, n, id, token, reason, failure)",
  LEASES_LUA + RETENTION_LUA + FAILURE_LUA + FLOWS_LUA + BURY_PART_LUA,
);
