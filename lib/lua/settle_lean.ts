/**
 * SETTLE's common case as Lua (issue 39): a call that only acks held jobs of a plain queue and
 * claims from pending, done with the commands it needs and few checks around them. The general
 * SETTLE (`settle.ts`) calls `emq_settle_lean` after its meta read and active's type; it answers
 * the reply, or nil: then nothing was written and the general path runs from there, so every
 * refusal and every other case is the general path's by construction.
 *
 * It takes a call only when the meta read shows a plain queue (a hash; no lanes, concurrency,
 * park, rate or pause; no priorities counted; never a deduplication key) and every settlement is
 * an ack of a distinct job held under its token whose row names no parent and no deduplication
 * key; and it gives the call back (nil) before its first write at any other answer of its reads
 * (a type, the acked counter, the cluster probe). Its writes are the general path's for that case,
 * in the same order: the ack part's (ACK), then the claim part's (CLAIM). Its claim gives way the
 * same way, after the acks' writes, to CLAIM's part (`emq_claim_part`) on meta as the general path
 * carries it — when a job is due, a lease expired, a row is missing or odd, priorities wait, or a
 * read answers a refusal.
 *
 * What it skips of the general path are reads whose answers its conditions fix: the second cluster
 * probe, the history's TYPE (its HMGET, read before the writes, types it: the acks write no field
 * of it), the parents of rows it knows have none, the claim's sizes of active (the acks' ZREM of
 * held ids) and completed, the completed set's retention read again (nothing left to trim when the
 * acks' trim was not capped), wake typed apart from its read, meta's fields read again for the
 * wake check, and the heads of schedule and active read twice (once for what is due or expired,
 * once for next_ms: here once).
 *
 * @module
 */
import { HISTORY, HISTORY_MINUTE_MS, HISTORY_MINUTES_DEFAULT, META, ROW, TOKENS_PER_MS, TRIM_LIMIT, WAKE } from "../wire/mod.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/**
 * `emq_settle_lean(base, cluster, n, meta, op, id, token, result, want, lease_ms)`: the reply, or
 * nil with nothing written. After SETTLE's parts' Lua (`emq_results`, `emq_claim_part`, retention,
 * history).
 */
export const SETTLE_LEAN_LUA: string = `
-- The plain queue's claim, after the acks' writes (carried: meta's fields as read; active's size
-- as the acks left it; completed's when known, else nil; trimmed: no completed job is past the
-- set's limits). The reply, or nil (nothing written: CLAIM's part runs).
local function emq_claim_lean(base, cluster, lease_ms, want, asize, csize, trimmed, events_there)
  local pending, active, schedule = base .. '${KEY.pending}', base .. '${KEY.active}', base .. '${KEY.schedule}'
  local dead, completed, wake = base .. '${KEY.dead}', base .. '${KEY.completed}', base .. '${KEY.wake}'
  local pt, plen = emq_sized(pending, 'list') if not pt then return nil end
  local st, ssize = emq_sized(schedule, 'zset') if not st then return nil end
  local dt, dsize = emq_sized(dead, 'zset') if not dt then return nil end
  -- wake typed by the read of its markers (the claim writes no marker before the wake check)
  local got = redis.pcall('ZRANGE', wake, 0, -1, 'WITHSCORES')
  if got.err then return nil end
  local now = emq_now()
  -- nothing due, no lease expired: the heads of schedule and active, each one read (kept for next_ms)
  local shead, ahead = {}, {}
  if ssize > 0 then
    shead = redis.pcall('ZRANGE', schedule, 0, 0, 'WITHSCORES')
    if shead.err or (shead[2] and tonumber(shead[2]) <= now) then return nil end
  end
  if asize > 0 then
    ahead = redis.pcall('ZRANGE', active, 0, 0, 'WITHSCORES')
    if ahead.err or (ahead[2] and tonumber(ahead[2]) <= now) then return nil end
  end
  -- the walk: pending's tail, each row a hash with some of the fields read, attempts a counter
  local claimed, taken = {}, {}
  local k = math.min(want, plen)
  if k > 0 then
    local ids = redis.call('LRANGE', pending, -k, -1)
    for x = k, 1, -1 do
      local row = base .. '${KEY_PREFIX.job}' .. ids[x]
      local f = redis.pcall('HMGET', row, '${ROW.attempts}', '${ROW.opts}', '${ROW.payload}', '${ROW.state}')
      if f.err or not (f[1] or f[2] or f[3] or f[4]) or emq_counter_text(f[1] or nil) then return nil end
      claimed[#claimed + 1] = {id = ids[x], row = row, attempts = f[1] or nil, opts = f[2] or '', payload = f[3] or nil}
      taken[ids[x]] = true
    end
  end
  -- short of want: no priority level waits
  if #claimed < want then
    local t, size = emq_sized(base .. '${KEY_PREFIX.levels}', 'zset')
    if not t or size > 0 then return nil end
  end
  local tokens = '0'
  if #claimed > 0 then
    tokens = emq_meta_get('${META.tokens}')
    if emq_counter_text(tokens) or emq_counter_text(emq_meta_get('${META.claimed}')) then return nil end
  end
  local victims, e = emq_retention_select(base, '${KEY.dead}', now, 0, dsize) if e then return nil end
  local finished = {ids = {}, rows = {}}
  if not trimmed then
    finished, e = emq_retention_select(base, '${KEY.completed}', now, 0, csize) if e then return nil end
  end
  if cluster then
    -- every key the claim part finds missing (completed when its size is not known: an existing
    -- key in the probe changes nothing)
    local missing = {}
    if not csize or csize == 0 then missing[#missing + 1] = completed end
    if plen == 0 then missing[#missing + 1] = pending end
    if asize == 0 then missing[#missing + 1] = active end
    if ssize == 0 then missing[#missing + 1] = schedule end
    if dsize == 0 then missing[#missing + 1] = dead end
    if #got == 0 then missing[#missing + 1] = wake end
    if not events_there then missing[#missing + 1] = base .. '${KEY.events}' end
    if #missing > 0 then
      local _, e = emq_read('EXISTS', KEYS[1], unpack(missing)) if e then return nil end
    end
  end
  emq_meta_done()

  -- the writes, as CLAIM's part writes them for this case
  if #claimed > 0 then redis.call('RPOP', pending, #claimed) end
  emq_retention_apply(base, '${KEY.dead}', victims)
  emq_retention_apply(base, '${KEY.completed}', finished)
  local reply, jobs, tries = {0}, {}, {}
  if #claimed > 0 then
    local last = emq_claim_tokens(tokens, now, #claimed)
    local deadline = emq_int(now + lease_ms)
    local fresh = asize == 0
    if fresh then redis.call('ZADD', active, 0, EMQ_SKIPLIST) end
    for j, c in ipairs(claimed) do
      local token = last - #claimed + j
      local attempts = emq_claimed_row(c, token, deadline)
      local opts, payload = c.opts, c.payload
      reply[j + 1] = string.format('%d %d %d %d %d\\n', attempts, token, #c.id, #opts, payload and #payload or -1) .. c.id .. opts ..
        (payload or '')
      -- (the event's lists joined as emq_list joins them: ids, and numbers as emq_int writes them)
      jobs[j], tries[j] = c.id, emq_int(attempts)
    end
    emq_zadd_all(active, deadline, jobs)
    if fresh then redis.call('ZREM', active, EMQ_SKIPLIST) end
  end
  -- wake: 'ready' while pending holds ids (no priority counted: none elsewhere); a spent 'due' goes
  local marks = {}
  for x = 1, #got, 2 do marks[got[x]] = got[x + 1] end
  if plen - #claimed > 0 then
    if marks['${WAKE.ready}'] ~= '0' then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
  elseif marks['${WAKE.ready}'] then
    redis.call('ZREM', wake, '${WAKE.ready}')
  end
  local spent = marks['${WAKE.due}']
  if spent and tonumber(spent) <= now then redis.call('ZREM', wake, '${WAKE.due}') end
  -- next_ms: schedule's head (the claim writes none), active's as the claims left it — its head
  -- before them and their deadline, unless a claimed id was that head (a hand-edited keyspace:
  -- read again)
  local times = {}
  if shead[2] then times[#times + 1] = tonumber(shead[2]) end
  if ahead[1] and taken[ahead[1]] then
    ahead = redis.call('ZRANGE', active, 0, 0, 'WITHSCORES')
  elseif #claimed > 0 then
    times[#times + 1] = now + lease_ms
  end
  if ahead[2] then times[#times + 1] = tonumber(ahead[2]) end
  local next_ms = 0
  for _, at in ipairs(times) do
    if next_ms == 0 or at < next_ms then next_ms = at end
  end
  reply[1] = next_ms
  ${luaEvent("claimed", { jobs: "table.concat(jobs, ' ')", attempts: "table.concat(tries, ' ')" })}
  return reply
end

local function emq_settle_lean(base, cluster, n, meta, op, id, token, result, want, lease_ms)
  local K = emq_meta_known
  if meta ~= 'hash' or K['${META.laned}'] or K['${META.concurrency}'] or K['${META.parked}'] or K['${META.rate}']
    or K['${META.paused}'] == '1' or K['${META.dedup}'] == '1' or (K['${META.prioritized}'] and K['${META.prioritized}'] ~= '0') then
    return nil
  end
  local active = base .. '${KEY.active}'
  local asize = emq_sizes[active]
  if asize == 0 then return nil end
  -- every settlement an ack of a distinct job held under its token, its row naming no parent and
  -- no deduplication key
  local rows, seen, latency = {}, {}, {}
  for j = 1, n do
    if op[j] ~= 0 or seen[id[j]] then return nil end
    seen[id[j]] = true
    rows[j] = base .. '${KEY_PREFIX.job}' .. id[j]
    local v = redis.pcall('HMGET', rows[j], '${ROW.token}', '${ROW.created_ms}', '${ROW.due_ms}', '${ROW.parent}', '${ROW.opts}')
    if v.err or v[1] ~= emq_int(token[j]) or v[4] or (v[5] and string.find(v[5], 'dedup=', 1, true)) then return nil end
    -- (ZSCORE, not one ZMSCORE: the commands a scripts user is granted are docs/PACKAGE.md's list)
    if not redis.call('ZSCORE', active, id[j]) then return nil end
    latency[j] = {math.floor(token[j] / ${TOKENS_PER_MS}), math.max(emq_digits(v[2]), emq_digits(v[3]))}
  end
  -- the ack part's step 5: completed and events typed, the acked counter, the history, the retention
  local completed, events = base .. '${KEY.completed}', base .. '${KEY.events}'
  local missing = {}
  local ct, csize = emq_sized(completed, 'zset') if not ct then return nil end
  if ct == 'none' then missing[#missing + 1] = completed end
  local et, e = emq_type(events, 'stream') if e then return nil end
  if et == 'none' then missing[#missing + 1] = events end
  if emq_counter_text(K['${META.acked}']) then return nil end
  local now = emq_now()
  local hist = nil
  local keep_minutes = emq_limit('${META.history_minutes}', ${HISTORY_MINUTES_DEFAULT})
  if keep_minutes > 0 then
    local key = base .. '${KEY.metrics}'
    -- (read here, before the writes, as emq_history_add reads it after them: they write no field of it)
    local got = redis.pcall('HMGET', key, emq_int(math.floor(now / ${HISTORY_MINUTE_MS})), '${HISTORY.last}', '${HISTORY.first}', '${HISTORY.run}',
      '${HISTORY.wait}')
    if got.err then return nil end
    if not (got[1] or got[2] or got[3] or got[4] or got[5]) then
      local t, e = emq_type(key, 'hash') if e then return nil end
      if t == 'none' then missing[#missing + 1] = key end
    end
    hist = {key = key, keep = keep_minutes, slot = 1, now = now, latency = latency, got = got}
  end
  local cmax = emq_kept('${KEY.completed}')
  local keep = cmax > 0
  local victims = nil
  if keep then
    victims, e = emq_retention_select(base, '${KEY.completed}', now, n) if e then return nil end
  end
  if cluster and #missing > 0 then
    local _, e = emq_read('EXISTS', KEYS[1], unpack(missing)) if e then return nil end
  end
  local events_there = et == 'stream' or emq_events_max() > 0
  emq_meta_done()

  -- the ack part's writes, as ACK's
  emq_each('ZREM', active, id)
  if keep then
    emq_keep_in(base, '${KEY.completed}', now, n, id, victims, function(j, at) emq_completed_row(rows[j], at, result[j]) end)
  else
    emq_each('DEL', nil, rows)
  end
  redis.call('HINCRBY', KEYS[1], '${META.acked}', n)
  emq_history_add(hist, n)
  ${luaEvent("completed", { jobs: "table.concat(id, ' ')", results: "emq_results(result)" })}

  -- the claim part, on meta as read (the acks wrote acked only) and events as typed
  local claimed = {0}
  if want > 0 then
    -- completed after the acks: untouched when not kept; the ids alone when it was empty (none
    -- old: scored now), trimmed when they are at most its count limit; trimmed when the acks'
    -- trim was not capped (it took every job past the count limit, counting the ids, and every
    -- job past the age limit)
    local csize2, trimmed = nil, false
    if not keep then
      csize2 = csize
    elseif csize == 0 then
      csize2 = n
      trimmed = n <= cmax
    elseif #victims.ids < csize and #victims.ids < ${TRIM_LIMIT} then
      trimmed = true
    end
    local stream = et == 'stream' and events
    emq_fresh()
    emq_meta_carry(K, '${META.acked}', stream)
    local reply = emq_claim_lean(base, cluster, lease_ms, want, asize - n, csize2, trimmed, events_there)
    if reply then
      claimed = reply
    else
      emq_fresh()
      emq_meta_carry(K, '${META.acked}', stream)
      claimed = emq_claim_part(base, cluster, lease_ms, want) or {0}
    end
  end
  local status = {}
  for j = 1, n do status[j] = 1 end
  local reply = {claimed[1], status}
  for x = 2, #claimed do reply[x + 1] = claimed[x] end
  return reply
end
`;
