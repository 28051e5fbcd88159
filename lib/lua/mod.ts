/**
 * The Lua twin of the wire verbs: one script per verb, with the same keys, arguments, checks,
 * replies and error texts as the native module (docs/WIRE.md). Steps 1–4 of every script are
 * generated from the wire spec (`lib/wire`); each verb's file holds its steps 5–6 only. The Lua
 * ships as string constants, so nothing is read from disk at run time.
 *
 * @module
 */
export { luaHead, luaScript, PRELUDE } from "./_prelude.ts";
export { type Library, luaLibrary } from "./library.ts";
export { SCRIPTS } from "./scripts.ts";
