/**
 * Keys, at both levels: the template types {@link QueueKey}, {@link JobKey} and {@link QueueBase}
 * (literal in, literal out) and the builders {@link queueKey} and {@link jobKey}, which check their
 * inputs at compile time for literals and at run time for everything.
 *
 * @module
 */
import { assertBrandedId, type CheckBrandedId, isBrandedId } from "./branded_id.ts";
import { KeyspaceError, quote } from "./error.ts";
import { assertValidQueue, type CheckQueue, validQueue } from "./queue_name.ts";
import { isQueueType, QUEUE_TYPES, type QueueType } from "./queue_type.ts";

/** The key of one per-queue structure: `emq:{<Q>}:<T>`. Literal in, literal out. */
export type QueueKey<Q extends string, T extends QueueType> = `emq:{${Q}}:${T}`;

/** The row key of one job: `emq:{<Q>}:job:<Id>`. */
export type JobKey<Q extends string, Id extends string> = `emq:{${Q}}:job:${Id}`;

/** The base of a queue, `emq:{<Q>}:`: never a key itself; a row is base + `job:` + id. */
export type QueueBase<Q extends string> = `emq:{${Q}}:`;

/**
 * A key named inside a queue, `emq:{<Q>}:<T>:<N>`: a type prefix and a name (checked by
 * `CheckName`), as `lane:`, `levels:` and `scheduler:` are. Literal in, literal out.
 */
export type NamedKey<Q extends string, T extends string, N extends string> = `emq:{${Q}}:${T}:${N}`;

/** A lane's state, `emq:{<Q>}:lane:<L>` (`lane:` is the default lane's). */
export type LaneKey<Q extends string, L extends string> = NamedKey<Q, "lane", L>;

/** A lane's priority levels, `emq:{<Q>}:levels:<L>`. */
export type LevelsKey<Q extends string, L extends string> = NamedKey<Q, "levels", L>;

/** One scheduler's hash, `emq:{<Q>}:scheduler:<N>`. */
export type SchedulerKey<Q extends string, N extends string> = NamedKey<Q, "scheduler", N>;

/**
 * A lane's ready list at priority `P`, `emq:{<Q>}:ready:<P>:<L>` — or `pending`, the default lane's
 * list at priority 0: exactly `pending` for `""` and `0`, either when the compiler cannot tell.
 */
export type ReadyKey<Q extends string, L extends string, P extends number> = [L, P] extends ["", 0] ? QueueKey<Q, "pending">
  : ("" extends L ? 0 extends P ? QueueKey<Q, "pending"> : never : never) | `emq:{${Q}}:ready:${P}:${L}`;

/** Throws a {@link KeyspaceError} unless `type` is one of the queue key types. */
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
 * The row key `emq:{<queue>}:job:<id>` of one job. The id must be a branded id of any namespace
 * (3 capital letters + 11 Base62 characters); a literal that is not is a compile error naming the
 * rule. The `JOB` namespace is gated only inside transitions (by the module and the scripts).
 *
 * @example
 * ```ts
 * const row = jobKey("orders", "JOB0Nb1VTbfnu4"); // type "emq:{orders}:job:JOB0Nb1VTbfnu4"
 * const usr = jobKey("orders", "USR0Nb1VTbfnu4"); // type "emq:{orders}:job:USR0Nb1VTbfnu4"
 * ```
 */
export function jobKey<const Q extends string, const Id extends string>(
  queue: CheckQueue<Q>,
  id: CheckBrandedId<Id>,
): JobKey<Q, Id> {
  if (!validQueue(queue)) assertValidQueue(queue);
  if (!isBrandedId(id)) assertBrandedId(id);
  return `emq:{${queue}}:job:${id}` as JobKey<Q, Id>;
}
