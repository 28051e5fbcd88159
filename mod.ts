/**
 * EchoMQ's owned keyspace: every key of a queue is `emq:{<queue>}:<type>`, checked by the compiler,
 * again at run time, and once more by the server's native module. The braces are the cluster
 * hashtag, so every key of one queue lives in one slot.
 *
 * This entry point has no dependencies: it imports cleanly in Deno, Bun, Node and browsers.
 * The client lives in `./client`.
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
export { type QueueType, QUEUE_TYPES, isQueueType } from "./lib/keyspace/queue_type.ts";
export { KeyspaceError, type KeyspaceRule } from "./lib/keyspace/error.ts";
export { assertValidQueue, validQueue } from "./lib/keyspace/queue_name.ts";
export {
  assertJobId,
  BASE62,
  type BrandedId,
  isBrandedId,
  isJobId,
  type JobId,
  newJobId,
} from "./lib/keyspace/branded_id.ts";
export { assertQueueType, jobKey, queueKey } from "./lib/keyspace/keys.ts";
export { type SplitKey, splitQueueKey } from "./lib/keyspace/split.ts";
export { Keyspace, keyspace } from "./lib/keyspace/keyspace.ts";
export { hashtag, slot, SLOTS } from "./lib/keyspace/slot.ts";
export type { JobKey, QueueBase, QueueKey } from "./lib/types/keys.ts";
export type { ParseQueueKey, KeyParseError } from "./lib/types/parse_key.ts";
export type {
  CheckQueue,
  DiagnoseQueue,
  QueueCloseBraceError,
  QueueNulError,
  QueueOpenBraceError,
} from "./lib/types/queue_name.ts";
export type {
  B62,
  CheckJobId,
  DiagnoseJobId,
  Digit,
  IdLengthError,
  IdNamespaceError,
  IdPayloadError,
  JobNamespace,
  Upper,
} from "./lib/types/branded_id.ts";
