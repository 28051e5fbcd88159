/**
 * `EMQ.FLOW` as Lua, steps 5–6: a parent waiting for its children (state `waiting`, in `waiting`,
 * its fan-in state on its row, `open` while more may come); each child in this queue made at once
 * (pending, naming its parent), each child in another queue a `child` entry of this queue's outbox
 * (docs/design/flows.md); a `waiting` event names the parent, then an `enqueued` event the
 * children made here. Reply: the children made here. The
 * twin of `native/src/verbs/flow.rs`.
 *
 * @module
 */
import { META, ROW, STATE, WAITING_FOREVER, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { FLOWS_LUA } from "./flows.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.FLOW`. */
export const FLOW_LUA: string = luaScript(
  "FLOW",
  `
local all = {parent}
for j = 1, n do all[j + 1] = id[j] end
local e = emq_repeated(n + 1, all) if e then return e end
e = emq_flow_forms(n, policy, body) if e then return e end
local row = base .. '${KEY_PREFIX.job}' .. parent
local found, e = emq_read('EXISTS', row) if e then return e end
if found == 1 then return emq_refuse['duplicate']({id = parent}) end
local missing = {row}
local here, rows, e = emq_flow_here(base, n, id, queue, policy, missing) if e then return e end
local waiting = base .. '${KEY.waiting}'
local s, e = emq_types({{waiting, 'zset'}, {base .. '${KEY.pending}', 'list'}, {base .. '${KEY.wake}', 'zset'}, {base .. '${KEY.outbox}', 'zset'}})
if e then return e end
for _, k in ipairs(s.missing) do missing[#missing + 1] = k end
local plan, laning, e = emq_flow_plan(base, here, id, opts, (emq_flow_place(parent_opts)), missing) if e then return e end
e = emq_events_open(base, missing) if e then return e end
e = emq_probe(cluster, missing) if e then return e end

local at = emq_int(emq_now())
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', at) end
if laning then emq_flow_laned(base, plan) end
redis.call('HSET', row, '${ROW.state}', '${STATE.waiting}', '${ROW.payload}', payload, '${ROW.attempts}', '0',
  '${ROW.created_ms}', at, '${ROW.children}', emq_int(n), '${ROW.finished}', '0')
if open == 1 then redis.call('HSET', row, '${ROW.open}', '1') end
emq_flow_row_opts(row, parent_opts)
-- scored by its flow deadline (none: after every time)
redis.call('ZADD', waiting, within_ms > 0 and emq_int(emq_now() + within_ms) or '${WAITING_FOREVER}', parent)
local made = emq_flow_write(base, row, parent, 0, n, id, queue, policy, opts, body, here, rows, plan, 1)
-- the parent first, then its children (BullMQ's order: a flow's parent is added first)
${luaEvent("waiting", { jobs: "parent" })}
${luaEvent("enqueued", { jobs: "emq_flow_made(id, here)" })}
return made
`,
  FLOWS_LUA,
);
