/**
 * What the client reads, in the shapes the pages show (shared/json_api.ts): a queue's counts and
 * totals, its row of the Queues table, whether it exists, a job as a row; and every queue's stats
 * at once.
 *
 * @module
 */
import type { EchoMQ, JobInfo, QueueStats } from "../client/mod.ts";
import type { Discovery } from "./discovery.ts";
import { statsOf } from "./snapshot.ts";
import { type CountsView, jobHref, type JobRow, PAYLOAD_CHARS, queueHref, type QueueReply, type QueueRow, TOTALS } from "./json_api.ts";

/** The counts under the page's names. */
export function countsView(s: QueueStats): CountsView {
  return { pending: s.pending, active: s.active, scheduled: s.schedule, dead: s.dead, completed: s.completed };
}

/** The totals its `meta` keeps, in {@link TOTALS} order. */
export function totalsView(s: QueueStats): QueueReply["totals"] {
  return Object.fromEntries(TOTALS.map((k) => [k, s[k]])) as QueueReply["totals"];
}

/** Whether the queue exists: its `meta` was written by a first use, or it holds jobs. */
export function queueExists(s: QueueStats): boolean {
  return s.createdAt > 0 || s.pending + s.active + s.schedule + s.dead + s.completed > 0;
}

/** A queue's row of the Queues table. */
export function queueRow(name: string, s: QueueStats): QueueRow {
  return { name, href: queueHref(name), ...countsView(s), paused: s.paused };
}

/** Queues per page of the Queues table (`?limit=` changes it, up to {@link MAX_QUEUES_PAGE}). */
export const QUEUES_PAGE = 100;
/** The most queues a page of the Queues table holds. */
export const MAX_QUEUES_PAGE = 500;

/** One page of the Queues table: where it starts, how many queues there are, and its rows. */
export interface QueuesPage {
  readonly offset: number;
  readonly limit: number;
  readonly total: number;
  /** False while the first walk of the keyspace is still going: `total` is what it found so far. */
  readonly complete: boolean;
  readonly rows: QueueRow[];
}

/** The queues from `offset` (`limit` of them) in name order, each with its stats read now. */
export async function queuesPage(mq: EchoMQ<unknown>, discovery: Discovery, offset: number, limit: number): Promise<QueuesPage> {
  const names = await discovery.names();
  const page = await statsOf(mq, names.slice(offset, offset + limit));
  return { offset, limit, total: names.length, complete: discovery.complete, rows: page.map(([n, s]) => queueRow(n, s)) };
}

/** `text` cut to {@link PAYLOAD_CHARS} (an ellipsis says so). */
function cut(text: string): string {
  return text.length > PAYLOAD_CHARS ? `${text.slice(0, PAYLOAD_CHARS - 1)}…` : text;
}

/** A job as a row of the page: its payload as JSON text, cut to {@link PAYLOAD_CHARS}. */
export function jobRow(j: JobInfo<unknown>): JobRow {
  let payload: string;
  let payloadError = false;
  if (j.payloadError !== undefined) {
    payload = `cannot decode: ${j.payloadError}`;
    payloadError = true;
  } else {
    payload = JSON.stringify(j.payload) ?? String(j.payload);
  }
  payload = cut(payload);
  const row: Record<string, unknown> = { id: j.id, href: jobHref(j.queue, j.id), state: j.state, attempts: j.attempts, payload, createdAt: j.createdAt };
  if (payloadError) row.payloadError = true;
  if (j.name !== undefined) row.name = j.name;
  if (j.dueAt !== undefined) row.dueAt = j.dueAt;
  if (j.reason !== undefined) row.reason = j.reason;
  if (j.buriedAt !== undefined) row.buriedAt = j.buriedAt;
  if (j.leaseUntil !== undefined) row.leaseUntil = j.leaseUntil;
  if (j.token !== undefined) row.token = j.token;
  if (j.progress !== undefined) row.progress = cut(JSON.stringify(j.progress) ?? String(j.progress));
  if (j.finishedAt !== undefined) row.finishedAt = j.finishedAt;
  if (j.result !== undefined) row.result = cut(JSON.stringify(j.result) ?? String(j.result));
  return row as unknown as JobRow;
}
