/**
 * `EMQ.REAP 3 <active> <pending> <base> <limit>` as Lua: up to limit ids whose lease expired
 * (score ≤ now, ascending) go back to the tail of pending, to be claimed next. Reply: the count.
 *
 * @module
 */
import { luaScript } from "./_lua.ts";

/** The Lua twin of `EMQ.REAP` (keys: active, pending, base; args: limit). */
export const REAP_LUA: string = luaScript(
  "EMQ.REAP",
  "return emq_move_due('active', 'RPUSH')",
);
