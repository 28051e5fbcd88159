/**
 * Reading a queue without changing it: its counts and stats (read atomically), one job, a page of
 * jobs in one state, whether it is paused, and which queues exist (discovery). Plain reads of the
 * queue's keys, routed by its `meta`; none is a wire verb.
 *
 * @module
 */
import { Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import { assertJobId, type JobId, type Keyspace, splitQueueKey } from "../keyspace/mod.ts";
import { FAILURES_KEPT, META, ROW, ROW_FIELDS } from "../wire/mod.ts";
import type { ScanCursor } from "./connection.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import { fields, JOB_STATES, type JobInfo, jobInfo, type JobState, type QueueStats, queueStats, scored } from "./info.ts";
import type { Counts } from "./job.ts";
import { children } from "./flows.ts";
import { limitsOf } from "./limits.ts";
import { integerIn, refuse, wholeNumber } from "./options.ts";
import { retentionOf } from "./retention.ts";

/** Most jobs one page of `jobs` holds. */
const MAX_PAGE = 1000;

/** The counts of a queue, and the replies of `extra` reads sent in the same atomic batch. */
async function counted<P>(c: ClientContext<P>, ks: Keyspace, extra: string[][] = []): Promise<[Counts, GlideReturnType[]]> {
  const replies = await c.conn.batch(
    [
      ["LLEN", ks.pending],
      ["ZCARD", ks.active],
      ["ZCARD", ks.schedule],
      ["ZCARD", ks.dead],
      ["HGET", ks.meta, META.prioritized],
      ["ZCARD", ks.completed],
      ["ZCARD", ks.waiting],
      ...extra,
    ],
    ks.meta,
    true,
  );
  for (const r of replies) if (r instanceof Error) throw r;
  // pending counts the ready jobs of every priority: pending's own, and meta's prioritized
  const [ready, active, schedule, dead, prioritized, completed, waitingChildren] = replies.slice(0, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const pending = ready + (Number.isSafeInteger(prioritized) && prioritized > 0 ? prioritized : 0);
  return [{ pending, active, schedule, dead, completed, waitingChildren }, replies.slice(7) as GlideReturnType[]];
}

/** See `EchoMQ.counts`. */
export async function counts<P>(c: ClientContext<P>, ks: Keyspace): Promise<Counts> {
  return (await counted(c, ks))[0];
}

/** See `EchoMQ.stats`. */
export async function stats<P>(c: ClientContext<P>, ks: Keyspace): Promise<QueueStats> {
  const [totals, [meta, lanes]] = await counted(c, ks, [["HGETALL", ks.meta], ["ZCARD", ks.lanes]]);
  const values = fields(meta!);
  return queueStats(totals, values, {
    retention: retentionOf((field) => values.get(field)),
    limits: limitsOf(values, Date.now()),
    lanes: Number(lanes),
  });
}

/** See `EchoMQ.getJob`. */
export async function getJob<P>(c: ClientContext<P>, ks: Keyspace, id: string): Promise<JobInfo<P> | null> {
  assertJobId(id);
  const row = await c.conn.command(["HMGET", ks.job(id), ...JOB_FIELDS], ks.meta, Decoder.Bytes);
  const found = named(JOB_FIELDS, row as unknown[]);
  const info = jobInfo(ks.name, id, found, c.codec);
  // a flow's parent: its children's outcomes (a second read, of its row's child fields)
  const count = Number(new TextDecoder().decode(found.get(ROW.children)));
  return info !== null && count > 0 ? { ...info, children: await children(c, ks, id) } : info;
}

/** The row fields a page reads: all but the bounded lists (failed attempts' errors, the log: `jobLogs` reads it). */
const PAGE_FIELDS: readonly string[] = Object.keys(ROW_FIELDS).filter((f) => ![ROW.failure, ROW.failures, ROW.log, ROW.logs].includes(f as never));
/** The row fields `getJob` reads: a page's and the failed attempts' errors (up to 80 KiB; not the log, up to 1 MiB). */
const JOB_FIELDS: readonly string[] = [
  ...PAGE_FIELDS,
  ROW.failures,
  ...Array.from({ length: FAILURES_KEPT }, (_, k) => `${ROW.failure}:${k}`),
];

/** An HMGET reply as the fields it found. */
function named(names: readonly string[], values: unknown[]): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  names.forEach((n, i) => {
    const v = values[i];
    if (v !== null && v !== undefined) out.set(n, v instanceof Uint8Array ? v : new TextEncoder().encode(String(v)));
  });
  return out;
}

/** See `EchoMQ.jobs`. */
export async function jobs<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  state: JobState,
  page: { offset?: number; limit?: number },
): Promise<Array<JobInfo<P>>> {
  if (!JOB_STATES.includes(state)) {
    throw new EchoMQError("options", `jobs: state must be one of ${JOB_STATES.join(", ")}, got ${JSON.stringify(state)}`);
  }
  const offset = wholeNumber("jobs: offset", "options", page.offset ?? 0, 0);
  const limit = wholeNumber("jobs: limit", "options", page.limit ?? 100, 1);
  integerIn("jobs: limit", limit, 1, MAX_PAGE, refuse("options"));
  const end = String(offset + limit - 1);
  const ids = state === "pending" ? await readyPage(c, ks, offset, limit) : ((await c.conn.command(
    {
      scheduled: ["ZRANGE", ks.schedule, String(offset), end],
      active: ["ZRANGE", ks.active, String(offset), end],
      dead: ["ZRANGE", ks.dead, String(offset), end, "REV"],
      completed: ["ZRANGE", ks.completed, String(offset), end, "REV"],
      "waiting-children": ["ZRANGE", ks.waiting, String(offset), end],
    }[state],
    ks.meta,
  )) as unknown[]).map(String) as JobId[];
  if (ids.length === 0) return [];
  // the row's fields but its failed attempts' errors (up to 80 KiB a job: getJob reads them)
  const rows = await c.conn.batch(ids.map((id) => ["HMGET", ks.job(id), ...PAGE_FIELDS]), ks.meta, false, 0, Decoder.Bytes);
  return ids.flatMap((id, i) => {
    const r = rows[i];
    const info = r instanceof Error ? null : jobInfo(ks.name, id, named(PAGE_FIELDS, r as unknown[]), c.codec);
    return info === null ? [] : [info];
  });
}

/**
 * A page of the ready jobs in the order claims take them: pending from its tail, then each
 * priority of `levels:` (lowest first), its list from the tail. Two reads: the lists' lengths,
 * then the slices the page covers.
 */
async function readyPage<P>(c: ClientContext<P>, ks: Keyspace, offset: number, limit: number): Promise<JobId[]> {
  // the default lane first, then the other lanes by name (a laned queue: `lanes` scores each one's
  // ready jobs, so a lane wholly before the page is skipped unread)
  const [lanesReply] = await c.conn.batch([["ZRANGE", ks.lanes, "0", "-1", "WITHSCORES"]], ks.meta);
  const others = (lanesReply instanceof Error ? [] : scored(lanesReply as GlideReturnType))
    .filter(([name]) => name !== "").sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const reads: string[][] = [];
  let skip = offset;
  let want = limit;
  for (const [lane, backlog] of [["", Infinity] as [string, number], ...others]) {
    if (want === 0) break;
    if (skip >= backlog) {
      skip -= backlog;
      continue;
    }
    const levels = ((await c.conn.command(["ZRANGE", ks.levels(lane), "0", "-1"], ks.meta)) as unknown[]).map(String)
      .filter((m) => /^[1-9][0-9]{0,6}$/.test(m));
    const lists = [ks.ready(lane, 0), ...levels.map((p) => ks.ready(lane, Number(p)))];
    const lengths = (await c.conn.batch(lists.map((l) => ["LLEN", l]), ks.meta)).map((r) => (r instanceof Error ? 0 : Number(r)));
    for (const [i, list] of lists.entries()) {
      const len = lengths[i]!;
      if (want === 0) break;
      if (skip >= len) {
        skip -= len;
        continue;
      }
      const n = Math.min(want, len - skip);
      reads.push(["LRANGE", list, String(-(skip + n)), String(-(skip + 1))]);
      want -= n;
      skip = 0;
    }
  }
  if (reads.length === 0) return [];
  const slices = await c.conn.batch(reads, ks.meta);
  // each slice's tail is claimed first
  return slices.flatMap((r) => (r instanceof Error ? [] : (r as unknown[]).map(String).reverse())) as JobId[];
}

/** See `EchoMQ.isPaused`. */
export async function isPaused<P>(c: ClientContext<P>, ks: Keyspace): Promise<boolean> {
  return String(await c.conn.command(["HGET", ks.meta, META.paused], ks.meta)) === "1";
}

/** One step of queue discovery: the queues whose `meta` it found, and the keys it could not read as a name. */
export interface QueueScanPage {
  /** Queue names (a queue's `meta` on a cluster of several primaries can show more than once over a walk). */
  readonly names: string[];
  /**
   * `meta` keys whose name is not UTF-8 text, which no call of the client can name: each key with
   * every byte outside printable ASCII (and the backslash) written `\xNN`, e.g. `emq:{\xff}:meta`.
   */
  readonly unreadable: string[];
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** `bytes` as text, each byte outside printable ASCII (and `\`) as `\xNN`. */
export function escapeBytes(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`;
  return out;
}

/** The step of `keys` as a {@link QueueScanPage}. */
function scanPage(keys: readonly Uint8Array[]): QueueScanPage {
  const names: string[] = [];
  const unreadable: string[] = [];
  for (const bytes of keys) {
    let key: string;
    try {
      key = UTF8.decode(bytes);
    } catch {
      unreadable.push(escapeBytes(bytes));
      continue;
    }
    const parts = splitQueueKey(key);
    if (parts !== null && parts.type === "meta") names.push(parts.queue);
  }
  return { names, unreadable };
}

/** See `EchoMQ.scanQueues`: one SCAN step per page, `count` keys asked each. */
export async function* scanQueues<P>(c: ClientContext<P>, count: number): AsyncGenerator<QueueScanPage, void, undefined> {
  let cursor: ScanCursor | null = null;
  do {
    const step: { cursor: ScanCursor | null; keys: Uint8Array[] } = await c.conn.scanStep(cursor, "emq:{*}:meta", "hash", count);
    cursor = step.cursor;
    yield scanPage(step.keys);
  } while (cursor !== null);
}

/** See `EchoMQ.queues`: the names of every `meta` on every primary, sorted (names that are not UTF-8 left out). */
export async function queues<P>(c: ClientContext<P>): Promise<string[]> {
  const names = new Set<string>();
  for await (const page of scanQueues(c, 1000)) for (const n of page.names) names.add(n);
  return [...names].sort();
}
