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
import { type FixedArgs, TRIM_LIMIT, wireCall } from "../wire/mod.ts";
import { chunk } from "./batch.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import { BATCH_COMMANDS, laneName, wholeNumber } from "./options.ts";
import { type Retention, retentionOf, SETTINGS } from "./retention.ts";

export type { Retention } from "./retention.ts";

/** See `EchoMQ.promote` and `EchoMQ.reap`: one PROMOTE or REAP of up to `limit` jobs. */
export async function moveDue<P>(c: ClientContext<P>, verb: "PROMOTE" | "REAP", ks: Keyspace, limit: number): Promise<number> {
  const n = wholeNumber(`${verb.toLowerCase()}: limit`, "limit", limit, 1);
  return Number(await c.impl.call(wireCall(verb, ks, { limit: n })));
}

/** See `EchoMQ.remove`. */
export async function remove<P>(c: ClientContext<P>, ks: Keyspace, id: string): Promise<boolean> {
  assertJobId(id);
  return (await c.impl.call(wireCall("REMOVE", ks, { cleaned: 0 }, [{ id }]))) === 1;
}

/**
 * `verb` on the jobs `ids` (every id checked first), one command per thousand — each command
 * atomic, all of its jobs or none — and the sum of their replies; `flag` is REMOVE's `cleaned` and
 * REQUEUE's `keep_attempts` (0 or 1).
 */
async function perThousand<P>(
  c: ClientContext<P>,
  verb: "REMOVE" | "RUN" | "REQUEUE",
  ks: Keyspace,
  ids: readonly string[],
  flag: 0 | 1 = 0,
): Promise<number> {
  for (const id of ids) assertJobId(id);
  let n = 0;
  for (const run of chunk(ids, BATCH_COMMANDS)) {
    const groups = run.map((id) => ({ id }));
    const call = verb === "REQUEUE"
      ? wireCall(verb, ks, { limit: run.length, keep_attempts: flag }, groups)
      : verb === "REMOVE"
      ? wireCall(verb, ks, { cleaned: flag }, groups)
      : wireCall(verb, ks, {}, groups);
    n += Number(await c.impl.call(call));
  }
  return n;
}

/** See `EchoMQ.removeMany`. */
export function removeMany<P>(c: ClientContext<P>, ks: Keyspace, ids: readonly string[], opts: RemoveOptions = {}): Promise<number> {
  return perThousand(c, "REMOVE", ks, ids, opts.clean === true ? 1 : 0);
}

/** See `EchoMQ.runNow`. */
export function runNow<P>(c: ClientContext<P>, ks: Keyspace, ids: readonly string[]): Promise<number> {
  return perThousand(c, "RUN", ks, ids);
}

/** How `removeMany` removes. */
export interface RemoveOptions {
  /**
   * A clean: each command writes one `cleaned` event (the ids it removed) in place of `removed`
   * (wire 17; BullMQ's QueueEvents `cleaned`, its count the ids').
   */
  readonly clean?: boolean;
}

/** Which dead jobs `requeueDead` moves back to pending, and how. */
export interface RequeueOptions {
  /** The dead jobs to requeue (each must be dead); absent: every dead job, oldest first, up to `limit`. */
  readonly ids?: readonly string[];
  /** The most jobs to requeue when no `ids` are given. */
  readonly limit?: number;
  /**
   * Keep each job's attempts, which its next claim counts on (wire 17; BullMQ's `job.retry()`);
   * absent or false: a fresh attempt budget (attempts 0).
   */
  readonly keepAttempts?: boolean;
}

/** See `EchoMQ.requeueDead`. */
export async function requeueDead<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  opts: RequeueOptions,
): Promise<number> {
  // an array here (ids given without `{ ids }`, from untyped code) would requeue every dead job
  if (opts === null || typeof opts !== "object" || Array.isArray(opts)) {
    throw new EchoMQError("options", "requeueDead: options must be { ids?, limit? } (ids as { ids: [...] })");
  }
  const keep = opts.keepAttempts === true ? 1 : 0;
  if (opts.ids !== undefined) return await perThousand(c, "REQUEUE", ks, opts.ids, keep);
  let left = opts.limit === undefined ? Infinity : wholeNumber("requeueDead: limit", "limit", opts.limit, 1);
  let moved = 0;
  while (left > 0) {
    const n = Number(await c.impl.call(wireCall("REQUEUE", ks, { limit: Math.min(left, BATCH_COMMANDS), keep_attempts: keep })));
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

/** See `EchoMQ.retention`: one HMGET of `meta`. */
export async function retention<P>(c: ClientContext<P>, ks: Keyspace): Promise<Retention> {
  const names: string[] = SETTINGS.map(([, field]) => field);
  const reply = (await c.conn.command(["HMGET", ks.meta, ...names], ks.meta)) as unknown[];
  return retentionOf((field) => reply[names.indexOf(field)]);
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
  // RETAIN's arguments are named as `meta`'s fields
  const fixed = Object.fromEntries(SETTINGS.map(([name, field]) => [field, value(name)])) as FixedArgs<"RETAIN">;
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
