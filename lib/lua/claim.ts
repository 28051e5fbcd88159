/**
 * `EMQ.CLAIM` as Lua, steps 5–6. First the queue's upkeep: due scheduled ids move to the head of
 * pending (PROMOTE) and expired leases to its tail (REAP), at most {@link CLAIM_MOVE_LIMIT} each.
 * Dead and completed jobs past the queue's retention are trimmed (`retention.ts`). Then, unless
 * the queue is paused, up to count ids are popped from the tail into active at now + lease_ms, each with attempts + 1 and a fresh token from `meta`'s `tokens` counter (raised to now ×
 * {@link TOKENS_PER_MS} first when below it); tail ids whose
 * row is missing are popped and dropped. Everything is checked first, on the list as it will be
 * after the moves (expired ids from the last RPUSHed, then pending from its tail, then the due ids
 * in LPUSH order), and written after. The scripts never wait: an idle worker waits on `wake`.
 * Deduplication windows that ended are dropped (`dedup.ts`).
 * Events: `promoted`, `stalled`, then `claimed` (with each job's attempt number).
 * Reply `[next_ms, job…]`, each job one bulk string (docs/WIRE.md, CLAIM).
 *
 * The steps are one function, `emq_claim_part` ({@link CLAIM_PART_LUA}), which SETTLE's claim part
 * (`settle.ts`) calls too.
 *
 * @module
 */
import { CLAIM_MOVE_LIMIT, META, ROW, STATE, TOKENS_PER_MS, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { DEDUP_LUA } from "./dedup.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";
import { MOVE_DUE_LUA } from "./move_due.ts";
import { RETENTION_LUA } from "./retention.ts";
import { WALK_LUA } from "./walk.ts";

/** The fields of `meta` the claim reads (in one read at its step 5; SETTLE reads them with its own). */
export const CLAIM_META: readonly string[] = [
  META.wire,
  META.paused,
  META.concurrency,
  META.parked,
  META.rate,
  META.tat,
  META.laned,
  META.tokens,
  META.claimed,
  META.prioritized,
  META.dedup,
  META.dead_max,
  META.dead_age_ms,
  META.completed_max,
  META.completed_age_ms,
  META.events_max,
  META.lane_concurrency,
  META.lane_rate,
];

/** Fields as Lua string literals, comma-separated (an `emq_meta` call's arguments). */
export function luaFields(fields: readonly string[]): string {
  return fields.map((f) => `'${f}'`).join(", ");
}

/** The length of the member that makes a new `active` a skiplist (the module's `skiplist` literal). */
const SKIPLIST_BYTES = 1024;

/**
 * `emq_claim_part(base, cluster, lease_ms, count)`: CLAIM's steps 5–6 (block_ms 0: the scripts never
 * wait): the reply `[next_ms, job…]`, or nil and the refusal, with
 * nothing written. After {@link MOVE_DUE_LUA}, {@link RETENTION_LUA}, {@link DEDUP_LUA} and
 * {@link WALK_LUA}.
 */
export const CLAIM_PART_LUA: string = `
-- a member no job id can be (NUL first: ids start with JOB), longer than a listpack sorted set
-- takes (zset-max-listpack-value, 64 by default): the module's \`skiplist\` literal (spelt out: a
-- function library's top level cannot call string.rep)
local EMQ_SKIPLIST = '\\0emq:skiplist${"\\0".repeat(SKIPLIST_BYTES - 13)}'

-- The last of k new tokens, counted in meta with the k claims: tokens above now x ${TOKENS_PER_MS} (a
-- queue made again never repeats a token of an earlier life): the counter goes to max(tokens, floor)
-- + k, by HINCRBY (exact for any counter emq_counter admits). (CLAIM's and SETTLE's common case alike.)
local function emq_claim_tokens(tokens, now, k)
  local old = tonumber(tokens or '0')
  local floor = now * ${TOKENS_PER_MS}
  local by = k
  if old < floor then by = floor - old + k end
  local last = redis.call('HINCRBY', KEYS[1], '${META.tokens}', emq_int(by))
  redis.call('HINCRBY', KEYS[1], '${META.claimed}', k)
  return last
end

-- A claimed job's row made active under its token until deadline; its attempts, one more. The
-- attempts + 1 in the row's one HSET when Lua's number holds it exactly (the stored text read and
-- gated as HINCRBY's), else by HINCRBY. (CLAIM's and SETTLE's common case alike.)
local function emq_claimed_row(c, token, deadline)
  if not c.attempts or #c.attempts <= 15 then
    local attempts = tonumber(c.attempts or '0') + 1
    redis.call('HSET', c.row, '${ROW.attempts}', emq_int(attempts), '${ROW.state}', '${STATE.active}', '${ROW.deadline_ms}', deadline, '${ROW.token}', emq_int(token))
    return attempts
  end
  local attempts = redis.call('HINCRBY', c.row, '${ROW.attempts}', 1)
  redis.call('HSET', c.row, '${ROW.state}', '${STATE.active}', '${ROW.deadline_ms}', deadline, '${ROW.token}', emq_int(token))
  return attempts
end

-- The ids of a list of len ids from its tail: tail(x, want) is the x-th (1: the tail), read with
-- the next want - 1 in one LRANGE when not read yet (in place of an LINDEX per id).
local function emq_tail(list, len)
  local got = {}
  return function(x, want)
    if got[x] == nil then
      local r = redis.call('LRANGE', list, -(x + math.max(1, math.min(want, len - x + 1)) - 1), -x)
      for k = 1, #r do got[x + #r - k] = r[k] end
    end
    return got[x]
  end
end

local function emq_claim_part(base, cluster, lease_ms, count)
  local pending, active, schedule, wake = base .. '${KEY.pending}', base .. '${KEY.active}', base .. '${KEY.schedule}', base .. '${KEY.wake}'
  local dead, completed = base .. '${KEY.dead}', base .. '${KEY.completed}'
  -- meta typed with the fields the claim reads of it; the lists and sorted sets typed by their
  -- sizes (what the walk, the limits, the moves and the retention read of them), then wake and events
  local meta, e = emq_meta(${luaFields(CLAIM_META)})
  if e then return nil, e end
  local size, missing = {}, {}
  for i, key in ipairs({pending, active, schedule, dead, completed}) do
    local t, x = emq_sized(key, i == 1 and 'list' or 'zset')
    if not t then return nil, x end
    size[key] = x
    if t == 'none' then missing[#missing + 1] = key end
  end
  local _, e = emq_kinds({{wake, 'zset'}, {base .. '${KEY.events}', 'stream'}}, missing) if e then return nil, e end
  emq_events_max()
  local now = emq_now()
  local due, e = emq_move_due_select(base, schedule, now, ${CLAIM_MOVE_LIMIT}, missing, nil, size[schedule]) if e then return nil, e end
  local expired, e = emq_move_due_select(base, active, now, ${CLAIM_MOVE_LIMIT}, missing, meta, size[active]) if e then return nil, e end
  local paused = meta == 'hash' and emq_meta_get('${META.paused}') == '1'
  -- The limits: paused or parked, nothing; else at most the concurrency limit's free slots (the
  -- expired leases leave active first) and the rate limit's tokens.
  local lim = emq_limits_read(meta)
  local parked = lim.parked and lim.parked > now
  local room, busy, allowed, q, r = count, 0, 0, 0, 0
  if lim.conc then
    busy = size[active] - #expired.ids
    room = math.min(room, math.max(0, lim.conc - busy))
  end
  if lim.rate then
    allowed, q, r = emq_tokens(lim, now)
    room = math.min(room, allowed)
  end

  -- The walk, writing nothing, level by level: priority 0 (pending) first, then every priority of
  -- levels: and of the ids this call makes ready, lowest first. In each level the candidates come
  -- in the order RPOP will return them after the moves: its expired ids from the last RPUSHed, its
  -- list from the tail, its due ids in LPUSH order.
  local claimable = not paused and not parked
  local claimed, pops = {}, {}
  -- one candidate: claimed when its row exists (its attempts a counter), else popped and dropped;
  -- one read types the row and gives what the reply carries (a hash without those fields is typed
  -- to tell it from a missing row)
  local function candidate(id, row, exists)
    if exists == false then return end
    local f, e = emq_hash_fields(row, '${ROW.attempts}', '${ROW.opts}', '${ROW.payload}', '${ROW.state}')
    if e then return e end
    if exists == nil and not (f[1] or f[2] or f[3] or f[4]) then
      local t, e = emq_type(row, 'hash') if e then return e end
      if t == 'none' then
        missing[#missing + 1] = row
        return
      end
    end
    e = emq_counter_text(f[1] or nil) if e then return e end
    claimed[#claimed + 1] = {id = id, row = row, attempts = f[1] or nil, opts = f[2] or '', payload = f[3] or nil}
  end
  -- the places of d's ids of the default lane at priority p (a job of another lane moved into a queue
  -- not laned yet makes it laned: the next claim serves it)
  local function at(d, p)
    local out = {}
    for k = 1, #d.ids do
      if d.plan.prio[k] == p and d.plan.lane[k] == '' then out[#out + 1] = k end
    end
    return out
  end
  -- walks level p (its list of len ids): how many it pops, or nil and the refusal
  local function walk(p, list, len)
    local exp, du = at(expired, p), at(due, p)
    local tail = emq_tail(list, len)
    local total, i = #exp + len + #du, 0
    while #claimed < room and i < total do
      i = i + 1
      local e
      if i <= #exp then
        local k = exp[#exp - i + 1]
        e = candidate(expired.ids[k], expired.rows[k], expired.exists[k])
      elseif i <= #exp + len then
        local id = tail(i - #exp, room - #claimed)
        e = candidate(id, base .. '${KEY_PREFIX.job}' .. id, nil)
      else
        local k = du[i - #exp - len]
        e = candidate(due.ids[k], due.rows[k], due.exists[k])
      end
      if e then return nil, e end
    end
    if i > 0 then pops[#pops + 1] = {p = p, list = list, k = i} end
    return i
  end
  -- a laned queue: its ring, served round-robin (walk.ts)
  local laned = meta == 'hash' and emq_laned()
  local w = laned and {base = base, now = now, d = emq_lane_defaults(), due = due, expired = expired, missing = missing}
  if claimable and laned then
    e = emq_walk_simulate(w, room, candidate, claimed) if e then return nil, e end
  elseif claimable then
    local _, e = walk(0, pending, size[pending]) if e then return nil, e end
  end
  if claimable and not laned and #claimed < room then
    local lk = base .. '${KEY_PREFIX.levels}'
    local t, e = emq_type(lk, 'zset') if e then return nil, e end
    local seen, order = {}, {}
    local function add(p)
      if p >= 1 and not seen[p] then
        seen[p] = true
        order[#order + 1] = p
      end
    end
    if t == 'zset' then
      for _, m in ipairs(redis.call('ZRANGE', lk, 0, -1)) do add(emq_parse_priority(m)) end
    end
    for _, d in ipairs({expired, due}) do
      for _, g in ipairs(d.plan.groups) do
        if g.lane == '' then add(g.p) end
      end
    end
    table.sort(order)
    for _, p in ipairs(order) do
      if #claimed >= room then break end
      local list = emq_ready(base, '', p)
      local t, len = emq_sized(list, 'list')
      if not t then return nil, len end
      local _, e = walk(p, list, len) if e then return nil, e end
    end
    if #pops > 0 and pops[#pops].p > 0 then
      e = emq_counter(KEYS[1], '${META.prioritized}') if e then return nil, e end
    end
  end
  -- (tokens: read here, before any write, for the tokens' floor below)
  local tokens = '0'
  if #claimed > 0 then
    tokens = emq_meta_get('${META.tokens}')
    e = emq_counter_text(tokens) if e then return nil, e end
    e = emq_counter(KEYS[1], '${META.claimed}') if e then return nil, e end
  end
  local victims, e = emq_retention_select(base, '${KEY.dead}', now, 0, size[dead]) if e then return nil, e end
  local finished, e = emq_retention_select(base, '${KEY.completed}', now, 0, size[completed]) if e then return nil, e end
  -- ended deduplication windows: only on a queue that ever took a key (meta's dedup)
  local windows = false
  if meta == 'hash' and emq_meta_get('${META.dedup}') == '1' then
    windows, e = emq_dedup_expired(base, now, missing) if e then return nil, e end
  end
  e = emq_probe(cluster, missing) if e then return nil, e end
  emq_meta_done()

  -- Writes. The expired jobs leave their lanes' active counts first, as the walk simulated it: a
  -- lane at its limit that a due job and an expired one both reach goes in the ring with the due
  -- ones, where the walk served it
  emq_lower(expired.freeing)
  emq_move_due_apply(schedule, 'LPUSH', due)
  emq_move_due_apply(active, 'RPUSH', expired)
  if w and w.ops then emq_lane_writes(w) end
  local gone = 0
  for _, l in ipairs(pops) do
    redis.call('RPOP', l.list, l.k)
    if l.p > 0 then gone = gone + l.k end
  end
  if gone > 0 then redis.call('HINCRBY', KEYS[1], '${META.prioritized}', -gone) end
  for _, l in ipairs(pops) do
    if l.p > 0 and redis.call('LLEN', l.list) == 0 then redis.call('ZREM', base .. '${KEY_PREFIX.levels}', emq_int(l.p)) end
  end
  emq_retention_apply(base, '${KEY.dead}', victims)
  emq_retention_apply(base, '${KEY.completed}', finished)
  emq_drop_expired(windows)
  local reply, jobs, tries = {0}, {}, {}
  if #claimed > 0 then
    local last = emq_claim_tokens(tokens, now, #claimed)
    if lim.rate then
      q, r = emq_take(lim.rate, q, r, #claimed)
      redis.call('HSET', KEYS[1], '${META.tat}', emq_int(q) .. ' ' .. emq_int(r))
    end
    local deadline = emq_int(now + lease_ms)
    -- a new active is made a skiplist, not a listpack (whose adds and lookups scan every member):
    -- a member no id can be and longer than a listpack takes goes in first, out after the ids
    -- (active as it is now: its size at the start less the expired ids that left it)
    local fresh = size[active] - #expired.ids == 0
    if fresh then redis.call('ZADD', active, 0, EMQ_SKIPLIST) end
    for j, c in ipairs(claimed) do
      local token = last - #claimed + j
      local attempts = emq_claimed_row(c, token, deadline)
      local opts, payload = c.opts, c.payload
      -- one bulk string per job (wire 12): header, newline, id, opts, payload
      reply[j + 1] = string.format('%d %d %d %d %d\\n', attempts, token, #c.id, #opts, payload and #payload or -1) .. c.id .. opts ..
        (payload or '')
      jobs[j], tries[j] = c.id, attempts
    end
    emq_zadd_all(active, deadline, jobs)
    if fresh then redis.call('ZREM', active, EMQ_SKIPLIST) end
  end
  -- wake: '${WAKE.ready}' while pending holds ids a claim could take now; a '${WAKE.due}' marker whose
  -- time has come is spent.
  local spent_rate = lim.rate and allowed - #claimed <= 0
  local open = claimable and not spent_rate and not (lim.conc and busy + #claimed >= lim.conc)
  -- (both markers' scores in one read: wake holds no other member)
  local marks, got = {}, redis.call('ZRANGE', wake, 0, -1, 'WITHSCORES')
  for k = 1, #got, 2 do marks[got[k]] = got[k + 1] end
  -- (pending's length known when nothing moved into it, in a queue without lanes: its size less
  -- the ids popped from it; not empty, a claim may reach a ready job)
  local left = nil
  if not laned and #due.ids == 0 and #expired.ids == 0 then
    left = size[pending]
    for _, l in ipairs(pops) do
      if l.list == pending then left = left - l.k end
    end
  end
  if open and ((left and left > 0) or emq_ready_any(base, left)) then
    if marks['${WAKE.ready}'] ~= '0' then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
  elseif marks['${WAKE.ready}'] then
    redis.call('ZREM', wake, '${WAKE.ready}')
  end
  local spent = marks['${WAKE.due}']
  if spent and tonumber(spent) <= now then redis.call('ZREM', wake, '${WAKE.due}') end
  -- next_ms: the earliest time a scheduled job falls due, a lease runs out, the park ends or the
  -- spent rate limit allows a claim again (0: none).
  local times = {}
  -- (a schedule that was empty is still empty: a claim adds none)
  for _, key in ipairs({schedule, active}) do
    local head = (key == active or size[key] > 0) and redis.call('ZRANGE', key, 0, 0, 'WITHSCORES') or {}
    if head[2] then times[#times + 1] = tonumber(head[2]) end
  end
  if parked then times[#times + 1] = lim.parked end
  if laned then
    local head = redis.call('ZRANGE', base .. '${KEY.parked}', 0, 0, 'WITHSCORES')
    if head[2] then times[#times + 1] = tonumber(head[2]) end
  end
  if spent_rate then times[#times + 1] = emq_next_token(lim.rate, q, r) end
  local next_ms = 0
  for _, at in ipairs(times) do
    if next_ms == 0 or at < next_ms then next_ms = at end
  end
  reply[1] = next_ms
  -- events, in the order of the steps: the due ids made ready, the expired leases, the claims
  -- (an event without jobs is no entry: not built)
  if #due.ids > 0 then ${luaEvent("promoted", { jobs: "emq_list(due.ids)" })} end
  if #expired.ids > 0 then ${luaEvent("stalled", { jobs: "emq_list(expired.ids)" })} end
  ${luaEvent("claimed", { jobs: "emq_list(jobs)", attempts: "emq_list(tries)" })}
  return reply
end
`;

/** The Lua twin of `EMQ.CLAIM`. */
export const CLAIM_LUA: string = luaScript(
  "CLAIM",
  `
local reply, e = emq_claim_part(base, cluster, lease_ms, count) if e then return e end
return reply
`,
  MOVE_DUE_LUA + RETENTION_LUA + DEDUP_LUA + WALK_LUA + CLAIM_PART_LUA,
);
