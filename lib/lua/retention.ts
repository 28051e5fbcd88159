/**
 * Retention of finished jobs, dead and completed, as Lua (the twin of
 * `native/src/verbs/retention.rs`), one code for both sets, in two halves so that a verb checks
 * everything before it writes: `emq_retention_pick` picks the oldest jobs of a set past a count limit
 * (counting `adding` jobs about to join it) or older than an age limit (0: no age limit), at most
 * {@link TRIM_LIMIT}, from the set as it is (a prefix of it, by score then member) —
 * `emq_retention_select` with `meta`'s limits of that set (else the defaults), RETAIN with its own;
 * `emq_retention_apply` deletes them with their rows.
 *
 * The sets differ in one thing: `dead_max` 0 means no count limit, `completed_max` 0 means none
 * kept (every completed job is past it).
 *
 * @module
 */
import type { QueueType } from "../keyspace/mod.ts";
import {
  COMPLETED_AGE_DEFAULT_MS,
  COMPLETED_MAX_DEFAULT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  META,
  ROW,
  STATE,
  TOMBSTONE_MS,
  TRIM_LIMIT,
} from "../wire/mod.ts";
import { KEY_PREFIX } from "./keys.ts";

/** Each set of finished jobs and its limits: `meta`'s fields, their defaults, and what a count limit of 0 means. */
const KEPT = {
  dead: { max: META.dead_max, maxDefault: DEAD_MAX_DEFAULT, age: META.dead_age_ms, ageDefault: DEAD_AGE_DEFAULT_MS, zeroKeepsNone: false },
  completed: {
    max: META.completed_max,
    maxDefault: COMPLETED_MAX_DEFAULT,
    age: META.completed_age_ms,
    ageDefault: COMPLETED_AGE_DEFAULT_MS,
    zeroKeepsNone: true,
  },
} as const satisfies Partial<Record<QueueType, unknown>>;

/** The sets a retention applies to (their key types). */
type Kept = keyof typeof KEPT;

/**
 * `emq_kept(set)`, `emq_retention_pick(base, set, now, adding, max, age)`, `emq_retention_select(base, set,
 * now, adding)`, `emq_retention_apply(base, set, victims)` and `emq_keep_in(base, set, now, n, id, victims, row)`;
 * `set` is `'dead'` or `'completed'`.
 */
export const RETENTION_LUA: string = `
-- The retention of each set of finished jobs: meta's fields, their defaults, whether a count
-- limit of 0 keeps none (else: no count limit).
local emq_retention = {
${
  (Object.keys(KEPT) as Kept[]).map((k) => {
    const r = KEPT[k];
    return `  ['${k}'] = {max = '${r.max}', max_default = ${r.maxDefault}, age = '${r.age}', age_default = ${r.ageDefault}, ` +
      `zero_keeps_none = ${r.zeroKeepsNone}},`;
  }).join("\n")
}
}

-- meta's limits of set (else the defaults): its count limit and its age limit (0: none).
local function emq_kept(set)
  local r = emq_retention[set]
  return emq_limit(r.max, r.max_default), emq_limit(r.age, r.age_default)
end

-- With the limits max and age of set: returns {ids, rows} to delete, or nil and the refusal (a row
-- the caller may not access). card: the set's size when the caller read it.
local function emq_retention_pick(base, set, now, adding, max, age, card)
  local key = base .. set
  local victims = {ids = {}, rows = {}}
  card = card or redis.call('ZCARD', key)
  if card == 0 then return victims end
  local k = 0
  if max > 0 or emq_retention[set].zero_keeps_none then k = card + adding - max end
  if age > 0 then
    local old = redis.call('ZCOUNT', key, '-inf', '(' .. emq_int(now - age))
    if old > k then k = old end
  end
  if k > card then k = card end
  if k > ${TRIM_LIMIT} then k = ${TRIM_LIMIT} end
  if k <= 0 then return victims end
  victims.ids = redis.call('ZRANGE', key, 0, k - 1)
  for i, id in ipairs(victims.ids) do victims.rows[i] = base .. '${KEY_PREFIX.job}' .. id end
  -- the caller's access to every row, one read (TRIM_LIMIT rows at most)
  local _, e = emq_read('EXISTS', unpack(victims.rows)) if e then return nil, e end
  return victims
end

-- With meta's limits. card: the set's size when the caller read it (or step 5 did: emq_sizes).
local function emq_retention_select(base, set, now, adding, card)
  card = card or (emq_sizes and emq_sizes[base .. set]) or redis.call('ZCARD', base .. set)
  -- an empty set has nothing to trim: its limits are not read
  if card == 0 then return {ids = {}, rows = {}} end
  local max, age = emq_kept(set)
  return emq_retention_pick(base, set, now, adding, max, age, card)
end

-- The victims leave set and their rows go; a flow child's becomes a tombstone (state cancelled,
-- its parent, expiring after TOMBSTONE_MS): a second delivery of its creation (its relay died
-- between APPLY and UNBOX) finds a row and makes nothing.
local function emq_retention_apply(base, set, victims)
  if #victims.ids == 0 then return end
  local parents = {}
  for i, row in ipairs(victims.rows) do parents[i] = redis.call('HGET', row, '${ROW.parent}') end
  emq_each('ZREM', base .. set, victims.ids)
  emq_each('DEL', nil, victims.rows)
  for i, row in ipairs(victims.rows) do
    if parents[i] then
      redis.call('HSET', row, '${ROW.state}', '${STATE.cancelled}', '${ROW.parent}', parents[i])
      redis.call('PEXPIRE', row, ${TOMBSTONE_MS})
    end
  end
end

-- Settled jobs (n ids) go into set (ACK's completed, BURY's dead) scored now, each row written by
-- row(j, now); then the set's retention victims deleted.
local function emq_keep_in(base, set, now, n, id, victims, row)
  local at = emq_int(now)
  for j = 1, n do row(j, at) end
  emq_zadd_all(base .. set, at, id)
  emq_retention_apply(base, set, victims)
end
`;
