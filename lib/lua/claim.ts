/**
 * `EMQ.CLAIM` as Lua, steps 5–6. First the queue's upkeep: due scheduled ids move to the head of
 * pending (PROMOTE) and expired leases to its tail (REAP), at most {@link CLAIM_MOVE_LIMIT} each.
 * Dead jobs past the queue's retention are trimmed. Then, unless the queue is paused, up to count
 * ids are popped from the tail into active at now +
 * lease_ms, each with attempts + 1 and a fresh token from `meta`'s `tokens` counter (raised to now ×
 * {@link TOKENS_PER_MS} first when below it); tail ids whose
 * row is missing are popped and dropped. Everything is checked first, on the list as it will be
 * after the moves (expired ids from the last RPUSHed, then pending from its tail, then the due ids
 * in LPUSH order), and written after. The scripts never wait: an idle worker waits on `wake`.
 * Deduplication windows that ended are dropped (`dedup.ts`).
 * Reply `[next_ms, [id, payload, attempts, token, opts]…]`.
 *
 * @module
 */
import { CLAIM_MOVE_LIMIT, META, ROW, STATE, TOKENS_PER_MS, WAKE } from "../wire/mod.ts";
import { luaScript } from "./_prelude.ts";
import { DEDUP_LUA } from "./dedup.ts";
import { LIMITS_LUA } from "./limits.ts";
import { MOVE_DUE_LUA } from "./move_due.ts";
import { RETENTION_LUA } from "./retention.ts";

/** The Lua twin of `EMQ.CLAIM`. */
export const CLAIM_LUA: string = luaScript(
  "CLAIM",
  `
local pending, active, schedule, wake = base .. 'pending', base .. 'active', base .. 'schedule', base .. 'wake'
local dead = base .. 'dead'
local s, e = emq_types({{pending, 'list'}, {active, 'zset'}, {schedule, 'zset'}, {dead, 'zset'}, {wake, 'zset'}})
if e then return e end
local meta, kinds, missing = s.meta, s.kinds, s.missing
local now = emq_now()
local due, e = emq_due(base, schedule, now, ${CLAIM_MOVE_LIMIT}, missing) if e then return e end
local expired, e = emq_due(base, active, now, ${CLAIM_MOVE_LIMIT}, missing) if e then return e end
local paused = meta == 'hash' and redis.call('HGET', KEYS[1], '${META.paused}') == '1'
-- The limits: paused or parked, nothing; else at most the concurrency limit's free slots (the
-- expired leases leave active first) and the rate limit's tokens.
local lim = emq_limits(meta)
local parked = lim.parked and lim.parked > now
local room, busy, allowed, q, r = count, 0, 0, 0, 0
if lim.conc then
  busy = (kinds[active] == 'zset' and redis.call('ZCARD', active) or 0) - #expired.ids
  room = math.min(room, math.max(0, lim.conc - busy))
end
if lim.rate then
  allowed, q, r = emq_tokens(lim, now)
  room = math.min(room, allowed)
end

-- The walk, writing nothing: candidates in the order RPOP will return them after the moves.
local len = kinds[pending] == 'list' and redis.call('LLEN', pending) or 0
local total = #expired.ids + len + #due.ids
local claimed, popped = {}, 0
local i = 0
while not paused and not parked and #claimed < room and i < total do
  i = i + 1
  local id, row, exists
  if i <= #expired.ids then
    local k = #expired.ids - i + 1
    id, row, exists = expired.ids[k], expired.rows[k], expired.exists[k]
  elseif i <= #expired.ids + len then
    id = redis.call('LINDEX', pending, -(i - #expired.ids))
    row = base .. 'job:' .. id
    local t, e = emq_type(row, 'hash') if e then return e end
    exists = t == 'hash'
    if not exists then missing[#missing + 1] = row end
  else
    local k = i - #expired.ids - len
    id, row, exists = due.ids[k], due.rows[k], due.exists[k]
  end
  popped = i
  if exists then
    e = emq_counter(row, '${ROW.attempts}') if e then return e end
    claimed[#claimed + 1] = {id = id, row = row}
  end
end
if #claimed > 0 then
  e = emq_counter(KEYS[1], '${META.tokens}') if e then return e end
  e = emq_counter(KEYS[1], '${META.claimed}') if e then return e end
end
local victims, e = emq_trim_select(base, dead, now, 0) if e then return e end
-- ended deduplication windows: only on a queue that ever took a key (meta's dedup)
local windows = false
if meta == 'hash' and redis.call('HGET', KEYS[1], '${META.dedup}') == '1' then
  windows, e = emq_dedup_expired(base, now, missing) if e then return e end
end
e = emq_local(cluster, missing) if e then return e end

-- Writes.
emq_move(schedule, pending, 'LPUSH', due)
emq_move(active, pending, 'RPUSH', expired)
if popped > 0 then redis.call('RPOP', pending, popped) end
emq_trim(dead, victims)
emq_drop_expired(windows)
local reply = {0}
if #claimed > 0 then
  -- tokens above now x ${TOKENS_PER_MS} (a queue made again never repeats a token of an earlier life):
  -- the counter goes to max(tokens, floor) + k, by HINCRBY (exact for any counter emq_counter admits)
  local old = tonumber(redis.call('HGET', KEYS[1], '${META.tokens}') or '0')
  local floor = now * ${TOKENS_PER_MS}
  local by = #claimed
  if old < floor then by = floor - old + #claimed end
  local last = redis.call('HINCRBY', KEYS[1], '${META.tokens}', emq_int(by))
  redis.call('HINCRBY', KEYS[1], '${META.claimed}', #claimed)
  if lim.rate then
    q, r = emq_take(lim.rate, q, r, #claimed)
    redis.call('HSET', KEYS[1], '${META.tat}', emq_int(q) .. ' ' .. emq_int(r))
  end
  local deadline = emq_int(now + lease_ms)
  for j, c in ipairs(claimed) do
    local token = last - #claimed + j
    redis.call('ZADD', active, deadline, c.id)
    local attempts = redis.call('HINCRBY', c.row, '${ROW.attempts}', 1)
    redis.call('HSET', c.row, '${ROW.state}', '${STATE.active}', '${ROW.deadline_ms}', deadline, '${ROW.token}', emq_int(token))
    -- HGET, not HMGET: a worker's documented ACL grants (docs/PACKAGE.md) list the commands the scripts run
    local opts = redis.call('HGET', c.row, '${ROW.opts}') or ''
    reply[j + 1] = {c.id, redis.call('HGET', c.row, '${ROW.payload}'), attempts, token, opts}
  end
end
-- wake: '${WAKE.ready}' while pending holds ids a claim could take now; a '${WAKE.due}' marker whose
-- time has come is spent.
local spent_rate = lim.rate and allowed - #claimed <= 0
local claimable = not paused and not parked and not spent_rate and not (lim.conc and busy + #claimed >= lim.conc)
if claimable and redis.call('LLEN', pending) > 0 then
  if redis.call('ZSCORE', wake, '${WAKE.ready}') ~= '0' then redis.call('ZADD', wake, 0, '${WAKE.ready}') end
elseif redis.call('ZSCORE', wake, '${WAKE.ready}') then
  redis.call('ZREM', wake, '${WAKE.ready}')
end
local spent = redis.call('ZSCORE', wake, '${WAKE.due}')
if spent and tonumber(spent) <= now then redis.call('ZREM', wake, '${WAKE.due}') end
-- next_ms: the earliest time a scheduled job falls due, a lease runs out, the park ends or the
-- spent rate limit allows a claim again (0: none).
local times = {}
for _, key in ipairs({schedule, active}) do
  local head = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  if head[2] then times[#times + 1] = tonumber(head[2]) end
end
if parked then times[#times + 1] = lim.parked end
if spent_rate then times[#times + 1] = emq_next_token(lim.rate, q, r) end
local next_ms = 0
for _, at in ipairs(times) do
  if next_ms == 0 or at < next_ms then next_ms = at end
end
reply[1] = next_ms
return reply
`,
  MOVE_DUE_LUA + RETENTION_LUA + DEDUP_LUA + LIMITS_LUA,
);
