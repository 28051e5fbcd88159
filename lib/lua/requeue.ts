/**
 * `EMQ.REQUEUE` as Lua, steps 5–6: dead jobs go back to the head of pending with a fresh attempt
 * budget (with keep_attempts 1: their attempts kept) — the ids given (each must be dead), or without ids up to limit, oldest first; one `requeued` event. Reply: how
 * many moved.
 *
 * @module
 */
import { ROW, STATE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { luaToHead } from "./run.ts";

/** The Lua twin of `EMQ.REQUEUE`. */
export const REQUEUE_LUA: string = luaScript(
  "REQUEUE",
  luaToHead({
    from: "dead",
    pick: `local ids = id
if n == 0 then ids = redis.call('ZRANGE', dead, 0, limit - 1) end`,
    ids: "ids",
    stray: "n > 0 and emq_members(dead, ids, false) or {}",
    refusal: "not-dead",
    before: "if #ids == 0 then return 0 end",
    write: `for j = 1, #ids do
  if exists[j] then
    if keep_attempts == 1 then
      redis.call('HSET', rows[j], '${ROW.state}', '${STATE.pending}')
    else
      redis.call('HSET', rows[j], '${ROW.state}', '${STATE.pending}', '${ROW.attempts}', '0')
    end
    -- the token too: no claim time until the next claim (BullMQ's reprocessJob deletes processedOn)
    redis.call('HDEL', rows[j], '${ROW.reason}', '${ROW.buried_ms}', '${ROW.cancelled_ms}', '${ROW.token}')
  end
end`,
    event: luaEvent("requeued", { jobs: "emq_list(ids)" }),
    reply: "#ids",
  }),
);
