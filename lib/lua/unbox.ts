/**
 * `EMQ.UNBOX` as Lua, steps 5–6: a relay acknowledges entries it applied; each entry whose score is
 * still its token leaves the outbox, an entry held under another token refuses the call, an entry
 * already gone counts 0. Reply: the entries removed. The twin of `native/src/verbs/unbox.rs`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { KEY } from "./keys.ts";

/** The Lua twin of `EMQ.UNBOX`. */
export const UNBOX_LUA: string = luaScript(
  "UNBOX",
  `
local outbox = base .. '${KEY.outbox}'
local s, e = emq_types({{outbox, 'zset'}}) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
local going = {}
if s.kinds[outbox] == 'zset' then
  for j = 1, n do
    local score = redis.call('ZSCORE', outbox, entry[j])
    if score then
      if tonumber(score) ~= deadline[j] then return emq_refuse['outbox-lost']({}) end
      going[#going + 1] = entry[j]
    end
  end
end
local removed = 0
for _, x in ipairs(going) do removed = removed + redis.call('ZREM', outbox, x) end
return removed
`,
);
