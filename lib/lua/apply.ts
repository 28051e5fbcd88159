/**
 * `EMQ.APPLY` as Lua, steps 5–6: a relay applies entries of other queues' outboxes in this queue,
 * in order and idempotently (`child`: made unless its row exists; `done`: recorded on its parent
 * unless recorded; `cancel`: a child not started cancelled, a tombstone when not made yet). Reply: the entries that changed something. The twin of
 * `native/src/verbs/apply.rs`.
 *
 * @module
 */
import { META } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { FLOWS_LUA } from "./flows.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/**
 * APPLY's steps 5–6 as Lua (`creations`: `child` and `node` entries taken; TELL's: refused,
 * `entry-form`), the body of verb `verb`.
 */
export function applyLua(verb: "APPLY" | "TELL", creations: boolean): string {
  return luaScript(
    verb,
    `
local s, e = emq_types({{base .. '${KEY.pending}', 'list'}, {base .. '${KEY.wake}', 'zset'}, {base .. '${KEY.waiting}', 'zset'}, {base .. '${KEY.dead}', 'zset'}, {base .. '${KEY.events}', 'stream'}})
if e then return e end
local own = string.sub(base, 6, -3)
local parsed = {}
for j = 1, n do
  parsed[j] = emq_flow_parse(entry[j], own)
  if not parsed[j] then return emq_refuse['entry-form']({}) end
  ${creations ? "" : "if parsed[j].kind == 'child' or parsed[j].kind == 'node' then return emq_refuse['entry-form']({}) end"}
end
e = emq_counter(KEYS[1], '${META.enqueued}') if e then return e end
e = emq_counter(KEYS[1], '${META.buried}') if e then return e end
local missing = s.missing
for j = 1, n do
  local p = parsed[j]
  local row = base .. '${KEY_PREFIX.job}' .. (p.kind == 'done' and p.parent or p.id)
  local t, e = emq_type(row, 'hash') if e then return e end
  if t == 'none' then missing[#missing + 1] = row end
end
e = emq_probe(cluster, missing) if e then return e end
local applied = 0
for j = 1, n do
  local p, done = parsed[j], false
  if p.kind == 'child' then
    done = redis.call('EXISTS', base .. '${KEY_PREFIX.job}' .. p.id) == 0 and emq_flow_child(base, p.id, p.parent, p.opts, p.body)
  elseif p.kind == 'node' then
    done = redis.call('EXISTS', base .. '${KEY_PREFIX.job}' .. p.id) == 0 and emq_flow_node(base, p.id, p.parent, p.opts, p.payload, p.kids)
  elseif p.kind == 'cancel' then
    done = emq_flow_cancel(base, p.id, p.parent, true)
  else
    done = emq_flow_record(base, p.parent, p.index, p.child, p.state, p.detail)
  end
  if done then applied = applied + 1 end
end
return applied
`,
    FLOWS_LUA,
  );
}

/** The Lua twin of `EMQ.APPLY`. */
export const APPLY_LUA: string = applyLua("APPLY", true);
