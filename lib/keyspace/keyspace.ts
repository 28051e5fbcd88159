/**
 * One queue's keys built once: {@link Keyspace}, the host twin of the native `Queue`.
 *
 * @module
 */
import { assertBrandedId, type CheckBrandedId } from "./branded_id.ts";
import { KeyspaceError } from "./error.ts";
import type { JobKey, LaneKey, LevelsKey, QueueBase, QueueKey, ReadyKey, SchedulerKey } from "./keys.ts";
import { assertName, type CheckKeyLane, type CheckName } from "./name.ts";
import { assertValidQueue, type CheckQueue } from "./queue_name.ts";
import { slot } from "./slot.ts";
import { splitQueueKey } from "./split.ts";

/**
 * Every key of one queue, built once from its name: the host twin of the native `Queue`.
 * All keys share the `{name}` hashtag, so they live in one cluster slot, {@link Keyspace.slot}.
 */
export class Keyspace<Q extends string = string> {
  /** The queue name. */
  readonly name: Q;
  /** `emq:{name}:` — never a key itself; a row is base + `job:` + id. */
  readonly base: QueueBase<Q>;
  /** `emq:{name}:pending`, the list of ready ids. */
  readonly pending: QueueKey<Q, "pending">;
  /** `emq:{name}:active`, claimed ids scored by lease deadline. */
  readonly active: QueueKey<Q, "active">;
  /** `emq:{name}:schedule`, delayed ids scored by due time. */
  readonly schedule: QueueKey<Q, "schedule">;
  /** `emq:{name}:dead`, buried ids scored by burial time. */
  readonly dead: QueueKey<Q, "dead">;
  /** `emq:{name}:meta`, queue-level facts; the one key every verb declares. */
  readonly meta: QueueKey<Q, "meta">;
  /** `emq:{name}:wake`, the markers an idle worker waits on (BZPOPMIN). */
  readonly wake: QueueKey<Q, "wake">;
  /** `emq:{name}:ring`, the lanes claims serve, round-robin (the default lane is `""`). */
  readonly ring: QueueKey<Q, "ring">;
  /** `emq:{name}:lanes`, every lane with a state, scored by its backlog (ready jobs). */
  readonly lanes: QueueKey<Q, "lanes">;
  /** `emq:{name}:parked`, lanes parked (rate-limited or penalized) until their score (ms). */
  readonly parked: QueueKey<Q, "parked">;
  /** `emq:{name}:schedulers`, every scheduler's name scored by its next run (ms). */
  readonly schedulers: QueueKey<Q, "schedulers">;
  /** `emq:{name}:dedup`, each deduplication key's job (`<id> <until_ms>`): a hash. */
  readonly dedup: QueueKey<Q, "dedup">;
  /** `emq:{name}:dedup_ttl`, deduplication keys whose job settled, scored by when their window ends (ms). */
  readonly dedup_ttl: QueueKey<Q, "dedup_ttl">;
  /** `emq:{name}:completed`, completed jobs kept with their result, scored by when they finished (ms). */
  readonly completed: QueueKey<Q, "completed">;
  /** `emq:{name}:events`, the queue's transitions (a stream, bounded by `meta`'s `events_max`). */
  readonly events: QueueKey<Q, "events">;
  /** `emq:{name}:waiting`, parents waiting for their children, scored by their flow deadline (ms; 2^53 − 1 without one). */
  readonly waiting: QueueKey<Q, "waiting">;
  /** `emq:{name}:outbox`, NUL-joined entries to apply in another queue, scored by when they may be leased (ms). */
  readonly outbox: QueueKey<Q, "outbox">;
  /** `emq:{name}:metrics`, the queue's history (per-minute counts of the settles) and latency histograms: a hash. */
  readonly metrics: QueueKey<Q, "metrics">;
  /**
   * The cluster slot of every key of this queue, computed once. For the empty name (standalone
   * servers only) the keys carry no hashtag and spread over slots; this is then the slot of `pending`.
   */
  readonly slot: number;

  /** Checks the name (throws {@link KeyspaceError}) and builds every key. */
  constructor(name: Q) {
    assertValidQueue(name);
    this.name = name;
    this.base = `emq:{${name}}:`;
    this.pending = `${this.base}pending`;
    this.active = `${this.base}active`;
    this.schedule = `${this.base}schedule`;
    this.dead = `${this.base}dead`;
    this.meta = `${this.base}meta`;
    this.wake = `${this.base}wake`;
    this.ring = `${this.base}ring`;
    this.lanes = `${this.base}lanes`;
    this.parked = `${this.base}parked`;
    this.schedulers = `${this.base}schedulers`;
    this.dedup = `${this.base}dedup`;
    this.dedup_ttl = `${this.base}dedup_ttl`;
    this.completed = `${this.base}completed`;
    this.events = `${this.base}events`;
    this.waiting = `${this.base}waiting`;
    this.outbox = `${this.base}outbox`;
    this.metrics = `${this.base}metrics`;
    this.slot = slot(name === "" ? this.pending : `{${name}}`);
  }

  /**
   * The row key of one job; the id must be a branded id of any namespace, as for `jobKey`
   * (checked at compile and run time; `JOB` is gated only inside transitions).
   */
  job<const Id extends string>(id: CheckBrandedId<Id>): JobKey<Q, Id> {
    assertBrandedId(id);
    return `${this.base}job:${id}` as JobKey<Q, Id>;
  }

  /**
   * The ready list of `lane` at `priority`: `ready:<priority>:<lane>`, except the default lane
   * (`""`) at priority 0, whose list is `pending`. The priority comes first so that a lane name
   * holding `:` and digits never aliases another lane's list. The twin of the native `Queue::ready`.
   * A literal lane that breaks the name rule is a compile error naming the rule ({@link CheckKeyLane}).
   */
  ready<const L extends string, const P extends number>(lane: CheckKeyLane<L>, priority: P): ReadyKey<Q, L, P> {
    checkLane(lane);
    if (!Number.isSafeInteger(priority) || priority < 0) {
      throw new KeyspaceError("priority", `priority must be a non-negative integer, got ${String(priority)}`);
    }
    return (lane === "" && priority === 0 ? this.pending : `${this.base}ready:${priority}:${lane}`) as ReadyKey<Q, L, P>;
  }

  /** `levels:<lane>`: the priorities ≥ 1 whose ready list of `lane` is non-empty (a sorted set). */
  levels<const L extends string>(lane: CheckKeyLane<L>): LevelsKey<Q, L> {
    checkLane(lane);
    return `${this.base}levels:${lane}` as LevelsKey<Q, L>;
  }

  /** `lane:<lane>`: the state of `lane` (a hash; `lane:` is the default lane's). */
  lane<const L extends string>(lane: CheckKeyLane<L>): LaneKey<Q, L> {
    checkLane(lane);
    return `${this.base}lane:${lane}` as LaneKey<Q, L>;
  }

  /**
   * `scheduler:<name>`: one scheduler's hash; the name follows the name rule (`assertName`; a
   * literal that breaks it is a compile error naming the rule, {@link CheckName}).
   */
  scheduler<const N extends string>(name: CheckName<N, "scheduler name">): SchedulerKey<Q, N> {
    assertName(name, "scheduler name");
    return `${this.base}scheduler:${name}` as SchedulerKey<Q, N>;
  }

  /**
   * The port of the native `Queue::from_key`: the keyspace of the queue that `key` belongs to,
   * when its type is exactly `type` and its name is non-empty; `null` otherwise.
   */
  static fromKey(key: string, type: string): Keyspace | null {
    const parts = splitQueueKey(key);
    if (parts === null || parts.type !== type || parts.queue === "") return null;
    return new Keyspace(parts.queue);
  }
}

/** A lane as the keys take it: `""` (the default lane) or a legal lane name. */
function checkLane(lane: string): void {
  if (lane !== "") assertName(lane, "lane name");
}

/**
 * The keyspace of one queue: `pending`, `active`, `schedule`, `dead`, `meta`, `wake`, `ring`,
 * `lanes`, `parked`, `schedulers`, `dedup`, `dedup_ttl`, `completed`, `events`, `waiting`, `outbox`, `metrics`, `base`, `job(id)`, `ready(lane, priority)`, `levels(lane)`,
 * `lane(lane)`, `scheduler(name)`, `name` and `slot`. A literal name keeps literal key types, and
 * a literal lane or scheduler name that breaks the name rule is a compile error naming the rule.
 *
 * @example
 * ```ts
 * const orders = keyspace("orders");
 * orders.pending; // "emq:{orders}:pending"
 * orders.ready("acme", 5); // "emq:{orders}:ready:5:acme"
 * ```
 */
export function keyspace<const Q extends string>(queue: CheckQueue<Q>): Keyspace<Q> {
  return new Keyspace(queue as Q);
}
