/**
 * A queue's limits, which every claim of every worker obeys on the server: how many jobs may be
 * active at once, how fast jobs may be claimed (the generic cell-rate algorithm, exactly: no fixed
 * windows that let 2× through at an edge), and a park ("hand out nothing for ms") that a handler
 * asks for when a remote service says "slow down" (`RateLimitedError`) — of the whole queue, of
 * one of its lanes, or (concurrency and rate) the default of every lane. `mq.limit`, `mq.limits`
 * and `mq.penalize` call these.
 *
 * @module
 */
import type { CheckLane, Keyspace } from "../keyspace/mod.ts";
import { LANE, MAX_BURST, MAX_CONCURRENCY, MAX_RATE, MAX_RATE_PERIOD_MS, META, wireCall } from "../wire/mod.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import { fields, text } from "./info.ts";
import { integerIn, laneName, refuse } from "./options.ts";

/** A rate limit: at most `max` claims per `perMs` on average, at most `burst` at once (default 1). */
export interface RateLimit {
  /** Claims per period (1 to 1,000,000). */
  readonly max: number;
  /** The period, in ms (1 to 86,400,000: a day). */
  readonly perMs: number;
  /**
   * The most claims at once after an idle period (1 to 1,000,000; default 1: evenly spaced, one
   * every `perMs / max` ms).
   */
  readonly burst?: number;
}

/** What `mq.limit` sets: a field left out keeps its limit; `null` removes it. */
export interface LimitOptions {
  /** The most jobs of the queue active at once across every worker (1 to 1,000,000). */
  readonly concurrency?: number | null;
  /** The queue's rate limit. */
  readonly rate?: RateLimit | null;
}

/**
 * What `mq.limit` and `mq.limits` apply to besides the queue (their default): one lane (`null`:
 * the default lane, the jobs enqueued without one), or the default of every lane without limits
 * of its own (`perLane`). A lane's limits hold on top of the queue's.
 */
export type LimitTarget<L extends string = string> = { readonly lane: CheckLane<L> | null } | { readonly perLane: true };

/** Which hash holds a target's limits, and under which fields. */
interface LimitFields {
  readonly concurrency: string;
  readonly rate: string;
  readonly parked?: string;
}
const QUEUE_FIELDS: LimitFields = { concurrency: META.concurrency, rate: META.rate, parked: META.parked };
/** A lane's own limits and park, in its state hash. */
export const LANE_LIMIT_FIELDS: LimitFields = { concurrency: LANE.concurrency, rate: LANE.rate, parked: LANE.parked };
/** Every lane's default limits, in `meta`. */
export const PER_LANE_FIELDS: LimitFields = { concurrency: META.lane_concurrency, rate: META.lane_rate };

/** A target as the wire's LIMIT says it (`scope`, `lane`), with the hash and fields that hold its limits. */
interface Scope {
  readonly scope: 0 | 1 | 2;
  readonly lane: string;
  readonly hash: string;
  readonly names: LimitFields;
}

/** The scope of `target` (undefined: the queue); a bad target or lane name is refused before any wire. */
function scopeOf(what: string, ks: Keyspace, target: LimitTarget | undefined): Scope {
  if (target === undefined) return { scope: 0, lane: "", hash: ks.meta, names: QUEUE_FIELDS };
  if (target !== null && typeof target === "object" && "perLane" in target && target.perLane === true) {
    return { scope: 2, lane: "", hash: ks.meta, names: PER_LANE_FIELDS };
  }
  if (target !== null && typeof target === "object" && "lane" in target) {
    const lane = target.lane === null ? "" : laneName(what, target.lane);
    return { scope: 1, lane, hash: ks.lane(lane), names: LANE_LIMIT_FIELDS };
  }
  throw new EchoMQError("limit", `${what}: the target must be { lane } or { perLane: true }`);
}

/** A queue's (or a lane's, or every lane's default) limits as the server holds them (`mq.limits`). */
export interface QueueLimits {
  /** The most jobs active at once, or null (no limit). */
  readonly concurrency: number | null;
  /** The rate limit (its `burst` filled in), or null. */
  readonly rate: Required<RateLimit> | null;
  /**
   * Until when claims hand out nothing (ms since the epoch, server clock), or null when not parked
   * (by this machine's clock); always null for every lane's default (`perLane`).
   */
  readonly parkedUntil: number | null;
}

/**
 * The limits a hash's fields say — `meta`'s by default, else the `names` given (a lane's, every
 * lane's default) — a field as the server would not write it counting as absent, as the server
 * reads it; `now` (ms) decides whether a park is still in force.
 */
export function limitsOf(hash: ReadonlyMap<string, Uint8Array>, now: number, names: LimitFields = QUEUE_FIELDS): QueueLimits {
  const whole = (text: string | undefined, lo: number, hi: number): number | null => {
    if (text === undefined || !/^[0-9]{1,15}$/.test(text)) return null;
    const n = Number(text);
    return n >= lo && n <= hi ? n : null;
  };
  const [m, p, b] = (text(hash, names.rate) ?? "").split(" ");
  const max = whole(m, 1, MAX_RATE);
  const perMs = whole(p, 1, MAX_RATE_PERIOD_MS);
  const burst = whole(b, 1, MAX_BURST);
  const parked = names.parked === undefined ? null : whole(text(hash, names.parked), 0, Number.MAX_SAFE_INTEGER);
  return {
    concurrency: whole(text(hash, names.concurrency), 1, MAX_CONCURRENCY),
    rate: max !== null && perMs !== null && burst !== null ? { max, perMs, burst } : null,
    parkedUntil: parked !== null && parked > now ? parked : null,
  };
}

/** `what` as an integer from `min` to `max`, else the client's `limit` refusal naming it. */
function within(what: string, value: unknown, min: number, max: number): number {
  return integerIn(what, value, min, max, refuse("limit"));
}

/** The wire's LIMIT arguments for `opts` over the limits in force (`current`). */
export function limitArgs(
  opts: LimitOptions,
  current: QueueLimits,
): { concurrency: number; rate_max: number; rate_per_ms: number; rate_burst: number } {
  if (opts === null || typeof opts !== "object") {
    throw new EchoMQError("limit", "limit: options must be { concurrency?, rate? }");
  }
  const conc = opts.concurrency === undefined ? current.concurrency : opts.concurrency;
  const rate = opts.rate === undefined ? current.rate : opts.rate;
  if (rate !== null && (typeof rate !== "object")) {
    throw new EchoMQError("limit", "limit: rate must be { max, perMs, burst? } or null");
  }
  return {
    concurrency: conc === null ? 0 : within("limit: concurrency", conc, 1, MAX_CONCURRENCY),
    rate_max: rate === null ? 0 : within("limit: rate.max", rate.max, 1, MAX_RATE),
    rate_per_ms: rate === null ? 1 : within("limit: rate.perMs", rate.perMs, 1, MAX_RATE_PERIOD_MS),
    rate_burst: rate === null ? 1 : within("limit: rate.burst", rate.burst ?? 1, 1, MAX_BURST),
  };
}

/** The limits `s` names, read from the server. */
async function read<P>(c: ClientContext<P>, ks: Keyspace, s: Scope): Promise<QueueLimits> {
  return limitsOf(fields(await c.conn.command(["HGETALL", s.hash], ks.meta)), Date.now(), s.names);
}

/** See `EchoMQ.limits`. */
export async function limits<P>(c: ClientContext<P>, ks: Keyspace, target?: LimitTarget): Promise<QueueLimits> {
  return await read(c, ks, scopeOf("limits", ks, target));
}

/**
 * See `EchoMQ.limit`: the target and the fields given are checked before any wire, the ones left
 * out read from the server and kept, then one LIMIT sets both.
 */
export async function limit<P>(c: ClientContext<P>, ks: Keyspace, opts: LimitOptions, target?: LimitTarget): Promise<QueueLimits> {
  const s = scopeOf("limit", ks, target);
  // checked first with nothing in force, so that a bad option is refused before any wire
  limitArgs(opts, { concurrency: null, rate: null, parkedUntil: null });
  const keep = opts.concurrency === undefined || opts.rate === undefined;
  const current = keep ? await read(c, ks, s) : { concurrency: null, rate: null, parkedUntil: null };
  const args = limitArgs(opts, current);
  await c.impl.call(wireCall("LIMIT", ks, { scope: s.scope, lane: s.lane, ...args }));
  return {
    concurrency: args.concurrency === 0 ? null : args.concurrency,
    rate: args.rate_max === 0 ? null : { max: args.rate_max, perMs: args.rate_per_ms, burst: args.rate_burst },
    parkedUntil: current.parkedUntil,
  };
}

/**
 * See `EchoMQ.penalize`: parks the queue, or `lane` when given (a worker's `RateLimitedError` of a
 * laned job); the time the park ends (server clock).
 */
export async function penalize<P>(c: ClientContext<P>, ks: Keyspace, ms: number, lane?: string): Promise<number> {
  const penalty = within("penalize: ms", ms, 1, MAX_RATE_PERIOD_MS);
  const name = lane === undefined ? "" : laneName("penalize", lane);
  return Number(await c.impl.call(wireCall("PENALIZE", ks, { lane: name, penalty_ms: penalty })));
}
