/**
 * What the client's calls take: the option shapes, the limits in force, and the argument checks
 * every call runs before any wire (each refusal an {@link EchoMQError} naming its rule).
 *
 * @module
 */
import { assertClientQueue, assertJobId, assertName, type CheckLane, type CheckName, type JobId, Keyspace } from "../keyspace/mod.ts";
import { encodeOptions, type JobOptions, MAX_JOB_ATTEMPTS, MAX_PRIORITY, MAX_REASON_BYTES, MAX_TOKEN, MAX_WIRE_NUMBER } from "../wire/mod.ts";
import type { Backend, WaitFor } from "./backend.ts";
import type { WireCall } from "../wire/mod.ts";
import { byteLength, type Codec } from "./codec.ts";
import type { ConnectionOptions } from "./connection.ts";
import { type ClientRule, DurabilityError, EchoMQError } from "./errors.ts";
import type { JobRef } from "./job.ts";
import type { TracingOptions } from "./tracing.ts";

/** Options of `EchoMQ.connect`: the connection, the payload codec and the id source. */
export interface EchoMQOptions<P = unknown> extends ConnectionOptions {
  /** How payloads become bytes (default {@link json}). */
  codec?: Codec<P>;
  /** Where new job ids come from (default `newJobId` from `mod.ts`); must return valid JOB ids. */
  newId?: () => JobId;
  /**
   * Where warnings go (default `console.warn`): at connect, once per server, when a primary's
   * `maxmemory-policy` may evict jobs (anything but `noeviction`).
   */
  warn?: (message: string) => void;
  /**
   * OpenTelemetry tracing: pass `{ api }`, `api` being your own
   * `import * as api from '@opentelemetry/api'` (EchoMQ imports nothing of it). Admissions then
   * make `send <queue>` spans whose trace context rides on each job (the job option
   * `traceparent`), and this client's workers make `process <queue>` spans linked to it
   * (docs/PACKAGE.md, "Tracing"). Without it: no span, and no option on the row.
   */
  tracing?: TracingOptions;
}

/** What a `durable` write asks for: how many replicas must acknowledge it, and how long to wait. */
export interface DurableOptions {
  /** Replicas that must acknowledge the write (default 1). */
  replicas?: number;
  /** Milliseconds to wait for them (default {@link DEFAULT_DURABLE_TIMEOUT_MS}, at most one hour). */
  timeoutMs?: number;
}

/**
 * Options of `EchoMQ.enqueueMany` for payloads of type `P`. `lane` and `priority` are one value for
 * every job, or a function of each payload and its input index, for a batch that mixes them (a
 * lane the function gives is checked as that job is read: a bad one stops the batch there, as a
 * payload the codec refuses does).
 */
export interface EnqueueManyOptions<P = unknown, L extends string = string> {
  /**
   * Resolve only once at least one replica (or `replicas`) acknowledged every job: each batch ends
   * with `WAIT`, as for {@link EnqueueOptions.durable}. A shortfall rejects with
   * {@link DurabilityError} naming that batch's ids.
   */
  durable?: boolean | DurableOptions;
  /** Each job's lane ({@link EnqueueOptions.lane}); `undefined` from the function: the default lane. */
  lane?: CheckLane<L> | ((payload: P, index: number) => string | undefined);
  /** Each job's name ({@link EnqueueOptions.name}); `undefined` from the function: no name. */
  name?: string | ((payload: P, index: number) => string | undefined);
  /** Each job's priority ({@link EnqueueOptions.priority}); `undefined` from the function: 0. */
  priority?: number | ((payload: P, index: number) => number | undefined);
}

/**
 * Options of `EchoMQ.enqueue` and `EchoMQ.schedule`; `L` is the lane literal and `D` the dedup
 * key's, both checked by the compiler.
 */
export interface EnqueueOptions<L extends string = string, D extends string = string> {
  /**
   * Use this id instead of a new one: an idempotent enqueue. A second enqueue with the same id is
   * refused with {@link DuplicateIdError} (and is not retried with another id) while the job's row
   * exists — pending, scheduled, active or dead. An ack deletes the row, and with it the memory of
   * the id: after that the same id is admitted again as a new job.
   */
  id?: JobId;
  /**
   * This job's own handler time limit, in ms (1 to 86400000): a worker aborts the job's `signal`
   * with a `JobTimeoutError` past it and fails the attempt, as its own `timeoutMs` does (this one
   * wins). Kept on the job's row and handed to the worker with the claim.
   */
  timeoutMs?: number;
  /**
   * Deduplication: while a job admitted under `dedup.key` is pending, scheduled or active — or
   * within `dedup.ttlMs` of its admission, whatever became of it — another admission under the
   * key admits nothing and resolves with that job's id (`submit` says `deduplicated`). With
   * `mode: "debounce"`, an admission under a key whose job still waits (pending or scheduled)
   * gives that job its payload instead — and, from `schedule`, its due time — so the last of a
   * burst runs (`debounced`). Decided by the server in the admission itself: racing producers
   * get one job. The key follows the name rule (1 to 1024 bytes, no `{`, `}` or NUL): a literal
   * that breaks it fails to compile, any other value is checked before any wire.
   */
  dedup?: DedupOptions<D>;
  /**
   * The job's priority: 0 (the default) is the most urgent, up to {@link MAX_PRIORITY}. A claim
   * takes every ready job of a lower number first, and jobs of one priority in the order they
   * became ready (FIFO). A retried, released or requeued job keeps its priority. With lanes, a
   * priority orders jobs inside the job's lane only.
   */
  priority?: number;
  /**
   * The job's lane (absent: the default lane): claims serve a queue's lanes round-robin — one job
   * of each lane that has one ready, in turn — so one tenant's backlog does not starve the others.
   * Each lane can be paused, limited and penalized on its own (`pause`, `limit`, `penalize` with
   * `{ lane }`). The name rule of queues (1 to 1024 bytes, no `{`, `}` or NUL): a literal that
   * breaks it fails to compile, any other value is checked before any wire. A queue becomes laned
   * with its first laned job; until then lanes cost nothing.
   */
  lane?: CheckLane<L>;
  /**
   * The job's name: what the job is (`"send-invoice"`), as BullMQ's job names — shown in the
   * dashboard's tables and job page, `emq job`, `getJob` and the handler's `job.name`. The name
   * rule (1 to 1024 bytes, no `{`, `}` or NUL), checked before any wire; kept on the job's row as
   * one of its options (at most 4096 bytes in all).
   */
  name?: string;
  /**
   * The most attempts the job gets (1 to {@link MAX_JOB_ATTEMPTS}), as BullMQ's `attempts`: a
   * worker buries it once that many have failed, in place of the worker's own `maxAttempts`. Kept
   * on the job's row as one of its options.
   */
  attempts?: number;
  /**
   * Resolve only once at least one replica (or `replicas`) acknowledged the write: the verb and
   * `WAIT <replicas> <timeoutMs>` go to the queue's primary in one ordered non-atomic batch, on
   * the one connection glide keeps to that node, so the `WAIT` covers the write. Fewer replicas
   * within the timeout rejects with {@link DurabilityError} (the job *is* on the primary). While
   * `WAIT` blocks, this client's other calls to that node queue behind it. In a cluster, a write
   * redirected by `MOVED` (a slot being migrated) is not covered by the `WAIT`, which stays on
   * the node first asked.
   */
  durable?: boolean | DurableOptions;
}

/** The `dedup` option of `enqueue`, `schedule` and `submit`; `D` is the key literal, checked by the compiler. */
export interface DedupOptions<D extends string = string> {
  /** The deduplication key (the name rule: 1 to 1024 bytes without `{`, `}` or NUL). */
  key: CheckName<D, "dedup key">;
  /** The key also holds this long after the admission, even once its job has settled (a throttle window), in ms. */
  ttlMs?: number;
  /** `"deduplicate"` (default): a held key drops the admission. `"debounce"`: a waiting holder takes its payload. */
  mode?: "deduplicate" | "debounce";
}

/** The longest per-job `timeoutMs` (a day), as the worker's own. */
export const MAX_JOB_TIMEOUT_MS = 86_400_000;

/**
 * A job's options as the wire carries them, from `enqueue`'s / `schedule`'s options (and the
 * admitting span's `traceparent`, when tracing); each bad one refused before any wire with an
 * {@link EchoMQError} (`options`) naming it.
 */
export function jobOptions<L extends string>(what: string, opts: EnqueueOptions<L> | undefined, traceparent?: string): string {
  const o: { -readonly [K in keyof JobOptions]: JobOptions[K] } = {};
  if (traceparent !== undefined) o.traceparent = traceparent;
  if (opts === undefined || opts === null) return encodeOptions(o);
  // untyped code: a number or a string here would be read as no options at all
  if (typeof opts !== "object") throw new EchoMQError("options", `${what}: options must be an object`);
  if (opts.timeoutMs !== undefined) {
    o.timeout_ms = integerIn(`${what}: timeoutMs`, opts.timeoutMs, 1, MAX_JOB_TIMEOUT_MS, refuse("options"));
  }
  if (opts.priority !== undefined && opts.priority !== 0) {
    o.priority = integerIn(`${what}: priority`, opts.priority, 0, MAX_PRIORITY, refuse("options"));
  }
  if (opts.lane !== undefined) o.lane = laneName(what, opts.lane);
  if (opts.name !== undefined) o.name = jobName(what, opts.name);
  if (opts.attempts !== undefined) o.attempts = integerIn(`${what}: attempts`, opts.attempts, 1, MAX_JOB_ATTEMPTS, refuse("options"));
  const d = opts.dedup;
  if (d !== undefined) {
    if (d === null || typeof d !== "object") throw new EchoMQError("options", `${what}: dedup must be { key, ttlMs?, mode? }`);
    try {
      assertName(d.key, "dedup key");
    } catch (e) {
      throw new EchoMQError("options", `${what}: dedup.key: ${(e as Error).message}`);
    }
    o.dedup = d.key;
    if (d.ttlMs !== undefined) o.dedup_ms = wholeNumber(`${what}: dedup.ttlMs`, "options", d.ttlMs, 1);
    if (d.mode !== undefined && d.mode !== "deduplicate" && d.mode !== "debounce") {
      throw new EchoMQError("options", `${what}: dedup.mode must be "deduplicate" or "debounce", got ${String(d.mode)}`);
    }
    if (d.mode === "debounce") o.debounce = 1;
  }
  return encodeOptions(o);
}

/** When a scheduled job becomes due: an absolute time, or a delay from now (client clock). */
export type When = { at: Date | number } | { delayMs: number };

/** Options of `EchoMQ.claim`. */
export interface ClaimOptions {
  /**
   * The lease: after this many ms without ack / retry / bury / extend, the job is handed out again
   * (by the next claim or reap) under a new token.
   */
  leaseMs: number;
}

/** Options of `EchoMQ.claimMany`. */
export interface ClaimManyOptions extends ClaimOptions {
  /**
   * When no job is ready, wait on the server for one for at most this many ms (default 0: answer
   * at once). The module waits on the server; the scripts backend answers at once (its workers wait
   * on the queue's `wake` key instead).
   */
  blockMs?: number;
}

/** Options of `EchoMQ.retry`. */
export interface RetryOptions {
  /** Milliseconds until the job is due again (≥ 1). */
  delayMs: number;
  /** Why it failed, kept on the row (at most 4096 bytes; default empty). */
  reason?: string;
  /**
   * What failed (any thrown value): its name, message and stack are kept among the job's newest
   * 10 failed attempts (8 KiB each; `getJob`'s `failures`).
   */
  error?: unknown;
}

/** Default `limit` of `EchoMQ.promote` and `EchoMQ.reap`. */
export const DEFAULT_MOVE_LIMIT = 1000;
/** Jobs per command of `enqueueMany`, `claimMany` and `settleMany` (one group each). */
export const BATCH_COMMANDS = 1000;
/** Payload bytes per `enqueueMany` command (a command is cut earlier when it would exceed this). */
export const BATCH_BYTES: number = 8 * 1024 * 1024;
/** Default `timeoutMs` of a `durable` write. */
export const DEFAULT_DURABLE_TIMEOUT_MS = 1000;

/**
 * `value` when it is an integer from `min` to `max`, else the error `refuse` makes of the message
 * "`what` must be an integer from `min` to `max` (`why`), got `value`": the one check of every
 * whole-number argument and option (the client's {@link wholeNumber}, the worker's options).
 */
export function integerIn(
  what: string,
  value: unknown,
  min: number,
  max: number,
  refuse: (message: string) => Error,
  why?: string,
): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw refuse(`${what} must be an integer from ${min} to ${max}${why === undefined ? "" : ` (${why})`}, got ${String(value)}`);
  }
  return value;
}

/** The {@link EchoMQError} refusing an argument or option for `rule`. */
export function refuse(rule: ClientRule): (message: string) => EchoMQError {
  return (message) => new EchoMQError(rule, message);
}

/** `value` as a wire number from `min` to {@link MAX_WIRE_NUMBER}, else an {@link EchoMQError} for `rule`. */
export function wholeNumber(what: string, rule: ClientRule, value: unknown, min: number): number {
  return integerIn(what, value, min, MAX_WIRE_NUMBER, refuse(rule), "wire number gate");
}

/**
 * `lane` when it is a legal lane name, else an {@link EchoMQError} (`options`) naming the option
 * and the broken rule: the same check as the server's, before any wire.
 */
export function laneName(what: string, lane: unknown): string {
  try {
    assertName(lane, "lane name");
  } catch (e) {
    throw new EchoMQError("options", `${what}: lane: ${(e as Error).message}`);
  }
  return lane;
}

/** `name` when it is a legal job name (the name rule), else an {@link EchoMQError} (`options`). */
export function jobName(what: string, name: unknown): string {
  try {
    assertName(name, "job name");
  } catch (e) {
    throw new EchoMQError("options", `${what}: name: ${(e as Error).message}`);
  }
  return name;
}

/**
 * Each job's options text for `enqueueMany`: from its payload and input index when `lane`,
 * `priority` or `name` is a function, else one text for all (checked once, before anything is read).
 */
export function manyOptions<P>(
  opts: EnqueueManyOptions<P> | undefined,
  traceparent?: string,
): (payload: P, index: number) => string {
  const what = "enqueueMany";
  const lane = opts?.lane;
  const priority = opts?.priority;
  const name = opts?.name;
  if (typeof lane !== "function" && typeof priority !== "function" && typeof name !== "function") {
    const text = jobOptions(what, { lane, priority, name }, traceparent);
    return () => text;
  }
  return (payload, index) =>
    jobOptions(what, {
      lane: typeof lane === "function" ? lane(payload, index) : lane,
      priority: typeof priority === "function" ? priority(payload, index) : priority,
      name: typeof name === "function" ? name(payload, index) : name,
    }, traceparent);
}

/** When a scheduled job falls due, in ms since the epoch (client clock); a bad `when` is refused. */
export function dueMs(when: When): number {
  if (when && "at" in when) {
    const due = when.at instanceof Date ? when.at.getTime() : when.at;
    return wholeNumber("schedule: at (ms since epoch)", "due-ms", due, 0);
  }
  if (when && "delayMs" in when) return Date.now() + wholeNumber("schedule: delayMs", "delay-ms", when.delayMs, 0);
  throw new EchoMQError("options", "schedule: when must be { at } or { delayMs }");
}

/** The `WAIT` a `durable` option asks for (undefined: none); bad options are refused. */
export function waitFor(what: string, durable: boolean | DurableOptions | undefined): WaitFor | undefined {
  if (durable === undefined || durable === false) return undefined;
  if (durable === true) return { replicas: 1, timeoutMs: DEFAULT_DURABLE_TIMEOUT_MS };
  if (durable === null || typeof durable !== "object") {
    throw new EchoMQError("durable", `${what}: durable must be true, false or { replicas?, timeoutMs? }`);
  }
  const replicas = integerIn(`${what}: durable.replicas`, durable.replicas ?? 1, 1, 1000, refuse("durable"));
  const timeoutMs = integerIn(
    `${what}: durable.timeoutMs`,
    durable.timeoutMs ?? DEFAULT_DURABLE_TIMEOUT_MS,
    1,
    3_600_000,
    refuse("durable"),
    "WAIT 0 would block forever",
  );
  return { replicas, timeoutMs };
}

/** Throws {@link DurabilityError} unless `reply` (a `WAIT`'s) counts enough replicas. */
export function checkWait(what: string, queue: string, ids: readonly string[], reply: unknown, wait: WaitFor): void {
  if (reply instanceof Error) throw new DurabilityError(what, queue, ids, 0, wait, reply);
  const acknowledged = Number(reply);
  if (!Number.isFinite(acknowledged)) {
    throw new DurabilityError(what, queue, ids, 0, wait, new Error(`unexpected WAIT reply ${String(reply)}`));
  }
  if (acknowledged < wait.replicas) throw new DurabilityError(what, queue, ids, acknowledged, wait);
}

/**
 * Sends `call`; with `wait`, followed by `WAIT` on its queue's primary in one batch: a refusal is
 * thrown as `call` alone throws it, too few replicas as {@link DurabilityError} naming `ids`.
 */
export async function callWaited(
  impl: Backend,
  call: WireCall,
  wait: WaitFor | undefined,
  what: string,
  queue: string,
  ids: readonly string[],
): Promise<unknown> {
  if (wait === undefined) return await impl.call(call);
  const [reply, waited] = await impl.callMany([call], wait);
  if (reply instanceof Error) throw reply;
  checkWait(what, queue, ids, waited, wait);
  return reply;
}

/** `reason` as sent: a string of at most {@link MAX_REASON_BYTES} UTF-8 bytes. */
export function reasonText(what: string, reason: unknown): string {
  if (typeof reason !== "string") throw new EchoMQError("reason", `${what}: reason must be a string`);
  if (byteLength(reason) > MAX_REASON_BYTES) {
    throw new EchoMQError("reason", `${what}: reason exceeds ${MAX_REASON_BYTES} bytes (wire reason gate)`);
  }
  return reason;
}

/** The keyspace of a job reference, after checking its queue, id and token. */
export function jobRef(what: string, job: JobRef, keyspace?: (queue: string) => Keyspace): Keyspace {
  if (job === null || typeof job !== "object") {
    throw new EchoMQError("job", `${what}: expected a claimed job { id, queue, token }, got ${String(job)}`);
  }
  assertClientQueue(job.queue);
  assertJobId(job.id);
  integerIn(`${what}: job.token (the claim's lease token)`, job.token, 1, MAX_TOKEN, refuse("job"), "wire token gate");
  return keyspace ? keyspace(job.queue) : new Keyspace(job.queue);
}
