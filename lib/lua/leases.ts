/**
 * What ACK, RETRY, BURY and EXTEND share, as Lua (the twin of `native/src/verbs/leases.rs`):
 * step 5 of a settle — no id twice in the call, the types of meta and of the structures written,
 * each job's row, the meta counter the verb increments, the cluster probe, then whether every job
 * is held under its token (in active, its row present, the row's `token` equal to the call's).
 * Every stale id, in argument order, goes into one refusal.
 *
 * @module
 */
import { META, ROW, TOKENS_PER_MS } from "../wire/mod.ts";
import { DEDUP_LUA } from "./dedup.ts";
import { HISTORY_LUA } from "./history.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/**
 * `emq_held(base, cluster, n, id, token, structures, total, leaves)` and
 * `emq_held_for_good(base, cluster, n, id, token, set, total)` (with the deduplication functions
 * they call).
 */
export const LEASES_LUA: string = DEDUP_LUA + HISTORY_LUA + `
-- structures: {{key, kind}, ...}, active first; total: the meta counter the verb increments (or
-- nil); leaves: nil when the jobs stay active (EXTEND, PROGRESS), 'active' when they leave it
-- (RETRY, RELEASE: a slot of a limited queue is freed, emq_freeing), 'gone' when they leave for good
-- (ACK, BURY: their deduplication keys too, checked after the counter). Returns the rows, what
-- emq_let_go needs, what emq_freed needs and the history (emq_history_add), or nil and the refusal
-- (lease-lost: and the stale ids).
local function emq_held(base, cluster, n, id, token, structures, total, leaves)
  local e = emq_repeated(n, id) if e then return nil, e end
  local s, e = emq_types(structures) if e then return nil, e end
  local missing = s.missing
  local active = structures[1][1]
  local rows, held, stored = {}, {}, {}
  -- a counting settle's jobs, for the latency histograms: {their claim's ms, when they became ready}
  local slot = total and ({['${META.acked}'] = 1, ['${META.buried}'] = 2, ['${META.retried}'] = 3})[total]
  local latency = {}
  for j = 1, n do
    rows[j] = base .. '${KEY_PREFIX.job}' .. id[j]
    -- (a row SETTLE found held, in this call, before any write: read again, the same answers)
    local v = emq_held_known[rows[j]]
    -- (SETTLE keeps only the rows it found held under the call's token: not compared again)
    local known = v ~= nil
    if not v then
      local t, e = emq_type(rows[j], 'hash') if e then return nil, e end
      if t == 'none' then
        missing[#missing + 1] = rows[j]
      elseif redis.call('ZSCORE', active, id[j]) then
        v = slot and redis.call('HMGET', rows[j], '${ROW.token}', '${ROW.created_ms}', '${ROW.due_ms}') or {redis.call('HGET', rows[j], '${ROW.token}')}
      end
    end
    if v then
      stored[j] = v[1]
      held[j] = known or stored[j] == emq_int(token[j])
      if held[j] and slot then
        latency[#latency + 1] = {math.floor(token[j] / ${TOKENS_PER_MS}), math.max(emq_digits(v[2]), emq_digits(v[3]))}
      end
    end
  end
  local freeing
  if leaves then
    freeing, e = emq_freeing(base, s.meta, missing, rows, stored) if e then return nil, e end
  end
  local hist
  if total then
    e = emq_counter(KEYS[1], total) if e then return nil, e end
    -- the counting settles' history, checked after their counter
    if slot then
      hist, e = emq_history_open(base, s.meta, missing, slot) if e then return nil, e end
      if hist then hist.latency = latency end
    end
  end
  local going = false
  if leaves == 'gone' then
    local jobs = {}
    for j = 1, n do jobs[j] = {id[j], rows[j]} end
    going, e = emq_letting_go(base, jobs, missing) if e then return nil, e end
  end
  e = emq_probe(cluster, missing) if e then return nil, e end
  local stale = {}
  for j = 1, n do
    if not held[j] then stale[#stale + 1] = id[j] end
  end
  if #stale > 0 then return nil, emq_refuse['lease-lost']({ids = table.concat(stale, ' ')}), stale end
  return rows, nil, going, freeing, hist
end

-- ACK's and BURY's emq_held: the jobs leave active for good ('gone') into set ('completed',
-- 'dead'), counted in total.
local function emq_held_for_good(base, cluster, n, id, token, set, total)
  local structures = {{base .. '${KEY.active}', 'zset'}, {base .. set, 'zset'}, {base .. '${KEY.events}', 'stream'}}
  return emq_held(base, cluster, n, id, token, structures, total, 'gone')
end
`;
