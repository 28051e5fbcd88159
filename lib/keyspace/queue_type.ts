/**
 * The per-queue key types of the grammar: {@link QUEUE_TYPES}, {@link QueueType}, {@link isQueueType},
 * and the prefixed ones, {@link QUEUE_PREFIXES}.
 *
 * @module
 */
/**
 * The plain per-queue key types of the grammar (docs/GRAMMAR.md), in wire order. The prefixed
 * types — a job's row `job:<id>`, a lane's ready list `ready:<p>:<lane>`, its priority levels
 * `levels:<lane>`, its state `lane:<lane>` and a scheduler's hash `scheduler:<name>` — are built by
 * `Keyspace`'s methods.
 */
export const QUEUE_TYPES = [
  "pending",
  "active",
  "schedule",
  "dead",
  "meta",
  "wake",
  "ring",
  "lanes",
  "parked",
  "schedulers",
  "dedup",
  "dedup_ttl",
  "completed",
  "events",
  "waiting",
  "outbox",
  "metrics",
] as const;

/**
 * A plain per-queue key type: `pending` (list: the default lane's ready ids at priority 0),
 * `active`, `schedule`, `dead` (sorted sets), `meta` (hash), `wake` (sorted set of markers idle
 * workers wait on), `ring` (list: the lanes claims serve, round-robin), `lanes` (sorted set: every
 * lane with its backlog), `parked` (sorted set: lanes parked until a time), `schedulers` (sorted set:
 * every scheduler's name, scored by its next run), `dedup` (hash: each deduplication key's job and
 * window end), `dedup_ttl` (sorted set: the keys whose job has settled, scored by when their window
 * ends), `completed` (sorted set: completed jobs kept with their result, scored by when they finished), `events`
 * (stream: the queue's transitions, bounded), `waiting` (sorted set: parents waiting for their children,
 * scored by creation), `outbox` (sorted set: entries to apply in another queue, scored by when they may be leased), `metrics`
 * (hash: the queue's history, jobs processed, failed and retried per minute, and its latency histograms).
 */
export type QueueType = (typeof QUEUE_TYPES)[number];

/**
 * The prefixed per-queue key types, each followed by its `:` and a part (the native keyspace's
 * `JOB`, `SCHEDULER`, `READY`, `LEVELS` and `LANE`): a job's row `job:<id>`, a scheduler's hash
 * `scheduler:<name>`, a lane's ready list `ready:<p>:<lane>`, its priority levels `levels:<lane>`
 * and its state `lane:<lane>`.
 */
export const QUEUE_PREFIXES = ["job", "scheduler", "ready", "levels", "lane"] as const;

/** A prefixed per-queue key type (without its `:`). */
export type QueuePrefix = (typeof QUEUE_PREFIXES)[number];

const TYPES: ReadonlySet<string> = new Set(QUEUE_TYPES);

/** True when `x` is one of the plain {@link QueueType} names. */
export function isQueueType(x: unknown): x is QueueType {
  return typeof x === "string" && TYPES.has(x);
}
