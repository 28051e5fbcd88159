import type { CheckJobId } from "../types/branded_id.ts";
import type { JobKey, QueueKey } from "../types/keys.ts";
import type { CheckQueue } from "../types/queue_name.ts";
import { assertJobId } from "./branded_id.ts";
import { KeyspaceError, quote } from "./error.ts";
import { assertValidQueue, validQueue } from "./queue_name.ts";
import { isQueueType, QUEUE_TYPES, type QueueType } from "./queue_type.ts";

/** Throws a {@link KeyspaceError} unless `type` is one of the five queue key types. */
export function assertQueueType(type: unknown): asserts type is QueueType {
  if (!isQueueType(type)) {
    throw new KeyspaceError(
      "queue-type",
      `queue key type ${quote(type)} must be one of ${QUEUE_TYPES.join(", ")}`,
    );
  }
}

/**
 * The key `emq:{<queue>}:<type>`. A literal queue name gives a literal key type;
 * a name with `{`, `}` or NUL is a compile error naming the rule, and a run-time
 * {@link KeyspaceError} when the compiler could not see it.
 *
 * @example
 * ```ts
 * const k = queueKey("orders", "pending"); // type "emq:{orders}:pending"
 * ```
 */
export function queueKey<const Q extends string, const T extends QueueType>(
  queue: CheckQueue<Q>,
  type: T,
): QueueKey<Q, T> {
  // Fast path first: one regex test and one comparison chain, then the template.
  if (!validQueue(queue)) assertValidQueue(queue);
  if (!isQueueType(type)) assertQueueType(type);
  return `emq:{${queue}}:${type}` as QueueKey<Q, T>;
}

/**
 * The row key `emq:{<queue>}:job:<id>` of one job. The id must be a full job id
 * (`JOB` + 11 Base62 characters); a literal that is not is a compile error naming the rule.
 *
 * @example
 * ```ts
 * const row = jobKey("orders", "JOB0Nb1VTbfnu4"); // type "emq:{orders}:job:JOB0Nb1VTbfnu4"
 * ```
 */
export function jobKey<const Q extends string, const Id extends string>(
  queue: CheckQueue<Q>,
  id: CheckJobId<Id>,
): JobKey<Q, Id> {
  if (!validQueue(queue)) assertValidQueue(queue);
  assertJobId(id);
  return `emq:{${queue}}:job:${id}` as JobKey<Q, Id>;
}
