/**
 * `EMQ.OUTBOX` as Lua, steps 5–6: a relay leases up to count free entries of the queue's outbox
 * (score ≤ now), oldest first, until now + lease_ms, the entries' token; first, up to count parents
 * whose flow deadline passed are buried (`emq_flow_expire`). Reply: `[token, entry]…`.
 * The twin of `native/src/verbs/outbox.rs`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { FLOWS_LUA } from "./flows.ts";
import { KEY } from "./keys.ts";

/** The Lua twin of `EMQ.OUTBOX`. */
export const OUTBOX_LUA: string = luaScript(
  "OUTBOX",
  `
local outbox, waiting = base .. '${KEY.outbox}', base .. '${KEY.waiting}'
-- (dead, pending, wake: what burying an expired parent and cancelling its children write, probed in a migration)
local s, e = emq_types({{outbox, 'zset'}, {waiting, 'zset'}, {base .. '${KEY.dead}', 'zset'}, {base .. '${KEY.pending}', 'list'}, {base .. '${KEY.wake}', 'zset'}, {base .. '${KEY.events}', 'stream'}})
if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
local now = emq_now()
if s.kinds[waiting] == 'zset' then
  for _, p in ipairs(redis.call('ZRANGEBYSCORE', waiting, '-inf', now, 'LIMIT', 0, count)) do emq_flow_expire(base, p) end
end
local token = now + lease_ms
local r = {}
-- (the expired parents' cancels may have made it)
if redis.call('EXISTS', outbox) == 0 then return r end
for _, x in ipairs(redis.call('ZRANGEBYSCORE', outbox, '-inf', now, 'LIMIT', 0, count)) do
  redis.call('ZADD', outbox, emq_int(token), x)
  r[#r + 1] = token
  r[#r + 1] = x
end
return r
`,
  FLOWS_LUA,
);
