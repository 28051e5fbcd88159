/**
 * The queue's history as Lua (the twin of `native/src/verbs/history.rs`): what its settles did,
 * per minute, in `metrics` — one field per minute (now ÷ 60000), `<acked> <buried> <retried>` —
 * the newest `meta`'s `history_minutes` (absent: a day; 0: none written) kept. A settle adds its
 * count to the current minute; the first settle of a new minute (its field missing, `last` another)
 * deletes the minutes that left the window (from `first`, at most `MAX_HISTORY_MINUTES + 1` of them).
 *
 * @module
 */
import { HISTORY, HISTORY_MINUTE_MS, HISTORY_MINUTES_DEFAULT, LATENCY_BOUNDS_MS, MAX_HISTORY_MINUTES, META } from "../wire/mod.ts";
import { KEY } from "./keys.ts";

/** The numbers of a latency histogram: a count per bucket, one past the last bound, then the sum. */
const BUCKETS = LATENCY_BOUNDS_MS.length + 2;
/** A stored histogram's Lua pattern: a capture per number, single spaces between. */
const HISTOGRAM_PATTERN = `^${Array(BUCKETS).fill("([0-9]+)").join(" ")}$`;
/** A histogram's format as stored. */
const HISTOGRAM_FORMAT = Array(BUCKETS).fill("%d").join(" ");
/** An empty histogram, as a Lua table's items. */
const ZEROS = Array(BUCKETS).fill("0").join(", ");

/** `emq_digits`, `emq_history_open(base, meta, missing, slot)` and `emq_history_add(h, n)`. */
export const HISTORY_LUA: string = `
-- A stored number of 1 to 15 digits, else 0.
local function emq_digits(v)
  if v and #v <= 15 and string.find(v, '^[0-9]+$') then return tonumber(v) end
  return 0
end

-- The latency histograms' bucket bounds (ms): a count per bucket and one past them, then the sum.
local emq_bounds = {${LATENCY_BOUNDS_MS.join(", ")}}

-- A stored histogram, its ${BUCKETS} numbers of 1 to 15 digits, space-separated (else zeros): one
-- match of the whole text (a pattern with a capture per number) in place of a split.
local function emq_histogram(v)
  local out = v and {string.match(v, '${HISTOGRAM_PATTERN}')}
  if out and out[${BUCKETS}] then
    for i = 1, ${BUCKETS} do
      if #out[i] > 15 then return {${ZEROS}} end
      out[i] = tonumber(out[i])
    end
    return out
  end
  return {${ZEROS}}
end

-- One job's ms (0 when below) counted in its bucket and the sum.
local function emq_observe(h, ms)
  if ms < 0 then ms = 0 end
  local i = #emq_bounds + 1
  for b = 1, #emq_bounds do
    if ms <= emq_bounds[b] then i = b break end
  end
  h[i] = h[i] + 1
  h[#emq_bounds + 2] = h[#emq_bounds + 2] + ms
end

-- A histogram as stored: its numbers, space-separated (one format of them all).
local function emq_histogram_text(h)
  return string.format('${HISTOGRAM_FORMAT}', unpack(h, 1, ${BUCKETS}))
end

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

-- A stored number of 1 to 15 digits, else nil.
local function emq_history_number(x)
  if x and #x <= 15 and string.find(x, '^[0-9]+$') then return tonumber(x) end
  return nil
end

-- Step 6: n added to the current minute's count, the minutes that left the window deleted first
-- when the minute has no field yet and last is another minute.
local function emq_history_add(h, n)
  if not h then return end
  local key, m = h.key, math.floor(h.now / ${HISTORY_MINUTE_MS})
  local field = emq_int(m)
  -- the minute's count, last and first, the histograms: one read (the writes below touch no field
  -- read after them)
  -- (h.got: the same read, made by SETTLE's common case before the writes, which touch none of them)
  local got = h.got or redis.call('HMGET', key, field, '${HISTORY.last}', '${HISTORY.first}', '${HISTORY.run}', '${HISTORY.wait}')
  local v = got[1]
  -- every field written by one HSET (in the order three HSETs wrote them)
  local writes = {key}
  -- the minute's first settle: the minutes that left the window go (a minute already written
  -- skips this: one HMGET and one HSET a settle)
  local last = not v and emq_history_number(got[2])
  if not v and last ~= m then
    local first = m
    if last then
      first = emq_history_number(got[3]) or last
      local hi = math.min(m - h.keep, last)
      local lo = math.max(first, hi - ${MAX_HISTORY_MINUTES})
      if lo <= hi then
        local gone = {}
        for x = lo, hi do gone[#gone + 1] = emq_int(x) end
        emq_each('HDEL', key, gone)
      end
      first = math.max(first, m - h.keep + 1)
    end
    writes = {key, '${HISTORY.last}', emq_int(m), '${HISTORY.first}', emq_int(first)}
  end
  local c = {0, 0, 0}
  if v then
    local a, b, r = string.match(v, '^(%d+) (%d+) (%d+)$')
    if a and #a <= 15 and #b <= 15 and #r <= 15 then c = {tonumber(a), tonumber(b), tonumber(r)} end
  end
  c[h.slot] = c[h.slot] + n
  writes[#writes + 1] = field
  writes[#writes + 1] = string.format('%d %d %d', c[1], c[2], c[3])
  if h.latency and #h.latency > 0 then
    local run = emq_histogram(got[4] or nil)
    local wait = emq_histogram(got[5] or nil)
    for _, x in ipairs(h.latency) do
      emq_observe(run, h.now - x[1])
      if x[2] > 0 then emq_observe(wait, x[1] - x[2]) end
    end
    writes[#writes + 1] = '${HISTORY.run}'
    writes[#writes + 1] = emq_histogram_text(run)
    writes[#writes + 1] = '${HISTORY.wait}'
    writes[#writes + 1] = emq_histogram_text(wait)
  end
  redis.call('HSET', unpack(writes))
end
`;
