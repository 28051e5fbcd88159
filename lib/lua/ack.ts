/**
 * `EMQ.ACK` as Lua, steps 5–6: the id leaves active and its row is deleted. Reply `1`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.ACK`. */
export const ACK_LUA: string = luaScript(
  "ACK",
  `
e = emq_type(row, 'hash') or emq_type(active, 'zset') if e then return e end
if not redis.call('ZSCORE', active, id) or redis.call('EXISTS', row) == 0 then
  return emq_refuse['not-active']({})
end
redis.call('ZREM', active, id)
redis.call('DEL', row)
return 1
`,
);
