/**
 * The queue operations, each a wire verb on one queue: moving due jobs (promote, reap), removing
 * jobs, running scheduled ones now, requeueing dead ones, pausing and resuming (the queue or one
 * of its lanes), retention of dead and completed jobs and of events, and dropping the queue. The verbs that may touch many
 * jobs (REMOVE, RUN, REQUEUE, DROP) go a thousand jobs per command.
 *
 * @module
 */
import type { Keyspace } from "../keyspace/mod.ts";
import { assertJobId } from "../keyspace/mod.ts";
import {
  COMPLETED_AGE_DEFAULT_MS,
  COMPLETED_MAX_DEFAULT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  EVENTS_MAX_DEFAULT,
  META,
  TRIM_LIMIT,
  wireCall,
} from "../wire/mod.ts";
import { chunk } from "./batch.ts";
import type { ClientContext } from "./context.ts";
import { BATCH_COMMANDS, laneName, wholeNumber } from "./options.ts";

/** See `EchoMQ.promote` and `EchoMQ.reap`: one PROMOTE or REAP of up to `limit` jobs. */
export async function moveDue<P>(c: ClientContext<P>, verb: "PROMOTE" | "REAP", ks: Keyspace, limit: number): Promise<number> {
  const n = wholeNumber(`${verb.toLowerCase()}: limit`, "limit", limit, 1);
  return Number(await c.impl.call(wireCall(verb, ks, { limit: n })));
}

/** See `EchoMQ.remove`. */
export async function remove<P>(c: ClientContext<P>, ks: Keyspace, id: string): Promise<boolean> {
  assertJobId(id);
  return (await c.impl.call(wireCall("REMOVE", ks, {}, [{ id }]))) === 1;
}

/**
 * `verb` on the jobs `ids` (every id checked first), one command per thousand — each command
 * atomic, all of its jobs or none — and the sum of their replies.
 */
async function perThousand<P>(c: ClientContext<P>, verb: "REMOVE" | "RUN" | "REQUEUE", ks: Keyspace, ids: readonly string[]): Promise<number> {
  for (const id of ids) assertJobId(id);
  let n = 0;
  for (const run of chunk(ids, BATCH_COMMANDS)) {
    const groups = run.map((id) => ({ id }));
    const call = verb === "REQUEUE" ? wireCall(verb, ks, { limit: run.length }, groups) : wireCall(verb, ks, {}, groups);
    n += Number(await c.impl.call(call));
  }
  return n;
}

/** See `EchoMQ.removeMany`. */
export function removeMany<P>(c: ClientContext<P>, ks: Keyspace, ids: readonly string[]): Promise<number> {
  return perThousand(c, "REMOVE", ks, ids);
}

/** See `EchoMQ.runNow`. */
export function runNow<P>(c: ClientContext<P>, ks: Keyspace, ids: readonly string[]): Promise<number> {
  return perThousand(c, "RUN", ks, ids);
}

/** See `EchoMQ.requeueDead`. */
export async function requeueDead<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  opts: { ids?: readonly string[]; limit?: number },
): Promise<number> {
  if (opts.ids !== undefined) return await perThousand(c, "REQUEUE", ks, opts.ids);
  let left = opts.limit === undefined ? Infinity : wholeNumber("requeueDead: limit", "limit", opts.limit, 1);
  let moved = 0;
  while (left > 0) {
    const n = Number(await c.impl.call(wireCall("REQUEUE", ks, { limit: Math.min(left, BATCH_COMMANDS) })));
    moved += n;
    left -= n;
    if (n < Math.min(left + n, BATCH_COMMANDS)) break;
  }
  return moved;
}

/**
 * See `EchoMQ.pause` and `EchoMQ.resume`: the queue, or `lane` when given (its name checked before
 * any wire); `true` when it was in the other state.
 */
export async function setPaused<P>(c: ClientContext<P>, verb: "PAUSE" | "RESUME", ks: Keyspace, lane?: string): Promise<boolean> {
  const name = lane === undefined ? "" : laneName(verb.toLowerCase(), lane);
  return (await c.impl.call(wireCall(verb, ks, { lane: name }))) === 1;
}

/**
 * A queue's retention: how many dead jobs it keeps and for how long, the same for completed jobs
 * (with their results), and how many events its stream keeps. Each 0 means "no limit", but
 * `completedMax` 0 keeps no completed job and `eventsMax` 0 writes no event.
 */
export interface Retention {
  /** The most dead jobs kept (0: no limit; default {@link DEAD_MAX_DEFAULT}). */
  readonly deadMax: number;
  /** How long a dead job is kept, in ms (0: no limit; default 30 days). */
  readonly deadAgeMs: number;
  /** The most completed jobs kept with their results (0: none, an ack deletes the job; default {@link COMPLETED_MAX_DEFAULT}). */
  readonly completedMax: number;
  /** How long a completed job is kept, in ms (0: no limit; default one day). */
  readonly completedAgeMs: number;
  /** The most entries of the queue's events stream (0: no events written; default {@link EVENTS_MAX_DEFAULT}). */
  readonly eventsMax: number;
}

/** The settings of {@link Retention}: each option's `meta` field and default. */
const SETTINGS = [
  ["deadMax", META.dead_max, DEAD_MAX_DEFAULT],
  ["deadAgeMs", META.dead_age_ms, DEAD_AGE_DEFAULT_MS],
  ["completedMax", META.completed_max, COMPLETED_MAX_DEFAULT],
  ["completedAgeMs", META.completed_age_ms, COMPLETED_AGE_DEFAULT_MS],
  ["eventsMax", META.events_max, EVENTS_MAX_DEFAULT],
] as const satisfies ReadonlyArray<readonly [keyof Retention, string, number]>;

/** `meta`'s stored value of a setting, or its default when absent (or not a whole number ≥ 0). */
function stored(value: unknown, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  const text = value instanceof Uint8Array ? new TextDecoder().decode(value) : String(value);
  const n = Number(text);
  return text !== "" && Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/** See `EchoMQ.retention`: one HMGET of `meta`. */
export async function retention<P>(c: ClientContext<P>, ks: Keyspace): Promise<Retention> {
  const reply = (await c.conn.command(["HMGET", ks.meta, ...SETTINGS.map(([, field]) => field)], ks.meta)) as unknown[];
  return Object.fromEntries(SETTINGS.map(([name, , fallback], i) => [name, stored(reply[i], fallback)])) as unknown as Retention;
}

/**
 * See `EchoMQ.retain`: the settings given (each checked before any wire), the others as `meta`
 * holds them (read first; their defaults when absent), then RETAIN with all five until a command
 * deletes fewer than it may of both sets.
 */
export async function retain<P>(c: ClientContext<P>, ks: Keyspace, opts: Partial<Retention>): Promise<number> {
  const given = opts ?? {};
  const wanted = new Map<keyof Retention, number>();
  for (const [name] of SETTINGS) {
    const v = (given as Record<string, unknown>)[name];
    if (v !== undefined) wanted.set(name, wholeNumber(`retain: ${name}`, "options", v as number, 0));
  }
  const settings = wanted.size === SETTINGS.length ? ({} as Retention) : await retention(c, ks);
  const value = (name: keyof Retention): number => wanted.get(name) ?? settings[name];
  const fixed = {
    dead_max: value("deadMax"),
    dead_age_ms: value("deadAgeMs"),
    completed_max: value("completedMax"),
    completed_age_ms: value("completedAgeMs"),
    events_max: value("eventsMax"),
  };
  let deleted = 0;
  for (;;) {
    const n = Number(await c.impl.call(wireCall("RETAIN", ks, fixed)));
    deleted += n;
    // at most TRIM_LIMIT of each set per call: fewer than TRIM_LIMIT in all means both hold
    if (n < TRIM_LIMIT) return deleted;
  }
}

/**
 * See `EchoMQ.drop`: DROP until a command deletes fewer than it may (each deletes the queue's
 * schedulers first, so a firer racing the drop admits nothing).
 */
export async function drop<P>(c: ClientContext<P>, ks: Keyspace): Promise<number> {
  let deleted = 0;
  for (;;) {
    const n = Number(await c.impl.call(wireCall("DROP", ks, { limit: BATCH_COMMANDS })));
    deleted += n;
    if (n < BATCH_COMMANDS) return deleted;
  }
}
