/**
 * The queue's history as Lua (the twin of `native/src/verbs/history.rs`): what its settles did,
 * per minute, in `metrics` — one field per minute (now ÷ 60000), `<acked> <buried> <retried>` —
 * the newest `meta`'s `history_minutes` (absent: a day; 0: none written) kept. A settle adds its
 * count to the current minute; the first settle of a new minute (its field missing, `last` another)
 * deletes the minutes that left the window (from `first`, at most `MAX_HISTORY_MINUTES + 1` of them).
 *
 * @module
 */
import { HISTORY, HISTORY_MINUTE_MS, HISTORY_MINUTES_DEFAULT, MAX_HISTORY_MINUTES, META } from "../wire/mod.ts";
import { KEY } from "./keys.ts";

/** `emq_history_open(base, meta, missing, slot)` and `emq_history_add(h, n)`. */
export const HISTORY_LUA: string = `
-- Step 5 of a settle that counts (slot: 1 acked, 2 buried, 3 retried): the queue's history when
-- it keeps one (meta's history_minutes, absent: a day, is not 0), metrics a hash or missing (the
-- missing appended to missing). Returns nil (none), the history, or nil and the refusal.
local function emq_history_open(base, meta, missing, slot)
  local keep = ${HISTORY_MINUTES_DEFAULT}
  if meta == 'hash' then keep = emq_limit('${META.history_minutes}', ${HISTORY_MINUTES_DEFAULT}) end
  if keep == 0 then return nil end
  local key = base .. '${KEY.metrics}'
  local _, e = emq_kinds({{key, 'hash'}}, missing) if e then return nil, e end
  return {key = key, keep = keep, slot = slot, now = emq_now()}
end

-- Step 6: n added to the current minute's count, the minutes that left the window deleted first
-- when the minute has no field yet and last is another minute.
local function emq_history_add(h, n)
  if not h then return end
  local key, m = h.key, math.floor(h.now / ${HISTORY_MINUTE_MS})
  local function number(f)
    local v = redis.call('HGET', key, f)
    if v and #v <= 15 and string.find(v, '^[0-9]+$') then return tonumber(v) end
    return nil
  end
  local field = emq_int(m)
  local v = redis.call('HGET', key, field)
  -- the minute's first settle: the minutes that left the window go (a minute already written skips
  -- this read: one HGET and one HSET a settle)
  local last = not v and number('${HISTORY.last}')
  if not v and last ~= m then
    local first = m
    if last then
      first = number('${HISTORY.first}') or last
      local hi = math.min(m - h.keep, last)
      local lo = math.max(first, hi - ${MAX_HISTORY_MINUTES})
      if lo <= hi then
        local gone = {}
        for x = lo, hi do gone[#gone + 1] = emq_int(x) end
        emq_each('HDEL', key, gone)
      end
      first = math.max(first, m - h.keep + 1)
    end
    redis.call('HSET', key, '${HISTORY.last}', emq_int(m), '${HISTORY.first}', emq_int(first))
  end
  local c = {0, 0, 0}
  if v then
    local a, b, r = string.match(v, '^(%d+) (%d+) (%d+)$')
    if a and #a <= 15 and #b <= 15 and #r <= 15 then c = {tonumber(a), tonumber(b), tonumber(r)} end
  end
  c[h.slot] = c[h.slot] + n
  redis.call('HSET', key, field, emq_int(c[1]) .. ' ' .. emq_int(c[2]) .. ' ' .. emq_int(c[3]))
end
`;
