/**
 * `EMQ.LOG` as Lua, steps 5–6: each held job's log gets its line (token-checked like a settle: a
 * worker that lost the job logs nothing), among the row's newest {@link LOG_LINES_KEPT}. No event.
 * Reply: the count.
 *
 * @module
 */
import { LOG_LINES_KEPT, ROW } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { KEY } from "./keys.ts";
import { LEASES_LUA } from "./leases.ts";
import { RING_LUA } from "./ring.ts";

/** The Lua twin of `EMQ.LOG`. */
export const LOG_LUA: string = luaScript(
  "LOG",
  `
local structures = {{base .. '${KEY.active}', 'zset'}}
local rows, e = emq_held(base, cluster, n, id, token, structures) if e then return e end
for j = 1, n do emq_ring(rows[j], '${ROW.logs}', '${ROW.log}', ${LOG_LINES_KEPT}, line[j]) end
return n
`,
  LEASES_LUA + RING_LUA,
);
