/**
 * `EMQ.SETTLE` as Lua, steps 5–6 (issue 19 §4): a worker's finished jobs settled and the slots
 * they free claimed again, in one call.
 *
 * Step 5: `meta` (a hash or missing), `active`, then each settlement's row in argument order (the
 * caller's ACL; a missing one remembered for the cluster probe; a row of another type is no
 * refusal: its settlement is not held). The statuses, on the state before any write: 2 when its id
 * was named by an earlier settlement of the call, else 1 when held (its row a hash, its id in
 * active, the row's `token` the call's), else 0. The held settlements of each op, in the order
 * ack, retry, bury, release, form one call of that verb (a part; none when it has no job): every
 * part's step 5 runs first (`emq_ack_part` … `emq_release_part`; the first refusal is SETTLE's,
 * nothing written), then every part's writes, in that order. Then, when want > 0, CLAIM's steps
 * 5–6 (`emq_claim_part`, block_ms 0) on the state the settles left; a refusal there claims and
 * writes nothing (next_ms 0) and the settles stand.
 *
 * Reply `[next_ms, [status…], job…]`, each job as CLAIM's.
 *
 * The common case — acks of held jobs of a plain queue, then a claim from pending — runs as
 * `emq_settle_lean` (`settle_lean.ts`) right after meta's read and active's type: the same writes
 * with far fewer checks around them. It gives any other call back before its first write, and
 * this path runs it from there.
 *
 * @module
 */
import { META, ROW } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { ACK_PART_LUA } from "./ack.ts";
import { BURY_PART_LUA } from "./bury.ts";
import { CLAIM_META, CLAIM_PART_LUA, luaFields } from "./claim.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";
import { FLOWS_LUA } from "./flows.ts";
import { FAILURE_LUA } from "./ring.ts";
import { LEASES_LUA } from "./leases.ts";
import { MOVE_DUE_LUA } from "./move_due.ts";
import { RELEASE_PART_LUA } from "./release.ts";
import { RETENTION_LUA } from "./retention.ts";
import { RETRY_PART_LUA } from "./retry.ts";
import { SETTLE_LEAN_LUA } from "./settle_lean.ts";
import { WALK_LUA } from "./walk.ts";

/** The fields of `meta` SETTLE reads at its step 5: its parts', then the claim part's ({@link CLAIM_META}). */
const META_READ: readonly string[] = [
  ...new Set([
    META.wire,
    META.acked,
    META.buried,
    META.retried,
    META.history_minutes,
    META.completed_max,
    META.completed_age_ms,
    META.dead_max,
    META.dead_age_ms,
    META.concurrency,
    META.laned,
    META.prioritized,
    META.events_max,
    META.lane_concurrency,
    META.lane_rate,
    ...CLAIM_META,
  ]),
];

/** The Lua twin of `EMQ.SETTLE`. */
export const SETTLE_LUA: string = luaScript(
  "SETTLE",
  `
local active = base .. '${KEY.active}'
-- meta typed with the fields the parts read of it, in one read (the parts' step 5 reads them and
-- the types SETTLE read from what it remembers; nothing is written before every part's step 5)
-- (with the fields the claim part reads: kept for it when the settles write none of them)
local meta, e = emq_meta(${luaFields(META_READ)})
if e then return e end
local missing = {}
local _, e = emq_kinds({{active, 'zset'}}, missing) if e then return e end
-- the common case (settle_lean.ts): its reply, or nil with nothing written
local lean = emq_settle_lean(base, cluster, n, meta, op, id, token, result, want, lease_ms)
if lean then return lean end
-- each settlement's row: the caller's ACL, a missing one remembered (another type is a settlement
-- not held), read once for what the statuses and the parts need: its token, the latency
-- histograms' times, a flow child's parent, the options that name a deduplication key (a row
-- without a token is typed, to tell a missing one)
local rows, read = {}, {}
for j = 1, n do
  rows[j] = base .. '${KEY_PREFIX.job}' .. id[j]
  local v = redis.pcall('HMGET', rows[j], '${ROW.token}', '${ROW.created_ms}', '${ROW.due_ms}', '${ROW.parent}', '${ROW.opts}')
  if type(v) == 'table' and v.err then
    if not string.find(v.err, 'WRONGTYPE', 1, true) then
      local _, e = emq_read('TYPE', rows[j]) if e then return e end
    end
    v = nil
  elseif not v[1] and cluster then
    local t, e = emq_read('TYPE', rows[j]) if e then return e end
    if t['ok'] == 'none' then missing[#missing + 1] = rows[j] end
  end
  read[j] = v
end
-- (probed with the first part's keys, or at the end: a missing row of a job not held too)
if cluster then emq_remember(missing) end
-- the statuses, on the state before any write; the held settlements by op (0 ack … 3 release)
local status, seen, parts = {}, {}, {{}, {}, {}, {}}
for j = 1, n do
  if seen[id[j]] then
    status[j] = 2
  else
    seen[id[j]] = true
    local v = read[j] and read[j][1] and redis.call('ZSCORE', active, id[j]) ~= false and read[j]
    local held = v and v[1] == emq_int(token[j])
    status[j] = held and 1 or 0
    if held then
      table.insert(parts[op[j] + 1], j)
      emq_held_known[rows[j]] = v
    end
  end
end
-- every part's step 5, in op order, then every part's step 6
local writes = {}
for o, js in ipairs(parts) do
  if #js > 0 then
    local ids, tokens, delays, reasons, results, failures = {}, {}, {}, {}, {}, {}
    for k, j in ipairs(js) do
      ids[k], tokens[k], delays[k], reasons[k], results[k] = id[j], token[j], delay_ms[j], reason[j], result[j]
      failures[k] = failure[j]
    end
    local write, e
    if o == 1 then
      write, e = emq_ack_part(base, cluster, #js, ids, tokens, results)
    elseif o == 2 then
      write, e = emq_retry_part(base, cluster, #js, ids, tokens, delays, reasons, failures)
    elseif o == 3 then
      write, e = emq_bury_part(base, cluster, #js, ids, tokens, reasons, failures)
    else
      write, e = emq_release_part(base, cluster, #js, ids, tokens)
    end
    if e then return e end
    writes[#writes + 1] = write
  end
end
e = emq_probe(cluster, {}) if e then return e end
emq_events_max()
-- meta as read, for the claim part, when the settles write no field of it but acked: acks only
-- (no retry, bury or release), of jobs without a parent (a parent of this queue may be made ready)
local kept = want > 0 and meta == 'hash' and #parts[2] + #parts[3] + #parts[4] == 0 and emq_meta_known
for _, j in ipairs(parts[1]) do
  if kept and emq_held_known[rows[j]][4] then kept = false end
end
-- (the events stream typed a stream by the parts stays one)
local stream = kept and emq_typed[base .. '${KEY.events}'] == 'stream' and base .. '${KEY.events}'
emq_meta_done()
for _, write in ipairs(writes) do write() end
-- the claim part: refused, it claims nothing and writes nothing (the settles stand)
local claimed = {0}
if want > 0 then
  emq_fresh()
  if kept then emq_meta_carry(kept, '${META.acked}', stream) end
  local reply = emq_claim_part(base, cluster, lease_ms, want)
  if reply then claimed = reply end
end
local reply = {claimed[1], status}
for k = 2, #claimed do reply[k + 1] = claimed[k] end
return reply
`,
  LEASES_LUA + RETENTION_LUA + FAILURE_LUA + MOVE_DUE_LUA + WALK_LUA + FLOWS_LUA + ACK_PART_LUA + RETRY_PART_LUA + BURY_PART_LUA +
    RELEASE_PART_LUA + CLAIM_PART_LUA + SETTLE_LEAN_LUA,
);
