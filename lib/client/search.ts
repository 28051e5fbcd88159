/**
 * Finding a queue's jobs (issue 37.4): by id, by deduplication key (the queue's `dedup` hash names
 * the holder: one read), by name and by a payload substring — the last two by a bounded scan of
 * the queue's jobs, state after state (pending in claim order, scheduled, active, dead, completed),
 * a page at a time, at most `scan` rows per call (default 1,000, at most 10,000). The answer says
 * how many rows it scanned and, when it stopped before the end, a cursor to go on from; jobs that
 * move between states meanwhile may be seen twice or missed (a search, not a snapshot).
 *
 * @module
 */
import { isJobId, type Keyspace } from "../keyspace/mod.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import type { JobInfo, JobState } from "./info.ts";
import { getJob, jobs } from "./inspect.ts";
import { integerIn, refuse } from "./options.ts";

/**
 * What to find. A string matches a job whose id, dedup key or name is it, or whose payload's JSON
 * text contains it; an object's given fields must all match (`payload`: a substring of the
 * payload's JSON text).
 */
export type FindQuery = string | { readonly id?: string; readonly dedupKey?: string; readonly name?: string; readonly payload?: string };

/** A search's answer: the jobs found, the rows scanned, and where to go on (`null`: the end). */
export interface FoundJobs<P> {
  /** The jobs that match, in the order the scan met them. */
  readonly jobs: ReadonlyArray<JobInfo<P>>;
  /** Rows this call read (at most its `scan`). */
  readonly scanned: number;
  /** Where the next call goes on (`{ cursor }`), or `null` when every state was scanned. */
  readonly cursor: string | null;
}

/** Options of `findJobs`. */
export interface FindOptions {
  /** Where a previous answer stopped (its `cursor`). */
  cursor?: string;
  /** The most rows this call scans (default 1,000, at most 10,000). */
  scan?: number;
  /** The most jobs this call returns (default 50, at most 1,000). */
  limit?: number;
}

/** The states a scan walks, in order. */
const ORDER: readonly JobState[] = ["pending", "scheduled", "active", "dead", "completed"];
/** Rows read per page of a scan. */
const PAGE = 200;

/** Whether job `j` matches `q` (the string form: any of id, dedup key, name, payload). */
function matches(j: JobInfo<unknown>, q: FindQuery): boolean {
  const text = (): string => (j.payloadError === undefined ? (JSON.stringify(j.payload) ?? "") : "");
  if (typeof q === "string") return j.id === q || j.dedupKey === q || j.name === q || text().includes(q);
  return (q.id === undefined || j.id === q.id) && (q.dedupKey === undefined || j.dedupKey === q.dedupKey) &&
    (q.name === undefined || j.name === q.name) && (q.payload === undefined || text().includes(q.payload));
}

/** The one job an id or a dedup key names, or null (no lookup: a scan is needed). */
async function lookup<P>(c: ClientContext<P>, ks: Keyspace, q: FindQuery): Promise<Array<JobInfo<P>> | null> {
  const id = typeof q === "string" ? (isJobId(q) ? q : undefined) : q.id;
  if (id !== undefined) {
    const j = isJobId(id) ? await getJob(c, ks, id) : null;
    return j !== null && matches(j, q) ? [j] : [];
  }
  if (typeof q !== "string" && q.dedupKey !== undefined) {
    const held = await c.conn.command(["HGET", ks.dedup, q.dedupKey], ks.meta);
    const holder = held === null ? "" : String(held).split(" ")[0]!;
    const j = isJobId(holder) ? await getJob(c, ks, holder) : null;
    return j !== null && matches(j, q) ? [j] : [];
  }
  return null;
}

/** See `EchoMQ.findJobs`. */
export async function findJobs<P>(c: ClientContext<P>, ks: Keyspace, q: FindQuery, opts: FindOptions = {}): Promise<FoundJobs<P>> {
  if (typeof q !== "string" && (q === null || typeof q !== "object")) throw new EchoMQError("options", "findJobs: the query must be a string or an object");
  if (typeof q === "string" ? q === "" : Object.values(q).every((v) => v === undefined || v === "")) {
    throw new EchoMQError("options", "findJobs: the query is empty");
  }
  const budget = integerIn("findJobs: scan", opts.scan ?? 1000, 1, 10_000, refuse("options"));
  const limit = integerIn("findJobs: limit", opts.limit ?? 50, 1, 1000, refuse("options"));
  const found = await lookup(c, ks, q);
  if (found !== null) return { jobs: found, scanned: found.length, cursor: null };
  const byKey: Array<JobInfo<P>> = [];
  // the string form: its dedup key's holder first (one read), then the scan
  if (typeof q === "string" && opts.cursor === undefined) {
    const hit = await lookup(c, ks, { dedupKey: q });
    if (hit !== null) byKey.push(...hit);
  }
  let [state, offset] = parseCursor(opts.cursor);
  const out: Array<JobInfo<P>> = [...byKey];
  let scanned = 0;
  while (state < ORDER.length && scanned < budget && out.length < limit) {
    const want = Math.min(PAGE, budget - scanned);
    const page = await jobs(c, ks, ORDER[state]!, { offset, limit: want });
    // row by row, so that a full answer stops where the cursor says (nothing skipped)
    let used = 0;
    for (const j of page) {
      used++;
      if (matches(j, q) && !out.some((o) => o.id === j.id)) out.push(j);
      if (out.length === limit) break;
    }
    scanned += used;
    if (used === page.length && page.length < want) [state, offset] = [state + 1, 0];
    else offset += used;
  }
  return { jobs: out, scanned, cursor: state < ORDER.length ? `${state}:${offset}` : null };
}

/** A cursor as `[state index, offset]`; a bad one is refused. */
function parseCursor(cursor: string | undefined): [number, number] {
  if (cursor === undefined) return [0, 0];
  const m = /^([0-4]):(\d{1,15})$/.exec(cursor);
  if (m === null) throw new EchoMQError("options", `findJobs: cursor ${JSON.stringify(cursor)} is not one a search answered`);
  return [Number(m[1]), Number(m[2])];
}
