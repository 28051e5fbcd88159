/**
 * `emq_failure(row, failure)`: a failed attempt's error kept on its row (RETRY, BURY and SETTLE's
 * parts of them, issue 37.1), the twin of `native/src/verbs/failures.rs`: `HSET row failures <n>
 * failure:<(n − 1) mod 10> <failure>`, n the row's `failures` + 1 (a `failures` that is not 1 to
 * 15 digits counts as 0); an empty `failure` writes nothing. The newest {@link FAILURES_KEPT} are
 * kept, each written over the oldest.
 *
 * @module
 */
import { FAILURES_KEPT, ROW } from "../wire/mod.ts";

/** The shared function; a script that records failures ships it. */
export const FAILURE_LUA: string = `
local function emq_failure(row, failure)
  if failure == '' then return end
  local v = redis.call('HGET', row, '${ROW.failures}')
  local n = 0
  if v and #v <= 15 and string.match(v, '^%d+$') then n = tonumber(v) end
  n = n + 1
  redis.call('HSET', row, '${ROW.failures}', emq_int(n), '${ROW.failure}:' .. emq_int((n - 1) % ${FAILURES_KEPT}), failure)
end
`;
