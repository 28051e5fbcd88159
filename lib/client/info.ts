/**
 * What the client reads back about queues and jobs, for inspection and dashboards: a job's
 * {@link JobInfo} (from its row), a queue's {@link QueueStats} (its counts and the totals its `meta`
 * keeps), and the parsing of the replies they come from. Reads only: nothing here writes.
 *
 * @module
 */
import type { GlideReturnType } from "@valkey/valkey-glide";
import type { JobId } from "../keyspace/mod.ts";
import { decodeOptions, META, ROW, STATE, TOKENS_PER_MS } from "../wire/mod.ts";
import type { Codec } from "./codec.ts";
import { type FailedAttempt, failuresOf } from "./failure.ts";
import type { ChildState } from "./flows.ts";
import type { Counts } from "./job.ts";
import type { QueueLimits } from "./limits.ts";
import type { Retention } from "./retention.ts";

/**
 * Where a job is: the state its row records. `waiting-children` is a flow's parent waiting for its
 * children (the row's `waiting`, BullMQ's name for it).
 */
export type JobState = "pending" | "active" | "scheduled" | "dead" | "completed" | "waiting-children";

/** The job states `EchoMQ.jobs` pages through. */
export const JOB_STATES: readonly JobState[] = [
  STATE.pending,
  STATE.active,
  STATE.scheduled,
  STATE.dead,
  STATE.completed,
  "waiting-children",
];

/** A job's state as the client names it, from its row's `state` (undefined when not one). */
function stateOf(row: string | undefined): JobState | undefined {
  const named = row === STATE.waiting ? "waiting-children" : row;
  return JOB_STATES.includes(named as JobState) ? (named as JobState) : undefined;
}

/** A flow's parent, as its child's row names it. */
export interface ParentRef {
  /** The parent's queue. */
  readonly queue: string;
  /** The parent's id. */
  readonly id: JobId;
}

/**
 * One job as its row has it. Times are ms since the epoch. `R` types its result and `C` its
 * children's (a typed queue handle's `getJob`, `mq.queue<P, R, C>`; `unknown` otherwise).
 */
export interface JobInfo<P, R = unknown, C = unknown> {
  /** The job's id. */
  readonly id: JobId;
  /** Its queue. */
  readonly queue: string;
  /** Where it is. */
  readonly state: JobState;
  /** Claims so far. */
  readonly attempts: number;
  /** The decoded payload (undefined when the codec could not decode it: see `payloadError`). */
  readonly payload: P | undefined;
  /** Why the payload could not be decoded, if it could not. */
  readonly payloadError?: string;
  /** When it was admitted. */
  readonly createdAt: number;
  /** When it falls due (scheduled, or waiting for a retry). */
  readonly dueAt?: number;
  /** When its lease runs out (active). */
  readonly leaseUntil?: number;
  /** The lease token of its current or last claim. */
  readonly token?: number;
  /**
   * When its current or last claim took it, ms (its token ÷ 1000, rounded down: kept after its
   * settle, wire 17); absent when never claimed, or not since `requeueDead`.
   */
  readonly claimedAt?: number;
  /** The delay of its last retry, ms (wire 17; absent when never retried). */
  readonly retryDelayMs?: number;
  /** How many of its leases ran out and were taken back to pending (wire 17; absent: none). */
  readonly stalls?: number;
  /** The last failure's reason (retried or dead). */
  readonly reason?: string;
  /** When it was buried (dead). */
  readonly buriedAt?: number;
  /** When it completed (completed). */
  readonly finishedAt?: number;
  /**
   * Its handler's result (completed), decoded from the JSON the worker sent (the text as stored
   * when it is not JSON); absent when the handler returned nothing (`undefined`).
   */
  readonly result?: R;
  /** Its progress, as the handler reported it (JSON), if any. */
  readonly progress?: unknown;
  /** The scheduler whose tick admitted it (`upsertScheduler`), if one did. */
  readonly scheduler?: string;
  /** The scheduler's run it is for (ms since the epoch). */
  readonly tickAt?: number;
  /** Its own handler time limit in ms (`enqueue`'s `timeoutMs`), if it has one. */
  readonly timeoutMs?: number;
  /** The deduplication key it was admitted under (`enqueue`'s `dedup.key`), if any. */
  readonly dedupKey?: string;
  /** The W3C trace context of the span that admitted it (a client with `tracing`), if any. */
  readonly traceparent?: string;
  /** Its priority (`enqueue`'s `priority`), when not 0. */
  readonly priority?: number;
  /** Its lane (the row's `lane`); undefined in the default lane. */
  readonly lane?: string;
  /** Its name (`enqueue`'s `name`), if it has one. */
  readonly name?: string;
  /** The most attempts it gets (`enqueue`'s `attempts`, a flow step's `opts.attempts`), if it has its own. */
  readonly maxAttempts?: number;
  /**
   * Its failed attempts whose worker sent the error (a worker's handler that threw; `retry` and
   * `bury` with `error`), oldest first: the newest 10, each with the error's name, message and
   * stack (8 KiB at most). Read by `getJob` (pages leave them out).
   */
  readonly failures?: readonly FailedAttempt[];
  /** Its parent, when it is a flow's child. */
  readonly parent?: ParentRef;
  /**
   * Its children with their outcomes as it recorded them, in their order, when it is a flow's
   * parent (`getJob` reads them; pages leave them out: `EchoMQ.children`, `EchoMQ.flowOf`).
   */
  readonly children?: readonly ChildState<C>[];
}

/** A queue's counts and the facts its `meta` keeps. */
export interface QueueStats extends Counts {
  /** Whether claims are paused. */
  readonly paused: boolean;
  /** When the queue was first used (ms since the epoch; 0 if never). */
  readonly createdAt: number;
  /** Jobs admitted so far (enqueued or scheduled). */
  readonly enqueued: number;
  /** Jobs acked so far. */
  readonly acked: number;
  /** Retries so far. */
  readonly retried: number;
  /** Jobs buried so far. */
  readonly buried: number;
  /** Claims so far (`meta`'s `claimed`). */
  readonly claims: number;
  /** The most dead jobs kept (0: no limit). */
  readonly deadMax: number;
  /** How long dead jobs are kept, in ms (0: no limit). */
  readonly deadAgeMs: number;
  /** The most completed jobs kept with their results (0: none). */
  readonly completedMax: number;
  /** How long completed jobs are kept, in ms (0: no limit). */
  readonly completedAgeMs: number;
  /** The most entries of the queue's events stream (0: no events written). */
  readonly eventsMax: number;
  /** Its limits (`mq.limit`) and park (`mq.penalize`). */
  readonly limits: QueueLimits;
  /** How many lanes have a state (`mq.lanes`): 0 until a job is enqueued with a `lane` or a lane is set. */
  readonly lanes: number;
}

const UTF8 = new TextDecoder();

/** A hash reply (glide's record list, pairs, or an object) as a map of raw field values. */
export function fields(reply: GlideReturnType): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const bytes = (x: unknown): Uint8Array => (x instanceof Uint8Array ? x : new TextEncoder().encode(String(x)));
  if (Array.isArray(reply)) {
    for (let i = 0; i < reply.length; i++) {
      const e = reply[i] as unknown;
      if (e !== null && typeof e === "object" && !(e instanceof Uint8Array) && "key" in e) {
        const { key, value } = e as { key: unknown; value: unknown };
        out.set(UTF8.decode(bytes(key)), bytes(value));
      } else {
        out.set(UTF8.decode(bytes(e)), bytes(reply[i + 1]));
        i++;
      }
    }
  } else if (reply !== null && typeof reply === "object" && !(reply instanceof Uint8Array)) {
    for (const [k, v] of Object.entries(reply)) out.set(k, bytes(v));
  }
  return out;
}

/** Members and scores of a `ZRANGE … WITHSCORES` reply (glide's records, pairs, or alternating), in order. */
export function scored(reply: GlideReturnType): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  const list = Array.isArray(reply) ? (reply as unknown[]) : [];
  for (let i = 0; i < list.length; i++) {
    const e = list[i];
    if (Array.isArray(e)) out.push([String(e[0]), Number(e[1])]);
    else if (e !== null && typeof e === "object" && "key" in e) {
      const { key, value } = e as { key: unknown; value: unknown };
      out.push([String(key), Number(value)]);
    } else out.push([String(e), Number(list[++i])]);
  }
  return out;
}

/** Field `k` of a hash read by {@link fields}, as text (undefined when absent). */
export function text(f: ReadonlyMap<string, Uint8Array>, k: string): string | undefined {
  const v = f.get(k);
  return v === undefined ? undefined : UTF8.decode(v);
}
const num = (f: Map<string, Uint8Array>, k: string): number | undefined => {
  const v = text(f, k);
  return v === undefined || v === "" || Number.isNaN(Number(v)) ? undefined : Number(v);
};

/** `t` parsed as JSON, or `t` itself when it is not JSON (undefined stays undefined). */
export function jsonOrText(t: string | undefined): unknown {
  if (t === undefined) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return t;
  }
}

/** A job row as a {@link JobInfo}; `null` when the row is missing or has no state. */
export function jobInfo<P>(queue: string, id: JobId, row: Map<string, Uint8Array>, codec: Codec<P>): JobInfo<P> | null {
  const state = stateOf(text(row, ROW.state));
  if (state === undefined) return null;
  let payload: P | undefined;
  let payloadError: string | undefined;
  try {
    payload = codec.decode(row.get(ROW.payload) ?? new Uint8Array(0));
  } catch (e) {
    payloadError = e instanceof Error ? e.message : String(e);
  }
  const progress = jsonOrText(text(row, ROW.progress));
  const r = text(row, ROW.result);
  const result = state === STATE.completed && r !== undefined && r !== "" ? jsonOrText(r) : undefined;
  const opts = decodeOptions(text(row, ROW.opts) ?? "");
  const failures = failuresOf(row);
  const info: Record<string, unknown> = {
    id,
    queue,
    state,
    attempts: num(row, ROW.attempts) ?? 0,
    payload,
    createdAt: num(row, ROW.created_ms) ?? 0,
  };
  const optional: Array<[string, unknown]> = [
    ["payloadError", payloadError],
    ["dueAt", state === STATE.scheduled ? num(row, ROW.due_ms) : undefined],
    ["leaseUntil", state === STATE.active ? num(row, ROW.deadline_ms) : undefined],
    ["token", num(row, ROW.token)],
    ["claimedAt", claimedAt(num(row, ROW.token))],
    ["retryDelayMs", num(row, ROW.delay_ms)],
    ["stalls", num(row, ROW.stalls)],
    ["reason", text(row, ROW.reason)],
    ["buriedAt", state === STATE.dead ? num(row, ROW.buried_ms) : undefined],
    ["finishedAt", state === STATE.completed ? num(row, ROW.finished_ms) : undefined],
    ["result", result],
    ["progress", progress],
    ["scheduler", text(row, ROW.scheduler)],
    ["tickAt", num(row, ROW.tick_ms)],
    ["timeoutMs", opts.timeout_ms === undefined ? undefined : Number(opts.timeout_ms)],
    ["dedupKey", opts.dedup],
    ["traceparent", opts.traceparent],
    ["priority", opts.priority === undefined || Number(opts.priority) === 0 ? undefined : Number(opts.priority)],
    ["lane", text(row, ROW.lane) || undefined],
    ["name", opts.name],
    ["maxAttempts", opts.attempts === undefined ? undefined : Number(opts.attempts)],
    ["failures", failures.length === 0 ? undefined : failures],
    ["parent", parentOf(text(row, ROW.parent))],
  ];
  for (const [k, v] of optional) if (v !== undefined) info[k] = v;
  return info as unknown as JobInfo<P>;
}

/** When the claim that handed out `token` took its job (ms): token ÷ {@link TOKENS_PER_MS}, rounded down. */
export function claimedAt(token: number | undefined): number | undefined {
  return token === undefined ? undefined : Math.floor(token / TOKENS_PER_MS);
}

/** A child's row's `parent` (`<queue>\0<id>\0<i>`) as a {@link ParentRef}; undefined when none. */
export function parentOf(field: string | undefined): ParentRef | undefined {
  const f = field?.split("\0");
  return f === undefined || f.length < 3 ? undefined : { queue: f[0]!, id: f[1] as JobId };
}

/** A queue's stats from its counts and its `meta` hash. */
export function queueStats(
  counts: Counts,
  meta: Map<string, Uint8Array>,
  defaults: { retention: Retention; limits: QueueLimits; lanes: number },
): QueueStats {
  return {
    ...counts,
    paused: text(meta, META.paused) === "1",
    createdAt: num(meta, META.created_ms) ?? 0,
    enqueued: num(meta, META.enqueued) ?? 0,
    acked: num(meta, META.acked) ?? 0,
    retried: num(meta, META.retried) ?? 0,
    buried: num(meta, META.buried) ?? 0,
    claims: num(meta, META.claimed) ?? 0,
    ...defaults.retention,
    limits: defaults.limits,
    lanes: defaults.lanes,
  };
}
