/**
 * `EMQ.PROGRESS` as Lua, steps 5–6: each held job's progress is set (token-checked like a
 * settle); one `progress` event per job. Reply: the count.
 *
 * @module
 */
import { ROW } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";
import { LEASES_LUA } from "./leases.ts";

/** The Lua twin of `EMQ.PROGRESS`. */
export const PROGRESS_LUA: string = luaScript(
  "PROGRESS",
  `
local structures = {{base .. '${KEY.active}', 'zset'}, {base .. '${KEY.events}', 'stream'}}
local rows, e = emq_held(base, cluster, n, id, token, structures) if e then return e end
for j = 1, n do redis.call('HSET', rows[j], '${ROW.progress}', value[j]) end
for j = 1, n do
  ${luaEvent("progress", { jobs: "id[j]", progress: "value[j]" })}
end
return n
`,
  LEASES_LUA,
);
