/**
 * The queue's limits as Lua (the twin of `native/src/verbs/limits.rs`): reading `meta`'s
 * `concurrency`, `rate`, `tat` and `parked` (a stored value that LIMIT or CLAIM would not have
 * written counts as absent), the generic cell-rate algorithm in exact integers (docs/WIRE.md,
 * "Limits"), and the wake a settle gives when it frees a slot of a limited queue.
 *
 * Lua numbers are doubles: every value below stays under 2^53, and every division is of a
 * non-negative integer by a positive one, computed as `(a - fmod(a, b)) / b` (exact), never as a
 * rounded float quotient.
 *
 * @module
 */
import { MAX_BURST, MAX_CONCURRENCY, MAX_DIGITS, MAX_RATE, MAX_RATE_PERIOD_MS, META, WAKE } from "../wire/mod.ts";

/** `emq_concurrency(meta)`, `emq_limits(meta)`, `emq_tokens`, `emq_take`, `emq_next_token`, `emq_freeing` and `emq_freed`. */
export const LIMITS_LUA: string = `
-- floor(a / b) for a >= 0 and b > 0, exactly
local function emq_div(a, b)
  return (a - math.fmod(a, b)) / b
end

-- A stored decimal of 1 to ${MAX_DIGITS} digits within [lo, hi], or nil.
local function emq_stored(text, lo, hi)
  if not text or #text > ${MAX_DIGITS} or not string.find(text, '^[0-9]+$') then return nil end
  local n = tonumber(text)
  if n < lo or n > hi then return nil end
  return n
end

-- The queue's concurrency limit, or nil (meta: its type).
local function emq_concurrency(meta)
  if meta ~= 'hash' then return nil end
  return emq_stored(redis.call('HGET', KEYS[1], '${META.concurrency}'), 1, ${MAX_CONCURRENCY})
end

-- The queue's limits (meta: its type): {conc, rate = {max, per, burst}, q, r, parked}, each nil
-- when absent or not as LIMIT, CLAIM and PENALIZE write it.
local function emq_limits(meta)
  local l = {}
  if meta ~= 'hash' then return l end
  l.conc = emq_concurrency(meta)
  l.parked = emq_stored(redis.call('HGET', KEYS[1], '${META.parked}'), 0, 1e15)
  local rate = redis.call('HGET', KEYS[1], '${META.rate}')
  if rate then
    local m, p, b = string.match(rate, '^([0-9]+) ([0-9]+) ([0-9]+)$')
    m, p, b = emq_stored(m, 1, ${MAX_RATE}), emq_stored(p, 1, ${MAX_RATE_PERIOD_MS}), emq_stored(b, 1, ${MAX_BURST})
    if m and p and b then
      l.rate = {max = m, per = p, burst = b}
      local q, r = string.match(redis.call('HGET', KEYS[1], '${META.tat}') or '', '^([0-9]+) ([0-9]+)$')
      q, r = emq_stored(q, 0, 1e15), emq_stored(r, 0, m - 1)
      if q and r then l.q, l.r = q, r end
    end
  end
  return l
end

-- The rate's tokens at now, and the state they count from: max(TAT, now) as (q, r).
local function emq_tokens(l, now)
  local rate, q, r = l.rate, l.q or 0, l.r or 0
  if not (q > now or (q == now and r > 0)) then q, r = now, 0 end
  local num = (now - q) * rate.max - r + rate.burst * rate.per
  local n = 0
  if num > 0 then n = math.min(emq_div(num, rate.per), rate.burst) end
  return n, q, r
end

-- The state after k tokens are taken from (q, r): TAT + k * per / max.
local function emq_take(rate, q, r, k)
  local s = r + k * rate.per
  local m = math.fmod(s, rate.max)
  return q + (s - m) / rate.max, m
end

-- When the next token comes, from state (q, r) with none left: q + ceil((r - (burst - 1) * per) / max).
local function emq_next_token(rate, q, r)
  local x = r - (rate.burst - 1) * rate.per
  if x >= 0 then return q + emq_div(x + rate.max - 1, rate.max) end
  return q - emq_div(-x, rate.max)
end

-- A settle's step 5 on a queue with a concurrency limit: the types of pending and wake, which the
-- wake of emq_freed reads and writes (missing ones listed for the probe). Returns nil (no limit) or
-- {pending, wake}, or nil and the refusal.
local function emq_freeing(base, meta, missing)
  if not emq_concurrency(meta) then return nil end
  local f = {base = base, pending = base .. 'pending', wake = base .. 'wake'}
  local _, e = emq_kinds({{f.pending, 'list'}, {f.wake, 'zset'}}, missing) if e then return nil, e end
  return f
end

-- A settle's last write on a queue with a concurrency limit: a slot is free, so 'ready' on wake
-- while pending holds ids.
local function emq_freed(f)
  if f and emq_ready_any(f.base) then redis.call('ZADD', f.wake, 0, '${WAKE.ready}') end
end
`;
