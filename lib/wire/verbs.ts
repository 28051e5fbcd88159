/**
 * The wire's verbs, written once: each verb's fixed arguments and its repeated group (a batch:
 * one group per job), each argument with its gate; the keys it derives and touches; its reply,
 * effect and writes; its domain refusals; whether it only adds memory (refused under `maxmemory`).
 * The client builds every call from this table, the Lua twin's steps 1–4 are generated from it,
 * docs/WIRE.md's tables are printed from it, and the native module's verb → handler table and
 * constants are generated from it (`native/src/spec.rs`, by `tools/gen_wire.ts`).
 *
 * Every verb declares exactly one key, the queue's `meta` hash, which exists from the queue's
 * first use and is never deleted: a declared key that may not exist would make every slot
 * migration answer TRYAGAIN (docs/WIRE.md, "Cluster"). Every other key is derived from the queue
 * name in `meta`'s key and checked against the caller's ACL.
 *
 * @module
 */
import { MAX_NAME_BYTES, type QueueType } from "../keyspace/mod.ts";
import type { Refusal } from "./refusals.ts";

/** The wire these verbs are. */
export const WIRE = 17;

/**
 * How an argument is checked at step 4: a `JOB` id; a number of 1 to `digits` digits (default
 * {@link MAX_DIGITS}) within bounds; a name inside a queue (the name rule of
 * `lib/keyspace/name.ts`: 1 to {@link MAX_NAME_BYTES} bytes without `{`, `}` or NUL); or bytes of at
 * most `limit` (refused with `refusal`; with `config`, the module's configuration of that name sets
 * the limit, and `limit` is its default and the scripts' limit); a lane (empty: the queue or the default
 * lane, as the verb says; else the name rule); or a job's options
 * ({@link OPTIONS}: at most {@link MAX_OPTIONS_BYTES}, `key=value` items joined by NUL, each key known
 * and once, each value through its option's gate, each option's `needs` present).
 */
export type Gate =
  | { readonly kind: "job-id" }
  | { readonly kind: "name" }
  | { readonly kind: "lane" }
  | { readonly kind: "number"; readonly min: 0 | 1; readonly max?: number; readonly digits?: number }
  | { readonly kind: "options" }
  | {
    readonly kind: "bytes";
    readonly refusal: "payload" | "reason" | "failure" | "log" | "progress" | "spec" | "result" | "entry";
    readonly limit: number;
    readonly config?: "max-payload";
  };

/** Payload limit of the scripts (the module's `emq.max-payload` default). */
export const MAX_PAYLOAD_BYTES = 1048576;
/**
 * Longest outbox entry APPLY and UNBOX accept: a child's payload (at most {@link MAX_PAYLOAD_BYTES},
 * FLOW's fixed limit) and its header (two queue names of at most 1,024 bytes, two ids, an index).
 */
export const MAX_ENTRY_BYTES = MAX_PAYLOAD_BYTES + 8192;
/**
 * How long a tombstone lives (ms): a child cancelled before its creation reached its queue (APPLY of
 * a `cancel` entry) leaves its row in state `cancelled` this long, so that the late creation (its
 * entry leased by a relay that died: it comes back once that lease runs out) makes nothing; so does
 * a finished child whose row an ACK or a retention trim deletes. One hour: far above any relay lease
 * (the client's relay leases for 10 s by default, at most 10 min).
 */
export const TOMBSTONE_MS = 3_600_000;
/** What cancelling a flow's unfinished child writes (a failed parent's, a removed parent's). */
const CANCEL_WRITES = "in this queue, as APPLY's `cancel`; in another queue `ZADD outbox <now> " +
  "cancel\\0<its queue>\\0<id>\\0<queue>\\0<parent>\\0<i>\\0`";
/** Longest failure reason RETRY and BURY accept. */
export const MAX_REASON_BYTES = 4096;
/** Longest failed attempt's error (its name, message and stack as the client encodes them) RETRY and BURY accept. */
export const MAX_ERROR_BYTES = 8192;
/** Failed attempts' errors a job's row keeps: the newest, in the fields `failure:0` to `failure:9` (docs/WIRE.md). */
export const FAILURES_KEPT = 10;
/** Longest log line LOG accepts (the client cuts a longer one). */
export const MAX_LOG_LINE_BYTES = 1024;
/** Log lines a job's row keeps: the newest, in the fields `log:0` to `log:999` (docs/WIRE.md). */
export const LOG_LINES_KEPT = 1000;
/** Longest progress value PROGRESS accepts. */
export const MAX_PROGRESS_BYTES = 65536;
/** Longest scheduler spec SCHEDULER accepts (the client's text: `every <ms>`, `cron <pattern> …`). */
export const MAX_SPEC_BYTES = 1024;
/** Dead jobs a queue keeps when its `meta` sets no `dead_max` (0 there: no limit). */
export const DEAD_MAX_DEFAULT = 10000;
/** How long a dead job is kept when `meta` sets no `dead_age_ms` (0 there: no limit): 30 days. */
export const DEAD_AGE_DEFAULT_MS = 2_592_000_000;
/** Completed jobs a queue keeps (with their results) when its `meta` sets no `completed_max` (0 there: none). */
export const COMPLETED_MAX_DEFAULT = 1000;
/** How long a completed job is kept when `meta` sets no `completed_age_ms` (0 there: no limit): one day. */
export const COMPLETED_AGE_DEFAULT_MS = 86_400_000;
/** Minutes of history (per-minute counts in `metrics`) a queue keeps when its `meta` sets no `history_minutes` (0 there: none written): a day. */
export const HISTORY_MINUTES_DEFAULT = 1440;
/** The most minutes of history a queue may keep (RETAIN's `history_minutes`): a week. */
export const MAX_HISTORY_MINUTES = 10080;
/**
 * The upper bounds, in ms, of the latency histograms' buckets (`metrics`' `wait` and `run`), each
 * bucket counting the jobs at most its bound and above the one before; a 16th counts the rest.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000, 900000, 3600000, 86400000];
/** A minute of history, in ms: a minute's field in `metrics` is now ÷ this, rounded down. */
export const HISTORY_MINUTE_MS = 60000;
/** Events a queue's stream keeps when its `meta` sets no `events_max` (0 there: no events written). */
export const EVENTS_MAX_DEFAULT = 10000;
/** Longest result a `completed` event carries (a longer one is flagged, to be read from its row). */
export const EVENT_RESULT_MAX_BYTES = 1024;
/** The first field of every entry of a queue's `events` stream: the kind of event (lib/wire/events.ts). */
export const EVENT_TYPE_FIELD = "type";
/** Most dead (or completed) jobs one call trims (BURY, ACK, CLAIM), so that retention never blocks the server long. */
export const TRIM_LIMIT = 1000;
/** Most digits a number argument may have (so that now + n stays exact as a sorted-set score). */
export const MAX_DIGITS = 15;
/** Most digits a counter a verb increments may have (so that any one call's increment fits). */
export const MAX_COUNTER_DIGITS = 18;
/** The standalone server's wire identity: a string key, absent (unfenced) or the wire's number. */
export const FENCE_KEY = "{emq}:version";
/**
 * Tokens a CLAIM may hand out per ms of server time: a claim's tokens start above now × this, so a
 * queue dropped and made again (its `meta` and `tokens` gone) never hands out a token of an
 * earlier life (docs/WIRE.md, "Leases and tokens").
 */
export const TOKENS_PER_MS = 1000;
/** Largest token: 2^53 − 1, exact as a double (a JS number, a Lua number); now × 1000 until 2255. */
export const MAX_TOKEN: number = Number.MAX_SAFE_INTEGER;
/** Most digits of a token ({@link MAX_TOKEN} has 16). */
export const TOKEN_DIGITS = 16;
/** Largest number the wire accepts: {@link MAX_DIGITS} decimal digits. */
export const MAX_WIRE_NUMBER: number = 10 ** MAX_DIGITS - 1;
/** Most jobs one call may carry (groups of a batch verb, or CLAIM's count). */
export const MAX_BATCH = 10000;
/**
 * Most children one parent may have (FLOW's and ADOPT's together: an open fan-in streams them in
 * calls of at most {@link MAX_BATCH}); a child's place is below it in every entry.
 */
export const MAX_FAN_IN = 100_000;
/**
 * Most levels of children under a flow's root (its children are level 1): a child with children
 * (policy ≥ 4) carries its subtree in its body, nested at most this deep.
 */
export const MAX_FLOW_DEPTH = 8;
/**
 * Longest result of a child its parent keeps (`done:<i>`): a longer one is recorded as `large` with
 * its length only (read it from the child's row while its queue keeps completed jobs).
 */
export const CHILD_RESULT_KEPT_BYTES = 65_536;
/** The `waiting` score of a parent without a flow deadline: after every time (2^53 − 1, exact as a double). */
export const WAITING_FOREVER = 9_007_199_254_740_991;
/** Longest options argument a job may carry (its `key=value` items joined by NUL). */
export const MAX_OPTIONS_BYTES = 4096;
/** The least urgent priority a job may have (0, the default, is the most urgent): BullMQ's range. */
export const MAX_PRIORITY = 2_097_151;

/** The most attempts a job's `attempts` option may give it. */
export const MAX_JOB_ATTEMPTS = 1_000_000;

/** The byte that joins a job's option items (the grammar keeps NUL out of names so that it can). */
export const OPTION_JOIN = "\0";

/** The gate of an option's value: a number or a name (the name rule). */
export type OptionGate = Gate & { readonly kind: "number" | "name" };

/**
 * The options a job may carry (ENQUEUE's and SCHEDULE's `opts`), each with the gate of its value,
 * the option it needs (given without it, the call is refused), a valid sample and what it means.
 * Stored on the row as sent (`opts`) and handed back by CLAIM; the server acts on the `dedup`
 * family, and keeps the rest for the client.
 */
export const OPTIONS = {
  timeout_ms: {
    gate: { kind: "number", min: 1 },
    sample: "30000",
    doc: "the handler's time limit, in ms: the worker aborts the job's signal past it (the server keeps it for the worker)",
  },
  dedup: {
    gate: { kind: "name" },
    sample: "order-42",
    doc: "the deduplication key: while a job admitted under it is pending, scheduled or active (or its window lasts), " +
      "an admission under it admits nothing and is answered with that job's id",
  },
  dedup_ms: {
    gate: { kind: "number", min: 1 },
    needs: "dedup",
    sample: "10000",
    doc: "the key's window, in ms from the admission: it holds that long even once its job has settled (a throttle)",
  },
  debounce: {
    gate: { kind: "number", min: 1, max: 1 },
    needs: "dedup",
    sample: "1",
    doc: "`1`: an admission under a key whose job still waits (pending or scheduled) replaces that job's payload — " +
      "and, from SCHEDULE, its due time — instead of being dropped, so the last of a burst runs; while that job runs " +
      "(active), the admission is a new job, which takes the key",
  },
  lane: {
    gate: { kind: "name" },
    sample: "tenant-42",
    doc: "the job's lane (absent: the default lane): claims serve a queue's lanes round-robin, each with its own " +
      'pause, concurrency and rate limits (docs/WIRE.md, "Lanes"); the first job with a lane makes the queue laned',
  },
  priority: {
    gate: { kind: "number", min: 0, max: MAX_PRIORITY },
    sample: "3",
    doc: "the job's priority, 0 (the default: most urgent) to 2097151: a claim takes every ready job of a lower " +
      'number first, and jobs of one priority in the order they became ready (docs/WIRE.md, "Priorities")',
  },
  traceparent: {
    gate: { kind: "name" },
    sample: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    doc: "the W3C trace context (`traceparent`) of the span that admitted the job (OpenTelemetry): the server keeps it " +
      "for the worker, whose `process` span links to it",
  },
  name: {
    gate: { kind: "name" },
    sample: "send-invoice",
    doc: "the job's name (the name rule: 1 to 1024 bytes without `{`, `}` or NUL), what the job is, as BullMQ's " +
      "job names: the server keeps it for the worker, the dashboard and `getJob`",
  },
  attempts: {
    gate: { kind: "number", min: 1, max: MAX_JOB_ATTEMPTS },
    sample: "3",
    doc: "the most attempts the job gets (1 to 1000000): a worker buries it once it failed that many, whatever its own " +
      "`maxAttempts` (the server keeps it for the worker)",
  },
} as const satisfies Record<string, { gate: OptionGate; needs?: string; sample: string; doc: string }>;

/** The name of an option. */
export type OptionName = keyof typeof OPTIONS;

/** Every option, in spec order (the order `needs` is checked in). */
export const OPTION_NAMES: readonly OptionName[] = Object.keys(OPTIONS) as OptionName[];

/** Largest concurrency limit LIMIT takes (jobs active at once in a queue). */
export const MAX_CONCURRENCY = 1_000_000;
/** Largest `max` of a rate limit (claims per period). */
export const MAX_RATE = 1_000_000;
/** Longest period of a rate limit: one day, in ms. */
export const MAX_RATE_PERIOD_MS = 86_400_000;
/** Largest burst of a rate limit (claims at once after an idle period). */
export const MAX_BURST = 1_000_000;

/** Most due ids one CLAIM moves (schedule → pending, expired active → pending) before it claims. */
export const CLAIM_MOVE_LIMIT = 1000;

/** Every argument of the wire: its gate, a valid sample (for tests and docs) and what it is. */
export const ARGS = {
  id: { gate: { kind: "job-id" }, sample: "JOB00000000001", doc: "a job id (a `JOB` id)" },
  token: {
    gate: { kind: "number", min: 1, max: MAX_TOKEN, digits: TOKEN_DIGITS },
    sample: "1",
    doc: "the lease token CLAIM handed out with the job",
  },
  opts: {
    gate: { kind: "options" },
    sample: "",
    doc: "the job's options (`key=value` items joined by NUL; empty: none)",
  },
  payload: {
    gate: { kind: "bytes", refusal: "payload", limit: MAX_PAYLOAD_BYTES, config: "max-payload" },
    sample: "payload",
    doc: "the job's payload, any bytes",
  },
  due_ms: { gate: { kind: "number", min: 0 }, sample: "0", doc: "when the job falls due, ms since the epoch" },
  lease_ms: { gate: { kind: "number", min: 1 }, sample: "60000", doc: "the lease, in ms from now" },
  count: { gate: { kind: "number", min: 1, max: MAX_BATCH }, sample: "1", doc: "the most jobs to claim" },
  block_ms: {
    gate: { kind: "number", min: 0 },
    sample: "0",
    doc: "how long to wait for a job when none is ready (0: answer at once)",
  },
  delay_ms: {
    gate: { kind: "number", min: 0 },
    sample: "1",
    doc: "the delay before the job is due again, in ms (0: ready now, back in pending)",
  },
  limit: { gate: { kind: "number", min: 1 }, sample: "10", doc: "the most ids to move" },
  keep_attempts: {
    gate: { kind: "number", min: 0, max: 1, digits: 1 },
    sample: "0",
    doc: "1: the jobs keep their attempts, which their next claim counts on (BullMQ's `job.retry()`); 0: a fresh " +
      "attempt budget (attempts 0)",
  },
  cleaned: {
    gate: { kind: "number", min: 0, max: 1, digits: 1 },
    sample: "0",
    doc: "1: a clean — the event is one `cleaned` entry in place of `removed` (BullMQ's `cleaned`, its count the ids " +
      "named); 0: `removed`",
  },
  reason: {
    gate: { kind: "bytes", refusal: "reason", limit: MAX_REASON_BYTES },
    sample: "reason",
    doc: "why the job failed, kept on its row",
  },
  failure: {
    gate: { kind: "bytes", refusal: "failure", limit: MAX_ERROR_BYTES },
    sample: "",
    doc: "the failed attempt's error as the client encodes it (its name, message and stack; empty: none), kept on " +
      `its row among the newest ${FAILURES_KEPT}`,
  },
  line: {
    gate: { kind: "bytes", refusal: "log", limit: MAX_LOG_LINE_BYTES },
    sample: "step 1 of 3",
    doc: `a line of a job's log, any bytes (the client sends text; empty: nothing kept), kept among its newest ${LOG_LINES_KEPT}`,
  },
  value: {
    gate: { kind: "bytes", refusal: "progress", limit: MAX_PROGRESS_BYTES },
    sample: "{}",
    doc: "a job's progress, any bytes (the client sends JSON), kept on its row",
  },
  dead_max: {
    gate: { kind: "number", min: 0 },
    sample: "10000",
    doc: "the most dead jobs the queue keeps (0: no limit)",
  },
  dead_age_ms: {
    gate: { kind: "number", min: 0 },
    sample: "2592000000",
    doc: "how long a dead job is kept, in ms (0: no limit)",
  },
  completed_max: {
    gate: { kind: "number", min: 0 },
    sample: "1000",
    doc: "the most completed jobs the queue keeps with their results (0: none — ACK deletes the row)",
  },
  completed_age_ms: {
    gate: { kind: "number", min: 0 },
    sample: "86400000",
    doc: "how long a completed job is kept, in ms (0: no limit)",
  },
  history_minutes: {
    gate: { kind: "number", min: 0, max: MAX_HISTORY_MINUTES },
    sample: "1440",
    doc: "the minutes of history the queue keeps in `metrics` (per-minute counts of what its settles did; 0: none " +
      "written, `metrics` deleted)",
  },
  events_max: {
    gate: { kind: "number", min: 0 },
    sample: "10000",
    doc: "the entries the queue's events stream keeps: at least the newest `events_max`, at most one stream node more " +
      "(trimmed by whole nodes: `stream-node-max-entries`, 100 by default); RETAIN trims it to exactly this (0: no " +
      "events written; the stream is deleted)",
  },
  result: {
    gate: { kind: "bytes", refusal: "result", limit: MAX_PAYLOAD_BYTES, config: "max-payload" },
    sample: "",
    doc: "the handler's result, any bytes (the client sends JSON; empty: none), kept on the row when the queue keeps " +
      "completed jobs",
  },
  name: { gate: { kind: "name" }, sample: "nightly", doc: "a scheduler's name (the name rule)" },
  spec: {
    gate: { kind: "bytes", refusal: "spec", limit: MAX_SPEC_BYTES },
    sample: "every 60000",
    doc: "a scheduler's spec, the client's text (`every <ms>` or `cron <pattern>[ tz=<zone>]`), opaque to the server",
  },
  next_ms: { gate: { kind: "number", min: 1 }, sample: "1", doc: "a scheduler's next run, ms since the epoch" },
  expected_ms: {
    gate: { kind: "number", min: 1 },
    sample: "1",
    doc: "the next run the firer read (TICK fires only when it is still the scheduler's)",
  },
  max_missed: {
    gate: { kind: "number", min: 0, max: MAX_BATCH },
    sample: "1",
    doc: "the most jobs one tick fires for missed runs (1: the latest only; 0: skip them)",
  },
  tick_ms: { gate: { kind: "number", min: 1 }, sample: "1", doc: "the run a scheduler's job is for, ms since the epoch" },
  concurrency: {
    gate: { kind: "number", min: 0, max: MAX_CONCURRENCY },
    sample: "2",
    doc: "the most jobs of the queue active at once, across every worker (0: no limit)",
  },
  rate_max: {
    gate: { kind: "number", min: 0, max: MAX_RATE },
    sample: "10",
    doc: "a rate limit's claims per period (0: no rate limit; then rate_per_ms and rate_burst are not read)",
  },
  rate_per_ms: {
    gate: { kind: "number", min: 1, max: MAX_RATE_PERIOD_MS },
    sample: "1000",
    doc: "a rate limit's period, in ms",
  },
  rate_burst: {
    gate: { kind: "number", min: 1, max: MAX_BURST },
    sample: "1",
    doc: "the most claims a rate limit lets through at once after an idle period (1: evenly spaced)",
  },
  scope: {
    gate: { kind: "number", min: 0, max: 2, digits: 1 },
    sample: "0",
    doc: "what LIMIT sets: 0 the queue, 1 the lane `lane` (empty: the default lane), 2 the default of every lane",
  },
  lane: {
    gate: { kind: "lane" },
    sample: "",
    doc: "a lane of the queue (empty: the queue itself; for LIMIT's scope 1, the default lane)",
  },
  op: {
    gate: { kind: "number", min: 0, max: 3, digits: 1 },
    sample: "0",
    doc: "what SETTLE does with the job: 0 ack (`result` kept as ACK keeps it), 1 retry (after `delay_ms`, with " +
      "`reason` and `failure`), 2 bury (with `reason` and `failure`), 3 release (a hand-back: the attempt given back); the fields an op does " +
      "not use are not read",
  },
  want: {
    gate: { kind: "number", min: 0, max: MAX_BATCH },
    sample: "1",
    doc: "the most jobs to claim once the settlements are written (0: none)",
  },
  parent: { gate: { kind: "job-id" }, sample: "JOB00000000001", doc: "the parent's id (a `JOB` id)" },
  parent_opts: {
    gate: { kind: "options" },
    sample: "",
    doc: "the parent's options, as a job's `opts` (empty: none): its lane and priority apply once it is ready",
  },
  open: {
    gate: { kind: "number", min: 0, max: 1, digits: 1 },
    sample: "0",
    doc: "1: the parent is open, more children may come (ADOPT) until SEAL; 0: sealed, these are all",
  },
  within_ms: {
    gate: { kind: "number", min: 0 },
    sample: "0",
    doc: "the flow's deadline, in ms from now: a parent still waiting then is buried (by its queue's OUTBOX); 0: none",
  },
  from: {
    gate: { kind: "number", min: 0, max: MAX_FAN_IN, digits: 6 },
    sample: "1",
    doc: "the place of the first child added: the parent's count of children so far (the client derives ids from places)",
  },
  queue: { gate: { kind: "name" }, sample: "orders", doc: "a child's queue (the name rule)" },
  policy: {
    gate: { kind: "number", min: 0, max: 7, digits: 1 },
    sample: "0",
    doc: "what a child's failure does to its parent: 0 fail it at once, 1 ignore (recorded, counts as finished), " +
      "2 remove (counts as finished, recorded as `removed` without its reason), 3 continue (recorded; the parent " +
      "may run at once with what has finished); plus 4 when the child has children of its own: its body is then " +
      'its subtree (docs/WIRE.md, "Flows"), and it travels through the outbox even to this queue',
  },
  body: {
    gate: { kind: "bytes", refusal: "payload", limit: MAX_PAYLOAD_BYTES },
    sample: "payload",
    doc: "a child's payload, any bytes, or its subtree when its policy is 4 or more (at most the default payload " +
      "limit: it travels in an outbox entry)",
  },
  entry: {
    gate: { kind: "bytes", refusal: "entry", limit: MAX_ENTRY_BYTES },
    sample: "done\0orders\0JOB00000000001\x000\0JOB00000000002\0completed\0",
    doc: 'an outbox entry as OUTBOX handed it out: NUL-joined fields, the second the destination queue (docs/WIRE.md, "Flows")',
  },
  deadline: {
    gate: { kind: "number", min: 1 },
    sample: "1",
    doc: "the token OUTBOX handed out with an entry (its lease's deadline, ms)",
  },
  penalty_ms: {
    gate: { kind: "number", min: 1, max: MAX_RATE_PERIOD_MS },
    sample: "1000",
    doc: "how long the queue hands out nothing, in ms from now",
  },
} as const satisfies Record<string, { gate: Gate; sample: string; doc: string }>;

/** The name of an argument. */
export type ArgName = keyof typeof ARGS;

/**
 * A key a verb derives from the queue name: a grammar type, `wake`, the rows of its jobs, or the
 * hash of the scheduler it names (`scheduler:<name>`).
 */
export type Derived = Exclude<QueueType, "meta"> | "rows" | "scheduler";

/** One verb of the wire. */
export interface VerbSpec {
  /** Arguments after the key, in order, once. */
  readonly args: readonly ArgName[];
  /** Arguments repeated once per job after the fixed ones (a batch); empty when none. */
  readonly group: readonly ArgName[];
  /** The fewest groups a call carries (1 unless the verb may name no job: REQUEUE). */
  readonly minGroups?: 0;
  /** The keys it derives from the queue name and may read or write (besides `meta`). */
  readonly touches: readonly Derived[];
  /**
   * Whether it only adds memory (admits jobs, or stores progress): refused under `maxmemory`
   * (module flag `deny-oom`; the script without `allow-oom`). Verbs that free memory or keep it
   * bounded run past the limit, so that workers drain a full server.
   */
  readonly admits: boolean;
  /** The reply, in words. */
  readonly reply: string;
  /** What it does, in words. */
  readonly effect: string;
  /** Its writes, as commands (docs/WIRE.md, "Writes and the job row"). */
  readonly writes: string;
  /** Step-5 refusals it can give, in the order it checks them. */
  readonly domain: readonly Refusal[];
}

/**
 * A claimed job in CLAIM's and SETTLE's replies (wire 12): one bulk string, not an array of five —
 * a client pays per reply element (glide builds a value for each: bench/reply_shape.ts).
 */
const CLAIMED_JOB = "the header `<attempts> <token> <id_len> <opts_len> <payload_len>` (decimal, lengths in bytes; " +
  "`payload_len` -1 when the row has no payload) and a newline, then the id, the `opts` as admitted (empty when " +
  "none) and the payload, back to back";

/** The reply of an admission (ENQUEUE, SCHEDULE). */
const ADMIT_REPLY = "integer: jobs admitted; when a job of the call carries `dedup`, an array: the count admitted, " +
  "then for each job not admitted its place in the call (0-based), the id of the job it folded into, and " +
  "`deduplicated` or `debounced`";
/** What an admission with `dedup` writes. */
const DEDUP_WRITES = 'per admitted job with `dedup`: `HSET dedup <key> "<id> <until_ms>"` (until: now + dedup_ms, ' +
  "or 0), `ZREM dedup_ttl <key>`, and `HSET meta dedup 1`; per debounced job: `HSET <held row> payload <p>`";
/** What a settle or removal writes for a job admitted with `dedup`. */
const DEDUP_RELEASE = "per job admitted with `dedup` whose key still names it: `HDEL dedup <key>` when its window " +
  "has ended, else `ZADD dedup_ttl <until_ms> <key>`";

/** What a failure (RETRY, BURY) writes for a job whose `failure` (its error) is not empty: its attempt's error, among the newest kept. */
const FAILURE = "per job whose `failure` is not empty: `HINCRBY row failures 1` (n), `HSET row failure:<(n − 1) mod " +
  `${FAILURES_KEPT}> <failure>\` (the newest ${FAILURES_KEPT} kept, each overwriting the oldest)`;

/** What a settle writes when the queue has a concurrency limit (a slot freed may make jobs claimable). */
const FREED = "when `meta` sets `concurrency` and pending holds ids, `ZADD wake 0 ready` (a slot is free)";

/** What a settle writes into the queue's history (docs/WIRE.md, "History"), `<k>` its count's place. */
const HISTORY = (what: string): string =>
  `when \`meta\`'s \`history_minutes\` (absent: ${HISTORY_MINUTES_DEFAULT}) is not 0, the history: the minute m = ` +
  `now ÷ ${HISTORY_MINUTE_MS}; when \`metrics\` has no field m and its \`last\` is not m, \`HDEL metrics\` of the minutes from \`first\` to ` +
  "min(m − history_minutes, last) (at most " + `${MAX_HISTORY_MINUTES + 1}` + "), `HSET metrics last <m> first <max(first, " +
  'm − history_minutes + 1)>` (first: m when there was no `last`); then `HSET metrics <m> "<acked> <buried> <retried>"` ' +
  `with ${what} added (a missing or malformed field counts 0 0 0); and the latency histograms: per job, its run ` +
  "(now − its token ÷ 1000, the claim's ms) and its wait (that claim − the later of its row's `created_ms` and " +
  "`due_ms`) each counted in the bucket of `LATENCY_BOUNDS_MS` it falls in, `HSET metrics run <counts…> <sum_ms> " +
  "wait <counts…> <sum_ms>` (16 counts and the sum, space-separated, added to the stored ones; a malformed one counts " +
  "zeros)";

/** How every verb that makes a transition writes its events (lib/wire/events.ts). */
const EVENT = `when \`meta\`'s \`events_max\` (absent: ${EVENTS_MAX_DEFAULT}) is not 0, its events: \`XADD events ` +
  'MAXLEN ~ <events_max> * type <type> …` (docs/WIRE.md, "Events")';
/** What ACK and CLAIM write to keep completed jobs within the queue's retention. */
const COMPLETED_RETENTION = "retention of completed jobs: `ZREM completed` and `DEL` of the oldest rows past " +
  "`completed_max` or older than `completed_age_ms`, at most 1000 (" + "a flow child's row then a tombstone: " +
  "`HSET row state cancelled parent <its parent>`, `PEXPIRE row <TOMBSTONE_MS>`)";

/** The wire's verbs, in wire order. */
export const VERBS = {
  ENQUEUE: {
    args: [],
    group: ["id", "opts", "payload"],
    touches: ["pending", "wake", "rows", "dedup", "dedup_ttl", "events"],
    admits: true,
    reply: ADMIT_REPLY,
    effect: "new rows (state `pending`); ids pushed on the head of pending, in argument order; a job whose " +
      '`dedup` key is held is not admitted (docs/WIRE.md, "Deduplication")',
    writes: `\`meta\` made if missing (\`wire ${WIRE} created_ms <now>\`)` + ", `HINCRBY meta enqueued <n>`; per job " +
      "`HSET row state pending payload <p> attempts 0 created_ms <now>` (and `opts <o>` when given); " +
      "`LPUSH pending <ids…>`; `ZADD wake 0 ready` when pending was empty; " + DEDUP_WRITES + "; " + EVENT +
      " (`enqueued`, `deduplicated`)",
    domain: ["repeated", "noperm", "duplicate", "wrongtype", "counter", "migrating"],
  },
  SCHEDULE: {
    args: [],
    group: ["id", "due_ms", "opts", "payload"],
    touches: ["schedule", "wake", "rows", "dedup", "dedup_ttl", "events"],
    admits: true,
    reply: ADMIT_REPLY,
    effect: "new rows (state `scheduled`); ids in schedule at their due_ms; a job whose `dedup` key is held is not " +
      "admitted (a debounced one moves the waiting job's due time to its own)",
    writes: "`meta` made if missing, `HINCRBY meta enqueued <n>`; per job `HSET row state scheduled payload <p> " +
      "attempts 0 created_ms <now> due_ms <due>` (and `opts <o>`), `ZADD schedule <due> id`; `ZADD wake LT " +
      "<earliest due> due`; " + DEDUP_WRITES + "; a debounced scheduled job: `ZADD schedule <due> id`, `HSET row " +
      "due_ms <due>`; " + EVENT + " (`scheduled`, `deduplicated`)",
    domain: ["repeated", "noperm", "duplicate", "wrongtype", "counter", "migrating"],
  },
  CLAIM: {
    args: ["lease_ms", "count", "block_ms"],
    group: [],
    touches: ["pending", "active", "schedule", "dead", "completed", "wake", "rows", "dedup", "dedup_ttl", "events"],
    admits: false,
    reply: "array: `next_ms` (integer: the earliest time a scheduled job falls due, a lease runs out, the " +
      "queue's park ends or, when its rate limit is spent, its next claim is allowed; 0 when none), then one " +
      "bulk string per claimed job: " + CLAIMED_JOB,
    effect: "moves due ids schedule → pending and expired leases active → pending (at most " +
      `${CLAIM_MOVE_LIMIT} each), then, unless the queue is paused or parked (PENALIZE), pops up to count ids — ` +
      "fewer when the queue's concurrency limit or rate limit (LIMIT) allows fewer — from the tail of pending into active at now+lease_ms, each with attempts+1 and a new token; with block_ms > 0 and " +
      "nothing claimed, the module waits on pending (the scripts answer at once: the client waits on wake)",
    writes: "as PROMOTE and REAP; tail ids whose row is missing are popped and dropped; per claimed job " +
      "`RPOP pending`, `ZADD active <now+lease_ms> id`, `HSET row state active attempts <a> deadline_ms " +
      "<now+lease_ms> token <t>` (when active did not exist, a member no id can be — NUL, `emq:skiplist`, NULs " +
      "to 1,024 bytes — is added to it first and removed after the ids: longer than a listpack takes, it makes " +
      "the set a skiplist, whose adds and lookups do not scan every member; the scripts' two writes are " +
      "replicated, the module's are not); `meta`'s tokens to max(old, now × 1000) + k (tokens t = that − k + 1 … that), " +
      '`HINCRBY meta claimed <k>`; with a rate limit and k > 0, `HSET meta tat <q> <r>` (docs/WIRE.md, "Limits"); ' +
      "`ZADD wake 0 ready` when pending is left non-empty and a claim could take a job now (not paused, not " +
      "parked, below the concurrency limit, a rate token left), else `ZREM wake ready`; retention of dead jobs, as BURY; when `meta`'s dedup is 1, deduplication " +
      `windows that ended: up to ${CLAIM_MOVE_LIMIT} members of dedup_ttl with score ≤ now, each \`HDEL dedup <key>\`, ` +
      "`ZREM dedup_ttl <key>`; " + COMPLETED_RETENTION + "; " + EVENT + " (`promoted`, `stalled`, `claimed`)",
    domain: ["noperm", "wrongtype", "counter", "migrating"],
  },
  ACK: {
    args: [],
    group: ["id", "token", "result"],
    touches: ["active", "completed", "pending", "wake", "rows", "dedup", "dedup_ttl", "events", "metrics"],
    admits: false,
    reply: "integer: jobs settled",
    effect: "ids leave active; when the queue keeps completed jobs (`completed_max`, absent: " +
      `${COMPLETED_MAX_DEFAULT}) their rows stay, state \`completed\`, with the result, and the completed set is ` +
      "trimmed to the queue's retention; else their rows are deleted (a flow child's becomes a tombstone: a second " +
      "delivery of its creation makes nothing); their deduplication keys are let go",
    writes: "`ZREM active <ids…>`; keeping: per job `HSET row state completed finished_ms <now>` (and `result <r>` when " +
      "not empty), `HDEL row deadline_ms` (its `token` stays: the claim's time, token ÷ 1000), `ZADD completed <now> id`, then " + COMPLETED_RETENTION +
      "; else `DEL <rows…>` (a flow child's row then a tombstone, as above); `HINCRBY meta acked <n>`; " + HISTORY("n to `acked`") + "; " + DEDUP_RELEASE +
      "; " + FREED + "; " +
      EVENT + " (`completed`)",
    domain: ["repeated", "noperm", "wrongtype", "counter", "migrating", "lease-lost"],
  },
  RETRY: {
    args: [],
    group: ["id", "token", "delay_ms", "reason", "failure"],
    touches: ["active", "schedule", "pending", "wake", "rows", "events", "metrics"],
    admits: false,
    reply: "integer: jobs settled",
    effect: "active → schedule at now+delay_ms, or with delay_ms 0 straight back to the head of pending " +
      "(ready now, as a promotion would put it); reason kept",
    writes: "`ZREM active <ids…>`; per job with delay_ms > 0 `ZADD schedule <now+delay_ms> id`, `HSET row state " +
      "scheduled due_ms <now+delay_ms> delay_ms <delay_ms> reason <r>`, with delay_ms 0 `LPUSH pending id`, `HSET row " +
      "state pending due_ms <now> delay_ms 0 reason <r>` (argument order); " + FAILURE + "; `HINCRBY meta retried <n>`; " + HISTORY("n to `retried`") +
      "; `ZADD wake LT <earliest due> due` " +
      "when any was scheduled; `ZADD wake 0 ready` when any went to an empty pending; " + FREED + "; " + EVENT +
      " (`retried`, one per job)",
    domain: ["repeated", "noperm", "wrongtype", "counter", "migrating", "lease-lost"],
  },
  BURY: {
    args: [],
    group: ["id", "token", "reason", "failure"],
    touches: ["active", "dead", "pending", "wake", "rows", "dedup", "dedup_ttl", "events", "metrics"],
    admits: false,
    reply: "integer: jobs settled",
    effect: "active → dead; reason kept; the dead set trimmed to the queue's retention; deduplication keys let go",
    writes: "per job `ZREM active id`, `ZADD dead <now> id`, `HSET row state dead reason <r> buried_ms <now>`; " +
      FAILURE + "; " +
      "`HINCRBY meta buried <n>`; " + HISTORY("n to `buried`") + "; retention (docs/WIRE.md): `ZREM dead` and `DEL` of the oldest rows past " +
      "`dead_max` or older than `dead_age_ms`, at most 1000 (a flow child's row then a tombstone, as ACK's); " + DEDUP_RELEASE + "; " + FREED + "; " + EVENT +
      " (`dead`, one per job)",
    domain: ["repeated", "noperm", "wrongtype", "counter", "migrating", "lease-lost"],
  },
  RELEASE: {
    args: [],
    group: ["id", "token"],
    touches: ["active", "pending", "wake", "rows", "events"],
    admits: false,
    reply: "integer: jobs released",
    effect: "a hand-back, not a failure: active → the tail of pending (claimed next), the attempt its claim " +
      "counted given back; no reason, nothing counted",
    writes: "`ZREM active <ids…>`, `RPUSH pending <ids…>`; per job `HSET row state pending attempts <a−1>`; " +
      "`ZADD wake 0 ready` when pending was empty; the token stays (the next claim takes a new one); " + FREED +
      "; " + EVENT + " (`released`)",
    domain: ["repeated", "noperm", "wrongtype", "migrating", "lease-lost", "counter"],
  },
  EXTEND: {
    args: ["lease_ms"],
    group: ["id", "token"],
    touches: ["active", "rows"],
    admits: false,
    reply: "integer: leases extended",
    effect: "each job's lease runs until now+lease_ms",
    writes: "per job `ZADD active <now+lease_ms> id`, `HSET row deadline_ms <now+lease_ms>`; a job not held whose row " +
      "has `cancelled_ms` and the call's token refuses the call `cancelled` (CANCEL buried it under this claim)",
    domain: ["repeated", "noperm", "wrongtype", "migrating", "cancelled", "lease-lost"],
  },
  PROGRESS: {
    args: [],
    group: ["id", "token", "value"],
    touches: ["active", "rows", "events"],
    admits: true,
    reply: "integer: jobs updated",
    effect: "each held job's progress is set (token-checked like a settle)",
    writes: "per job `HSET row progress <value>`; " + EVENT + " (`progress`, one per job)",
    domain: ["repeated", "noperm", "wrongtype", "migrating", "lease-lost"],
  },
  REMOVE: {
    args: ["cleaned"],
    group: ["id"],
    touches: ["pending", "schedule", "dead", "completed", "active", "wake", "rows", "dedup", "dedup_ttl", "events", "waiting", "outbox"],
    admits: false,
    reply: "integer: jobs removed (an id with no row counts 0)",
    effect: "pending, scheduled, dead, completed or waiting jobs are deleted (their deduplication keys let go); an active job " +
      "is refused (its worker holds it). A flow's parent has its unfinished children cancelled: one of this queue at once " +
      "(when pending and never claimed), one of another queue by a `cancel` entry of this queue's outbox. A flow's child " +
      "not finished (pending, scheduled, or a child parent still waiting) counts as finished for its parent, recorded `removed` (as a settle records " +
      "its outcome: on a parent here at once, else by a `done` entry); a flow's child, finished or not, leaves a tombstone " +
      "in place of its row (a second delivery of its creation makes nothing)",
    writes: "per job with a row: `LREM pending 0 id`, `ZREM schedule id`, `ZREM dead id`, `ZREM completed id`, `ZREM waiting id` (where " +
      "it is), `DEL row` (a flow child's row then a tombstone: `HSET row state cancelled parent <its parent>`, " +
      "`PEXPIRE row <TOMBSTONE_MS>`); a ready job of a laned queue: `ZINCRBY lanes -1 <lane>`, and when that was the lane's last " +
      "ready job `LREM ring 0 <lane>`, `HDEL lane:<lane> ring` (O(ring length): an operator's verb), then its idle " +
      "check; `ZREM wake ready` when no ready job is left for a claim; " + DEDUP_RELEASE + "; " + EVENT + " (`removed`; with cleaned 1 `cleaned`); " +
      "per unfinished child of a removed parent: " + CANCEL_WRITES + "; per removed unfinished child of a flow: " +
      "as ACK's settle hook with state `removed`",
    domain: ["repeated", "noperm", "wrongtype", "migrating", "active"],
  },
  CANCEL: {
    args: ["reason"],
    group: ["id"],
    touches: ["pending", "schedule", "dead", "completed", "active", "wake", "rows", "dedup", "dedup_ttl", "events", "waiting", "outbox"],
    admits: false,
    reply: "array: one status per id, in argument order: 0 no row; 1 it waited (pending, scheduled, or a flow's parent " +
      "waiting for its children) and is buried now; 2 it was active and is buried now (its worker's next EXTEND is " +
      "refused `cancelled`); 3 it had finished (completed or dead): nothing written",
    effect: "cancels jobs from anywhere: a pending or scheduled job leaves its list or the schedule and is buried with " +
      "the reason (kept, as a failure, where an operator looks: requeue undoes it); a flow's waiting parent leaves " +
      "`waiting` and is buried so, its unfinished children cancelled as REMOVE's; an active job leaves active " +
      "and is buried at once, its token kept, so its worker's settle is refused as for a lost lease (SETTLE: not " +
      "held) and its next EXTEND is refused `cancelled`, whose handler the worker aborts; never retried. " +
      "A flow's child cancelled tells its parent as a failure with the reason, under its policy (as BURY's settle " +
      "hook: on a parent here at once, else by a `done` entry). " +
      "Their deduplication keys are let go. Retention of the dead set runs at the next BURY or CLAIM",
    writes: "per job cancelled: `LREM <its ready list> 0 id` (with REMOVE's lane and priority bookkeeping) or `ZREM " +
      "schedule id` or `ZREM waiting id` or `ZREM active id` (a laned queue: the lane's `active` − 1, as BURY), `ZADD dead <now> id`, " +
      "`HSET row state dead reason <r> buried_ms <now> cancelled_ms <now>`; `HINCRBY meta buried <n>`; `ZREM wake " +
      "ready` when no ready job is left for a claim; " + DEDUP_RELEASE + "; " + FREED + "; " + EVENT + " (`cancelled`); " +
      "per unfinished child of a cancelled parent: " + CANCEL_WRITES + "; per cancelled child of a flow: as BURY's " +
      "settle hook with state `failed` and the reason",
    domain: ["repeated", "noperm", "wrongtype", "counter", "migrating"],
  },
  REQUEUE: {
    args: ["limit", "keep_attempts"],
    group: ["id"],
    minGroups: 0,
    touches: ["dead", "pending", "wake", "rows", "events"],
    admits: false,
    reply: "integer: jobs moved",
    effect: "dead jobs back to pending with a fresh attempt budget (with keep_attempts 1: their attempts kept, the " +
      "next claim counting on): the ids given (each must be dead), or without ids up to limit, oldest first",
    writes: "per job `ZREM dead id`, `LPUSH pending id`, `HSET row state pending attempts 0` (keep_attempts 1: " +
      "`HSET row state pending`), `HDEL row reason " +
      "buried_ms cancelled_ms token` (wire 17: the token too, so that a requeued job has no claim time until its " +
      "next claim, as BullMQ's reprocessJob deletes `processedOn`); `ZADD wake 0 ready` when pending was empty; " +
      EVENT + " (`requeued`)",
    domain: ["repeated", "noperm", "wrongtype", "migrating", "not-dead"],
  },
  RUN: {
    args: [],
    group: ["id"],
    touches: ["schedule", "pending", "wake", "rows", "events"],
    admits: false,
    reply: "integer: jobs moved",
    effect: "scheduled jobs run now: each id (each must be in schedule) moves to the head of pending, due now, as a " +
      "promotion puts a due job; its attempts and reason stay (a retry waiting on its backoff is retried now)",
    writes: "per job `ZREM schedule id`, `LPUSH pending id`, `HSET row state pending due_ms <now>` (when the row " +
      "exists); `ZADD wake 0 ready` when pending was empty; " + EVENT + " (`promoted`)",
    domain: ["repeated", "noperm", "wrongtype", "migrating", "not-scheduled"],
  },
  PAUSE: {
    args: ["lane"],
    group: [],
    touches: ["lanes", "events"],
    admits: false,
    reply: "integer: 1 when it paused the queue (or the lane), 0 when it was paused",
    effect: "claims hand out nothing of the queue (lane empty) or of the lane (waiting claims keep waiting); the " +
      "queue still admits",
    writes: "`meta` made if missing; lane empty: `HSET meta paused 1`; else `HSET lane:<lane> paused 1`, `ZADD lanes NX 0 " +
      "<lane>`; when it paused, " + EVENT + " (`paused`)",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  RESUME: {
    args: ["lane"],
    group: [],
    touches: ["pending", "wake", "ring", "lanes", "events"],
    admits: false,
    reply: "integer: 1 when it resumed the queue (or the lane), 0 when it was not paused",
    effect: "claims hand out jobs of the queue (or the lane) again; waiting claims are woken",
    writes: "lane empty: `HDEL meta paused`; `ZADD wake 0 ready` when pending holds ids; else `HDEL lane:<lane> " +
      'paused`, the lane\'s ring insert and idle checks (docs/WIRE.md, "Lanes"); when it resumed, ' + EVENT + " (`resumed`)",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  LIMIT: {
    args: ["scope", "lane", "concurrency", "rate_max", "rate_per_ms", "rate_burst"],
    group: [],
    touches: ["pending", "wake", "ring", "lanes"],
    admits: false,
    reply: "integer: 1",
    effect: "sets the queue's limits, which every claim of every worker obeys: at most concurrency jobs active at " +
      "once (0: no limit) and claims at rate_max per rate_per_ms on average, at most rate_burst at once " +
      '(rate_max 0: no rate limit), exactly, by the generic cell-rate algorithm (docs/WIRE.md, "Limits"); a ' +
      "rate other than the one in force starts from a full bucket; waiting claims are woken. scope 0: the queue's " +
      "limits; 1: the lane `lane`'s (empty: the default lane's); 2: the default of every lane without its own",
    writes: "`meta` made if missing; scope 0: `HSET meta concurrency <c>` (0: `HDEL meta concurrency`); a rate other than " +
      '`meta`\'s: `HSET meta rate "<max> <per_ms> <burst>"`, `HDEL meta tat` (rate_max 0: `HDEL meta rate tat`); ' +
      "`ZADD wake 0 ready` when a claim may reach a ready job (laned: a lane in `ring`); scope 1: the same fields of " +
      "`lane:<lane>`, `ZADD lanes NX 0 " +
      "<lane>`, its ring insert and idle checks; when the call drops the lane's `tat` and the lane was parked by its rate " +
      "(`parked` its next token), `ZREM parked <lane>`, `HDEL lane:<lane> parked` (a PENALIZE park holds); scope 2: `meta`'s `lane_concurrency` and `lane_rate`, then in a " +
      "laned queue every lane of `lanes` (O(lanes): an operator's verb): when the default rate changed, a lane " +
      "without its own loses its `tat` and, parked at the old rate's next token, leaves `parked` (`ZREM parked " +
      "<lane>`, `HDEL lane:<lane> parked`); then its ring insert and idle checks",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  PENALIZE: {
    args: ["lane", "penalty_ms"],
    group: [],
    touches: ["lanes", "parked", "events"],
    admits: false,
    reply: "integer: the time the park ends (ms since the epoch)",
    effect: "parks the queue (lane empty) or the lane: claims hand out nothing of it until now + penalty_ms (a " +
      'remote service said "slow down"); a longer park in force is kept; claims answer with the park\'s end as next_ms',
    writes: "`meta` made if missing; lane empty: `HSET meta parked <now+penalty_ms>` unless `meta`'s parked is " +
      "later; else `HSET lane:<lane> parked <until>`, `ZADD parked <until> <lane>`, `ZADD lanes NX 0 <lane>`; " + EVENT +
      " (`penalized`)",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  RETAIN: {
    args: ["dead_max", "dead_age_ms", "completed_max", "completed_age_ms", "events_max", "history_minutes"],
    group: [],
    touches: ["dead", "completed", "rows", "events", "metrics"],
    admits: false,
    reply: `integer: dead and completed jobs deleted, at most ${TRIM_LIMIT} of each (${TRIM_LIMIT}: call again; ` +
      "fewer: the retention holds)",
    effect: "the queue's retention of dead jobs (0: no limit), of completed jobs (completed_max 0: none kept) and of " +
      "events (0: none written) and the minutes of history it keeps (0: none), applied at once: the oldest jobs past it are deleted, at most " +
      `${TRIM_LIMIT} of each per call (BURY, ACK and CLAIM apply it too), the stream trimmed`,
    writes: "`meta` made if missing; `HSET meta dead_max <n> dead_age_ms <ms> completed_max <n> completed_age_ms <ms> " +
      "events_max <n> history_minutes <m>`; retention as BURY's and ACK's, with these limits; `XTRIM events MAXLEN <events_max>` (0: " +
      "`DEL events`); history_minutes 0: `DEL metrics`",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  DROP: {
    args: ["limit"],
    group: [],
    touches: [
      "pending",
      "schedule",
      "dead",
      "completed",
      "active",
      "wake",
      "schedulers",
      "scheduler",
      "rows",
      "dedup",
      "dedup_ttl",
      "events",
      "waiting",
      "outbox",
      "metrics",
    ],
    admits: false,
    reply: "integer: schedulers and jobs deleted; fewer than limit means the queue is gone, its meta included",
    effect: "deletes the queue: up to limit schedulers (first: no tick admits a job meanwhile) and jobs (pending, " +
      "then scheduled, then dead, then completed, then flows' waiting parents) per call, and once none is left every key of the queue " +
      "but the outbox's entries others wait for: a dropped waiting parent's unfinished children in other queues are " +
      "cancelled (`cancel` entries), a dropped unfinished child (pending, scheduled or waiting) of a parent in another queue records " +
      "`removed` there (a `done` entry), and outcomes not relayed yet stay; the outbox's `child` entries go. Refused while a " +
      "job is active (its worker holds it)",
    writes: "per job `DEL row` and its id removed; per scheduler `DEL scheduler:<name>`, `ZREM schedulers <name>`; " +
      "per dropped waiting parent's unfinished child elsewhere `ZADD outbox <now> cancel\\0…`; per dropped unfinished child " +
      "of a parent elsewhere `ZADD outbox <now> done\\0…\\0removed\\0`; when none is left `DEL pending schedule dead " +
      "completed wake schedulers dedup dedup_ttl events waiting metrics meta` and `ZREM outbox` of its `child` entries",
    domain: ["noperm", "wrongtype", "migrating", "active"],
  },
  PROMOTE: {
    args: ["limit"],
    group: [],
    touches: ["schedule", "pending", "wake", "rows", "events"],
    admits: false,
    reply: "integer: ids moved",
    effect: "up to limit due ids move schedule → pending",
    writes: "ids of schedule with score ≤ now, ascending (score, then member), at most limit: each " +
      "`ZREM schedule id`, `LPUSH pending id`, and `HSET row state pending` when the row exists; " +
      "`ZADD wake 0 ready` when any moved; " + EVENT + " (`promoted`)",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  REAP: {
    args: ["limit"],
    group: [],
    touches: ["active", "pending", "wake", "rows", "events"],
    admits: false,
    reply: "integer: ids moved",
    effect: "up to limit ids whose lease expired go back to pending (the tail: claimed next)",
    writes: "ids of active with score ≤ now, ascending, at most limit: each `ZREM active id`, `RPUSH pending id`, " +
      "and `HSET row state pending stalls <stalls + 1>` when the row exists (a malformed `stalls` counts as 0; wire 17); " +
      "`ZADD wake 0 ready` when any moved; " + EVENT + " (`stalled`)",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  SCHEDULER: {
    args: ["name", "spec", "next_ms", "max_missed", "opts", "payload"],
    group: [],
    touches: ["schedulers", "scheduler"],
    admits: true,
    reply: "integer: the scheduler's next run in force (ms)",
    effect: "upserts the scheduler: new, it runs first at next_ms; with the same spec only max_missed, opts and " +
      "payload change (its next run stays); with another spec it runs next at next_ms. opts: the options of every " +
      "job it admits, checked as ENQUEUE's (empty: none)",
    writes: "`meta` made if missing; new: `HSET scheduler:<name> spec <s> next_ms <n> max_missed <m> payload " +
      "<p> runs 0 created_ms <now>` (and `opts <o>` when given), `ZADD schedulers <n> name`; same spec: `HSET " +
      "scheduler:<name> max_missed <m> payload <p>`; another spec: `HSET scheduler:<name> spec <s> next_ms <n> " +
      "max_missed <m> payload <p>`, `ZADD schedulers <n> name`; an upsert of a scheduler that was there: `HSET " +
      "scheduler:<name> opts <o>`, or with opts empty `HDEL scheduler:<name> opts`",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  UNSCHEDULE: {
    args: ["name"],
    group: [],
    touches: ["schedulers", "scheduler"],
    admits: false,
    reply: "integer: 1 when it removed the scheduler, 0 when there was none",
    effect: "the scheduler is deleted (its jobs already admitted stay)",
    writes: "`DEL scheduler:<name>`, `ZREM schedulers name`",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  TICK: {
    args: ["name", "expected_ms", "next_ms"],
    group: ["id", "tick_ms"],
    minGroups: 0,
    touches: ["pending", "wake", "rows", "schedulers", "scheduler", "dedup", "dedup_ttl", "events"],
    admits: true,
    reply: "integer: jobs admitted, or -1 when it did not fire (writing nothing)",
    effect: "fires the scheduler, compare-and-set: only when it exists, its next_ms is expected_ms, the new " +
      "next_ms is later, and the queue is not paused; then one job per id is admitted as ENQUEUE admits a job " +
      "carrying the scheduler's `opts` (its lane, priority, time limit; with a `dedup` key, a run whose key is held " +
      "admits no job, or with `debounce` gives the waiting holder the scheduler's payload: the reply and `runs` count " +
      "only the jobs admitted) with the scheduler's payload (the row also names the " +
      "scheduler and its run), and the next run is next_ms. A stored `opts` that fails the options gate (a " +
      "hand-edited hash) is ignored: the jobs are admitted with no options",
    writes: "as ENQUEUE (the rows also get `scheduler <name> tick_ms <t>`); `HSET scheduler:<name> next_ms " +
      "<next>`, with jobs admitted `HSET scheduler:<name> last_ms <the latest tick_ms admitted>`; `runs + " +
      "<admitted>`; `ZADD schedulers <next> name`; " + EVENT + " (`scheduler`, `deduplicated`)",
    domain: ["repeated", "noperm", "duplicate", "wrongtype", "counter", "migrating"],
  },
  SETTLE: {
    args: ["lease_ms", "want"],
    group: ["op", "id", "token", "delay_ms", "reason", "result", "failure"],
    touches: ["pending", "active", "schedule", "dead", "completed", "wake", "rows", "dedup", "dedup_ttl", "events", "metrics"],
    admits: false,
    reply: "array: `next_ms` (as CLAIM's), then an array of one status per settlement in argument order (1 applied, " +
      "0 not held: its row missing or not a hash, its id not in active, or its row's token another; 2 its id " +
      "already named by an earlier settlement of the call), then one bulk string per claimed job (as CLAIM's)",
    effect: "a worker's round trip: its finished jobs settled and the slots they free claimed again, in one call. " +
      "The settlements whose job is held are applied as ACK, RETRY, BURY and RELEASE apply theirs — first every " +
      "ack, then every retry, every bury, every release, each op's in argument order, as one call of that verb " +
      "(its checks all run before any write of any op); a settlement not held or repeated changes nothing (a " +
      "status, never a refusal). Then a CLAIM of up to want jobs with block_ms 0 (none when want is 0); when that " +
      "claim would be refused (a row taken by a slot migration, a hand-edited key), the settlements stand and the " +
      "claim part claims nothing (next_ms 0): the worker's next CLAIM meets the refusal",
    writes: "as ACK, RETRY, BURY and RELEASE for the applied settlements of each op, in that order, then as CLAIM",
    domain: ["noperm", "wrongtype", "counter", "migrating"],
  },
  FLOW: {
    args: ["parent", "parent_opts", "payload", "open", "within_ms"],
    group: ["id", "queue", "policy", "opts", "body"],
    touches: ["pending", "wake", "rows", "waiting", "outbox", "events"],
    admits: true,
    reply: "integer: children created in this queue (the others travel through the outbox)",
    effect: 'a parent (state `waiting`, in `waiting`) that waits for its children, one per group (docs/WIRE.md, "Flows"): ' +
      "a child in this queue is created at once (as ENQUEUE admits it, its row naming its parent); a child in another " +
      "queue is an entry of this queue's outbox, which a relay applies there (APPLY). The parent moves to pending when " +
      "its last child finishes (an open parent: once sealed, SEAL), or is buried at once when a child of policy 0 fails, " +
      "or moves at once when a child of policy 3 fails",
    writes: "`meta` made if missing (laned, as ENQUEUE's, when the parent or a child here is the first job with a lane), " +
      "`HINCRBY meta enqueued <1 + children here>`; `HSET <parent row> state waiting payload <p> " +
      "attempts 0 created_ms <now> children <n> finished 0` (and `open 1` when open; `opts <o> priority <p> lane <l>` " +
      "as ENQUEUE's from parent_opts) and per child `child:<i> <queue>\\0<id>\\0<policy>`; `ZADD " +
      `waiting <now + within_ms, or ${WAITING_FOREVER} without a deadline> parent\`; per child here \`HSET row state ` +
      "pending payload <b> attempts 0 created_ms <now> parent <queue>\\0<parent>\\0<i>` (and its `opts`, `priority`, " +
      "`lane` as ENQUEUE's), pushed on the ready list of its lane and priority as ENQUEUE's; `ZADD wake 0 ready` when the " +
      "queue had no ready job; per child elsewhere `ZADD outbox <now> child\\0<its queue>\\0<id>\\0<queue>\\0<parent>" +
      "\\0<i>\\0<opts length>\\0<opts><b>`; its events `waiting` (the parent), then `enqueued` (the children here, when any)",
    domain: ["repeated", "entry-form", "noperm", "duplicate", "wrongtype", "counter", "migrating"],
  },
  ADOPT: {
    args: ["parent", "from"],
    group: ["id", "queue", "policy", "opts", "body"],
    touches: ["pending", "wake", "rows", "waiting", "outbox", "events"],
    admits: true,
    reply: "integer: children created in this queue (the others travel through the outbox)",
    effect: "an open parent (FLOW with open 1, not sealed) still waiting adopts more children, one per group, at places " +
      `from, from + 1, …: from must be its count of children so far, and the total at most ${MAX_FAN_IN}. Each child as ` +
      "FLOW makes it (here at once, elsewhere through the outbox)",
    writes: "`HINCRBY meta enqueued <children here>`; `HSET <parent row> children <from + n>` and per child " +
      "`child:<from + j> <queue>\\0<id>\\0<policy>`; per child here and elsewhere as FLOW's; its event `enqueued` (the " +
      "children here, when any)",
    domain: ["repeated", "entry-form", "noperm", "not-open", "flow-place", "fan-in", "duplicate", "wrongtype", "counter", "migrating"],
  },
  SEAL: {
    args: ["parent"],
    group: [],
    touches: ["pending", "wake", "rows", "waiting", "events"],
    admits: false,
    reply: "integer: 1 when it sealed an open parent, 0 when there was none to seal (sealed already, gone, or no parent)",
    effect: "an open parent is sealed: no more children come; a parent still waiting whose children have all finished " +
      "moves to pending at once",
    writes: "`HDEL <parent row> open`; when it waits and `finished` ≥ `children`: `ZREM waiting parent`, `LPUSH pending " +
      "parent`, `HSET <parent row> state pending`, `ZADD wake 0 ready` when pending was empty",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  OUTBOX: {
    args: ["lease_ms", "count"],
    group: [],
    touches: ["outbox", "waiting", "dead", "rows", "pending", "wake", "events"],
    admits: false,
    reply: "array: per entry leased, its token (integer: the lease's deadline, ms) then the entry (bulk string)",
    effect: "first, up to count parents of the queue whose flow deadline passed (`waiting` score ≤ now) are buried when " +
      "they still wait, with the reason `flow deadline passed: <finished> of <children> children finished`, and their " +
      "unfinished children cancelled (a member that no longer waits just leaves `waiting`); then leases up to count " +
      "entries of the queue's outbox that are free (score ≤ now: new, or their lease ran out, or cancels just written), " +
      "oldest first, until now + lease_ms; that deadline is the entry's token, greater than any earlier token of the entry",
    writes: "per expired parent as APPLY's burial of a parent (`ZREM waiting`, `ZADD dead`, `HSET` state dead reason " +
      "buried_ms, `HINCRBY meta buried 1`) then per unfinished child " + CANCEL_WRITES + "; per entry `ZADD outbox " +
      "<now+lease_ms> entry`",
    domain: ["noperm", "wrongtype", "migrating"],
  },
  APPLY: {
    args: [],
    group: ["entry"],
    touches: ["pending", "dead", "wake", "rows", "waiting", "outbox", "events"],
    admits: true,
    reply: "integer: entries applied (0 for one already applied, or whose parent is gone)",
    effect: "applies outbox entries of other queues in this one (each entry's second field must name this queue), " +
      "idempotently: `child` creates the child (pending, naming its parent) unless its row exists; `done` records a " +
      "child's outcome on its parent unless recorded (a failure of policy 2 as `removed`, without its reason): while the " +
      "parent waits, it is buried when a child of policy 0 failed (its unfinished children cancelled), else moves to " +
      "pending when a child of policy 3 failed or when it was the last; `cancel` cancels a child that has not started " +
      "(pending, never claimed: deleted; a waiting child parent, never claimed: deleted and its own unfinished children " +
      "cancelled), or leaves a tombstone when its row is missing (its creation still in flight); `node` creates a child " +
      "with children unless its row exists: a waiting parent (as FLOW's, naming its parent, its event `waiting`), its " +
      "children as FLOW's",
    writes: "`child`: `meta` made if missing (laned as ENQUEUE's for the first job with a lane), `HINCRBY meta enqueued 1`, " +
      "`HSET row state pending payload <b> attempts 0 created_ms <now> parent <…>` (and its `opts`, `priority`, `lane` as " +
      "ENQUEUE's), pushed on the ready list of its lane and priority, `ZADD wake 0 ready` when the queue had no ready job, " +
      "its event `enqueued` (the child; one entry per child made, a `node`'s children here included); `done`: `HSET " +
      "<parent row> done:<i> <state>\\0<detail>`, `HINCRBY <parent row> finished 1`; the last: `ZREM waiting parent`, " +
      "`LPUSH pending parent`, `HSET <parent row> state pending`, `ZADD wake 0 ready` when pending was empty; a failure " +
      "of policy 0: `ZREM waiting parent`, `ZADD dead <now> parent`, `HSET <parent row> state dead reason <…> buried_ms " +
      "<now>`, `HINCRBY meta buried 1`, then per unfinished child " + CANCEL_WRITES + "; `cancel`: a missing row " +
      "`HSET row state cancelled parent <…>`, `PEXPIRE row " + TOMBSTONE_MS + "`; a pending row never claimed naming " +
      "that parent `LREM pending 0 id` (a laned queue: as REMOVE's), `DEL row`, `ZREM wake ready` when no ready job is left, " +
      "its event `removed` (the child)",
    domain: ["noperm", "wrongtype", "entry-form", "counter", "migrating"],
  },
  TELL: {
    args: [],
    group: ["entry"],
    touches: ["pending", "dead", "wake", "rows", "waiting", "outbox", "events"],
    admits: false,
    reply: "integer: entries applied (0 for one already applied, or whose parent is gone)",
    effect: "APPLY of `done` and `cancel` entries only (an entry of another kind refuses the call: entry-form), " +
      "applied as APPLY applies them: a child's outcome reaching its parent, a cancel deleting a child. Not refused " +
      "under maxmemory (no `deny-oom`; the script `allow-oom`): what it writes ends a wait or frees memory, so a full " +
      "server still wakes the parents workers drain it towards. The relay sends these here, `child` and `node` to APPLY",
    writes: "as APPLY's `done` and `cancel`",
    domain: ["noperm", "wrongtype", "entry-form", "counter", "migrating"],
  },
  UNBOX: {
    args: [],
    group: ["deadline", "entry"],
    touches: ["outbox"],
    admits: false,
    reply: "integer: entries removed (an entry already gone counts 0)",
    effect: "acknowledges applied entries: each entry whose score is its token leaves the outbox; an entry held under " +
      "another token (its lease ran out and another relay leased it) refuses the call",
    writes: "per entry `ZREM outbox entry`",
    domain: ["noperm", "wrongtype", "migrating", "outbox-lost"],
  },
  LOG: {
    args: [],
    group: ["id", "token", "line"],
    touches: ["active", "rows"],
    admits: true,
    reply: "integer: jobs whose line was appended",
    effect: `each held job's log gets its line (token-checked like a settle: a worker that lost the job logs nothing); ` +
      `the row keeps the newest ${LOG_LINES_KEPT} lines, each written over the oldest, and goes with the row`,
    writes: `per job with a non-empty line: \`HSET row logs <n> log:<(n − 1) mod ${LOG_LINES_KEPT}> <line>\` (n: the ` +
      "row's `logs` + 1; a `logs` that is not 1 to 15 digits counts as 0)",
    domain: ["repeated", "noperm", "wrongtype", "migrating", "lease-lost"],
  },
} as const satisfies Record<string, VerbSpec>;

/** A verb, as it appears after `EMQ.`. */
export type Verb = keyof typeof VERBS;

/** Every verb, in wire order. */
export const VERB_NAMES: readonly Verb[] = Object.keys(VERBS) as Verb[];

/** The most digits a number gate takes. */
export function gateDigits(g: Gate & { kind: "number" }): number {
  return g.digits ?? MAX_DIGITS;
}

/** The refusal a gate gives. */
export function gateRefusal(g: Gate): Refusal {
  if (g.kind === "job-id") return "job-id";
  if (g.kind === "options") return "options";
  if (g.kind === "bytes") return g.refusal;
  if (g.kind === "name" || g.kind === "lane") return "name";
  return g.min === 0 ? "non-negative" : "positive";
}

/**
 * The refusals verb `v` can give, in check order: shape (with the batch bound), layout, fence, its
 * gates, its domain checks.
 */
export function refusalsOf(v: Verb): Refusal[] {
  const spec: VerbSpec = VERBS[v];
  const gates = new Set<Refusal>();
  const add = (g: Gate): void => {
    gates.add(gateRefusal(g));
    if (g.kind === "number" && g.max !== undefined) gates.add("too-large");
  };
  for (const a of [...spec.args, ...spec.group]) {
    const g: Gate = ARGS[a].gate;
    add(g);
    if (g.kind !== "options") continue;
    for (const r of ["option-form", "option-unknown", "option-repeated"] as const) gates.add(r);
    for (const o of OPTION_NAMES) add(OPTIONS[o].gate);
    gates.add("option-needs");
  }
  return ["arity", ...(spec.group.length > 0 ? ["batch" as const] : []), "layout", "fenced", ...gates, ...spec.domain];
}
