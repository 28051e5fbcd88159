/**
 * `EMQ.ENQUEUE` as Lua, steps 5–6: new rows in state `pending`, their ids pushed at the head of
 * pending in argument order; a `ready` marker on wake when pending was empty. Reply: the count.
 *
 * @module
 */
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { ADMIT_LUA } from "./admit.ts";

/** The Lua twin of `EMQ.ENQUEUE`. */
export const ENQUEUE_LUA: string = luaScript(
  "ENQUEUE",
  `
local pending = base .. 'pending'
local a, e = emq_admit(base, n, id, pending, 'list') if e then return e end
e = emq_local(cluster, a.missing) if e then return e end
local now = emq_int(emq_now())
emq_admitted(a, n, now)
for j = 1, n do
  redis.call('HSET', a.rows[j], '${ROW.state}', '${STATE.pending}', '${ROW.payload}', payload[j], '${ROW.attempts}', '0', '${ROW.created_ms}', now)
end
emq_each('LPUSH', pending, id)
if a.structure == 'none' then redis.call('ZADD', base .. 'wake', 0, '${WAKE.ready}') end
return n
`,
  ADMIT_LUA,
);
