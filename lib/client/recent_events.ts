/**
 * Reading the newest entries of a queue's events stream once (one `XREVRANGE`, never a wait): the
 * queue's latest events ({@link recentEvents}: the dashboard's events tail), and one job's events
 * among the newest entries ({@link jobEvents}: a job's page). Items as the events reader yields
 * them (events.ts's {@link entryItems}), newest first.
 *
 * @module
 */
import type { JobId, Keyspace } from "../keyspace/mod.ts";
import type { Connection } from "./connection.ts";
import { entryItems, type QueueEvent, type QueueEventItem, streamEntries, type StreamEntry } from "./events.ts";

/** How many of the newest entries `jobEvents` searches by default. */
export const JOB_EVENTS_SCAN = 2000;
/** The most entries `jobEvents` searches. */
export const MAX_JOB_EVENTS_SCAN = 10_000;

/** The newest `count` entries of `ks`'s stream, newest first. */
async function newestEntries(conn: Connection, ks: Keyspace, count: number): Promise<StreamEntry[]> {
  return streamEntries(await conn.command(["XREVRANGE", ks.events, "+", "-", "COUNT", String(count)], ks.meta));
}

/**
 * The latest `limit` events of `ks`'s stream, newest first: one `XREVRANGE` (never a wait), its
 * entries split into items and cut at `limit` items.
 */
export async function recentEvents(conn: Connection, ks: Keyspace, limit: number): Promise<QueueEventItem[]> {
  const out: QueueEventItem[] = [];
  for (const entry of await newestEntries(conn, ks, limit)) {
    for (const item of entryItems(entry).reverse()) {
      if (out.length === limit) return out;
      out.push(item);
    }
  }
  return out;
}

/** An event that names a job (`jobId`): every type but the queue's own (`paused`, `resumed`, `penalized`). */
export type JobEvent = Extract<QueueEvent, { readonly jobId: JobId }>;

/** True when `item` names a job. */
const namesJob = (item: QueueEvent): item is JobEvent => "jobId" in item;

/** One job's events among the newest entries of its queue's stream (`EchoMQ.jobEvents`). */
export interface JobEvents {
  /**
   * The job's events, newest first: the items naming it (`jobId`), and the `deduplicated` items
   * of calls that folded into it (`into`).
   */
  readonly events: JobEvent[];
  /** How many entries were searched (the newest). */
  readonly searched: number;
  /** True when those are every entry the stream keeps: no older entry was left unsearched. */
  readonly complete: boolean;
}

/** True when `text`, ids separated by spaces, names `id`. */
const names = (text: string | undefined, id: string): boolean => text !== undefined && ` ${text} `.includes(` ${id} `);

/**
 * Job `id`'s events among the newest `scan` entries of `ks`'s stream: one `XREVRANGE` of `scan` + 1
 * entries (the one more says whether older entries exist); only the entries whose `jobs` or `into`
 * name the job are split into items.
 */
export async function jobEvents(conn: Connection, ks: Keyspace, id: string, scan: number): Promise<JobEvents> {
  const entries = await newestEntries(conn, ks, scan + 1);
  const searched = entries.slice(0, scan);
  const events: JobEvent[] = [];
  for (const entry of searched) {
    if (!names(entry.fields.get("jobs"), id) && !names(entry.fields.get("into"), id)) continue;
    for (const item of entryItems(entry).reverse()) {
      if (namesJob(item) && (item.jobId === id || ("into" in item && item.into === id))) events.push(item);
    }
  }
  return { events, searched: searched.length, complete: entries.length <= scan };
}
