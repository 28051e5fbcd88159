/**
 * `EMQ.RELEASE` as Lua, steps 5–6: a hand-back, not a failure — each held job goes active → the
 * tail of pending (claimed next) and its row's `attempts` gives back the attempt its claim counted;
 * `ready` on wake when pending was empty; one `released` event. Reply: the count.
 *
 * The steps are one function, `emq_release_part` ({@link RELEASE_PART_LUA}): step 5, then step 6
 * as a closure (RELEASE runs it at once, SETTLE after every part's checks). Whether pending was
 * empty is read by the closure, before its first write.
 *
 * @module
 */
import { ROW, STATE, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";
import { LEASES_LUA } from "./leases.ts";

/**
 * `emq_release_part(base, cluster, n, id, token)`: RELEASE's step 5 on n jobs; a function doing
 * its step 6 (returning the count), or nil and the refusal. After {@link LEASES_LUA}.
 */
export const RELEASE_PART_LUA: string = `
local function emq_release_part(base, cluster, n, id, token)
  local active, pending, wake = base .. '${KEY.active}', base .. '${KEY.pending}', base .. '${KEY.wake}'
  local rows, e, _, freeing = emq_held(base, cluster, n, id, token, {{active, 'zset'}, {pending, 'list'}, {wake, 'zset'}, {base .. '${KEY.events}', 'stream'}}, nil, 'active')
  if e then return nil, e end
  for j = 1, n do
    e = emq_counter(rows[j], '${ROW.attempts}') if e then return nil, e end
  end
  local missing = {}
  local plan, e = emq_ready_plan(base, id, rows, missing) if e then return nil, e end
  e = emq_probe(cluster, missing) if e then return nil, e end
  return function()
    local was_empty = not emq_ready_any(base)
    emq_each('ZREM', active, id)
    emq_lower(freeing)
    emq_ready_push(plan, 'RPUSH')
    for j = 1, n do
      -- HINCRBY: exact for every counter emq_counter admits (a Lua number is not)
      redis.call('HINCRBY', rows[j], '${ROW.attempts}', -1)
      redis.call('HSET', rows[j], '${ROW.state}', '${STATE.pending}')
    end
    if was_empty then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
    emq_freed(freeing)
    ${luaEvent("released", { jobs: "emq_list(id)" })}
    return n
  end
end
`;

/** The Lua twin of `EMQ.RELEASE`. */
export const RELEASE_LUA: string = luaScript(
  "RELEASE",
  `
local write, e = emq_release_part(base, cluster, n, id, token) if e then return e end
return write()
`,
  LEASES_LUA + RELEASE_PART_LUA,
);
