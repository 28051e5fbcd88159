/**
 * `EMQ.PROMOTE` as Lua, steps 5–6: up to limit due ids move from schedule to the head of pending.
 * Reply: the count moved.
 *
 * @module
 */
import { moveDueScript } from "./move_due.ts";

/** The Lua twin of `EMQ.PROMOTE`. */
export const PROMOTE_LUA: string = moveDueScript("PROMOTE", "schedule", "LPUSH");
