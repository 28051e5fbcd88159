/**
 * The operations of BullMQ's `IQueueBackend` the EchoMQ backend does not do (yet, or ever): each
 * throws {@link RefusedOperationError}, which names the operation and says why
 * (docs/design/bullmq.md, "Operations" lists every one).
 *
 * @module
 */

/** An operation of BullMQ's backend interface that the EchoMQ backend refuses: nothing was written. */
export class RefusedOperationError extends Error {
  /** The `IQueueBackend` operation refused. */
  readonly operation: string;
  /** `operation` refused because `why`. */
  constructor(operation: string, why: string) {
    super(`EchoMQ backend for BullMQ: ${operation} is refused: ${why}`);
    this.name = "RefusedOperationError";
    this.operation = operation;
  }
}

/** Why each refused operation is refused, by reason. */
export const WHY = {
  flows: "EchoMQ makes a flow whole with FLOW (FlowProducer.add: a new parent and its children); no verb adds a job " +
    "under an existing parent, makes a running job a parent, or detaches a child from its parent",
  repeat: "a job's `repeat` option is BullMQ 5's repeatable jobs; BullMQ 6 runs repeats as job schedulers (`queue.upsertJobScheduler`), " +
    "which EchoMQ maps onto its own",
  schedulerEnds: "an EchoMQ scheduler runs until it is removed: its spec has no end date and no limit of runs " +
    "(remove it with `queue.removeJobScheduler`)",
  unlocked: "EchoMQ writes a job's progress and log only under its fenced lease (PROGRESS and LOG are token-checked): " +
    "call it from the worker that holds the job",
  noVerb: "no EchoMQ verb changes a waiting job's payload, delay or priority in place (next: a verb of its own)",
  lifo: "EchoMQ admits at the head of pending and claims from its tail; no verb admits at the tail (next: a `lifo` option)",
  events: "EchoMQ's events are written only by the transitions that cause them (no verb appends an event of the caller's)",
  dedupKeys: "no EchoMQ verb lets a deduplication key go before its job settles (next: a verb of its own)",
  keepLast: "BullMQ's keepLastIfActive keeps the newest add aside while the job holding the key runs, and admits it " +
    "when that job finishes (never beside it); no EchoMQ verb keeps a job aside to admit on another's settle, and " +
    "EchoMQ's debounce (`deduplication.replace`) admits it at once, where it could run beside the active one " +
    "(next: a deduplication option the settles honour)",
  completedBack: "no EchoMQ verb moves a completed job back to pending (REQUEUE takes dead jobs only)",
  active: "EchoMQ's DROP refuses while a job is active: its worker holds a fenced lease (wait for it, or let the lease run out)",
  paginate: "BullMQ's raw key pagination is of its own keys (dependencies, schedulers), which EchoMQ does not keep",
} as const;

/** Throws the refusal of `operation` for `why`. */
export function refuse(operation: string, why: string): never {
  throw new RefusedOperationError(operation, why);
}
