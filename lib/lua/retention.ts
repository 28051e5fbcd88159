/**
 * Retention of dead jobs, as Lua (the twin of `native/src/verbs/retention.rs`), in two halves so
 * that a verb checks everything before it writes: `emq_trim_pick` picks the oldest dead jobs past
 * a `dead_max` (counting `adding` jobs about to be buried) or older than a `dead_age_ms` (0: no
 * limit), at most a thousand, from the set as it is (a prefix of it, by score then member) —
 * `emq_trim_select` with `meta`'s limits (else the defaults), RETAIN with its own; `emq_trim`
 * deletes them.
 *
 * @module
 */
import { DEAD_AGE_DEFAULT_MS, DEAD_MAX_DEFAULT, META, TRIM_LIMIT } from "../wire/mod.ts";

/** `emq_trim_pick(…)`, `emq_trim_select(base, dead, now, adding)` and `emq_trim(dead, victims)`. */
export const RETENTION_LUA: string = `
-- A limit of meta: its field when it is 1 to 15 digits, else the default.
local function emq_limit(field, default)
  local v = redis.call('HGET', KEYS[1], field)
  if v and #v <= 15 and string.find(v, '^[0-9]+$') then return tonumber(v) end
  return default
end

-- With the limits max and age: returns {ids, rows} to delete, or nil and the refusal (a row the
-- caller may not access).
local function emq_trim_pick(base, dead, now, adding, max, age)
  local victims = {ids = {}, rows = {}}
  local card = redis.call('ZCARD', dead)
  if card == 0 then return victims end
  local k = 0
  if max > 0 then k = card + adding - max end
  if age > 0 then
    local old = redis.call('ZCOUNT', dead, '-inf', '(' .. emq_int(now - age))
    if old > k then k = old end
  end
  if k > card then k = card end
  if k > ${TRIM_LIMIT} then k = ${TRIM_LIMIT} end
  if k <= 0 then return victims end
  victims.ids = redis.call('ZRANGE', dead, 0, k - 1)
  for i, id in ipairs(victims.ids) do
    victims.rows[i] = base .. 'job:' .. id
    local _, e = emq_read('EXISTS', victims.rows[i]) if e then return nil, e end
  end
  return victims
end

-- With meta's limits.
local function emq_trim_select(base, dead, now, adding)
  local max = emq_limit('${META.dead_max}', ${DEAD_MAX_DEFAULT})
  local age = emq_limit('${META.dead_age_ms}', ${DEAD_AGE_DEFAULT_MS})
  return emq_trim_pick(base, dead, now, adding, max, age)
end

local function emq_trim(dead, victims)
  if #victims.ids == 0 then return end
  emq_each('ZREM', dead, victims.ids)
  emq_each('DEL', nil, victims.rows)
end
`;
