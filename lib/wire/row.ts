/**
 * What the verbs store, written once: the fields of a job's row (`emq:{q}:job:<id>`, a hash), the
 * states its `state` field takes, the fields of the queue's `meta` hash, and the markers on `wake`
 * (a sorted set), and the fields of a scheduler's hash. Each table maps a name to what it holds; {@link ROW}, {@link STATE}, {@link META}
 * and {@link WAKE} map each name to itself, for code to spell it. The Lua twin's bodies and the
 * client's readers (`lib/client/info.ts`) interpolate these names, the native module's literals
 * are generated from them (`native/src/spec.rs`), and docs/WIRE.md prints them: a name changed
 * here changes, or fails to compile, everywhere.
 *
 * Numbers are stored as decimal strings; times are ms since the epoch, from the server's clock.
 *
 * @module
 */
import {
  COMPLETED_AGE_DEFAULT_MS,
  COMPLETED_MAX_DEFAULT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  EVENTS_MAX_DEFAULT,
  HISTORY_MINUTE_MS,
  HISTORY_MINUTES_DEFAULT,
  WIRE,
} from "./verbs.ts";

/** The fields of a job's row, in the order a job's life writes them. */
export const ROW_FIELDS = {
  state: "where the job is: `pending`, `active`, `scheduled`, `dead` or `completed` (the states below)",
  payload: "the job's payload, as admitted (any bytes)",
  attempts: "claims so far: 0 when admitted or requeued, CLAIM adds 1, RELEASE (a hand-back) takes it back",
  created_ms: "when the job was admitted",
  due_ms: "when it falls due: SCHEDULE's `due_ms`, RETRY's now + `delay_ms`, RUN's now",
  deadline_ms: "when its lease runs out: CLAIM's and EXTEND's now + `lease_ms`",
  token: "the lease token of its last claim, which every settle, EXTEND and PROGRESS presents; kept after its settle " +
    "(wire 17: ACK's too; REQUEUE deletes it), so that token ÷ `TOKENS_PER_MS`, rounded down, is when its last claim took it, as the " +
    "history's run times read it (BullMQ's `processedOn`)",
  delay_ms: "the delay of its last retry, in ms (RETRY's `delay_ms`, wire 17; BullMQ's `delay` after a backoff)",
  stalls: "leases of it that ran out and were taken back to pending (CLAIM, REAP: one more each; wire 17; never " +
    "reset; a stored value that is not 1 to 15 digits without a leading zero counts as 0): BullMQ's `stalledCounter`",
  reason: "the last failure's reason (RETRY, BURY, CANCEL; REQUEUE deletes it)",
  buried_ms: "when it was buried (BURY; REQUEUE deletes it)",
  cancelled_ms: "when CANCEL buried it (REQUEUE deletes it): with its `token`, what tells its worker's EXTEND that the " +
    "claim it holds was cancelled",
  progress: "its progress, as the handler last reported it (PROGRESS)",
  scheduler: "the scheduler whose tick admitted it (TICK)",
  tick_ms: "the scheduler's run it is for (TICK)",
  priority: "its priority when not 0 (the `priority` option): its ready list is `ready:<priority>:<lane>`, not `pending`",
  lane: "its lane when not the default lane (the `lane` option): its ready lists are `ready:<priority>:<lane>`",
  opts: "the options it was admitted with, as sent (absent when none): CLAIM hands them back; settles read its `dedup`",
  finished_ms: "when it completed (ACK, when the queue keeps completed jobs)",
  result: "the handler's result, as the worker sent it (ACK; absent when empty)",
  children: "a parent's: how many children it waits for (FLOW); with `child:<i>` (`<queue>\\0<id>\\0<policy>`) and, " +
    "once child i finished, `done:<i>` (`<state>\\0<detail>`: `completed` and its result, `failed` and its reason, " +
    "`removed`, or `large` and the length of a result longer than `CHILD_RESULT_KEPT_BYTES`)",
  finished: "a parent's: how many of its children finished, each counted once",
  open: "a parent's: `1` while more children may come (FLOW with open 1, ADOPT) until SEAL deletes it: it waits " +
    "for its last child only once sealed",
  parent: "a child's parent: `<queue>\\0<id>\\0<i>` (FLOW, APPLY): its settle records its outcome there",
  failures: "failed attempts whose worker sent their error (RETRY, BURY with a `failure`; never reset): the newest " +
    "is in `failure:<(failures − 1) mod 10>`",
  logs: "lines its handler logged (LOG; never reset): the newest is in `log:<(logs − 1) mod 1000>`",
  log: "`log:0` to `log:999`: the newest 1000 lines of the job's log (LOG; at most 1024 bytes each), each written " +
    "over the oldest",
  failure: "`failure:0` to `failure:9`: the errors of the newest 10 failed attempts (the client's encoding of its " +
    "name, message and stack, at most 8192 bytes each), each written over the oldest",
} as const;

/** The states a row's `state` field takes, each with the structure that holds the job's id. */
export const STATES = {
  pending: "in `pending`, waiting for a claim",
  active: "in `active`, held by a worker until its `deadline_ms`",
  scheduled: "in `schedule`, until its `due_ms` (or a RUN)",
  dead: "in `dead`, buried (until REQUEUE, REMOVE or the queue's retention)",
  completed: "in `completed`, acked and kept with its result (until REMOVE or the queue's retention)",
  waiting: "in `waiting` (scored by its flow deadline), a parent waiting for its children (FLOW) until the last " +
    "finishes, or a child fails it, or its deadline passes (OUTBOX)",
  cancelled: "in no structure: a tombstone, a child cancelled before its creation reached its queue (APPLY of a " +
    "`cancel` entry); it expires after `TOMBSTONE_MS`, and the late creation finds it and makes nothing",
} as const;

/** The fields of the queue's `meta` hash (made on first use, never deleted but by DROP). */
export const META_FIELDS = {
  wire: `the wire that made the queue (\`${WIRE}\`), written with \`created_ms\` on first use`,
  created_ms: "when the queue was first used",
  paused: "`1` while the queue is paused (PAUSE; RESUME deletes it)",
  tokens: "the last lease token handed out (CLAIM raises it to now × 1000 when below, then adds one per claimed job)",
  claimed: "jobs claimed so far (CLAIM adds one per claimed job)",
  enqueued: "jobs admitted so far (ENQUEUE, SCHEDULE)",
  acked: "jobs acked so far",
  retried: "retries so far",
  buried: "jobs buried so far",
  dead_max: `the most dead jobs kept (RETAIN; absent: ${DEAD_MAX_DEFAULT}; 0: no limit)`,
  dead_age_ms: `how long a dead job is kept, in ms (RETAIN; absent: ${DEAD_AGE_DEFAULT_MS / 86_400_000} days; 0: no limit)`,
  completed_max: `the most completed jobs kept with their results (RETAIN; absent: ${COMPLETED_MAX_DEFAULT}; 0: none, ACK ` +
    "deletes the row)",
  completed_age_ms: `how long a completed job is kept, in ms (RETAIN; absent: ${COMPLETED_AGE_DEFAULT_MS / 86_400_000} day; 0: no limit)`,
  history_minutes: `the minutes of history \`metrics\` keeps (RETAIN; absent: ${HISTORY_MINUTES_DEFAULT}; 0: none written)`,
  events_max: `the most entries of the events stream (RETAIN; absent: ${EVENTS_MAX_DEFAULT}; 0: no events written)`,
  prioritized: "ready jobs outside `pending` (a priority other than 0, or a lane other than the default: in " +
    "`ready:<p>:<lane>` lists): counts add it to pending",
  dedup: "`1` once an admission took a deduplication key: only then does CLAIM look for ended windows (a queue " +
    "that never deduplicates opens no deduplication key)",
  concurrency: "the most jobs active at once across every worker (LIMIT; absent: no limit)",
  rate: "the rate limit `<max> <per_ms> <burst>` every claim obeys (LIMIT; absent: none)",
  tat: "the rate limit's state `<q> <r>`: its theoretical arrival time is q + r / max ms (CLAIM; LIMIT deletes it)",
  parked: "claims hand out nothing until this time, ms since the epoch (PENALIZE; kept once past)",
  laned: "present once an admission carried a `lane` (the queue is laned: claims serve its lanes round-robin): " +
    "`tokens` at that moment; a held job of a greater token counts in its lane's `active`",
  lane_concurrency: "the concurrency limit of every lane without its own (LIMIT scope 2; absent: none)",
  lane_rate: "the rate limit `<max> <per_ms> <burst>` of every lane without its own (LIMIT scope 2; absent: none)",
} as const;

/** The fields of a lane's state hash (`emq:{q}:lane:<lane>`; `lane:` is the default lane's). */
export const LANE_FIELDS = {
  ring: "`1` while the lane is in `ring` (claims serve it)",
  active: "its jobs claimed and not settled or reaped, counted since the queue became laned",
  paused: "`1` while the lane is paused (PAUSE with the lane; RESUME deletes it)",
  concurrency: "the lane's own concurrency limit (LIMIT scope 1; absent: `meta`'s `lane_concurrency`)",
  rate: "the lane's own rate limit `<max> <per_ms> <burst>` (LIMIT scope 1; absent: `meta`'s `lane_rate`)",
  tat: "the lane's rate state `<q> <r>` (CLAIM), as `meta`'s",
  parked: "claims skip the lane until this time, ms (PENALIZE with the lane, or a claim that spent its rate); also " +
    "its score in `parked`",
} as const;

/** The fields of a scheduler's hash (`emq:{q}:scheduler:<name>`, made by SCHEDULER). */
export const SCHEDULER_FIELDS = {
  spec: "the client's text of when it runs (`every <ms>` or `cron <pattern>[ tz=<zone>]`), opaque to the server",
  next_ms: "its next run (also its score in `schedulers`): a TICK must name it to fire",
  max_missed: "the most jobs one TICK fires for missed runs (the client's policy: 1 latest, 0 skip, N at most N)",
  payload: "the payload of every job it admits",
  opts: "the options of every job it admits (ENQUEUE's `opts` text: `key=value` items joined by NUL; absent when " +
    "none): TICK admits its jobs with them, and ignores them when they fail the options gate",
  runs: "jobs its ticks admitted so far",
  last_ms: "the latest run a TICK admitted a job for (absent before the first)",
  created_ms: "when it was first upserted",
} as const;

/**
 * The fields of the queue's history (`emq:{q}:metrics`, a hash written by the settles: docs/WIRE.md,
 * "History"), besides one field per minute: the minute's number (ms since the epoch ÷ 60000), its
 * value `<acked> <buried> <retried>`, the jobs that minute's ACKs completed, its BURYs buried and its
 * RETRYs retried.
 */
export const HISTORY_FIELDS = {
  last: `the latest minute written (now ÷ ${HISTORY_MINUTE_MS})`,
  first: "the oldest minute that may still have a field: a new minute deletes the fields from it to the window's start",
  run: "the run-time histogram: jobs settled (ACK, RETRY, BURY) by ms from their claim (their token ÷ 1000) to the " +
    "settle, `<c0> … <c15> <sum_ms>`: a count per bucket of `LATENCY_BOUNDS_MS` (and one past the last), then the sum",
  wait: "the wait-time histogram, as `run`: from the later of the row's `created_ms` and `due_ms` (when it became " +
    "ready) to its claim",
} as const;

/** The markers on the queue's `wake`, which idle workers of the scripts backend wait on. */
export const WAKE_MARKERS = {
  ready: "score 0: pending holds ids a claim could take (written when ids arrive in it or a limit frees; removed " +
    "by a CLAIM or REMOVE that leaves no ready job a claim could take, or a CLAIM that leaves the queue paused, " +
    "parked or at a limit)",
  due: "score: the earliest due time a SCHEDULE or RETRY wrote (`ZADD LT`); a CLAIM removes it once due",
} as const;

/** A field of a job's row. */
export type RowField = keyof typeof ROW_FIELDS;
/** A job's state. */
export type StateName = keyof typeof STATES;
/** A field of a queue's `meta`. */
export type MetaField = keyof typeof META_FIELDS;
/** A field of a lane's state hash. */
export type LaneField = keyof typeof LANE_FIELDS;
/** A field of a scheduler's hash. */
export type SchedulerField = keyof typeof SCHEDULER_FIELDS;
/** A field of a queue's history hash besides its minutes. */
export type HistoryField = keyof typeof HISTORY_FIELDS;
/** A marker on a queue's `wake`. */
export type WakeMarker = keyof typeof WAKE_MARKERS;

/** Each name of a table, mapped to itself. */
export type Names<K extends string> = { readonly [N in K]: N };

function names<K extends string>(table: Readonly<Record<K, string>>): Names<K> {
  return Object.freeze(Object.fromEntries(Object.keys(table).map((k) => [k, k]))) as Names<K>;
}

/** The row's field names: `ROW.state` is `"state"`. */
export const ROW: Names<RowField> = names(ROW_FIELDS);
/** The state names: `STATE.pending` is `"pending"`. */
export const STATE: Names<StateName> = names(STATES);
/** `meta`'s field names: `META.tokens` is `"tokens"`. */
export const META: Names<MetaField> = names(META_FIELDS);
/** A lane's field names: `LANE.active` is `"active"`. */
export const LANE: Names<LaneField> = names(LANE_FIELDS);
/** A scheduler's field names: `SCHED.next_ms` is `"next_ms"`. */
export const SCHED: Names<SchedulerField> = names(SCHEDULER_FIELDS);
/** The history hash's field names: `HISTORY.last` is `"last"`. */
export const HISTORY: Names<HistoryField> = names(HISTORY_FIELDS);
/** The marker names: `WAKE.ready` is `"ready"`. */
export const WAKE: Names<WakeMarker> = names(WAKE_MARKERS);
