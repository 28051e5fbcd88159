/**
 * `EMQ.ACK 2 <row> <active> <id>` as Lua: the id leaves active and its row is deleted. Reply `1`.
 *
 * @module
 */
import { luaScript } from "./_lua.ts";

/** The Lua twin of `EMQ.ACK` (keys: row, active; args: id). */
export const ACK_LUA: string = luaScript(
  "EMQ.ACK",
  `
local e = emq_shape(2, 1) if e then return e end
local _, e = emq_layout({'job:' .. ARGV[1], 'active'}) if e then return e end
e = emq_fence() if e then return e end
e = emq_id(ARGV[1]) if e then return e end
e = emq_type(KEYS[1], 'hash') or emq_type(KEYS[2], 'zset') if e then return e end
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) or redis.call('EXISTS', KEYS[1]) == 0 then
  return emq_err('job is not active')
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('DEL', KEYS[1])
return 1
`,
);
