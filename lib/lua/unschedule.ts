/**
 * `EMQ.UNSCHEDULE` as Lua, steps 5–6: the scheduler's hash and its member of `schedulers` are
 * deleted; jobs it admitted stay. Reply: 1 when it removed the scheduler, 0 when there was none.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";

/** The Lua twin of `EMQ.UNSCHEDULE`. */
export const UNSCHEDULE_LUA: string = luaScript(
  "UNSCHEDULE",
  `
local sched, index = base .. 'scheduler:' .. name, base .. 'schedulers'
local _, e = emq_type(KEYS[1], 'hash') if e then return e end
local st, e = emq_type(sched, 'hash') if e then return e end
local it, e = emq_type(index, 'zset') if e then return e end
local missing = {}
if st == 'none' then missing[#missing + 1] = sched end
if it == 'none' then missing[#missing + 1] = index end
e = emq_local(cluster, missing) if e then return e end
local existed = redis.call('DEL', sched)
redis.call('ZREM', index, name)
return existed
`,
);
