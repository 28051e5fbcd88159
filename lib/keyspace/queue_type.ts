/**
 * The per-queue key types of the grammar: {@link QUEUE_TYPES}, {@link QueueType}, {@link isQueueType}.
 *
 * @module
 */
/** The six per-queue key types of the grammar (docs/GRAMMAR.md), in wire order. */
export const QUEUE_TYPES: readonly ["pending", "active", "schedule", "dead", "meta", "wake"] = [
  "pending",
  "active",
  "schedule",
  "dead",
  "meta",
  "wake",
] as const;

/**
 * A per-queue key type: `pending` (list), `active`, `schedule`, `dead` (sorted sets), `meta`
 * (hash), `wake` (sorted set of markers idle workers wait on).
 */
export type QueueType = (typeof QUEUE_TYPES)[number];

/** True when `x` is one of the six {@link QueueType} names. */
export function isQueueType(x: unknown): x is QueueType {
  return x === "pending" || x === "active" || x === "schedule" || x === "dead" || x === "meta" || x === "wake";
}
