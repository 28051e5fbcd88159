/**
 * CLAIM's walk of a laned queue, as Lua (the twin of `native/src/verbs/walk.rs`'s `simulate`): step 5
 * simulates, on a copy of the lanes' state, everything step 6 will write — the lanes the moves and
 * the ended parks put in the ring, then the ring served round-robin, each eligible lane at its
 * tail giving one job and moving to the head, each ineligible one evicted (and parked when only
 * its rate stops it) — reading only; step 6 replays it. docs/design/lanes.md §10.6.
 *
 * @module
 */
import { CLAIM_MOVE_LIMIT, LANE, META } from "../wire/mod.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** `emq_walk_simulate(w, room, candidate, claimed)` and `emq_lane_writes(w)`. */
export const WALK_LUA: string = `
-- The places of d's ids by lane and priority: {['p:L'] = {k...}} and {[L] = {p...}} (new ps only).
local function emq_moved_index(d, by, ps)
  for k = 1, #d.ids do
    local p, L = d.plan.prio[k], d.plan.lane[k]
    local key = p .. ':' .. L
    if not by[key] then
      by[key] = {exp = {}, due = {}}
      ps[L] = ps[L] or {}
      table.insert(ps[L], p)
    end
    table.insert(by[key][d.kind], k)
  end
end

-- Step 5 of a laned claim: w = {base, now, d, due, expired, missing, kinds} in; the walk's plan
-- out (w.ops, w.touched, w.lanes, w.unparked). candidate(id, row, exists) claims or drops one job
-- (appending to claimed). Returns nil, or the refusal.
local function emq_walk_simulate(w, room, candidate, claimed)
  local base, now, d = w.base, w.now, w.d
  local ring, parked = base .. '${KEY.ring}', base .. '${KEY.parked}'
  local k, e = emq_kinds({{ring, 'list'}, {base .. '${KEY.lanes}', 'zset'}, {parked, 'zset'}}, w.missing)
  if e then return e end
  w.lanes, w.touched, w.ops, w.evicted = {}, {}, {}, {}
  w.unparked = k[parked] == 'zset' and redis.call('ZRANGEBYSCORE', parked, '-inf', emq_int(now), 'LIMIT', 0, ${CLAIM_MOVE_LIMIT}) or {}
  local by, movedps = {}, {}
  w.due.kind, w.expired.kind = 'due', 'exp'
  emq_moved_index(w.due, by, movedps)
  emq_moved_index(w.expired, by, movedps)
  -- a lane's state, read once (its hash typed, then read whole: its active a counter)
  local function lane(L)
    local st = w.lanes[L]
    if st then return st end
    local key = base .. '${KEY_PREFIX.lane}' .. L
    local t, e = emq_type(key, 'hash') if e then return nil, e end
    if t == 'none' then w.missing[#w.missing + 1] = key end
    st = emq_lane(base, L, d)
    e = emq_counter_text(st.set['${LANE.active}']) if e then return nil, e end
    st.backlog, st.took = emq_backlog(base, L), 0
    w.lanes[L] = st
    w.touched[#w.touched + 1] = L
    return st
  end
  -- the ring as the walk leaves it: its first R elements read from the tail, then what went to
  -- its head in this call (head[first] nearest the tail)
  local R = k[ring] == 'list' and redis.call('LLEN', ring) or 0
  local consumed, head, first = 0, {}, 1
  local function tail()
    if consumed < R then return redis.call('LINDEX', ring, -(consumed + 1)) end
    return head[first]
  end
  local function pop()
    if consumed < R then consumed = consumed + 1 else first = first + 1 end
  end
  local function insert(st)
    if st.backlog > 0 and emq_lane_open(st, now) then
      head[#head + 1] = st.name
      st.ring = true
    end
  end
  -- 1-3: the expired jobs leave their lanes, the moves push (due, then expired), the parks end
  local f = w.expired.freeing
  if f then
    for _, L in ipairs(f.lanes) do
      local st, e = lane(L) if e then return e end
      st.active = st.active - f.dec[L]
    end
  end
  for _, dd in ipairs({w.due, w.expired}) do
    for _, g in ipairs(dd.plan.groups) do
      local st, e = lane(g.lane) if e then return e end
      st.backlog = st.backlog + #g.ids
      insert(st)
    end
  end
  for _, L in ipairs(w.unparked) do
    local st, e = lane(L) if e then return e end
    st.parked = nil
    insert(st)
  end
  -- a lane's candidates, level by level (lowest priority first): its expired ids (the last RPUSHed
  -- first), its list from the tail, its due ids in LPUSH order
  local function levels(st)
    if st.levels then return st.levels end
    local L, ps, seen = st.name, {}, {}
    local function add(p)
      if not seen[p] then
        seen[p] = true
        ps[#ps + 1] = p
      end
    end
    add(0)
    local lk = base .. '${KEY_PREFIX.levels}' .. L
    local t, e = emq_type(lk, 'zset') if e then return nil, e end
    if t == 'zset' then
      for _, m in ipairs(redis.call('ZRANGE', lk, 0, -1)) do
        local p = emq_parse_priority(m)
        if p > 0 then add(p) end
      end
    end
    for _, p in ipairs(movedps[L] or {}) do add(p) end
    table.sort(ps)
    st.levels, st.left = {}, 0
    for _, p in ipairs(ps) do
      local list = emq_ready(base, L, p)
      local t, e = emq_type(list, 'list') if e then return nil, e end
      local m = by[p .. ':' .. L] or {exp = {}, due = {}}
      local lv = {p = p, list = list, exp = m.exp, due = m.due, len = t == 'list' and redis.call('LLEN', list) or 0, i = 0}
      lv.total = #lv.exp + lv.len + #lv.due
      st.left = st.left + lv.total
      st.levels[#st.levels + 1] = lv
    end
    return st.levels
  end
  -- why st may not give a job now (nil: it may)
  local function why(st)
    local _, e = levels(st) if e then return nil, e end
    if st.left == 0 then return 'empty' end
    if st.paused then return 'paused' end
    if st.parked and st.parked > now then return 'parked' end
    if st.conc and st.active >= st.conc then return 'conc' end
    if st.rate then
      if not st.allowed then st.allowed, st.q0, st.r0 = emq_tokens(st, now, st.rate) end
      if st.took >= st.allowed then return 'rate' end
    end
    return nil
  end
  local function evict(st, reason)
    pop()
    st.ring = false
    local op = {lane = st.name}
    if reason == 'rate' then
      op.at = emq_next_token(st.rate, emq_take(st.rate, st.q0, st.r0, st.took))
      st.parked = op.at
    end
    w.ops[#w.ops + 1] = op
    w.evicted[#w.evicted + 1] = st.name
  end
  -- one job of st: its lowest level's next candidate
  local function take(st)
    for _, lv in ipairs(st.levels) do
      if lv.i < lv.total then
        lv.i = lv.i + 1
        st.left = st.left - 1
        local i, ne = lv.i, #lv.exp
        if i <= ne then
          local x = lv.exp[ne - i + 1]
          return candidate(w.expired.ids[x], w.expired.rows[x], w.expired.exists[x])
        elseif i <= ne + lv.len then
          local id = redis.call('LINDEX', lv.list, -(i - ne))
          return candidate(id, base .. '${KEY_PREFIX.job}' .. id, nil)
        end
        local x = lv.due[i - ne - lv.len]
        return candidate(w.due.ids[x], w.due.rows[x], w.due.exists[x])
      end
    end
  end
  -- 4: the walk
  local function walked()
    for _, L in ipairs(w.touched) do
      for _, lv in ipairs(w.lanes[L].levels or {}) do
        if lv.i > 0 and lv.list ~= base .. '${KEY.pending}' then return emq_counter(KEYS[1], '${META.prioritized}') end
      end
    end
    return nil
  end
  while #claimed < room do
    local L = tail()
    if L == nil then break end
    local st, e = lane(L) if e then return e end
    local reason, e = why(st) if e then return e end
    if reason then
      evict(st, reason)
    else
      local before = #claimed
      e = take(st) if e then return e end
      -- a dropped id (its row missing) leaves the lane where it is, to be visited again
      if #claimed > before then
        claimed[#claimed].lane = L
        st.active, st.took = st.active + 1, st.took + 1
        reason, e = why(st) if e then return e end
        if reason then
          evict(st, reason)
        else
          pop()
          head[#head + 1] = L
          w.ops[#w.ops + 1] = {lane = L, rotate = true}
        end
      end
    end
  end
  return walked()
end

-- Step 6 of a laned claim, after the moves (emq_move_due_apply): the ended parks, the ring as the walk left
-- it, each lane's pops, backlog, levels, active jobs and rate state, then the idle checks of the
-- lanes the walk evicted and the parks that ended.
local function emq_lane_writes(w)
  local base, now, d = w.base, w.now, w.d
  local ring, parked = base .. '${KEY.ring}', base .. '${KEY.parked}'
  for _, L in ipairs(w.unparked) do
    redis.call('ZREM', parked, L)
    redis.call('HDEL', base .. '${KEY_PREFIX.lane}' .. L, '${LANE.parked}')
    emq_lane_insert(base, L, now, d)
  end
  -- consecutive rotations as their net effect (turns mod the ring's length): RPOP ring r, then
  -- LPUSH ring of those lanes in their order, each run before the eviction after it
  local turns = 0
  local function rotate()
    local len = turns > 0 and redis.call('LLEN', ring) or 0
    local r = len > 0 and turns % len or 0
    turns = 0
    if r > 0 then redis.call('LPUSH', ring, unpack(redis.call('RPOP', ring, r))) end
  end
  for _, op in ipairs(w.ops) do
    if op.rotate then
      turns = turns + 1
    else
      rotate()
      local L = redis.call('RPOP', ring)
      redis.call('HDEL', base .. '${KEY_PREFIX.lane}' .. L, '${LANE.ring}')
      if op.at then
        redis.call('HSET', base .. '${KEY_PREFIX.lane}' .. L, '${LANE.parked}', emq_int(op.at))
        redis.call('ZADD', parked, op.at, L)
      end
    end
  end
  rotate()
  local outside = 0
  for _, L in ipairs(w.touched) do
    local st = w.lanes[L]
    local popped = 0
    for _, lv in ipairs(st.levels or {}) do
      if lv.i > 0 then
        redis.call('RPOP', lv.list, lv.i)
        popped = popped + lv.i
        if lv.list ~= base .. '${KEY.pending}' then outside = outside + lv.i end
        if lv.p > 0 and redis.call('LLEN', lv.list) == 0 then redis.call('ZREM', base .. '${KEY_PREFIX.levels}' .. L, emq_int(lv.p)) end
      end
    end
    if popped > 0 then emq_add_ready(base, L, -popped) end
    if st.took > 0 then
      redis.call('HINCRBY', st.key, '${LANE.active}', st.took)
      if st.rate then
        local q, r = emq_take(st.rate, st.q0, st.r0, st.took)
        redis.call('HSET', st.key, '${LANE.tat}', emq_int(q) .. ' ' .. emq_int(r))
      end
    end
  end
  if outside > 0 then redis.call('HINCRBY', KEYS[1], '${META.prioritized}', -outside) end
  for _, list in ipairs({w.evicted, w.unparked}) do
    for _, L in ipairs(list) do emq_lane_idle(base, L, now, d) end
  end
end
`;
