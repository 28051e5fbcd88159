/**
 * What ENQUEUE, SCHEDULE and TICK share, as Lua (the twin of `native/src/verbs/admit.rs`): step 5
 * of an admission — no id twice in the call, no row already there (the first such id refused as a
 * duplicate), the types of meta, of the structure written, of wake and of the events stream, meta's `enqueued` counter,
 * and, when a job carries a `dedup` key, who holds each key: the plan of which jobs are admitted
 * and which fold into a holder — and the first writes (the queue's `meta`, the keys taken, the
 * debounced holders).
 *
 * @module
 */
import { META, ROW, STATE, WAKE, WIRE } from "../wire/mod.ts";
import { DEDUP_LUA } from "./dedup.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/**
 * `emq_admit(base, n, id, structure, kind, opts)` (`emq_admit_start` then `emq_admit_plan`, which
 * TICK calls apart, reading its scheduler's options between them), `emq_admitted(a, id, now, payload, due, schedule)`,
 * `emq_fields(a, j, payload, opts)`, `emq_admit_lists(a, id)` (its events' ids), `emq_admit_reply(a)` and `emq_pushed(a, base, now, fields)`
 * (ENQUEUE's writes, which TICK's jobs share).
 */
export const ADMIT_LUA: string = DEDUP_LUA + `
-- The end of emq_admit: each job's priority and lane (its options), and for an admission into
-- pending (ENQUEUE, TICK) the plan of its ready pushes and whether the queue had no ready job (its
-- marker); for one into schedule whose jobs carry a lane, whether it makes the queue laned.
local function emq_admit_ready(a, base, id, kind, options)
  a.prio, a.lane, a.base = {}, {}, base
  local ids, prios, lanes, laning = {}, {}, {}, false
  for j = 1, #a.rows do
    a.prio[j] = options[j]['priority'] or 0
    a.lane[j] = options[j]['lane'] or ''
  end
  for k, j in ipairs(a.admitted) do
    ids[k], prios[k], lanes[k] = id[j], a.prio[j], a.lane[j]
    if lanes[k] ~= '' then laning = true end
  end
  local e
  if kind ~= 'list' then
    if laning and not emq_laned() then
      a.begins = true
      e = emq_lane_kinds(base, {''}, a.missing) if e then return nil, e end
      e = emq_counter(KEYS[1], '${META.prioritized}') if e then return nil, e end
      a.d = emq_lane_defaults()
    end
    return a
  end
  a.idle = not emq_ready_any(base, a.length)
  a.ready, e = emq_ready_plan(base, ids, {}, a.missing, prios, lanes) if e then return nil, e end
  return a
end

-- The first checks of an admission, which no job's options change: no id twice, no row already
-- there, the types of meta, of the structure written and of wake, meta's enqueued counter.
-- Returns the plan begun {rows, meta = type, structure = type, length = a list's length, wake =
-- type, missing, now, source}, or nil and the refusal. meta's fields an admission reads are read
-- with its type (emq_meta), events_max among them.
local function emq_admit_start(base, n, id, structure, kind)
  local e = emq_repeated(n, id) if e then return nil, e end
  local a = {rows = {}, missing = {}, admitted = {}, source = {}, folded = {}, debounced = {}}
  for j = 1, n do
    a.rows[j] = base .. '${KEY_PREFIX.job}' .. id[j]
    local found, e = emq_read('EXISTS', a.rows[j]) if e then return nil, e end
    if found == 1 then return nil, emq_refuse['duplicate']({id = id[j]}) end
    a.missing[j] = a.rows[j]
    a.source[j] = j
  end
  a.meta, e = emq_meta('${META.wire}', '${META.enqueued}', '${META.laned}', '${META.prioritized}', '${META.events_max}',
    '${META.lane_concurrency}', '${META.lane_rate}')
  if e then return nil, e end
  if kind == 'list' then
    local t, length = emq_sized(structure, 'list')
    if not t then return nil, length end
    a.structure, a.length = t, length
  else
    a.structure, e = emq_type(structure, kind) if e then return nil, e end
  end
  if a.structure == 'none' then a.missing[#a.missing + 1] = structure end
  a.wake, e = emq_type(base .. '${KEY.wake}', 'zset') if e then return nil, e end
  if a.wake == 'none' then a.missing[#a.missing + 1] = base .. '${KEY.wake}' end
  e = emq_events_open(base, a.missing) if e then return nil, e end
  e = emq_counter(KEYS[1], '${META.enqueued}') if e then return nil, e end
  emq_events_max()
  a.now = emq_now()
  return a
end

-- The rest of an admission's checks, once each job's options are known (opts: the options text of
-- each job, gated; nil: none): each job's lane and priority, and when a job carries a dedup key who
-- holds it. Returns the plan, a (emq_admit_start's) completed with {admitted = {places}, folded =
-- {{place, holder, outcome}}, dedup = nil or {d, takes}, debounced = {{holder, from}}}, or nil and
-- the refusal.
local function emq_admit_plan(a, base, n, id, kind, opts)
  local options, keyed = {}, false
  for j = 1, n do
    options[j] = opts and emq_options(opts[j]) or {}
    if options[j]['dedup'] then keyed = true end
  end
  if not keyed then
    for j = 1, n do a.admitted[j] = j end
    return emq_admit_ready(a, base, id, kind, options)
  end
  local d, e = emq_dedup_open(base, a.missing) if e then return nil, e end
  local takes, taken = {}, {}
  for j = 1, n do
    local o = options[j]
    local key = o['dedup']
    local debounce = o['debounce'] == 1
    if not key then
      a.admitted[#a.admitted + 1] = j
    elseif taken[key] then
      -- a key taken earlier in this call is held by that job, which waits
      local k = taken[key]
      if debounce then a.source[k] = j end
      a.folded[#a.folded + 1] = {j - 1, id[k], debounce and 'debounced' or 'deduplicated'}
    else
      local h, e = emq_holder(base, d, key, a.now, a.missing) if e then return nil, e end
      -- a debounced admission while the holder runs: the edit must run too, so it is a new job
      if h and not (debounce and h.active) then
        local debounced = debounce and h.waiting
        a.folded[#a.folded + 1] = {j - 1, h.id, debounced and 'debounced' or 'deduplicated'}
        if debounced then
          for i = #a.debounced, 1, -1 do
            if a.debounced[i].holder.id == h.id then table.remove(a.debounced, i) end
          end
          a.debounced[#a.debounced + 1] = {holder = h, from = j}
        end
      else
        local untl = o['dedup_ms'] and (a.now + o['dedup_ms']) or 0
        takes[#takes + 1] = {place = j, key = key, untl = untl}
        taken[key] = j
        a.admitted[#a.admitted + 1] = j
      end
    end
  end
  a.dedup = {d = d, takes = takes}
  return emq_admit_ready(a, base, id, kind, options)
end

-- An admission's step 5 (ENQUEUE, SCHEDULE): opts, the options argument of each job.
local function emq_admit(base, n, id, structure, kind, opts)
  local a, e = emq_admit_start(base, n, id, structure, kind) if e then return nil, e end
  return emq_admit_plan(a, base, n, id, kind, opts)
end

-- Step 6, first: the queue's meta made on first use and the admissions counted; the keys taken;
-- each debounced holder outside the call given its new payload (payload[j]) and, from SCHEDULE
-- (due[j]), its new due time when scheduled. Returns the earliest due time written (0: none).
local function emq_admitted(a, id, now, payload, due, schedule)
  emq_meta_done()
  if a.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', now) end
  redis.call('HINCRBY', KEYS[1], '${META.enqueued}', #a.admitted)
  if a.begins then emq_laning(a.base, a.now, a.d) end
  if not a.dedup then return 0 end
  for _, t in ipairs(a.dedup.takes) do emq_dedup_take(a.dedup.d, t.key, id[t.place], t.untl) end
  if #a.dedup.takes > 0 then redis.call('HSET', KEYS[1], '${META.dedup}', '1') end
  local earliest = 0
  for _, b in ipairs(a.debounced) do
    redis.call('HSET', b.holder.row, '${ROW.payload}', payload[b.from])
    if due and b.holder.scheduled then
      local at = due[b.from]
      redis.call('HSET', b.holder.row, '${ROW.due_ms}', emq_int(at))
      redis.call('ZADD', schedule, emq_int(at), b.holder.id)
      if earliest == 0 or at < earliest then earliest = at end
    end
  end
  return earliest
end

-- An admitted job's row fields besides its state and counters: the payload of its source (itself,
-- or the last job of the call debounced into it), and its options when given.
local function emq_fields(a, j, payload, opts)
  local f = {'${ROW.payload}', payload[a.source[j]]}
  if opts[j] ~= '' then
    f[#f + 1] = '${ROW.opts}'
    f[#f + 1] = opts[j]
  end
  if a.prio[j] > 0 then
    f[#f + 1] = '${ROW.priority}'
    f[#f + 1] = emq_int(a.prio[j])
  end
  if a.lane[j] ~= '' then
    f[#f + 1] = '${ROW.lane}'
    f[#f + 1] = a.lane[j]
  end
  return f
end

-- The lists of an admission's events (emq_list's): the ids admitted, in argument order; the ids
-- not admitted (folded into a holder) and, parallel, their holders.
local function emq_admit_lists(a, id)
  local admitted, folded, into = {}, {}, {}
  for _, j in ipairs(a.admitted) do admitted[#admitted + 1] = id[j] end
  for _, f in ipairs(a.folded) do
    folded[#folded + 1] = id[f[1] + 1]
    into[#into + 1] = f[2]
  end
  return emq_list(admitted), emq_list(folded), emq_list(into)
end

-- The reply: the count admitted, or, when a job carried a key, {admitted, place, holder, outcome...}.
local function emq_admit_reply(a)
  if not a.dedup then return #a.admitted end
  local r = {#a.admitted}
  for _, f in ipairs(a.folded) do
    r[#r + 1] = f[1]
    r[#r + 1] = f[2]
    r[#r + 1] = f[3]
  end
  return r
end

-- Step 6 of an admission into pending (after emq_admitted): per admitted job its row (state
-- pending, the fields fields(j) gives, its payload first, attempts 0, created_ms); the ids pushed on
-- the head of pending in order; 'ready' on wake when pending was empty and got ids.
local function emq_pushed(a, base, id, now, fields)
  local ids = {}
  for _, j in ipairs(a.admitted) do
    local row = {'${ROW.state}', '${STATE.pending}'}
    for _, f in ipairs(fields(j)) do row[#row + 1] = f end
    row[#row + 1] = '${ROW.attempts}'
    row[#row + 1] = '0'
    row[#row + 1] = '${ROW.created_ms}'
    row[#row + 1] = now
    redis.call('HSET', a.rows[j], unpack(row))
    ids[#ids + 1] = id[j]
  end
  if #ids == 0 then return end
  emq_ready_push(a.ready, 'LPUSH')
  if a.idle then redis.call('ZADD', base .. '${KEY.wake}', 0, '${WAKE.ready}') end
end
`;
