/**
 * `EMQ.ADOPT` as Lua, steps 5–6: an open parent still waiting adopts more children at places from,
 * from + 1, … (`from` must be its count of children so far), each made as FLOW makes its children
 * (docs/design/flows.md, "Open fan-in"); an `enqueued` event names the children made here. Reply: the children made here. The twin of
 * `native/src/verbs/adopt.rs`.
 *
 * @module
 */
import { MAX_FAN_IN, ROW, STATE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { FLOWS_LUA } from "./flows.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.ADOPT`. */
export const ADOPT_LUA: string = luaScript(
  "ADOPT",
  `
local all = {parent}
for j = 1, n do all[j + 1] = id[j] end
local e = emq_repeated(n + 1, all) if e then return e end
e = emq_flow_forms(n, policy, body) if e then return e end
local row = base .. '${KEY_PREFIX.job}' .. parent
local t, e = emq_type(row, 'hash') if e then return e end
if t ~= 'hash' or redis.call('HGET', row, '${ROW.state}') ~= '${STATE.waiting}' or not redis.call('HGET', row, '${ROW.open}') then
  return emq_refuse['not-open']({})
end
local count = emq_flow_number(redis.call('HGET', row, '${ROW.children}'))
if count ~= from then return emq_refuse['flow-place']({found = emq_int(count)}) end
if from + n > ${MAX_FAN_IN} then return emq_refuse['fan-in']({max = '${MAX_FAN_IN}'}) end
local missing = {}
local here, rows, e = emq_flow_here(base, n, id, queue, policy, missing) if e then return e end
local s, e = emq_types({{base .. '${KEY.waiting}', 'zset'}, {base .. '${KEY.pending}', 'list'}, {base .. '${KEY.wake}', 'zset'}, {base .. '${KEY.outbox}', 'zset'}})
if e then return e end
for _, k in ipairs(s.missing) do missing[#missing + 1] = k end
local plan, laning, e = emq_flow_plan(base, here, id, opts, nil, missing) if e then return e end
e = emq_events_open(base, missing) if e then return e end
e = emq_probe(cluster, missing) if e then return e end
if laning then emq_flow_laned(base, plan) end

redis.call('HSET', row, '${ROW.children}', emq_int(count + n))
local made = emq_flow_write(base, row, parent, from, n, id, queue, policy, opts, body, here, rows, plan, 0)
${luaEvent("enqueued", { jobs: "emq_flow_made(id, here)" })}
return made
`,
  FLOWS_LUA,
);
