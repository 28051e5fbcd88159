/**
 * `EMQ.SCHEDULER` as Lua, steps 5–6: upserts a scheduler. New: made, first run at next_ms. Same
 * spec: only max_missed, opts and payload change (the next run in force stays). Another spec: its
 * next run is next_ms. The options of its jobs (`opts`, gated as ENQUEUE's) are stored as sent, or
 * deleted when empty. Reply: the next run in force.
 *
 * @module
 */
import { META, SCHED, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The Lua twin of `EMQ.SCHEDULER`. */
export const SCHEDULER_LUA: string = luaScript(
  "SCHEDULER",
  `
local sched, index = base .. '${KEY_PREFIX.scheduler}' .. name, base .. '${KEY.schedulers}'
local s, e = emq_types({{sched, 'hash'}, {index, 'zset'}}) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
local now = emq_int(emq_now())
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', now) end
local stored = redis.call('HGET', sched, '${SCHED.spec}')
-- the options of its jobs change in place, as its payload does (empty: none)
if opts ~= '' then
  redis.call('HSET', sched, '${SCHED.opts}', opts)
else
  redis.call('HDEL', sched, '${SCHED.opts}')
end
if stored == spec then
  redis.call('HSET', sched, '${SCHED.max_missed}', emq_int(max_missed), '${SCHED.payload}', payload)
  return tonumber(redis.call('HGET', sched, '${SCHED.next_ms}')) or 0
end
redis.call('HSET', sched, '${SCHED.spec}', spec, '${SCHED.next_ms}', emq_int(next_ms), '${SCHED.max_missed}', emq_int(max_missed), '${SCHED.payload}', payload)
if not stored then redis.call('HSET', sched, '${SCHED.runs}', '0', '${SCHED.created_ms}', now) end
redis.call('ZADD', index, emq_int(next_ms), name)
return next_ms
`,
);
