/**
 * `EMQ.ENQUEUE 2 <row> <pending> <id> <payload>` as Lua: a new row in state `pending`, its id
 * pushed at the head of pending. Reply `1`.
 *
 * @module
 */
import { luaScript, MAX_PAYLOAD_BYTES } from "./_lua.ts";

/** The Lua twin of `EMQ.ENQUEUE` (keys: row, pending; args: id, payload). */
export const ENQUEUE_LUA: string = luaScript(
  "EMQ.ENQUEUE",
  `
local e = emq_shape(2, 2) if e then return e end
local _, e = emq_layout({'job:' .. ARGV[1], 'pending'}) if e then return e end
e = emq_fence() if e then return e end
e = emq_id(ARGV[1]) if e then return e end
e = emq_max(ARGV[2], 'payload', ${MAX_PAYLOAD_BYTES}) if e then return e end
e = emq_type(KEYS[1], 'hash') or emq_type(KEYS[2], 'list') if e then return e end
if redis.call('EXISTS', KEYS[1]) == 1 then return emq_err('duplicate id') end
local now = emq_now()
redis.call('HSET', KEYS[1], 'state', 'pending', 'payload', ARGV[2], 'attempts', '0', 'created_ms', emq_int(now))
redis.call('LPUSH', KEYS[2], ARGV[1])
return 1
`,
);
