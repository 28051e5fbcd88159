/**
 * The wire, written once: the verbs ({@link VERBS}: keys, arguments, replies, effects), the
 * refusals with their exact texts ({@link REFUSALS}), and the calls built from them
 * ({@link wireCall}). Everything else that speaks the wire derives from this module: the client's
 * calls and error decoder, the Lua twin's steps 1–4, docs/WIRE.md and the native module's checks.
 *
 * @example
 * ```ts
 * import { keyspace } from "../keyspace/mod.ts";
 * import { wireCall } from "./mod.ts";
 *
 * const call = wireCall("ENQUEUE", keyspace("orders"), { id: "JOB00000000001", payload: "{}" });
 * // { verb: "ENQUEUE", keys: ["emq:{orders}:job:JOB00000000001", "emq:{orders}:pending"], args: [...] }
 * console.log(call.keys.length); // 2
 * ```
 *
 * @module
 */
export {
  ARGS,
  type ArgName,
  type Gate,
  type KeyRole,
  MAX_DIGITS,
  MAX_PAYLOAD_BYTES,
  MAX_REASON_BYTES,
  refusalsOf,
  type Verb,
  VERB_NAMES,
  VERBS,
  type VerbSpec,
  WIRE,
} from "./verbs.ts";
export {
  type ParsedRefusal,
  type Params,
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
export { type ArgValue, type CallArgs, keyOf, type QueueKeys, wireCall, type WireCall } from "./calls.ts";
