/**
 * `EMQ.UNSCHEDULE` as Lua, steps 5–6: the scheduler's hash and its member of `schedulers` are
 * deleted; jobs it admitted stay. Reply: 1 when it removed the scheduler, 0 when there was none.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.UNSCHEDULE`. */
export const UNSCHEDULE_LUA: string = luaScript(
  "UNSCHEDULE",
  `
local sched, index = base .. '${KEY_PREFIX.scheduler}' .. name, base .. '${KEY.schedulers}'
local s, e = emq_types({{sched, 'hash'}, {index, 'zset'}}) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
local existed = redis.call('DEL', sched)
redis.call('ZREM', index, name)
return existed
`,
);
