/**
 * `EMQ.TELL` as Lua: APPLY of `done` and `cancel` entries only (an entry of another kind refuses
 * the call, `entry-form`), flagged `allow-oom` (the spec's `admits: false`): a child's outcome
 * reaching its parent is never refused under maxmemory. The twin of `native/src/verbs/tell.rs`.
 *
 * @module
 */
import { applyLua } from "./apply.ts";

/** The Lua twin of `EMQ.TELL`. */
export const TELL_LUA: string = applyLua("TELL", false);
