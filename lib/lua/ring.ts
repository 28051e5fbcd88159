/**
 * `emq_ring(row, count, prefix, kept, value)`: a bounded list kept in a job's row (issue 37), the
 * twin of `native/src/verbs/ring.rs`: `HSET row <count> <n> <prefix>:<(n − 1) mod kept> <value>`,
 * n the row's `count` + 1 (a count that is not 1 to 15 digits counts as 0); an empty value writes
 * nothing. A failed attempt's error ({@link FAILURE_LUA}: `failures`, `failure:`, the newest
 * {@link FAILURES_KEPT}) and a job's log (LOG: `logs`, `log:`, the newest 1000) — each going
 * with its row.
 *
 * @module
 */
import { FAILURES_KEPT, ROW } from "../wire/mod.ts";

/** The shared function. */
export const RING_LUA: string = `
local function emq_ring(row, count, prefix, kept, value)
  if value == '' then return end
  local v = redis.call('HGET', row, count)
  local n = 0
  if v and #v <= 15 and string.match(v, '^%d+$') then n = tonumber(v) end
  n = n + 1
  redis.call('HSET', row, count, emq_int(n), prefix .. ':' .. emq_int((n - 1) % kept), value)
end
`;

/** `emq_failure(row, failure)`: a failed attempt's error among the row's newest {@link FAILURES_KEPT}; ships {@link RING_LUA}. */
export const FAILURE_LUA: string = RING_LUA + `
local function emq_failure(row, failure)
  emq_ring(row, '${ROW.failures}', '${ROW.failure}', ${FAILURES_KEPT}, failure)
end
`;
