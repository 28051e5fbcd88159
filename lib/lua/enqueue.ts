/**
 * `EMQ.ENQUEUE` as Lua, steps 5–6: new rows in state `pending`, their ids pushed at the head of
 * pending in argument order; a `ready` marker on wake when pending was empty. A job whose `dedup`
 * key is held is not admitted (`admit.ts`). Events: `enqueued`, then `deduplicated`. Reply: the
 * count, or `{admitted, place, holder, outcome…}` when a job carried a key. Its writes
 * (`emq_pushed`) are also TICK's.
 *
 * @module
 */
import { luaScript } from "./_prelude.ts";
import { ADMIT_LUA } from "./admit.ts";
import { luaEvent } from "./events.ts";
import { KEY } from "./keys.ts";

/** The Lua twin of `EMQ.ENQUEUE`. */
export const ENQUEUE_LUA: string = luaScript(
  "ENQUEUE",
  `
local a, e = emq_admit(base, n, id, base .. '${KEY.pending}', 'list', opts) if e then return e end
e = emq_probe(cluster, a.missing) if e then return e end
local now = emq_int(a.now)
emq_admitted(a, id, now, payload, nil, nil)
emq_pushed(a, base, id, now, function(j) return emq_fields(a, j, payload, opts) end)
local admitted, folded, into = emq_admit_lists(a, id)
${luaEvent("enqueued", { jobs: "admitted" })}
${luaEvent("deduplicated", { jobs: "folded", into: "into" })}
return emq_admit_reply(a)
`,
  ADMIT_LUA,
);
