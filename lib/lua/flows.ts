/**
 * What the flow verbs share, as Lua (the twin of `native/src/verbs/flows.rs`; docs/design/flows.md):
 * outbox entries (NUL-joined fields, the second the destination queue, the last free bytes), a
 * child made ready in its queue (`emq_flow_child`), a child's outcome recorded on its parent once
 * (`emq_flow_record`, by its `done:<i>` field), and the settle hook of ACK and BURY
 * (`emq_flow_settled`).
 *
 * @module
 */
import {
  CHILD_RESULT_KEPT_BYTES,
  LANE,
  MAX_BATCH,
  MAX_FAN_IN,
  MAX_FLOW_DEPTH,
  MAX_OPTIONS_BYTES,
  MAX_REASON_BYTES,
  META,
  ROW,
  STATE,
  TOMBSTONE_MS,
  WAITING_FOREVER,
  WAKE,
  WIRE,
} from "../wire/mod.ts";
import { MAX_NAME_BYTES } from "../keyspace/mod.ts";
import { luaEvent } from "./events.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** A parent's field naming child i (`child:<i>`), and the one holding its outcome (`done:<i>`). */
export const FLOW_FIELDS = { child: "child:", done: "done:" } as const;

/**
 * `emq_flow_fields`, `emq_flow_subtree`, `emq_flow_parse`, `emq_flow_child`, `emq_flow_node`, `emq_flow_cancel`,
 * `emq_flow_cancel_unfinished`, `emq_flow_record`, `emq_flow_settled`.
 */
export const FLOWS_LUA: string = `
-- The first n NUL-separated fields of s, the last taking the rest; nil when fewer.
local function emq_flow_fields(s, n)
  local out, at = {}, 1
  for _ = 1, n - 1 do
    local z = string.find(s, '\\0', at, true)
    if not z then return nil end
    out[#out + 1] = string.sub(s, at, z - 1)
    at = z + 1
  end
  out[#out + 1] = string.sub(s, at)
  return out
end

-- A child's place as written: decimal, no leading zero, below the fan-in bound.
local function emq_flow_index(i)
  return (i == '0' or string.find(i, '^[1-9][0-9]*$') ~= nil) and #i <= 6 and tonumber(i) < ${MAX_FAN_IN}
end

-- Whether each key of wanted ({{key, kind}...}) is missing or of its kind (a step-6 guard: a
-- hand-edited key makes the step write nothing, as the module's).
local function emq_flow_kinds(wanted)
  for _, k in ipairs(wanted) do
    local t = redis.call('TYPE', k[1])['ok']
    if t ~= 'none' and t ~= k[2] then return false end
  end
  return true
end

local function emq_flow_job(x)
  return string.sub(x, 1, 3) == 'JOB'
end

local function emq_flow_name(q)
  return #q >= 1 and #q <= ${MAX_NAME_BYTES} and not string.find(q, '[{}%z]')
end

-- A decimal of s at at, at most most digits, no leading zero, ended by a NUL: the number and the
-- place after the NUL, or nil.
local function emq_flow_decimal(s, at, most)
  local z = string.find(s, '\\0', at, true)
  if not z then return nil end
  local d = string.sub(s, at, z - 1)
  if #d < 1 or #d > most or not (d == '0' or string.find(d, '^[1-9][0-9]*$')) then return nil end
  return tonumber(d), z + 1
end

-- A step's options as entries and subtrees carry them ('<opts length>\\0<opts>', then the rest) at
-- at in s: the options (through the options gate) and the place after them, or nil.
local function emq_flow_opts_at(s, at)
  local len
  len, at = emq_flow_decimal(s, at, 4)
  if not len or len > ${MAX_OPTIONS_BYTES} or #s - at + 1 < len then return nil end
  local o = string.sub(s, at, at + len - 1)
  local _, e = emq_options(o)
  if e then return nil end
  return o, at + len
end

-- opts as entries and subtrees carry them: '<opts length>\\0<opts>'.
local function emq_flow_prefixed(o)
  return #o .. '\\0' .. o
end

-- The lane and priority options o (gated) give: the default lane at 0 when none.
local function emq_flow_place(o)
  local t = emq_options(o) or {}
  return t['lane'] or '', t['priority'] or 0
end

-- A subtree ('<n>\\0<payload length>\\0<payload>' then per child '<id>\\0<queue>\\0<policy>\\0<opts
-- length>\\0<opts><body length>\\0<body>') parsed: {payload, kids = {{id, queue, policy, opts, body}...}}, each nested child
-- (policy >= 4) checked the same way with one level less; nil when malformed, or nested deeper than
-- levels levels of children.
local function emq_flow_subtree(s, levels)
  if levels < 1 then return nil end
  local n, at = emq_flow_decimal(s, 1, 5)
  if not n then return nil end
  local len
  len, at = emq_flow_decimal(s, at, 7)
  if not len or n == 0 or n > ${MAX_BATCH} or #s - at + 1 < len then return nil end
  local payload, kids = string.sub(s, at, at + len - 1), {}
  at = at + len
  for k = 1, n do
    local z1 = string.find(s, '\\0', at, true)
    local z2 = z1 and string.find(s, '\\0', z1 + 1, true)
    local z3 = z2 and string.find(s, '\\0', z2 + 1, true)
    if not z3 then return nil end
    local id, q, p = string.sub(s, at, z1 - 1), string.sub(s, z1 + 1, z2 - 1), string.sub(s, z2 + 1, z3 - 1)
    local o, blen
    o, at = emq_flow_opts_at(s, z3 + 1)
    if not o then return nil end
    blen, at = emq_flow_decimal(s, at, 7)
    if not blen or not emq_flow_job(id) or not emq_flow_name(q) or not string.find(p, '^[0-7]$') or #s - at + 1 < blen then
      return nil
    end
    local body = string.sub(s, at, at + blen - 1)
    at = at + blen
    p = tonumber(p)
    if p >= 4 and not emq_flow_subtree(body, levels - 1) then return nil end
    kids[k] = {id = id, queue = q, policy = p, opts = o, body = body}
  end
  if at ~= #s + 1 then return nil end
  return {payload = payload, kids = kids}
end

-- An entry an outbox holds for queue own, parsed ({kind = 'cancel', id, parent}, {kind = 'child', id,
-- parent, opts, body}, {kind = 'node', id, parent, opts, payload, kids} or {kind = 'done', parent, index, child, state,
-- detail}), or nil.
local function emq_flow_parse(entry, own)
  local f = emq_flow_fields(entry, 7)
  if not f or f[2] ~= own then return nil end
  if f[1] == 'child' or f[1] == 'cancel' or f[1] == 'node' then
    local q = f[4]
    if not (emq_flow_job(f[3]) and emq_flow_name(q) and emq_flow_job(f[5]) and emq_flow_index(f[6])) then return nil end
    local parent = q .. '\\0' .. f[5] .. '\\0' .. f[6]
    if f[1] == 'cancel' then
      if f[7] ~= '' then return nil end
      return {kind = 'cancel', id = f[3], parent = parent}
    end
    local o, at = emq_flow_opts_at(f[7], 1)
    if not o then return nil end
    local body = string.sub(f[7], at)
    if f[1] == 'node' then
      local t = emq_flow_subtree(body, ${MAX_FLOW_DEPTH} - 1)
      if not t then return nil end
      return {kind = 'node', id = f[3], parent = parent, opts = o, payload = t.payload, kids = t.kids}
    end
    return {kind = 'child', id = f[3], parent = parent, opts = o, body = body}
  end
  if f[1] ~= 'done' or not (emq_flow_job(f[3]) and emq_flow_index(f[4]) and emq_flow_job(f[5])
    and (f[6] == 'completed' or f[6] == 'failed' or f[6] == 'removed')) then return nil end
  return {kind = 'done', parent = f[3], index = f[4], child = f[5], state = f[6], detail = f[7]}
end

-- Step 5 of making flow steps at places (lanes, prios: by place; extra: a lane more, the parent's, or
-- nil): whether they make the queue laned (one has a lane, the queue is not laned), then the keys
-- that needs typed, as ENQUEUE's (pending, prioritized, the default lane's); the ready plan of the
-- ids (or false when none). Returns the plan and whether it lanes, or nil, nil and the refusal.
local function emq_flow_places(base, ids, lanes, prios, extra, missing)
  local laning = extra ~= nil and extra ~= ''
  for _, L in ipairs(lanes) do laning = laning or L ~= '' end
  laning = laning and emq_laned() == nil
  if laning then
    local _, e = emq_kinds({{base .. '${KEY.pending}', 'list'}}, missing) if e then return nil, nil, e end
    e = emq_counter(KEYS[1], '${META.prioritized}') if e then return nil, nil, e end
    e = emq_lane_kinds(base, {''}, missing) if e then return nil, nil, e end
  end
  if #ids == 0 then return false, laning end
  local plan, e = emq_ready_plan(base, ids, {}, missing, prios, lanes) if e then return nil, nil, e end
  return plan, laning
end

-- Step 6, first, when emq_flow_places found it lanes: the queue made laned (as ENQUEUE's first
-- laned job), the plan's pushes then those of a laned queue.
local function emq_flow_laned(base, plan)
  local now, d = emq_now(), emq_lane_defaults()
  emq_laning(base, now, d)
  emq_meta_done()
  if plan then plan.laned, plan.begins, plan.now, plan.d = true, nil, now, d end
end

-- Step 6: a step's row given its options o (when any) and its place's priority and lane.
local function emq_flow_row_opts(row, o)
  if o == '' then return end
  redis.call('HSET', row, '${ROW.opts}', o)
  local L, p = emq_flow_place(o)
  if p > 0 then redis.call('HSET', row, '${ROW.priority}', emq_int(p)) end
  if L ~= '' then redis.call('HSET', row, '${ROW.lane}', L) end
end

-- Step 6: child id made in this queue, pending, naming parent (its row missing), with options o:
-- enqueued + 1 (the queue laned first when it is the first job with a lane), the row, pushed on
-- the head of its lane's ready list at its priority; 'ready' on wake when the queue had none; an
-- 'enqueued' event names it. False (nothing written) when a key it needs is of another type.
local function emq_flow_child(base, id, parent, o, body)
  if not emq_flow_kinds({{base .. '${KEY.pending}', 'list'}, {base .. '${KEY.wake}', 'zset'}})
    or emq_counter(KEYS[1], '${META.enqueued}') then return false end
  local L, p = emq_flow_place(o)
  local plan, laning, e = emq_flow_places(base, {id}, {L}, {p}, nil, {}) if e then return false end
  local now = emq_int(emq_now())
  if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', now) end
  if laning then emq_flow_laned(base, plan) end
  redis.call('HINCRBY', KEYS[1], '${META.enqueued}', 1)
  local was_empty = not emq_ready_any(base)
  local row = base .. '${KEY_PREFIX.job}' .. id
  redis.call('HSET', row, '${ROW.state}', '${STATE.pending}', '${ROW.payload}', body,
    '${ROW.attempts}', '0', '${ROW.created_ms}', now, '${ROW.parent}', parent)
  emq_flow_row_opts(row, o)
  emq_ready_push(plan, 'LPUSH')
  if was_empty then redis.call('ZADD', base .. '${KEY.wake}', 0, '${WAKE.ready}') end
  -- no event when the stream is of another type (a hand-edited key): the child stands
  if emq_flow_kinds({{base .. '${KEY.events}', 'stream'}}) then ${luaEvent("enqueued", { jobs: "id" })} end
  return true
end

-- Step 6: child id made in this queue as a parent waiting for kids (its row missing), naming
-- parent: enqueued + 1, the row (as FLOW's parent, with parent), in waiting (no deadline); each
-- leaf child of this queue made at once (emq_flow_child), each other child an entry of this
-- queue's outbox ('node' for a child with children, even to this queue). False (nothing written)
-- when a key it needs is of another type.
local function emq_flow_node(base, id, parent, o, payload, kids)
  local waiting, outbox = base .. '${KEY.waiting}', base .. '${KEY.outbox}'
  if not emq_flow_kinds({{waiting, 'zset'}, {outbox, 'zset'}}) or emq_counter(KEYS[1], '${META.enqueued}') then return false end
  local _, laning, e = emq_flow_places(base, {}, {}, {}, (emq_flow_place(o)), {}) if e then return false end
  local own, now = string.sub(base, 6, -3), emq_int(emq_now())
  if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', now) end
  if laning then emq_flow_laned(base, nil) end
  redis.call('HINCRBY', KEYS[1], '${META.enqueued}', 1)
  local row = base .. '${KEY_PREFIX.job}' .. id
  redis.call('HSET', row, '${ROW.state}', '${STATE.waiting}', '${ROW.payload}', payload, '${ROW.attempts}', '0',
    '${ROW.created_ms}', now, '${ROW.children}', emq_int(#kids), '${ROW.finished}', '0', '${ROW.parent}', parent)
  emq_flow_row_opts(row, o)
  -- the edges in runs that stay under Lua's stack limit
  for first = 1, #kids, 1000 do
    local f = {}
    for i = first, math.min(first + 999, #kids) do
      local k = kids[i]
      f[#f + 1] = '${FLOW_FIELDS.child}' .. (i - 1)
      f[#f + 1] = k.queue .. '\\0' .. k.id .. '\\0' .. (k.policy % 4)
    end
    redis.call('HSET', row, unpack(f))
  end
  redis.call('ZADD', waiting, '${WAITING_FOREVER}', id)
  -- its event before its children's (no event when the stream is of another type, a hand-edited
  -- key: the node stands)
  if emq_flow_kinds({{base .. '${KEY.events}', 'stream'}}) then ${luaEvent("waiting", { jobs: "id" })} end
  for i, k in ipairs(kids) do
    if k.policy < 4 and k.queue == own then
      if redis.call('EXISTS', base .. '${KEY_PREFIX.job}' .. k.id) == 0 then
        emq_flow_child(base, k.id, own .. '\\0' .. id .. '\\0' .. (i - 1), k.opts, k.body)
      end
    else
      local kind = k.policy >= 4 and 'node' or 'child'
      redis.call('ZADD', outbox, now, table.concat({kind, k.queue, k.id, own, id, i - 1, emq_flow_prefixed(k.opts) .. k.body}, '\\0'))
    end
  end
  return true
end

-- A parent's count field (0 when missing or not a counter).
local function emq_flow_number(v)
  if not v or emq_counter_text(v) then return 0 end
  return tonumber(v)
end

-- Step 6: the children of parent (its row row) that have not finished: each one of another queue
-- cancelled by a 'cancel' entry of this queue's outbox (none more once the outbox is of another
-- type); those of this queue returned ({{id, its parent field}...}).
local function emq_flow_unfinished(base, row, parent)
  local own, outbox, here = string.sub(base, 6, -3), base .. '${KEY.outbox}', {}
  local n = emq_flow_number(redis.call('HGET', row, '${ROW.children}'))
  for i = 0, n - 1 do
    local edge = not redis.call('HGET', row, '${FLOW_FIELDS.done}' .. i) and redis.call('HGET', row, '${FLOW_FIELDS.child}' .. i)
    local e = edge and emq_flow_fields(edge, 3)
    if e and e[1] == own then
      here[#here + 1] = {e[2], own .. '\\0' .. parent .. '\\0' .. i}
    elseif e then
      if not emq_flow_kinds({{outbox, 'zset'}}) then return here end
      redis.call('ZADD', outbox, emq_now(), table.concat({'cancel', e[1], e[2], own, parent, i, ''}, '\\0'))
    end
  end
  return here
end

-- Step 6: a tombstone at row (a child of parent): state cancelled, expiring after TOMBSTONE_MS, so
-- that a late creation of the child (a second delivery of its entry) finds a row and makes nothing.
local function emq_flow_tombstone(row, parent)
  redis.call('HSET', row, '${ROW.state}', '${STATE.cancelled}', '${ROW.parent}', parent)
  redis.call('PEXPIRE', row, ${TOMBSTONE_MS})
end

-- Step 6: child id of this queue, naming parent, cancelled unless it started: a pending job never
-- claimed (attempts 0) leaves its ready list and its row is deleted ('ready' leaves wake when no
-- ready job is left); a child parent that waits (never claimed) leaves waiting, its own unfinished
-- children are cancelled the same way (a work list: Lua locals cannot recurse through each other)
-- and its row is deleted; each child deleted writes a 'removed' event; a missing row becomes a tombstone when tombstone (state cancelled,
-- expiring after TOMBSTONE_MS), which a late creation finds. Whether it wrote (the first child).
local function emq_flow_cancel(base, id, parent, tombstone)
  local work, first, gone = {{id, parent, tombstone}}, nil, {}
  while #work > 0 do
    local w = table.remove(work)
    local wrote = false
    local row = base .. '${KEY_PREFIX.job}' .. w[1]
    local t = redis.call('TYPE', row)['ok']
    local f = t == 'hash' and {redis.call('HGET', row, '${ROW.state}'), redis.call('HGET', row, '${ROW.attempts}'),
      redis.call('HGET', row, '${ROW.parent}')} or {}
    local pending, wake, waiting = base .. '${KEY.pending}', base .. '${KEY.wake}', base .. '${KEY.waiting}'
    if t == 'none' then
      if w[3] then
        emq_flow_tombstone(row, w[2])
        wrote = true
      end
    elseif f[1] == '${STATE.waiting}' and f[2] == '0' and f[3] == w[2] then
      if emq_flow_kinds({{waiting, 'zset'}}) then
        redis.call('ZREM', waiting, w[1])
        for _, k in ipairs(emq_flow_unfinished(base, row, w[1])) do work[#work + 1] = {k[1], k[2], true} end
        redis.call('DEL', row)
        gone[#gone + 1] = w[1]
        wrote = true
      end
    elseif f[1] == '${STATE.pending}' and f[2] == '0' and f[3] == w[2] and emq_flow_kinds({{pending, 'list'}, {wake, 'zset'}})
      and emq_flow_kinds({{KEYS[1], 'hash'}}) then
      -- in its lane at its priority
      local plan, e = emq_ready_plan(base, {w[1]}, {row}, {}, nil, nil)
      if not e then
        local g = plan.groups[1]
        local took = redis.call('LREM', g.list, 0, w[1]) > 0
        if took and g.list ~= pending then
          redis.call('HINCRBY', KEYS[1], '${META.prioritized}', -1)
          if g.p > 0 and redis.call('LLEN', g.list) == 0 then redis.call('ZREM', base .. '${KEY_PREFIX.levels}' .. g.lane, emq_int(g.p)) end
        end
        if took and plan.laned then
          local L = g.lane
          emq_add_ready(base, L, -1)
          local key = base .. '${KEY_PREFIX.lane}' .. L
          if emq_backlog(base, L) <= 0 and redis.call('HGET', key, '${LANE.ring}') == '1' then
            redis.call('LREM', base .. '${KEY.ring}', 0, L)
            redis.call('HDEL', key, '${LANE.ring}')
          end
          emq_lane_idle(base, L, emq_now(), emq_lane_defaults())
        end
        redis.call('DEL', row)
        if took and not emq_ready_any(base) then redis.call('ZREM', wake, '${WAKE.ready}') end
        gone[#gone + 1] = w[1]
        wrote = true
      end
    end
    if first == nil then first = wrote end
  end
  -- a 'removed' event per child deleted, children before their parent: the work list deleted them
  -- in the reverse of the module's recursion (no event when meta or the stream is of another type)
  if #gone > 0 and emq_flow_kinds({{KEYS[1], 'hash'}, {base .. '${KEY.events}', 'stream'}}) then
    for i = #gone, 1, -1 do
      local x = gone[i]
      ${luaEvent("removed", { jobs: "x" })}
    end
  end
  return first
end

-- Step 6: the children of parent (its row row) that have not finished are cancelled: one of this
-- queue at once when here (emq_flow_cancel; a tombstone when its row is missing: a child with
-- children may still be in the outbox; DROP passes false: it deletes them itself), one of another
-- queue by a 'cancel' entry of this queue's outbox.
local function emq_flow_cancel_unfinished(base, row, parent, here)
  local kids = emq_flow_unfinished(base, row, parent)
  if not here then return end
  for _, k in ipairs(kids) do emq_flow_cancel(base, k[1], k[2], true) end
end

-- Step 5 of FLOW and ADOPT: each child with children (policy >= 4) must carry a well-formed
-- subtree. The refusal ('entry-form'), or nil.
local function emq_flow_forms(n, policy, body)
  for j = 1, n do
    if policy[j] >= 4 and not emq_flow_subtree(body[j], ${MAX_FLOW_DEPTH} - 1) then return emq_refuse['entry-form']({}) end
  end
end

-- The ids of the children FLOW and ADOPT made here (here: their places in the call), as an event's list.
local function emq_flow_made(id, here)
  local ids = {}
  for k, j in ipairs(here) do ids[k] = id[j] end
  return emq_list(ids)
end

-- Step 5 of FLOW and ADOPT: the places of the children of this queue without children (here) and
-- their rows, each of which must be missing (else 'duplicate', the first such id), appended to
-- missing; a child with children is never made here (it travels through the outbox). Returns
-- here, rows, or nil, nil and the refusal.
local function emq_flow_here(base, n, id, queue, policy, missing)
  local own, here, rows = string.sub(base, 6, -3), {}, {}
  for j = 1, n do
    if queue[j] == own and policy[j] < 4 then
      local row = base .. '${KEY_PREFIX.job}' .. id[j]
      local found, e = emq_read('EXISTS', row) if e then return nil, nil, e end
      if found == 1 then return nil, nil, emq_refuse['duplicate']({id = id[j]}) end
      here[#here + 1], rows[#rows + 1], missing[#missing + 1] = j, row, row
    end
  end
  return here, rows
end

-- Step 5 of FLOW and ADOPT, after the keys' types: enqueued a counter, the laning when the parent
-- (extra: its lane, FLOW's) or a child here is the first job with a lane, then the ready plan of the
-- children here (false when none), each in its lane at its priority (its options, o). Returns the
-- plan and whether it lanes, or nil, nil and the refusal.
local function emq_flow_plan(base, here, id, o, extra, missing)
  local e = emq_counter(KEYS[1], '${META.enqueued}') if e then return nil, nil, e end
  local ids, prios, lanes = {}, {}, {}
  for k, j in ipairs(here) do
    ids[k] = id[j]
    lanes[k], prios[k] = emq_flow_place(o[j])
  end
  return emq_flow_places(base, ids, lanes, prios, extra, missing)
end

-- Step 6 of FLOW and ADOPT: the children of parent (its row row) at places from, from + 1, ...:
-- enqueued + the children here (and extra: the parent, for FLOW), each one's child:<i> field on
-- the parent's row, each child here made (pending, naming its parent: the head of the default
-- lane's ready list), each child elsewhere a 'child' entry of the outbox (a child with children: a
-- 'node' entry, even to this queue). The children made here.
local function emq_flow_write(base, row, parent, from, n, id, queue, policy, o, body, here, rows, plan, extra)
  local own, at = string.sub(base, 6, -3), emq_int(emq_now())
  redis.call('HINCRBY', KEYS[1], '${META.enqueued}', extra + #here)
  -- the edges in runs that stay under Lua's stack limit
  for first = 1, n, 1000 do
    local f = {}
    for j = first, math.min(first + 999, n) do
      f[#f + 1] = '${FLOW_FIELDS.child}' .. (from + j - 1)
      f[#f + 1] = queue[j] .. '\\0' .. id[j] .. '\\0' .. emq_int(policy[j] % 4)
    end
    redis.call('HSET', row, unpack(f))
  end
  if #here > 0 then
    local was_empty = not emq_ready_any(base)
    for k, j in ipairs(here) do
      redis.call('HSET', rows[k], '${ROW.state}', '${STATE.pending}', '${ROW.payload}', body[j], '${ROW.attempts}', '0',
        '${ROW.created_ms}', at, '${ROW.parent}', own .. '\\0' .. parent .. '\\0' .. (from + j - 1))
      emq_flow_row_opts(rows[k], o[j])
    end
    emq_ready_push(plan, 'LPUSH')
    if was_empty then redis.call('ZADD', base .. '${KEY.wake}', 0, '${WAKE.ready}') end
  end
  local outbox = base .. '${KEY.outbox}'
  for j = 1, n do
    if queue[j] ~= own or policy[j] >= 4 then
      local kind = policy[j] >= 4 and 'node' or 'child'
      redis.call('ZADD', outbox, at, table.concat({kind, queue[j], id[j], own, parent, from + j - 1, emq_flow_prefixed(o[j]) .. body[j]}, '\\0'))
    end
  end
  return #here
end

-- Step 6: the waiting parent (its row row) leaves waiting for the head of pending (nothing when a
-- key it needs is of another type).
local function emq_flow_wake(base, row, parent)
  local waiting = base .. '${KEY.waiting}'
  if not emq_flow_kinds({{base .. '${KEY.pending}', 'list'}, {base .. '${KEY.wake}', 'zset'}, {waiting, 'zset'}}) then return end
  -- in its lane at its priority (FLOW's parent_opts, a node's options)
  local plan, e = emq_ready_plan(base, {parent}, {row}, {}, nil, nil) if e then return end
  local was_empty = not emq_ready_any(base)
  redis.call('ZREM', waiting, parent)
  emq_ready_push(plan, 'LPUSH')
  redis.call('HSET', row, '${ROW.state}', '${STATE.pending}')
  if was_empty then redis.call('ZADD', base .. '${KEY.wake}', 0, '${WAKE.ready}') end
  -- no event when the stream is of another type (a hand-edited key): the move stands
  if emq_flow_kinds({{base .. '${KEY.events}', 'stream'}}) then ${luaEvent("ready", { jobs: "parent" })} end
end

-- Step 6: the waiting parent (its row row) buried with reason (its retention is the next BURY's or
-- CLAIM's). False (nothing written) when a key it needs is of another type.
local function emq_flow_bury(base, row, parent, reason)
  local waiting, dead = base .. '${KEY.waiting}', base .. '${KEY.dead}'
  if not emq_flow_kinds({{KEYS[1], 'hash'}, {dead, 'zset'}, {waiting, 'zset'}}) or emq_counter(KEYS[1], '${META.buried}') then return false end
  local now = emq_now()
  redis.call('ZREM', waiting, parent)
  redis.call('ZADD', dead, now, parent)
  redis.call('HSET', row, '${ROW.state}', '${STATE.dead}', '${ROW.reason}', reason, '${ROW.buried_ms}', emq_int(now))
  redis.call('HINCRBY', KEYS[1], '${META.buried}', 1)
  if emq_flow_kinds({{base .. '${KEY.events}', 'stream'}}) then ${luaEvent("dead", { jobs: "parent", reason: "reason" })} end
  return true
end

-- Step 6: child's (place index) outcome state (detail) recorded on parent of this queue, once:
-- nothing when its row is gone, names another child there, or already holds the outcome (a failure
-- of policy 2 as 'removed', without its reason; a result longer than CHILD_RESULT_KEPT_BYTES as
-- 'large' with its length). Then, while the parent waits: a failure of policy
-- 0 buries it; a failure of policy 3, or the last outcome, makes it ready.
-- Whether it recorded, and the reason when it buried the parent (emq_flow_up tells the parent's own).
local function emq_flow_record_once(base, parent, index, child, state, detail)
  local row = base .. '${KEY_PREFIX.job}' .. parent
  if redis.call('TYPE', row)['ok'] ~= 'hash' then return false end
  local edge = redis.call('HGET', row, '${FLOW_FIELDS.child}' .. index)
  local e = edge and emq_flow_fields(edge, 3)
  if not e or e[2] ~= child or redis.call('HGET', row, '${FLOW_FIELDS.done}' .. index) then return false end
  local finished = emq_flow_number(redis.call('HGET', row, '${ROW.finished}')) + 1
  local children = emq_flow_number(redis.call('HGET', row, '${ROW.children}'))
  local waits = redis.call('HGET', row, '${ROW.state}') == '${STATE.waiting}'
  local failed = state == 'failed'
  local outcome = state .. '\\0' .. detail
  if failed and e[3] == '2' then outcome = 'removed\\0'
  elseif #detail > ${CHILD_RESULT_KEPT_BYTES} then outcome = 'large\\0' .. #detail end
  redis.call('HSET', row, '${FLOW_FIELDS.done}' .. index, outcome, '${ROW.finished}', emq_int(finished))
  if not waits then return true end
  if failed and e[3] == '0' then
    local reason = string.sub('child ' .. e[1] .. ' ' .. child .. ' failed: ' .. detail, 1, ${MAX_REASON_BYTES})
    if emq_flow_bury(base, row, parent, reason) then
      emq_flow_cancel_unfinished(base, row, parent, true)
      return true, reason
    end
  elseif (finished >= children and not redis.call('HGET', row, '${ROW.open}')) or (failed and e[3] == '3') then
    emq_flow_wake(base, row, parent)
  end
  return true
end

-- Step 6: job id's (its row row) outcome state (detail) is news for the parent its row names: one
-- of another queue gets a 'done' entry of this queue's outbox. The parent's fields ({queue, id,
-- place}) when it is of this queue, else nil.
local function emq_flow_tell(base, row, id, state, detail)
  local own, outbox = string.sub(base, 6, -3), base .. '${KEY.outbox}'
  -- (a row SETTLE read before any write holds its parent already)
  local known = emq_held_known[row]
  local named
  if known then named = known[4] else named = redis.call('HGET', row, '${ROW.parent}') end
  local p = named and emq_flow_fields(named, 3)
  if p and p[1] == own then return p end
  if p and emq_flow_kinds({{outbox, 'zset'}}) then
    redis.call('ZADD', outbox, emq_now(), table.concat({'done', p[1], p[2], p[3], id, state, detail}, '\\0'))
  end
  return nil
end

-- Step 6: a child parent id buried with reason tells its own parent it failed, and so on up while
-- each parent of this queue is buried in turn (a loop: Lua locals cannot recurse through each other).
local function emq_flow_up(base, id, reason)
  while reason do
    local p = emq_flow_tell(base, base .. '${KEY_PREFIX.job}' .. id, id, 'failed', reason)
    if not p then return end
    local _, next = emq_flow_record_once(base, p[2], p[3], id, 'failed', reason)
    id, reason = p[2], next
  end
end

-- Step 6: emq_flow_record_once, then a parent it buried tells its own (emq_flow_up). Whether it recorded.
local function emq_flow_record(base, parent, index, child, state, detail)
  local recorded, reason = emq_flow_record_once(base, parent, index, child, state, detail)
  if reason then emq_flow_up(base, parent, reason) end
  return recorded
end

-- Step 6 of SEAL: parent (its row row), when it waits, is sealed and its children have all
-- finished, leaves waiting for the head of pending.
local function emq_flow_wake_when_done(base, row, parent)
  if redis.call('HGET', row, '${ROW.state}') == '${STATE.waiting}' and not redis.call('HGET', row, '${ROW.open}')
    and emq_flow_number(redis.call('HGET', row, '${ROW.finished}')) >= emq_flow_number(redis.call('HGET', row, '${ROW.children}')) then
    emq_flow_wake(base, row, parent)
  end
end

-- Step 6 of OUTBOX: parent of waiting whose flow deadline passed is buried, when it still waits,
-- with the reason 'flow deadline passed: <finished> of <children> children finished', and its
-- unfinished children cancelled; a member whose row no longer waits just leaves waiting.
local function emq_flow_expire(base, parent)
  local row = base .. '${KEY_PREFIX.job}' .. parent
  if redis.call('TYPE', row)['ok'] ~= 'hash' or redis.call('HGET', row, '${ROW.state}') ~= '${STATE.waiting}' then
    redis.call('ZREM', base .. '${KEY.waiting}', parent)
    return
  end
  local reason = 'flow deadline passed: ' .. emq_flow_number(redis.call('HGET', row, '${ROW.finished}')) .. ' of ' ..
    emq_flow_number(redis.call('HGET', row, '${ROW.children}')) .. ' children finished'
  if emq_flow_bury(base, row, parent, reason) then
    emq_flow_cancel_unfinished(base, row, parent, true)
    emq_flow_up(base, parent, reason)
  end
end

-- Step 6 of ACK and BURY: each of the n settled jobs (ids id, rows rows) that names a parent has
-- its outcome state (detail[j]) recorded there: on a parent of this queue at once, else as a
-- 'done' entry of this queue's outbox.
local function emq_flow_settled(base, n, id, rows, state, detail)
  for j = 1, n do
    local p = emq_flow_tell(base, rows[j], id[j], state, detail[j])
    if p then emq_flow_record(base, p[2], p[3], id[j], state, detail[j]) end
  end
end
`;
