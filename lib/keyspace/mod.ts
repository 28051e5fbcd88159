/**
 * EchoMQ's owned keyspace: every key of a queue is `emq:{<queue>}:<type>`, checked by the compiler,
 * again at run time, and once more by the server's native module. The braces are the cluster
 * hashtag, so every key of one queue lives in one slot. One concept per file, its type-level and
 * run-time halves side by side; the native twin is `native/src/keyspace.rs`, same names, same order.
 *
 * No dependencies: it imports cleanly in Deno, Bun, Node and browsers.
 *
 * @example
 * ```ts
 * import { jobKey, keyspace, newJobId, queueKey, slot } from "./mod.ts";
 *
 * const pending = queueKey("orders", "pending"); // type "emq:{orders}:pending"
 * const orders = keyspace("orders");
 * const row = orders.job(newJobId());            // "emq:{orders}:job:JOB…"
 * console.log(pending, row, orders.slot === slot(pending)); // … true
 * console.log(jobKey("orders", "JOB0Nb1VTbfnu4"));
 * ```
 *
 * @module
 */
export { isQueueType, QUEUE_PREFIXES, QUEUE_TYPES, type QueuePrefix, type QueueType } from "./queue_type.ts";
export { KeyspaceError, type KeyspaceRule, type RuleError, type RuleErrorClass, ruleErrorOf, RuleTypeError } from "./error.ts";
export {
  assertClientQueue,
  assertValidQueue,
  type CheckClientQueue,
  type CheckQueue,
  type DiagnoseQueue,
  type QueueCloseBraceError,
  type QueueEmptyError,
  type QueueNulError,
  type QueueOpenBraceError,
  validQueue,
} from "./queue_name.ts";
export {
  assertBrandedId,
  assertJobId,
  type B62,
  BASE62,
  type BrandedId,
  type BrandedIdLengthError,
  type BrandedIdNamespaceError,
  type BrandedIdPayloadError,
  type CheckBrandedId,
  type CheckJobId,
  type DiagnoseBrandedId,
  type DiagnoseJobId,
  type Digit,
  ID_RULES,
  type IdLengthError,
  type IdNamespaceError,
  type IdPayloadError,
  type IdRuleMessage,
  isBrandedId,
  isJobId,
  type JobId,
  type JobNamespace,
  newJobId,
  type Upper,
} from "./branded_id.ts";
export {
  assertQueueType,
  type JobKey,
  jobKey,
  type LaneKey,
  type LevelsKey,
  type NamedKey,
  type QueueBase,
  type QueueKey,
  queueKey,
  type ReadyKey,
  type SchedulerKey,
} from "./keys.ts";
export { type KeyParseError, type ParseQueueKey, type SplitKey, splitQueueKey } from "./split.ts";
export { Keyspace, keyspace } from "./keyspace.ts";
export {
  assertName,
  type CheckKeyLane,
  type CheckLane,
  type CheckName,
  type DiagnoseName,
  type LaneNameError,
  MAX_NAME_BYTES,
  type NameError,
  type NameKind,
  type NameKinds,
  type NameRule,
  type NameRuleMessage,
  validName,
} from "./name.ts";
export { hashtag, slot, SLOTS } from "./slot.ts";
export { type AclAccess, aclKeyPattern } from "./acl.ts";
