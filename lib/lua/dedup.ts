/**
 * Deduplication, as Lua (the twin of `native/src/verbs/dedup.rs`): the queue's `dedup` hash (key →
 * `<id> <until_ms>`) and `dedup_ttl` sorted set (keys whose job settled before their window
 * ended). An admission asks `emq_holder` whether a key is held; a job that leaves for good lets its
 * key go (`emq_letting_go` checks, `emq_let_go` writes); CLAIM drops the windows that ended
 * (`emq_dedup_expired`, `emq_drop_expired`). Docs: docs/WIRE.md, "Deduplication".
 *
 * @module
 */
import { CLAIM_MOVE_LIMIT, MAX_DIGITS, ROW, STATE } from "../wire/mod.ts";
import { KEY, KEY_PREFIX } from "./keys.ts";

/** The deduplication functions every admitting, settling and claiming script shares. */
export const DEDUP_LUA: string = `
-- Opens dedup (hash) then dedup_ttl (sorted set); a missing one is remembered in missing.
-- Returns {hash, ttl}, or nil and the refusal.
local function emq_dedup_open(base, missing)
  local d = {hash = base .. '${KEY.dedup}', ttl = base .. '${KEY.dedup_ttl}'}
  local _, e = emq_kinds({{d.hash, 'hash'}, {d.ttl, 'zset'}}, missing) if e then return nil, e end
  return d
end

-- A dedup entry '<id> <until_ms>': the id and the window's end, or nil when malformed.
local function emq_dedup_entry(value)
  local id, untl = string.match(value, '^([^ ]+) ([0-9]+)$')
  if not id or #untl > ${MAX_DIGITS} then return nil end
  return id, tonumber(untl)
end

-- The job holding key: {id, row, waiting, scheduled, active}, or false when the key is free (no entry, or
-- its job is gone, dead or never was and its window has ended); or nil and the refusal.
local function emq_holder(base, d, key, now, missing)
  local value = redis.call('HGET', d.hash, key)
  if not value then return false end
  local id, untl = emq_dedup_entry(value)
  if not id then return false end
  local row = base .. '${KEY_PREFIX.job}' .. id
  local t, e = emq_type(row, 'hash') if e then return nil, e end
  if t == 'none' then missing[#missing + 1] = row end
  local state = t == 'hash' and redis.call('HGET', row, '${ROW.state}') or false
  local scheduled = state == '${STATE.scheduled}'
  local waiting = scheduled or state == '${STATE.pending}'
  local active = state == '${STATE.active}'
  if waiting or active or now < untl then
    return {id = id, row = row, waiting = waiting, scheduled = scheduled, active = active}
  end
  return false
end

-- Step 6 of an admission that takes key for job id: the entry, and the key leaves dedup_ttl.
local function emq_dedup_take(d, key, id, untl)
  redis.call('HSET', d.hash, key, id .. ' ' .. emq_int(untl))
  redis.call('ZREM', d.ttl, key)
end

-- Step 5 of jobs leaving for good (ACK, BURY, REMOVE): each existing row's dedup key, in argument
-- order, with the job's id (jobs: {{id, row}, ...}); when any, the deduplication keys opened.
-- Returns {d, keys} or false, or nil and the refusal.
local function emq_letting_go(base, jobs, missing)
  local keys = {}
  for _, job in ipairs(jobs) do
    -- (a missing row has no options: HGET answers nil; its callers typed each row a hash or missing;
    -- a row SETTLE found held was read before any write)
    local known = emq_held_known[job[2]]
    local opts
    if known then opts = known[5] else opts = redis.call('HGET', job[2], '${ROW.opts}') end
    -- (options without the text 'dedup=' name no key: not parsed)
    if opts and string.find(opts, 'dedup=', 1, true) then
      local o = emq_options(opts)
      if o and o['dedup'] then keys[#keys + 1] = {o['dedup'], job[1]} end
    end
  end
  if #keys == 0 then return false end
  local d, e = emq_dedup_open(base, missing) if e then return nil, e end
  return {d = d, keys = keys}
end

-- Step 6 of emq_letting_go: each key still naming its job is deleted when its window has ended,
-- else kept until then and listed in dedup_ttl.
local function emq_let_go(going, now)
  if not going then return end
  for _, k in ipairs(going.keys) do
    local value = redis.call('HGET', going.d.hash, k[1])
    local id, untl = false, 0
    if value then id, untl = emq_dedup_entry(value) end
    if id == k[2] then
      if untl > now then
        redis.call('ZADD', going.d.ttl, emq_int(untl), k[1])
      else
        redis.call('HDEL', going.d.hash, k[1])
      end
    end
  end
end

-- Step 5 of CLAIM's upkeep: the keys of dedup_ttl whose window has ended (at most
-- ${CLAIM_MOVE_LIMIT}), with dedup opened when there are any. dedup_ttl's absence is not
-- remembered: a claim that finds none drops none. Returns {d, keys} or false, or nil and the refusal.
local function emq_dedup_expired(base, now, missing)
  local ttl = base .. '${KEY.dedup_ttl}'
  local t, e = emq_type(ttl, 'zset') if e then return nil, e end
  if t == 'none' then return false end
  local head = redis.call('ZRANGE', ttl, 0, 0, 'WITHSCORES')
  if not head[2] or tonumber(head[2]) > now then return false end
  local d, e = emq_dedup_open(base, missing) if e then return nil, e end
  local keys = redis.call('ZRANGEBYSCORE', ttl, '-inf', emq_int(now), 'LIMIT', 0, ${CLAIM_MOVE_LIMIT})
  return {d = d, keys = keys}
end

-- Step 6 of emq_dedup_expired.
local function emq_drop_expired(expired)
  if not expired then return end
  emq_each('HDEL', expired.d.hash, expired.keys)
  emq_each('ZREM', expired.d.ttl, expired.keys)
end
`;
