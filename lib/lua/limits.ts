/**
 * The queue's limits as Lua (the twin of `native/src/verbs/limits.rs`): reading `meta`'s
 * `concurrency`, `rate`, `tat` and `parked` (a stored value that LIMIT or CLAIM would not have
 * written counts as absent) — and a lane's, whose hash uses the same field names —, and the generic
 * cell-rate algorithm in exact integers (docs/WIRE.md, "Limits").
 *
 * Lua numbers are doubles: every value below stays under 2^53, and every division is of a
 * non-negative integer by a positive one, computed as `(a - fmod(a, b)) / b` (exact), never as a
 * rounded float quotient.
 *
 * @module
 */
import { MAX_BURST, MAX_CONCURRENCY, MAX_DIGITS, MAX_RATE, MAX_RATE_PERIOD_MS, META } from "../wire/mod.ts";

/** `emq_concurrency(meta)`, `emq_parse_rate`, `emq_limits_parse`, `emq_limits_read(meta)`, `emq_tokens`, `emq_take` and `emq_next_token`. */
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
  return emq_stored(emq_meta_get('${META.concurrency}'), 1, ${MAX_CONCURRENCY})
end

-- A rate as LIMIT writes it ("max per burst"), or nil.
local function emq_parse_rate(text)
  local m, p, b = string.match(text or '', '^([0-9]+) ([0-9]+) ([0-9]+)$')
  m, p, b = emq_stored(m, 1, ${MAX_RATE}), emq_stored(p, 1, ${MAX_RATE_PERIOD_MS}), emq_stored(b, 1, ${MAX_BURST})
  if m and p and b then return {max = m, per = p, burst = b} end
  return nil
end

-- The limits stored in a hash whose field f get(f) returns (meta's, or a lane's: the same field
-- names): {conc, rate = {max, per, burst}, q, r, parked}, each nil when absent or not as LIMIT,
-- CLAIM and PENALIZE write it; the tat (q, r) is read even without a rate (a lane may take the
-- default rate). rate: the rate to read the tat against when the hash sets none.
local function emq_limits_parse(get, rate)
  local l = {}
  l.conc = emq_stored(get('${META.concurrency}'), 1, ${MAX_CONCURRENCY})
  l.parked = emq_stored(get('${META.parked}'), 0, 1e15)
  l.rate = emq_parse_rate(get('${META.rate}'))
  local against = l.rate or rate
  if against then
    local q, r = string.match(get('${META.tat}') or '', '^([0-9]+) ([0-9]+)$')
    q, r = emq_stored(q, 0, 1e15), emq_stored(r, 0, against.max - 1)
    if q and r then l.q, l.r = q, r end
  end
  return l
end

-- The queue's limits (meta: its type), as emq_limits_parse.
local function emq_limits_read(meta)
  if meta ~= 'hash' then return {} end
  -- (none of the limit fields: no limits, the tat unread as emq_limits_parse leaves it without a rate)
  if not (emq_meta_get('${META.concurrency}') or emq_meta_get('${META.parked}') or emq_meta_get('${META.rate}')) then return {} end
  return emq_limits_parse(emq_meta_get)
end

-- The rate's tokens at now, and the state they count from: max(TAT, now) as (q, r). rate: l's
-- own when not given.
local function emq_tokens(l, now, rate)
  local q, r = l.q or 0, l.r or 0
  rate = rate or l.rate
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
`;
