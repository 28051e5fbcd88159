/**
 * `EMQ.REAP` as Lua, steps 5–6: up to limit ids whose lease expired move from active to the tail
 * of pending (claimed next). Reply: the count moved.
 *
 * @module
 */
import { moveDueScript } from "./move_due.ts";

/** The Lua twin of `EMQ.REAP`. */
export const REAP_LUA: string = moveDueScript("REAP", "active", "RPUSH");
