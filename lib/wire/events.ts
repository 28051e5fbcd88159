/**
 * The queue's events, written once: each kind of transition a verb appends to the queue's
 * `events` stream (`emq:{q}:events`), in the same command as the transition, with the fields it
 * carries. One entry per kind of transition per call (a batch of 1,000 claims is one `claimed`
 * entry), but one entry per job for `retried` and `dead` (each carries its own reason). Never a
 * payload; a result only in `completed`, up to 1024 bytes each (longer: flagged, read from the row). A refused call writes no event; a queue whose `meta`
 * sets `events_max` 0 writes none.
 *
 * An entry is `XADD events MAXLEN ~ <events_max> * type <type> <field> <value> …`: the stream
 * keeps at least the newest `events_max` entries and at most one stream node more (trimmed by
 * whole nodes, `stream-node-max-entries`, 100 by default: exact trimming would rewrite the oldest
 * node on every call, a fifth of the module's work per job); replicated with the exact length
 * left, as Valkey replicates its own `XADD … MAXLEN ~`. Its fields in the order of {@link EVENT_FIELDS}; `jobs` and `attempts` are space-separated lists,
 * parallel. Within one call the entries follow the verb's steps: a CLAIM writes `promoted`, then
 * `stalled`, then `claimed`; an admission writes `enqueued` (or `scheduled`, or `scheduler`),
 * then `deduplicated`; a SETTLE writes its settlements' as ACK, RETRY, BURY and RELEASE do, in that
 * order, then its claim's as CLAIM does.
 *
 * @module
 */
import { EVENT_RESULT_MAX_BYTES } from "./verbs.ts";

/** Each kind of event: the verbs that write it, and what it says. */
export const EVENTS = {
  enqueued: {
    verbs: ["ENQUEUE", "FLOW", "ADOPT", "APPLY"],
    fields: ["jobs"],
    doc: "jobs admitted ready (pending); also a flow's children made pending in this queue: FLOW's and ADOPT's " +
      "children here (one entry per call, after FLOW's `waiting`: BullMQ's order, the parent first), and each child " +
      "APPLY makes (one entry per child: a `child` entry's, a `node` entry's children here, after the node's `waiting`)",
  },
  scheduled: { verbs: ["SCHEDULE"], fields: ["jobs"], doc: "jobs admitted for later (scheduled)" },
  scheduler: {
    verbs: ["TICK"],
    fields: ["name", "jobs"],
    doc: "a scheduler fired: the jobs its tick admitted (ready), `name` the scheduler (written only when it admitted jobs)",
  },
  deduplicated: {
    verbs: ["ENQUEUE", "SCHEDULE", "TICK"],
    fields: ["jobs", "into"],
    doc: "ids not admitted because their `dedup` key was held: `jobs` the ids of the call, `into` (parallel) the " +
      "held jobs they folded into (deduplicated or debounced)",
  },
  promoted: {
    verbs: ["CLAIM", "PROMOTE", "RUN", "SETTLE"],
    fields: ["jobs"],
    doc: "scheduled jobs (due, or run now) made ready",
  },
  stalled: {
    verbs: ["CLAIM", "REAP", "SETTLE"],
    fields: ["jobs"],
    doc: "active jobs whose lease ran out, back in pending (their worker lost them)",
  },
  claimed: { verbs: ["CLAIM", "SETTLE"], fields: ["jobs", "attempts"], doc: "jobs claimed, with their attempt numbers" },
  progress: { verbs: ["PROGRESS"], fields: ["jobs", "progress"], doc: "one job's progress (one entry per job)" },
  completed: {
    verbs: ["ACK", "SETTLE"],
    fields: ["jobs", "results"],
    doc: "jobs acked, with their results (`results`; absent when every result is empty); a result longer than " +
      `${EVENT_RESULT_MAX_BYTES} bytes is not carried but flagged, to be read from its row (kept while the queue keeps ` +
      "completed jobs)",
  },
  retried: {
    verbs: ["RETRY", "SETTLE"],
    fields: ["jobs", "reason", "until"],
    doc: "one job failed and will run again (one entry per job): its reason, and `until` when it is due again (ms)",
  },
  dead: {
    verbs: ["BURY", "SETTLE", "APPLY", "OUTBOX"],
    fields: ["jobs", "reason"],
    doc: "one job buried (one entry per job), with its reason; also a flow's parent a child failed (policy `fail`: " +
      "`child <queue> <id> failed: <reason>`) or whose deadline passed, written where it is buried (its queue: a " +
      "settle of its own queue, or APPLY of the child's outcome; OUTBOX for a deadline)",
  },
  waiting: {
    verbs: ["FLOW", "APPLY"],
    fields: ["jobs"],
    doc: "a flow's parent made to wait for its children (`waiting`, BullMQ's `waiting-children`): FLOW's parent, and a " +
      "child with children APPLY makes from a `node` entry (one entry per parent), written in its queue after its writes",
  },
  ready: {
    verbs: ["ACK", "BURY", "SETTLE", "APPLY", "SEAL", "REMOVE"],
    fields: ["jobs"],
    doc: "a flow's parent made ready (`waiting-children` → pending: its last child finished, or a child of policy " +
      "`continue` failed; one entry per parent), written where it moves (its queue: a settle or REMOVE of a child " +
      "of its own queue, APPLY of a child's outcome, SEAL)",
  },
  released: { verbs: ["RELEASE", "SETTLE"], fields: ["jobs"], doc: "jobs handed back without spending an attempt" },
  removed: {
    verbs: ["REMOVE", "CANCEL", "BURY", "SETTLE", "APPLY", "TELL", "OUTBOX"],
    fields: ["jobs"],
    doc: "jobs deleted (REMOVE: the ids that had a row, one entry); also a flow's child cancelled, deleted because " +
      "it had not started, when its parent failed or was removed or cancelled (one entry per child, written in its " +
      "queue where it is deleted: the same command for a child of the parent's queue, else APPLY or TELL of the " +
      "`cancel` entry; a child parent's own children's entries before its own)",
  },
  cleaned: {
    verbs: ["REMOVE"],
    fields: ["jobs"],
    doc: "jobs deleted by a clean (REMOVE with `cleaned` 1, in place of `removed`; wire 17): the ids that had a row, " +
      "whose number is BullMQ's `cleaned` count",
  },
  cancelled: {
    verbs: ["CANCEL"],
    fields: ["jobs", "reason"],
    doc: "jobs cancelled (buried: the ids that waited or ran), with the cancel's reason",
  },
  requeued: { verbs: ["REQUEUE"], fields: ["jobs"], doc: "dead jobs back in pending" },
  paused: { verbs: ["PAUSE"], fields: ["lane"], doc: "the queue (no `lane`) or a lane paused (only when it was not)" },
  resumed: { verbs: ["RESUME"], fields: ["lane"], doc: "the queue (no `lane`) or a lane resumed (only when it was paused)" },
  penalized: {
    verbs: ["PENALIZE"],
    fields: ["lane", "until"],
    doc: "the queue (no `lane`) or a lane parked until `until` (ms: the park in force, which may be later)",
  },
} as const satisfies Record<string, { verbs: readonly string[]; fields: readonly EventField[]; doc: string }>;

/** The fields an event may carry after `type`, in the order an entry writes them. */
export const EVENT_FIELDS = {
  name: "the scheduler that fired",
  jobs: "the job ids, space-separated",
  attempts: "each job's attempt number, space-separated, parallel to `jobs`",
  into: "each id's holder (the job it folded into), space-separated, parallel to `jobs`",
  reason: "the failure's reason, as the worker sent it",
  progress: "the progress, as the handler reported it",
  results: "each job's result, parallel to `jobs`: `<byte length>:<bytes>` back to back (`0:` an empty result; " +
    `\`-1:\` one longer than ${EVENT_RESULT_MAX_BYTES} bytes, to be read from its row); absent when every result of ` +
    "the entry is empty",
  lane: "the lane (absent: the queue)",
  until: "a time, ms since the epoch (the due time of a retry, the end of a park)",
} as const;

/** A field of an event entry (besides `type`). */
export type EventField = keyof typeof EVENT_FIELDS;
/** A kind of event. */
export type EventType = keyof typeof EVENTS;
/** Every kind of event, in spec order. */
export const EVENT_TYPES: readonly EventType[] = Object.keys(EVENTS) as EventType[];
