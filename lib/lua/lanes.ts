/**
 * A laned queue's lane state as Lua (the twin of `native/src/verbs/lanes.rs`): whether the queue
 * is laned (`meta`'s `laned`), a lane's state hash read once, the two checks every lane write ends
 * with — **insert** (into the ring, when the lane may be served) and **idle** (its keys deleted
 * when nothing is left in it) — and a lane's backlog in `lanes`. docs/WIRE.md, "Lanes"; the
 * algorithm, docs/design/lanes.md §10.
 *
 * @module
 */
import { MAX_NAME_BYTES } from "../keyspace/mod.ts";
import { LANE, MAX_TOKEN, META, ROW, WAKE } from "../wire/mod.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/**
 * `emq_laned`, `emq_lane_name`, `emq_lane_defaults`, `emq_lane`, `emq_lane_open`, `emq_rate_parked`, `emq_backlog`,
 * `emq_add_ready`, `emq_lane_insert`, `emq_lane_idle`, `emq_lane_kinds` and `emq_laning`.
 */
export const LANES_LUA: string = `
-- meta's laned as a number (the tokens when the queue took its first lane), or nil: not laned.
-- meta must be a hash or missing (every caller typed it).
local function emq_laned()
  local v = emq_meta_get('${META.laned}')
  if not v or #v > 16 or not string.find(v, '^[0-9]+$') then return nil end
  local n = tonumber(v)
  if n > ${MAX_TOKEN} then return nil end
  return n
end

-- A stored lane name as an admission writes it (the name rule), else '' (the default lane).
local function emq_lane_name(v)
  if not v or #v < 1 or #v > ${MAX_NAME_BYTES} or string.find(v, '[{}%z]') then return '' end
  return v
end

-- The defaults of every lane without its own limits (meta's lane_concurrency, lane_rate).
local function emq_lane_defaults()
  return emq_limits_parse(function(f)
    if f == '${META.concurrency}' then return emq_meta_get('${META.lane_concurrency}') end
    if f == '${META.rate}' then return emq_meta_get('${META.lane_rate}') end
    return nil
  end)
end

-- Lane L's state (its hash read once, HGETALL): {key, name, ring, paused, active, conc, rate, q, r,
-- parked, set = {field = true}} with conc and rate its own or the defaults d's.
local function emq_lane(base, L, d)
  local key = base .. '${KEY_PREFIX.lane}' .. L
  local all = redis.call('HGETALL', key)
  local h = {}
  for i = 1, #all, 2 do h[all[i]] = all[i + 1] end
  local st = emq_limits_parse(function(f) return h[f] end, d.rate)
  st.key, st.name, st.set = key, L, h
  st.conc = st.conc or d.conc
  st.rate = st.rate or d.rate
  st.ring = h['${LANE.ring}'] == '1'
  st.paused = h['${LANE.paused}'] == '1'
  st.active = tonumber(h['${LANE.active}'] or '0') or 0
  return st
end

-- Whether lane state st may join the ring at now: not in it, not paused, not parked, below its
-- concurrency limit (its rate is not looked at: a claim that finds no token parks it).
local function emq_lane_open(st, now)
  if st.ring or st.paused or (st.parked and st.parked > now) then return false end
  return not st.conc or st.active < st.conc
end

-- Whether lane state st's park is the one a claim writes when its rate stops it: the next token
-- of its rate state (q, r) under its rate in force. LIMIT ends such a park with that state; any
-- other (PENALIZE's) holds.
local function emq_rate_parked(st)
  return st.rate ~= nil and st.q ~= nil and st.parked == emq_next_token(st.rate, st.q, st.r)
end

-- Lane L's ready jobs (its score in lanes).
local function emq_backlog(base, L)
  return tonumber(redis.call('ZSCORE', base .. '${KEY.lanes}', L) or '0') or 0
end

-- Adds n to lane L's backlog (ZADD of the sum: the commands a worker's grants list).
local function emq_add_ready(base, L, n)
  redis.call('ZADD', base .. '${KEY.lanes}', emq_backlog(base, L) + n, L)
end

-- insert(L): when L has ready jobs and may be served, at the ring's head (served after every
-- lane already waiting), flagged; 'ready' on wake when the ring was empty. Returns whether it did.
local function emq_lane_insert(base, L, now, d)
  if emq_backlog(base, L) <= 0 then return false end
  local st = emq_lane(base, L, d)
  if not emq_lane_open(st, now) then return false end
  local ring = base .. '${KEY.ring}'
  if redis.call('LLEN', ring) == 0 then redis.call('ZADD', base .. '${KEY.wake}', 0, '${WAKE.ready}') end
  redis.call('LPUSH', ring, L)
  redis.call('HSET', st.key, '${LANE.ring}', '1')
  return true
end

-- idle(L): a lane without ready jobs, active jobs, settings, a park or a rate state still running
-- leaves nothing behind.
local function emq_lane_idle(base, L, now, d)
  if emq_backlog(base, L) > 0 then return end
  local st = emq_lane(base, L, d)
  local h = st.set
  if h['${LANE.ring}'] or h['${LANE.paused}'] or h['${LANE.concurrency}'] or h['${LANE.rate}']
    or h['${LANE.parked}'] or st.active > 0 or (st.q and st.q > now) then
    return
  end
  redis.call('DEL', st.key)
  redis.call('ZREM', base .. '${KEY.lanes}', L)
end

-- Step 5 for lane writes: the types of ring, lanes, wake and each lane's hash in names (with
-- the active counter when count), missing ones listed. Returns nil, or the refusal.
local function emq_lane_kinds(base, names, missing, count)
  local wanted = {{base .. '${KEY.ring}', 'list'}, {base .. '${KEY.lanes}', 'zset'}, {base .. '${KEY.wake}', 'zset'}}
  for _, L in ipairs(names) do wanted[#wanted + 1] = {base .. '${KEY_PREFIX.lane}' .. L, 'hash'} end
  local _, e = emq_kinds(wanted, missing) if e then return e end
  if count then
    for _, L in ipairs(names) do
      e = emq_counter(base .. '${KEY_PREFIX.lane}' .. L, '${LANE.active}') if e then return e end
    end
  end
  return nil
end

-- The queue becomes laned (step 6, before the admission's pushes): meta's laned is its tokens
-- now, and its ready jobs, all of the default lane, are that lane's backlog, in the ring.
local function emq_laning(base, now, d)
  redis.call('HSET', KEYS[1], '${META.laned}', redis.call('HGET', KEYS[1], '${META.tokens}') or '0')
  local b = redis.call('LLEN', base .. '${KEY.pending}') + (tonumber(redis.call('HGET', KEYS[1], '${META.prioritized}') or '0') or 0)
  if b > 0 then
    redis.call('ZADD', base .. '${KEY.lanes}', b, '')
    emq_lane_insert(base, '', now, d)
  end
end
`;

/**
 * `emq_freeing`, `emq_lower` and `emq_freed`: what jobs leaving active (settled, released or
 * reaped) free — a slot of a queue's concurrency limit, an active job of a lane. After the ready
 * lists' functions in every script (emq_freed asks emq_ready_any).
 */
export const FREED_LUA: string = `
-- A settle's step 5 for jobs leaving active (rows: theirs; stored: each one's token, read): on a
-- queue with a concurrency limit, the types of pending and wake, which emq_freed may wake; on a
-- laned queue, each counted job's lane (its token above meta's laned) and the types of the lane
-- keys emq_lower and emq_freed write. Returns nil (nothing to do) or {base, wake, conc, lanes =
-- {L...}, dec = {[L] = n}, now, d}, or nil and the refusal.
local function emq_freeing(base, meta, missing, rows, stored)
  local laned = meta == 'hash' and emq_laned()
  local conc = emq_concurrency(meta) ~= nil
  if not conc and not laned then return nil end
  local f = {base = base, wake = base .. '${KEY.wake}', lanes = {}, dec = {}, conc = conc}
  if f.conc then
    local _, e = emq_kinds({{base .. '${KEY.pending}', 'list'}, {f.wake, 'zset'}}, missing) if e then return nil, e end
  end
  if laned then
    for j, row in ipairs(rows) do
      local t = stored[j] and tonumber(stored[j])
      if t and t > laned then
        local L = emq_lane_name(redis.call('HGET', row, '${ROW.lane}'))
        if not f.dec[L] then
          f.dec[L] = 0
          f.lanes[#f.lanes + 1] = L
        end
        f.dec[L] = f.dec[L] + 1
      end
    end
    local e = emq_lane_kinds(base, f.lanes, missing, true) if e then return nil, e end
    f.now, f.d = emq_now(), emq_lane_defaults()
  end
  return f
end

-- A settle's first lane write: each counted job's lane has one active job less (before any push
-- of the call, whose ring insert check reads it).
local function emq_lower(f)
  if not f or f.left then return end
  f.left = true
  for _, L in ipairs(f.lanes) do
    redis.call('HINCRBY', f.base .. '${KEY_PREFIX.lane}' .. L, '${LANE.active}', -f.dec[L])
  end
end

-- A settle's last writes: each lane that lost an active job gets its ring insert and idle checks;
-- on a queue with a concurrency limit a slot is free, so 'ready' on wake while a claim may reach a
-- ready job.
local function emq_freed(f)
  if not f then return end
  emq_lower(f)
  for _, L in ipairs(f.lanes) do
    emq_lane_insert(f.base, L, f.now, f.d)
    emq_lane_idle(f.base, L, f.now, f.d)
  end
  if f.conc and emq_ready_any(f.base) then redis.call('ZADD', f.wake, 0, '${WAKE.ready}') end
end
`;
