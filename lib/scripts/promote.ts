/**
 * `EMQ.PROMOTE 3 <schedule> <pending> <base> <limit>` as Lua: up to limit due ids (score ≤ now,
 * ascending) move from schedule to the head of pending. Reply: the count moved.
 *
 * @module
 */
import { luaScript } from "./_lua.ts";

/** The Lua twin of `EMQ.PROMOTE` (keys: schedule, pending, base; args: limit). */
export const PROMOTE_LUA: string = luaScript(
  "EMQ.PROMOTE",
  "return emq_move_due('schedule', 'LPUSH')",
);
