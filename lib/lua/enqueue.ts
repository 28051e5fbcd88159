/**
 * `EMQ.ENQUEUE` as Lua, steps 5–6: a new row in state `pending`, its id pushed at the head of
 * pending. Reply `1`.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.ENQUEUE`. */
export const ENQUEUE_LUA: string = luaScript(
  "ENQUEUE",
  `
e = emq_type(row, 'hash') or emq_type(pending, 'list') if e then return e end
if redis.call('EXISTS', row) == 1 then return emq_refuse['duplicate']({}) end
redis.call('HSET', row, 'state', 'pending', 'payload', payload, 'attempts', '0', 'created_ms', emq_int(emq_now()))
redis.call('LPUSH', pending, id)
return 1
`,
);
