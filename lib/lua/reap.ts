/**
 * `EMQ.REAP` as Lua: up to limit ids whose lease expired move from active to the tail of pending
 * (claimed next). Reply: the count moved.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { MOVE_DUE_LUA } from "./move_due.ts";

/** The Lua twin of `EMQ.REAP`. */
export const REAP_LUA: string = luaScript(
  "REAP",
  "return emq_move_due(active, pending, base, limit, 'RPUSH')",
  MOVE_DUE_LUA,
);
