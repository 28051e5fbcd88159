/**
 * `EMQ.OUTBOX` as Lua, steps 5–6: a relay leases up to count free entries of the queue's outbox
 * (score ≤ now), oldest first, until now + lease_ms, the entries' token. Reply: `[token, entry]…`.
 * The twin of `native/src/verbs/outbox.rs`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { KEY } from "./keys.ts";

/** The Lua twin of `EMQ.OUTBOX`. */
export const OUTBOX_LUA: string = luaScript(
  "OUTBOX",
  `
local outbox = base .. '${KEY.outbox}'
local s, e = emq_types({{outbox, 'zset'}}) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
local now = emq_now()
local token = now + lease_ms
local r = {}
if s.kinds[outbox] == 'none' then return r end
for _, x in ipairs(redis.call('ZRANGEBYSCORE', outbox, '-inf', now, 'LIMIT', 0, count)) do
  redis.call('ZADD', outbox, emq_int(token), x)
  r[#r + 1] = token
  r[#r + 1] = x
end
return r
`,
);
