/**
 * BullMQ's getters on EchoMQ's keys (docs/design/bullmq.md, "Reads"): plain reads of the queue's
 * sets and rows, none a wire verb — a job's data and state, counts by state and by priority, the
 * ids of a state in BullMQ's order, a job's logs, a deduplication id's holder.
 *
 * @module
 */
import type { JobJson, JobState as BullJobState } from "bullmq";
import { streamEntries } from "../client/events.ts";
import { jobLogs } from "../client/logs.ts";
import { META } from "../wire/mod.ts";
import { emqIdOf } from "./ids.ts";
import { bullIds, rowJson, rowOf } from "./rows.ts";
import type { Scope } from "./scope.ts";
import { bullState, normalType } from "./states.ts";

/** BullMQ's `getJobData`: the job, or undefined when it is not there. */
export async function getJobData(s: Scope, bullId: string): Promise<JobJson | undefined> {
  const info = await rowOf(s, bullId);
  if (info === null) return undefined;
  const json = rowJson(info);
  const h = s.locks.peek(bullId);
  if (h !== undefined) json.processedOn = h.at;
  return json;
}

/** BullMQ's `getState`. */
export async function getState(s: Scope, bullId: string): Promise<BullJobState | "unknown"> {
  const info = await rowOf(s, bullId);
  if (info === null) return "unknown";
  return bullState(info.state, info.priority) as BullJobState;
}

/**
 * BullMQ's `isFinished`: 1 completed, 2 failed, 0 not finished, -1 no such job; with the value
 * (result or reason) when asked — for no such job BullMQ's text naming `key` (`Job.waitUntilFinished`
 * rejects with it).
 */
export async function isFinished(s: Scope, bullId: string, withValue: boolean | undefined, key: string): Promise<number | [number, string]> {
  const info = await rowOf(s, bullId);
  const status = info === null ? -1 : info.state === "completed" ? 1 : info.state === "dead" ? 2 : 0;
  if (!withValue) return status;
  const value = info === null
    ? `Missing key for job ${key}. isFinished`
    : status === 1
    ? JSON.stringify(info.result ?? null)
    : status === 2
    ? (info.reason ?? "")
    : "";
  return [status, value];
}

/** One read per state type of BullMQ, as the counts read them. */
function countCommand(type: string, ks: Awaited<ReturnType<Scope["on"]>>["ks"], delayedBefore?: number): string[] | null {
  switch (normalType(type)) {
    case "waiting":
      return ["LLEN", ks.pending];
    case "prioritized":
      return ["HGET", ks.meta, META.prioritized];
    case "active":
      return ["ZCARD", ks.active];
    case "delayed":
      return delayedBefore === undefined ? ["ZCARD", ks.schedule] : ["ZCOUNT", ks.schedule, "-inf", `(${delayedBefore}`];
    case "completed":
      return ["ZCARD", ks.completed];
    case "failed":
      return ["ZCARD", ks.dead];
    case "waiting-children":
      return ["ZCARD", ks.waiting];
    default:
      return null; // `paused`: EchoMQ keeps a paused queue's jobs where they are (pending)
  }
}

/** BullMQ's `getCounts`: one count per type, in order, read atomically. */
export async function getCounts(s: Scope, types: readonly string[], delayedBefore?: number): Promise<number[]> {
  const { c, ks } = await s.on();
  const commands = types.map((t) => countCommand(t, ks, delayedBefore));
  const sent = commands.filter((x): x is string[] => x !== null);
  const replies = sent.length === 0 ? [] : await c.conn.batch(sent, ks.meta, true);
  let at = 0;
  return commands.map((cmd) => {
    if (cmd === null) return 0;
    const r = replies[at++];
    if (r instanceof Error) throw r;
    const n = Number(r ?? 0);
    return Number.isSafeInteger(n) && n > 0 ? n : 0;
  });
}

/**
 * Whether the queue is drained as BullMQ's finishing script sees it (nothing waiting, prioritized or
 * active) with `lastId` still the newest entry of its events stream: one atomic read. A later entry
 * says more happened since: the read that holds it decides.
 */
export async function drainedAt(s: Scope, lastId: string): Promise<boolean> {
  const { c, ks } = await s.on();
  const types = ["waiting", "prioritized", "active"].map((t) => countCommand(t, ks)!);
  const replies = await c.conn.batch([...types, ["XREVRANGE", ks.events, "+", "-", "COUNT", "1"]], ks.meta, true);
  const last = replies[types.length];
  if (replies.some((r) => r instanceof Error) || !Array.isArray(last)) return false;
  const newest = streamEntries(last)[0]?.id;
  return newest === lastId && replies.slice(0, types.length).every((r) => Number(r ?? 0) === 0);
}

/** BullMQ's `getCountsPerPriority`: the ready jobs of each priority (0: the ones without). */
export async function getCountsPerPriority(s: Scope, priorities: readonly number[]): Promise<number[]> {
  const { c, ks } = await s.on();
  if (priorities.length === 0) return [];
  const replies = await c.conn.batch(priorities.map((p) => ["LLEN", ks.ready("", Math.max(0, Math.trunc(p)))]), ks.meta, true);
  return replies.map((r) => (r instanceof Error ? 0 : Number(r)));
}

/** `list`'s `start`…`end` (BullMQ's inclusive range, -1 the last). */
function range<T>(list: readonly T[], start: number, end: number): T[] {
  return list.slice(start, end < 0 ? list.length + end + 1 : end + 1);
}

/** The ready jobs of priority ≥ 1, in claim order (lowest priority number first, FIFO inside one). */
async function prioritized(s: Scope): Promise<string[]> {
  const { c, ks } = await s.on();
  const levels = ((await c.conn.command(["ZRANGE", ks.levels(""), "0", "-1"], ks.meta)) as unknown[]).map(String)
    .filter((p) => /^[1-9][0-9]{0,6}$/.test(p)).sort((a, b) => Number(a) - Number(b));
  if (levels.length === 0) return [];
  const lists = await c.conn.batch(levels.map((p) => ["LRANGE", ks.ready("", Number(p)), "0", "-1"]), ks.meta);
  return lists.flatMap((r) => (r instanceof Error ? [] : (r as unknown[]).map(String).reverse()));
}

/**
 * BullMQ's `getRanges`: per type, the ids in BullMQ's order — a list type (`wait`, `active`) newest
 * first (the getter reverses it for `asc`), a sorted one in the order asked.
 */
export async function getRanges(s: Scope, types: readonly string[], start: number, end: number, asc: boolean): Promise<string[][]> {
  const { c, ks } = await s.on();
  const out: string[][] = [];
  for (const type of types) {
    let ids: string[];
    const zrange = async (key: string): Promise<string[]> =>
      ((await c.conn.command(["ZRANGE", key, String(start), String(end), ...(asc ? [] : ["REV"])], ks.meta)) as unknown[]).map(String);
    switch (normalType(type)) {
      case "waiting":
        ids = ((await c.conn.command(["LRANGE", ks.pending, String(start), String(end)], ks.meta)) as unknown[]).map(String);
        break;
      case "active":
        ids = ((await c.conn.command(["ZRANGE", ks.active, String(start), String(end), "REV"], ks.meta)) as unknown[]).map(String);
        break;
      case "prioritized": {
        const all = await prioritized(s);
        ids = range(asc ? all : all.reverse(), start, end);
        break;
      }
      case "delayed":
        ids = await zrange(ks.schedule);
        break;
      case "completed":
        ids = await zrange(ks.completed);
        break;
      case "failed":
        ids = await zrange(ks.dead);
        break;
      case "waiting-children":
        ids = await zrange(ks.waiting);
        break;
      default:
        ids = [];
    }
    const names = await bullIds(s, ids);
    out.push(ids.map((id) => names.get(id) ?? id));
  }
  return out;
}

/** BullMQ's `getJobLogs`: a page of the job's lines (EchoMQ keeps the newest 1000) and how many it logged. */
export async function getJobLogs(s: Scope, bullId: string, start: number, end: number, asc: boolean): Promise<{ logs: string[]; count: number }> {
  const { c, ks } = await s.on();
  const logs = await jobLogs(c, ks, emqIdOf(bullId));
  const lines = asc ? [...logs.lines] : [...logs.lines].reverse();
  return { logs: range(lines, start, end), count: logs.total };
}

/** BullMQ's `getDeduplicationJobId`: the BullMQ id of the job holding `key`, or null. */
export async function getDeduplicationJobId(s: Scope, key: string): Promise<string | null> {
  const { c, ks } = await s.on();
  const held = await c.conn.command(["HGET", ks.dedup, key], ks.meta);
  if (held === null || held === undefined) return null;
  const id = String(held).split(" ")[0]!;
  return (await bullIds(s, [id])).get(id) ?? id;
}

/** BullMQ's `isMaxed`: the queue's concurrency limit (`setGlobalConcurrency`) is reached. */
export async function isMaxed(s: Scope): Promise<boolean> {
  const { c, ks } = await s.on();
  const [limit, active] = await c.conn.batch([["HGET", ks.meta, META.concurrency], ["ZCARD", ks.active]], ks.meta, true);
  const n = Number(limit ?? 0);
  return Number.isSafeInteger(n) && n > 0 && Number(active) >= n;
}

/** BullMQ's `getRateLimitTtl`: how long the queue stays parked (a worker's `rateLimit`); not parked: 0 with a max known, else -2 (BullMQ's PTTL of no key). */
export async function getRateLimitTtl(s: Scope, maxJobs?: number): Promise<number> {
  const { c, ks } = await s.on();
  const [parkedText, max] = (await c.conn.command(["HMGET", ks.meta, META.parked, "bullmq:max"], ks.meta)) as unknown[];
  const parked = Number(parkedText ?? 0);
  const left = Number.isFinite(parked) ? parked - Date.now() : 0;
  if (left > 0) return left;
  // not parked: BullMQ answers 0 when a max is known (given, or the queue's), else its limiter
  // key's PTTL — -2, the key being absent
  return (maxJobs ?? 0) > 0 || (max !== null && max !== undefined) ? 0 : -2;
}
