/**
 * `EMQ.PROMOTE` as Lua: up to limit due ids move from schedule to the head of pending. Reply: the
 * count moved.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { MOVE_DUE_LUA } from "./move_due.ts";

/** The Lua twin of `EMQ.PROMOTE`. */
export const PROMOTE_LUA: string = luaScript(
  "PROMOTE",
  "return emq_move_due(schedule, pending, base, limit, 'LPUSH')",
  MOVE_DUE_LUA,
);
