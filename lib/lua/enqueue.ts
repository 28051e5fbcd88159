/**
 * `EMQ.ENQUEUE` as Lua, steps 5–6: new rows in state `pending`, their ids pushed at the head of
 * pending in argument order; a `ready` marker on wake when pending was empty. Reply: the count.
 * Its writes (`emq_pushed`, `admit.ts`) are also TICK's.
 *
 * @module
 */
import { ROW } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { ADMIT_LUA } from "./admit.ts";

/** The Lua twin of `EMQ.ENQUEUE`. */
export const ENQUEUE_LUA: string = luaScript(
  "ENQUEUE",
  `
local a, e = emq_admit(base, n, id, base .. 'pending', 'list') if e then return e end
e = emq_local(cluster, a.missing) if e then return e end
emq_pushed(a, base, n, id, emq_int(emq_now()), function(j) return {'${ROW.payload}', payload[j]} end)
return n
`,
  ADMIT_LUA,
);
