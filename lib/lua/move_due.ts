/**
 * The mover PROMOTE and REAP share, as Lua (the twin of `native/src/verbs/move_due.rs`): up to
 * `limit` ids of a sorted set whose score is due (≤ now), ascending, move to pending; rows that
 * exist are marked pending. Every row is type-checked before the first write.
 *
 * @module
 */

/**
 * `emq_move_due(from, pending, base, limit, push)`: `push` is `'LPUSH'` (the head, PROMOTE) or
 * `'RPUSH'` (the tail, claimed next: REAP). Returns the number of ids moved.
 */
export const MOVE_DUE_LUA: string = `
local function emq_move_due(from, pending, base, limit, push)
  local e = emq_type(from, 'zset') or emq_type(pending, 'list') if e then return e end
  local ids = redis.call('ZRANGEBYSCORE', from, '-inf', emq_int(emq_now()), 'LIMIT', 0, limit)
  local rows = {}
  for i, id in ipairs(ids) do
    rows[i] = base .. 'job:' .. id
    e = emq_type(rows[i], 'hash') if e then return e end
  end
  for i, id in ipairs(ids) do
    redis.call('ZREM', from, id)
    redis.call(push, pending, id)
    if redis.call('EXISTS', rows[i]) == 1 then redis.call('HSET', rows[i], 'state', 'pending') end
  end
  return #ids
end
`;
