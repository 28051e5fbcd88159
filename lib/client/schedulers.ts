/**
 * Repeatable jobs without a leader: upserting, listing and removing a queue's schedulers, and
 * firing the due ones. Any worker of the queue fires (see `Worker`): it reads the due schedulers,
 * computes their runs with croner (`repeat.ts`), and sends TICK naming the next run it read; the
 * server admits the jobs only while that is still the scheduler's next run (compare-and-set), so
 * racing firers create one job per run, and a firer that dies mid-way leaves the run to the next.
 *
 * @module
 */
import { Decoder } from "@valkey/valkey-glide";
import { type CheckLane, type Keyspace, validName } from "../keyspace/mod.ts";
import { decodeOptions, SCHED, wireCall } from "../wire/mod.ts";
import { encodePayload, toWire } from "./codec.ts";
import type { ClientContext } from "./context.ts";
import { SchedulerOptionError, WireError } from "./errors.ts";
import { fields, scored } from "./info.ts";
import { type EnqueueOptions, jobOptions } from "./options.ts";
import { readBatch } from "./read_batch.ts";
import { firing, fromText, maxMissed, type MissedPolicy, policyOf, repeat, type RepeatSpec } from "./repeat.ts";

/**
 * Options of `EchoMQ.upsertScheduler`; `L` is the lane literal, checked by the compiler. `lane`,
 * `priority` and `timeoutMs` are the options of every job the scheduler admits, as `enqueue`'s
 * (same checks, same errors); an upsert replaces them, as it does the payload (omitted: none).
 */
export interface SchedulerOptions<P, L extends string = string> {
  /** The payload of every job the scheduler admits. */
  readonly payload: P;
  /** What happens to runs missed while no worker fired (default `latest`: one run for the latest). */
  readonly missed?: MissedPolicy;
  /** The lane of its jobs ({@link EnqueueOptions.lane}; absent: the default lane): a tenant's cron job in the tenant's lane. */
  readonly lane?: CheckLane<L>;
  /** The priority of its jobs ({@link EnqueueOptions.priority}; 0, the default, is the most urgent). */
  readonly priority?: number;
  /** The handler time limit of its jobs, in ms ({@link EnqueueOptions.timeoutMs}). */
  readonly timeoutMs?: number;
}

/** A scheduler as `EchoMQ.schedulers` lists it. */
export interface SchedulerInfo<P> {
  /** Its name. */
  readonly name: string;
  /** When it runs (null when its stored spec is not one this client reads). */
  readonly spec: RepeatSpec | null;
  /** Its next run. */
  readonly nextRun: Date;
  /** The last run a tick fired, or null before the first. */
  readonly lastRun: Date | null;
  /** Jobs its ticks admitted so far. */
  readonly runs: number;
  /** Its missed-tick policy. */
  readonly missed: MissedPolicy;
  /** The payload of its jobs (undefined when the codec cannot decode it). */
  readonly payload: P | undefined;
  /** The lane of its jobs (`upsertScheduler`'s `lane`); undefined: the default lane. */
  readonly lane?: string;
  /** The priority of its jobs, when not 0. */
  readonly priority?: number;
  /** The handler time limit of its jobs in ms, when it has one. */
  readonly timeoutMs?: number;
}

/** Most due schedulers one firing reads. */
const FIRE_BATCH = 16;
/** A firer looks again at least this often (a new scheduler, an earlier spec), in ms. */
export const FIRE_POLL_MS = 1000;
/** The soonest a firer looks again, in ms. */
const FIRE_MIN_MS = 5;

function assertSchedulerName(name: unknown, what: string): asserts name is string {
  if (!validName(name)) {
    throw new SchedulerOptionError(
      "name",
      `${what}: name must be 1 to 1024 bytes without "{", "}" or NUL (the name rule), got ${JSON.stringify(name)}`,
    );
  }
}

/** See `EchoMQ.upsertScheduler`: the next run in force. */
export async function upsertScheduler<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  name: string,
  spec: RepeatSpec,
  opts: SchedulerOptions<P>,
): Promise<Date> {
  assertSchedulerName(name, "upsertScheduler");
  const r = repeat(spec);
  if (opts === null || typeof opts !== "object" || !("payload" in opts)) {
    throw new SchedulerOptionError(
      "payload",
      "upsertScheduler: options must be { payload, missed?, lane?, priority?, timeoutMs? }",
    );
  }
  const max = maxMissed(opts.missed);
  // its jobs' options, checked and encoded as enqueue's
  const options = jobOptions("upsertScheduler", { lane: opts.lane, priority: opts.priority, timeoutMs: opts.timeoutMs });
  const payload = toWire(encodePayload(c.codec, opts.payload, "upsertScheduler"));
  // the first run from the server's clock, as every later one is (fireDue): a caller whose clock
  // is off would otherwise move it (a user whose ACL refuses TIME: this machine's)
  const time = await c.conn.command(["TIME"], ks.meta).catch((e: unknown) => {
    if (e instanceof WireError) return null;
    throw e;
  });
  const now = time === null ? Date.now() : timeMs(time);
  const next = r.after(now, now);
  const call = wireCall("SCHEDULER", ks, { name, spec: r.text, next_ms: next, max_missed: max, opts: options, payload });
  return new Date(Number(await c.impl.call(call)));
}

/** See `EchoMQ.removeScheduler`. */
export async function removeScheduler<P>(c: ClientContext<P>, ks: Keyspace, name: string): Promise<boolean> {
  assertSchedulerName(name, "removeScheduler");
  return (await c.impl.call(wireCall("UNSCHEDULE", ks, { name }))) === 1;
}

const UTF8 = new TextDecoder();
const text = (m: Map<string, Uint8Array>, f: string): string | undefined => {
  const v = m.get(f);
  return v === undefined ? undefined : UTF8.decode(v);
};

/** See `EchoMQ.schedulers`: every scheduler of the queue, by next run. */
export async function schedulers<P>(c: ClientContext<P>, ks: Keyspace): Promise<Array<SchedulerInfo<P>>> {
  const names = ((await c.conn.command(["ZRANGE", ks.schedulers, "0", "-1"], ks.meta)) as unknown[]).map(String);
  if (names.length === 0) return [];
  const rows = await c.conn.batch(names.map((n) => ["HGETALL", ks.scheduler(n)]), ks.meta, false, 0, Decoder.Bytes);
  return names.flatMap((name, i) => {
    const r = rows[i];
    if (r instanceof Error || r === undefined) return [];
    const m = fields(r);
    const next = text(m, SCHED.next_ms);
    if (next === undefined) return []; // removed in between
    const last = text(m, SCHED.last_ms);
    let payload: P | undefined;
    try {
      payload = c.codec.decode(m.get(SCHED.payload) ?? new Uint8Array());
    } catch {
      payload = undefined;
    }
    return [{
      name,
      spec: fromText(text(m, SCHED.spec) ?? "")?.spec ?? null,
      nextRun: new Date(Number(next)),
      lastRun: last === undefined ? null : new Date(Number(last)),
      runs: Number(text(m, SCHED.runs) ?? "0"),
      missed: policyOf(Number(text(m, SCHED.max_missed) ?? "1")),
      payload,
      ...jobsOptions(text(m, SCHED.opts)),
    }];
  });
}

/** The options a scheduler's jobs carry (its stored `opts`), as `SchedulerInfo` shows them: only those set. */
function jobsOptions(stored: string | undefined): Pick<SchedulerInfo<unknown>, "lane" | "priority" | "timeoutMs"> {
  const o = decodeOptions(stored ?? "");
  const out: { lane?: string; priority?: number; timeoutMs?: number } = {};
  if (o.lane !== undefined) out.lane = o.lane;
  if (o.priority !== undefined && Number(o.priority) !== 0) out.priority = Number(o.priority);
  if (o.timeout_ms !== undefined) out.timeoutMs = Number(o.timeout_ms);
  return out;
}

/** The server's time in ms from a `TIME` reply. */
function timeMs(reply: unknown): number {
  const [s, us] = reply as [unknown, unknown];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

/**
 * Fires the queue's due schedulers once (a worker's step): one TICK per due scheduler, each
 * naming the next run it read. Its reads are sent again while redirected ({@link readBatch}): a
 * failover is not an error to report; any other refusal is. Returns how long to wait before looking again, in ms: until the
 * earliest next run, at most {@link FIRE_POLL_MS}; `idleMs` when the queue has no scheduler (an
 * idle worker's cadence: a queue without schedulers costs two reads per `idleMs`).
 */
export async function fireDue<P>(c: ClientContext<P>, ks: Keyspace, idleMs: number): Promise<number> {
  // (reads: sent again while redirected — a failover, a resharding — rather than reported)
  const [time, head] = await readBatch(() => c.conn.batch([["TIME"], ["ZRANGE", ks.schedulers, "0", String(FIRE_BATCH - 1), "WITHSCORES"]], ks.meta));
  if (head instanceof Error) throw head;
  // the server's clock (a user whose ACL refuses TIME: this machine's)
  const now = time instanceof Error ? Date.now() : timeMs(time);
  const entries = scored(head!);
  if (entries.length === 0) return idleMs;
  const due = entries.filter(([, score]) => score <= now).map(([name]) => name);
  let soonest = entries.find(([, score]) => score > now)?.[1] ?? Infinity;
  if (due.length > 0) {
    const rows = await readBatch(() => c.conn.batch(due.map((n) => ["HGETALL", ks.scheduler(n)]), ks.meta));
    for (const [i, name] of due.entries()) {
      const r = rows[i];
      if (r instanceof Error || r === undefined) continue;
      const m = fields(r);
      const nextMs = Number(text(m, SCHED.next_ms));
      const rep = fromText(text(m, SCHED.spec) ?? "");
      if (rep === null || !Number.isSafeInteger(nextMs)) continue; // not a spec this client reads
      const f = firing(rep, nextMs, now, Number(text(m, SCHED.max_missed) ?? "1"));
      if (f === null) continue;
      const groups = f.ticks.map((t) => ({ id: c.id(), tick_ms: t }));
      await c.impl.call(wireCall("TICK", ks, { name, expected_ms: nextMs, next_ms: f.next }, groups));
      soonest = Math.min(soonest, f.next);
    }
  }
  return Math.max(FIRE_MIN_MS, Math.min(FIRE_POLL_MS, soonest - now));
}
