/**
 * BullMQ's queue operations on EchoMQ's verbs (docs/design/bullmq.md, "Operations"): pause and
 * resume (PAUSE, RESUME), removal (REMOVE), draining and cleaning (pages of REMOVE), obliterate
 * (DROP), promotion (RUN), retrying failed jobs (REQUEUE), stalled recovery (REAP), a worker's
 * manual rate limit (PENALIZE), the queue's concurrency and rate (LIMIT), and BullMQ's queue meta.
 *
 * @module
 */
import { JobActiveError, JobNotDeadError, JobNotScheduledError } from "../client/errors.ts";
import { jobs } from "../client/inspect.ts";
import { fields, type JobInfo, type JobState } from "../client/info.ts";
import { limit, penalize } from "../client/limits.ts";
import { drop, moveDue, remove, removeMany, requeueDead, retain, runNow, setPaused } from "../client/operations.ts";
import { META } from "../wire/mod.ts";
import { emqIdOf } from "./ids.ts";
import { refuse, WHY } from "./refused.ts";
import { bullIdIn, bullIds, rowOf } from "./rows.ts";
import type { Scope } from "./scope.ts";
import { normalType } from "./states.ts";

const PAGE = 1000;

/** BullMQ's `pause`: PAUSE (claims hand out nothing; admissions go on) or RESUME. */
export async function pause(s: Scope, paused: boolean): Promise<void> {
  const { c, ks } = await s.on();
  await setPaused(c, paused ? "PAUSE" : "RESUME", ks);
}

/** BullMQ's `remove`: 1 when the job is gone, 0 when a worker holds it (EchoMQ refuses to remove an active job). */
export async function removeJob(s: Scope, bullId: string, removeChildren: boolean): Promise<number> {
  void removeChildren; // a job of this backend has no children (flows are refused)
  const { c, ks } = await s.on();
  if ((await rowOf(s, bullId)) === null) return 1;
  try {
    await remove(c, ks, emqIdOf(bullId));
    return 1;
  } catch (e) {
    if (e instanceof JobActiveError) return 0;
    throw e;
  }
}

/** Every job of EchoMQ state `state` passing `keep`, up to `most`, page by page. */
async function collect(s: Scope, state: JobState, keep: (j: JobInfo<unknown>) => boolean, most: number): Promise<JobInfo<unknown>[]> {
  const { c, ks } = await s.on();
  const out: JobInfo<unknown>[] = [];
  for (let offset = 0; out.length < most; offset += PAGE) {
    const page = await jobs(c, ks, state, { offset, limit: PAGE });
    for (const j of page) if (keep(j) && out.length < most) out.push(j);
    if (page.length < PAGE) break;
  }
  return out;
}

/** BullMQ's `drain`: removes the waiting (and prioritized) jobs, and with `delayed` the delayed ones. */
export async function drain(s: Scope, delayed: boolean): Promise<void> {
  const { c, ks } = await s.on();
  for (const state of delayed ? ["pending", "scheduled"] as const : ["pending"] as const) {
    for (;;) {
      const page = await jobs(c, ks, state, { limit: PAGE });
      if (page.length === 0) break;
      await removeMany(c, ks, page.map((j) => j.id));
    }
  }
}

/** BullMQ's `cleanJobsByState`: removes up to `most` jobs of `state` not newer than `before` (ms, inclusive as BullMQ's script); their BullMQ ids. */
export async function clean(s: Scope, state: string, before: number, most = Infinity): Promise<string[]> {
  const type = normalType(state);
  const limitBy = most > 0 ? most : Infinity;
  const pick: Record<string, [JobState, (j: JobInfo<unknown>) => boolean]> = {
    completed: ["completed", (j) => (j.finishedAt ?? j.createdAt) <= before],
    failed: ["dead", (j) => (j.buriedAt ?? j.createdAt) <= before],
    waiting: ["pending", (j) => !(j.priority! > 0) && j.createdAt <= before],
    prioritized: ["pending", (j) => j.priority! > 0 && j.createdAt <= before],
    delayed: ["scheduled", (j) => j.createdAt <= before],
  };
  if (type === "active") refuse("cleanJobsByState (active)", "EchoMQ refuses to remove an active job: its worker holds a fenced lease");
  const chosen = pick[type];
  if (chosen === undefined) return [];
  const found = await collect(s, chosen[0], chosen[1], limitBy);
  if (found.length === 0) return [];
  const { c, ks } = await s.on();
  // a clean: one `cleaned` entry (BullMQ's QueueEvents `cleaned`, its count) in place of `removed`
  await removeMany(c, ks, found.map((j) => j.id), { clean: true });
  return found.map(bullIdIn);
}

/**
 * BullMQ's `obliterate`: DROP, every key of the queue (its BullMQ counter in `meta` too). With a
 * job active it is refused: without `force` as BullMQ refuses, with it because DROP will not take a
 * job from the worker that holds its lease.
 */
export async function obliterate(s: Scope, force: boolean): Promise<number> {
  const { c, ks } = await s.on();
  const active = Number(await c.conn.command(["ZCARD", ks.active], ks.meta));
  if (active > 0 && !force) throw new Error("Cannot obliterate queue with active jobs");
  if (active > 0) refuse("obliterate({ force: true }) with active jobs", WHY.active);
  await drop(c, ks);
  return 0;
}

/** BullMQ's `promote`: RUN of one delayed job (BullMQ's error when it is not delayed). */
export async function promote(s: Scope, bullId: string): Promise<void> {
  const { c, ks } = await s.on();
  try {
    await runNow(c, ks, [emqIdOf(bullId)]);
  } catch (e) {
    if (e instanceof JobNotScheduledError) throw new Error(`Job ${bullId} is not in the delayed state. promote`);
    throw e;
  }
}

/** BullMQ's `promoteJobs`: RUN of up to `count` delayed jobs (earliest due first); 0 (the cursor) when done. */
export async function promoteJobs(s: Scope, count = PAGE): Promise<number> {
  const { c, ks } = await s.on();
  const page = await jobs(c, ks, "scheduled", { limit: Math.min(Math.max(1, count), PAGE) });
  if (page.length > 0) await runNow(c, ks, page.map((j) => j.id));
  return 0;
}

/**
 * BullMQ's `retryFinishedJob` of a failed job: REQUEUE back to pending, its attempts kept (BullMQ's
 * `attemptsStarted` and `attemptsMade` count on), or reset with `resetAttemptsMade` or
 * `resetAttemptsStarted` (EchoMQ counts one: claims).
 */
export async function retryFinished(s: Scope, bullId: string, state: "failed" | "completed", reset = false): Promise<void> {
  if (state === "completed") refuse("retryFinishedJob (completed)", WHY.completedBack);
  const { c, ks } = await s.on();
  try {
    await requeueDead(c, ks, { ids: [emqIdOf(bullId)], keepAttempts: !reset });
  } catch (e) {
    // REQUEUE refuses a job not dead, or gone, alike (writing nothing): BullMQ's reprocessJob texts tell them apart
    if (!(e instanceof JobNotDeadError)) throw e;
    if ((await rowOf(s, bullId)) === null) throw new Error(`Missing key for job ${bullId}. reprocessJob`);
    throw new Error(`Job ${bullId} is not in the failed state. reprocessJob`);
  }
}

/**
 * BullMQ's `retryFinishedJobs`: REQUEUE of up to `count` failed jobs (with `timestamp`: those failed
 * at or before it, as BullMQ's failed set is read by score); 0 (the cursor) when none is left.
 */
export async function retryFinishedMany(s: Scope, state: string, count = PAGE, timestamp?: number): Promise<number> {
  if (state === "completed") refuse("retryFinishedJobs (completed)", WHY.completedBack);
  const { c, ks } = await s.on();
  if (timestamp !== undefined && timestamp > 0) {
    // the oldest first, so they run in the order they failed (the dead set lists the newest first)
    const all = await collect(s, "dead", (j) => (j.buriedAt ?? j.createdAt) <= timestamp, Infinity);
    const due = all.sort((a, b) => (a.buriedAt ?? a.createdAt) - (b.buriedAt ?? b.createdAt)).slice(0, Math.max(1, count));
    if (due.length > 0) await requeueDead(c, ks, { ids: due.map((j) => j.id) });
    return due.length >= count ? 1 : 0;
  }
  const moved = await requeueDead(c, ks, { limit: Math.max(1, count) });
  return moved >= count ? 1 : 0;
}

/** BullMQ's `moveStalledJobsToWait`: REAP of the jobs whose lease ran out; their BullMQ ids. */
export async function reapStalled(s: Scope): Promise<string[]> {
  const { c, ks } = await s.on();
  const expired = ((await c.conn.command(["ZRANGE", ks.active, "0", String(Date.now()), "BYSCORE", "LIMIT", "0", String(PAGE)], ks.meta)) as unknown[])
    .map(String);
  if (expired.length === 0) return [];
  await moveDue(c, "REAP", ks, PAGE);
  const names = await bullIds(s, expired);
  return expired.map((id) => names.get(id) ?? id);
}

/** BullMQ's `setRateLimit` (a worker's `rateLimit(ms)`): PENALIZE, the queue hands out nothing for `ms`. */
export async function setRateLimit(s: Scope, ms: number): Promise<void> {
  const { c, ks } = await s.on();
  if (ms > 0) await penalize(c, ks, Math.round(ms));
}

/**
 * A worker's `limiter` (`{ max, duration }`): the queue's rate limit, LIMIT — `max` claims per
 * `duration` ms, at most `max` at once — which every claim of every worker obeys on the server.
 */
export async function setLimiter(s: Scope, limiter: { max: number; duration: number }): Promise<void> {
  const { c, ks } = await s.on();
  await limit(c, ks, { rate: { max: limiter.max, perMs: limiter.duration, burst: limiter.max } });
}

/** BullMQ's meta fields kept in EchoMQ's `meta`, each under this prefix (read by nothing but this backend). */
export const META_PREFIX = "bullmq:";

/**
 * BullMQ's `setQueueMeta`: the fields kept in `meta` under {@link META_PREFIX}; `concurrency` (its
 * `setGlobalConcurrency`) and `max` with `duration` (`setGlobalRateLimit`) are also the queue's
 * LIMIT, which every claim obeys, and `opts.maxLenEvents` its events' bound (RETAIN).
 */
export async function setMeta(s: Scope, values: Record<string, string | number>): Promise<number> {
  const { c, ks } = await s.on();
  const entries = Object.entries(values);
  if (entries.length === 0) return 0;
  const set = Number(await c.conn.command(["HSET", ks.meta, ...entries.flatMap(([k, v]) => [META_PREFIX + k, String(v)])], ks.meta));
  if (values.concurrency !== undefined) await limit(c, ks, { concurrency: Number(values.concurrency) || null });
  if (values.max !== undefined && values.duration !== undefined) {
    const max = Number(values.max);
    await limit(c, ks, { rate: max > 0 ? { max, perMs: Number(values.duration), burst: max } : null });
  }
  if (values["opts.maxLenEvents"] !== undefined) await retain(c, ks, { eventsMax: Number(values["opts.maxLenEvents"]) });
  return set;
}

/** BullMQ's `getQueueMetaFields`: `paused` is EchoMQ's own (PAUSE), the others BullMQ's as it set them. */
export async function getMeta(s: Scope, fields: readonly string[]): Promise<(string | null)[]> {
  const { c, ks } = await s.on();
  if (fields.length === 0) return [];
  const names = fields.map((f) => (f === "paused" ? META.paused : META_PREFIX + f));
  const reply = (await c.conn.command(["HMGET", ks.meta, ...names], ks.meta)) as unknown[];
  return reply.map((v) => (v === null || v === undefined ? null : String(v)));
}

/** BullMQ's `getQueueMeta`: every BullMQ field, and `paused` when the queue is paused. */
export async function getAllMeta(s: Scope): Promise<Record<string, string>> {
  const { c, ks } = await s.on();
  const out: Record<string, string> = {};
  const text = new TextDecoder();
  const pairs = [...fields(await c.conn.command(["HGETALL", ks.meta], ks.meta))].map(([k, v]) => [k, text.decode(v)] as const);
  for (const [k, v] of pairs) {
    if (k.startsWith(META_PREFIX)) out[k.slice(META_PREFIX.length)] = v;
    else if (k === META.paused) out.paused = v;
  }
  return out;
}

/** BullMQ's `removeQueueMetaFields`: the fields deleted (and the limits they set let go). */
export async function removeMeta(s: Scope, fields: readonly string[]): Promise<number> {
  const { c, ks } = await s.on();
  if (fields.length === 0) return 0;
  const n = Number(await c.conn.command(["HDEL", ks.meta, ...fields.map((f) => META_PREFIX + f)], ks.meta));
  if (fields.includes("concurrency")) await limit(c, ks, { concurrency: null });
  if (fields.includes("max")) await limit(c, ks, { rate: null });
  return n;
}
