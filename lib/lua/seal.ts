/**
 * `EMQ.SEAL` as Lua, steps 5–6: an open parent is sealed (`open` deleted from its row); one still
 * waiting whose children have all finished moves to pending at once (docs/design/flows.md, "Open
 * fan-in"). Reply: 1 when it sealed, 0 when there was nothing to seal. The twin of
 * `native/src/verbs/seal.rs`.
 *
 * @module
 */
import { ROW } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { FLOWS_LUA } from "./flows.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.SEAL`. */
export const SEAL_LUA: string = luaScript(
  "SEAL",
  `
local row = base .. '${KEY_PREFIX.job}' .. parent
local t, e = emq_type(row, 'hash') if e then return e end
local missing = {}
if t == 'none' then missing[1] = row end
local s, e = emq_types({{base .. '${KEY.pending}', 'list'}, {base .. '${KEY.wake}', 'zset'}, {base .. '${KEY.waiting}', 'zset'}, {base .. '${KEY.events}', 'stream'}})
if e then return e end
for _, k in ipairs(s.missing) do missing[#missing + 1] = k end
e = emq_probe(cluster, missing) if e then return e end
if t ~= 'hash' or not redis.call('HGET', row, '${ROW.open}') then return 0 end
redis.call('HDEL', row, '${ROW.open}')
emq_flow_wake_when_done(base, row, parent)
return 1
`,
  FLOWS_LUA,
);
