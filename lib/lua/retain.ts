/**
 * `EMQ.RETAIN` as Lua, steps 5–6: the queue's retention of dead jobs, of completed jobs and of
 * events in its `meta` (made if missing), applied at once: the oldest dead and completed jobs past
 * it are deleted, at most a thousand of each per call (`retention.ts`), and the events stream is
 * trimmed to `events_max` exactly (0: deleted); `history_minutes` 0 deletes the history (`metrics`).
 * Reply: how many jobs were deleted.
 *
 * @module
 */
import { META, WIRE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { KEY } from "./keys.ts";
import { RETENTION_LUA } from "./retention.ts";

/** The Lua twin of `EMQ.RETAIN`. */
export const RETAIN_LUA: string = luaScript(
  "RETAIN",
  `
local events, metrics = base .. '${KEY.events}', base .. '${KEY.metrics}'
local s, e = emq_types({{base .. '${KEY.dead}', 'zset'}, {base .. '${KEY.completed}', 'zset'}, {events, 'stream'}, {metrics, 'hash'}}) if e then return e end
local now = emq_now()
local dead, e = emq_retention_pick(base, '${KEY.dead}', now, 0, dead_max, dead_age_ms) if e then return e end
local done, e = emq_retention_pick(base, '${KEY.completed}', now, 0, completed_max, completed_age_ms) if e then return e end
e = emq_probe(cluster, s.missing) if e then return e end
if s.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', emq_int(now)) end
redis.call('HSET', KEYS[1], '${META.dead_max}', emq_int(dead_max), '${META.dead_age_ms}', emq_int(dead_age_ms),
  '${META.completed_max}', emq_int(completed_max), '${META.completed_age_ms}', emq_int(completed_age_ms),
  '${META.events_max}', emq_int(events_max), '${META.history_minutes}', emq_int(history_minutes))
emq_retention_apply(base, '${KEY.dead}', dead)
emq_retention_apply(base, '${KEY.completed}', done)
if events_max == 0 then
  redis.call('DEL', events)
elseif s.kinds[events] == 'stream' then
  redis.call('XTRIM', events, 'MAXLEN', emq_int(events_max))
end
if history_minutes == 0 and s.kinds[metrics] == 'hash' then redis.call('DEL', metrics) end
return #dead.ids + #done.ids
`,
  RETENTION_LUA,
);
