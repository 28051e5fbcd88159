/**
 * The wire, written once: the verbs ({@link VERBS}: keys, arguments, replies, effects), the
 * refusals with their exact texts ({@link REFUSALS}), what the verbs store (the job row's fields
 * {@link ROW_FIELDS}, its {@link STATES}, `meta`'s {@link META_FIELDS}, `wake`'s
 * {@link WAKE_MARKERS}), and the calls built from them ({@link wireCall}). Everything else that
 * speaks the wire derives from this module: the client's calls, readers and error decoder, the Lua
 * twin's steps 1–4 and the names its bodies store, docs/WIRE.md, and the native module's constants
 * and literals (`native/src/spec.rs`), refusals (`refusal.rs`) and verb table (`table.rs`).
 *
 * @example
 * ```ts
 * import { keyspace } from "../keyspace/mod.ts";
 * import { wireCall } from "./mod.ts";
 *
 * const call = wireCall("ENQUEUE", keyspace("orders"), {}, [
 *   { id: "JOB00000000001", opts: "", payload: "{}" },
 *   { id: "JOB00000000002", opts: "dedup=order-2", payload: "{}" },
 * ]);
 * // { verb: "ENQUEUE", keys: ["emq:{orders}:meta"], args: ["JOB00000000001", "", "{}", "JOB00000000002", …] }
 * console.log(call.keys, call.args.length); // ["emq:{orders}:meta"] 6
 * ```
 *
 * @module
 */
export {
  type ArgName,
  ARGS,
  CHILD_RESULT_KEPT_BYTES,
  CLAIM_MOVE_LIMIT,
  COMPLETED_AGE_DEFAULT_MS,
  COMPLETED_MAX_DEFAULT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  type Derived,
  EVENT_RESULT_MAX_BYTES,
  EVENT_TYPE_FIELD,
  EVENTS_MAX_DEFAULT,
  FAILURES_KEPT,
  FENCE_KEY,
  type Gate,
  gateDigits,
  gateRefusal,
  HISTORY_MINUTE_MS,
  HISTORY_MINUTES_DEFAULT,
  LATENCY_BOUNDS_MS,
  LOG_LINES_KEPT,
  MAX_BATCH,
  MAX_BURST,
  MAX_CONCURRENCY,
  MAX_COUNTER_DIGITS,
  MAX_DIGITS,
  MAX_ENTRY_BYTES,
  MAX_ERROR_BYTES,
  MAX_FAN_IN,
  MAX_FLOW_DEPTH,
  MAX_HISTORY_MINUTES,
  MAX_JOB_ATTEMPTS,
  MAX_LOG_LINE_BYTES,
  MAX_OPTIONS_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_PRIORITY,
  MAX_PROGRESS_BYTES,
  MAX_RATE,
  MAX_RATE_PERIOD_MS,
  MAX_REASON_BYTES,
  MAX_SPEC_BYTES,
  MAX_TOKEN,
  MAX_WIRE_NUMBER,
  OPTION_JOIN,
  OPTION_NAMES,
  type OptionGate,
  type OptionName,
  OPTIONS,
  refusalsOf,
  TOKEN_DIGITS,
  TOKENS_PER_MS,
  TOMBSTONE_MS,
  TRIM_LIMIT,
  type Verb,
  VERB_NAMES,
  VERBS,
  type VerbSpec,
  WAITING_FOREVER,
  WIRE,
} from "./verbs.ts";
export {
  HISTORY,
  HISTORY_FIELDS,
  type HistoryField,
  LANE,
  LANE_FIELDS,
  type LaneField,
  META,
  META_FIELDS,
  type MetaField,
  type Names,
  ROW,
  ROW_FIELDS,
  type RowField,
  SCHED,
  SCHEDULER_FIELDS,
  type SchedulerField,
  STATE,
  type StateName,
  STATES,
  WAKE,
  WAKE_MARKERS,
  type WakeMarker,
} from "./row.ts";
export {
  type Params,
  type ParsedRefusal,
  parseRefusal,
  pieces,
  type Refusal,
  REFUSAL_NAMES,
  type RefusalParams,
  REFUSALS,
  type RefusalSpec,
  renderRefusal,
  type Step,
} from "./refusals.ts";
export { type ArgValue, type FixedArgs, type GroupArgs, groupCount, type QueueKeys, type WireCall, wireCall } from "./calls.ts";
export { EVENT_FIELDS, EVENT_TYPES, type EventField, EVENTS, type EventType } from "./events.ts";
export { decodeOptions, encodeOptions, type JobOptions } from "./options.ts";
