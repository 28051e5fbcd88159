/**
 * `EMQ.RUN` as Lua, steps 5–6 (the twin of `native/src/verbs/run.rs`): scheduled jobs run now —
 * each id (each must be in schedule) moves to the head of pending, its row `pending` and due now,
 * as a promotion puts a due job; a `ready` marker on wake when pending was empty; one `promoted` event. Reply: how many
 * moved.
 *
 * @module
 */
import type { QueueType } from "../keyspace/mod.ts";
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";

/**
 * Steps 5–6 of a verb that moves jobs from the sorted set `from` to the head of pending (RUN: from
 * schedule; REQUEUE: from dead), as Lua: the ids given (none twice), or those `pick` sets `ids`
 * to; their rows and plan; the ids of `stray` refused with `refusal`; then, after `before`, the ids
 * leave `from` for the head of pending, `write` updates their rows, a `ready` marker goes on wake
 * when pending was empty, and `event` is written. Reply: `reply`.
 */
export function luaToHead(o: {
  from: Extract<QueueType, "schedule" | "dead">;
  pick?: string;
  ids: string;
  stray: string;
  refusal: string;
  before: string;
  write: string;
  event: string;
  reply: string;
}): string {
  return `
local e = emq_repeated(n, id) if e then return e end
local ${o.from}, pending, wake = base .. '${o.from}', base .. '${KEY.pending}', base .. '${KEY.wake}'
local s, e = emq_types({{${o.from}, 'zset'}, {pending, 'list'}, {wake, 'zset'}, {base .. '${KEY.events}', 'stream'}}) if e then return e end
local missing = s.missing${o.pick ? `\n${o.pick}` : ""}
local r, e = emq_rows(base, ${o.ids}, missing) if e then return e end
local rows, exists = r.rows, r.exists
local stray = ${o.stray}
local plan, e = emq_plan_rows(base, ${o.ids}, r, missing) if e then return e end
e = emq_probe(cluster, missing) if e then return e end
if #stray > 0 then return emq_refuse['${o.refusal}']({ids = table.concat(stray, ' ')}) end
${o.before}
local was_empty = not emq_ready_any(base)
emq_each('ZREM', ${o.from}, ${o.ids})
emq_ready_push(plan, 'LPUSH')
${o.write}
if was_empty then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
${o.event}
return ${o.reply}
`;
}

/** The Lua twin of `EMQ.RUN`. */
export const RUN_LUA: string = luaScript(
  "RUN",
  luaToHead({
    from: "schedule",
    ids: "id",
    stray: "emq_members(schedule, id, false)",
    refusal: "not-scheduled",
    before: "local now = emq_int(emq_now())",
    write: `for j = 1, n do
  if exists[j] then redis.call('HSET', rows[j], '${ROW.state}', '${STATE.pending}', '${ROW.due_ms}', now) end
end`,
    event: luaEvent("promoted", { jobs: "emq_list(id)" }),
    reply: "n",
  }),
);
