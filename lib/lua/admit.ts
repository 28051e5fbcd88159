/**
 * What ENQUEUE and SCHEDULE share, as Lua (the twin of `native/src/verbs/admit.rs`): step 5 of an
 * admission — no id twice in the call, no row already there (the first such id refused as a
 * duplicate), then the types of meta and of the structure written — and the first write, the
 * queue's `meta`.
 *
 * @module
 */
import { META, ROW, STATE, WAKE, WIRE } from "../wire/mod.ts";

/**
 * `emq_admit(base, n, id, structure, kind)`, `emq_admitted(a, n, now)` and `emq_pushed(a, base, n,
 * id, now, fields)` (ENQUEUE's writes, which TICK's jobs share).
 */
export const ADMIT_LUA: string = `
-- Returns {rows, meta = type, structure = type, missing}, or nil and the refusal.
local function emq_admit(base, n, id, structure, kind)
  local e = emq_repeated(n, id) if e then return nil, e end
  local a = {rows = {}, missing = {}}
  for j = 1, n do
    a.rows[j] = base .. 'job:' .. id[j]
    local found, e = emq_read('EXISTS', a.rows[j]) if e then return nil, e end
    if found == 1 then return nil, emq_refuse['duplicate']({id = id[j]}) end
    a.missing[j] = a.rows[j]
  end
  a.meta, e = emq_type(KEYS[1], 'hash') if e then return nil, e end
  a.structure, e = emq_type(structure, kind) if e then return nil, e end
  if a.structure == 'none' then a.missing[#a.missing + 1] = structure end
  a.wake, e = emq_type(base .. 'wake', 'zset') if e then return nil, e end
  if a.wake == 'none' then a.missing[#a.missing + 1] = base .. 'wake' end
  e = emq_counter(KEYS[1], '${META.enqueued}') if e then return nil, e end
  return a
end

-- The queue's meta: made on first use, and the admissions counted.
local function emq_admitted(a, n, now)
  if a.meta == 'none' then redis.call('HSET', KEYS[1], '${META.wire}', '${WIRE}', '${META.created_ms}', now) end
  redis.call('HINCRBY', KEYS[1], '${META.enqueued}', n)
end

-- Step 6 of an admission into pending: meta made and counted; per job its row (state pending, the
-- fields fields(j) gives, its payload first, attempts 0, created_ms); the ids pushed on the head of
-- pending in order; 'ready' on wake when pending was empty and got ids.
local function emq_pushed(a, base, n, id, now, fields)
  emq_admitted(a, n, now)
  for j = 1, n do
    local row = {'${ROW.state}', '${STATE.pending}'}
    for _, f in ipairs(fields(j)) do row[#row + 1] = f end
    row[#row + 1] = '${ROW.attempts}'
    row[#row + 1] = '0'
    row[#row + 1] = '${ROW.created_ms}'
    row[#row + 1] = now
    redis.call('HSET', a.rows[j], unpack(row))
  end
  if n == 0 then return end
  emq_each('LPUSH', base .. 'pending', id)
  if a.structure == 'none' then redis.call('ZADD', base .. 'wake', 0, '${WAKE.ready}') end
end
`;
