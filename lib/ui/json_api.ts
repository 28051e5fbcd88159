/**
 * The dashboard's JSON API as both halves see it (the server answers it in
 * `api_routes.ts`, the pages' script reads it in `browser/`): the shapes of its answers and
 * the few rules both follow — the states a page lists and counts, page sizes, where a queue's page
 * is. No DOM, no client.
 *
 * @module
 */
import type { LaneInfo } from "../client/lanes.ts";
import type { QueueLimits } from "../client/limits.ts";
import type { FlowStats } from "../client/flow_stats.ts";
import type { QueueEventItem } from "../client/events.ts";
import type { Percentiles } from "./latency_text.ts";

/** The job states a queue page lists. */
export const LISTED_STATES = ["active", "pending", "scheduled", "dead", "completed"] as const;

/** One of {@link LISTED_STATES}. */
export type ListedState = (typeof LISTED_STATES)[number];

/** The counts of a queue, in the order the pages show them. */
export const COUNTED_STATES = ["pending", "active", "scheduled", "dead", "completed"] as const;

/** A queue's counts, named as the page shows them. */
export interface CountsView {
  readonly pending: number;
  readonly active: number;
  readonly scheduled: number;
  readonly dead: number;
  /** Completed jobs kept with their results (the queue's retention). */
  readonly completed: number;
}

/** One row of the Queues table (`GET /api/queues`). */
export interface QueueRow extends CountsView {
  /** The queue's name, as the server has it. */
  readonly name: string;
  /** Its page ({@link queueHref}). */
  readonly href: string;
  readonly paused: boolean;
}

/** `GET /api/queues?offset=…&limit=…`: one page of the queues, in name order. */
export interface QueuesReply {
  readonly offset: number;
  readonly limit: number;
  /** How many queues discovery knows. */
  readonly total: number;
  /** False while the first walk of the keyspace is still going (`total` is what it found so far). */
  readonly complete: boolean;
  readonly queues: readonly QueueRow[];
  /** `meta` keys whose name is not UTF-8 (no call can name them), escaped: `emq:{\xff}:meta`. */
  readonly unreadable: readonly string[];
}

/** The totals a queue's `meta` keeps, in the order the pages show them. */
export const TOTALS = ["enqueued", "acked", "retried", "buried", "claims"] as const;

/** One throughput sample: acked jobs per second over the interval that ended at `t` (ms). */
export interface RatePoint {
  readonly t: number;
  /** Jobs acked per second since the sample before. */
  readonly perSec: number;
  /** Failed attempts (retried or buried) per second since the sample before. */
  readonly failedPerSec: number;
}

/** One minute of a queue's history: what its totals moved in the minute that starts at `t` (ms). */
export interface MinutePoint {
  readonly t: number;
  /** Jobs acked in the minute. */
  readonly processed: number;
  /** Failed attempts (retried or buried) in the minute. */
  readonly failed: number;
}

/** A queue's last hour, per minute (`QueueReply.minutes`), from the history the server keeps (`mq.metrics`). */
export interface MinutesView {
  /** The window's first minute, ms since the epoch (the current minute's start − 59 min). */
  readonly start: number;
  /** When it was read (the dashboard's clock). */
  readonly now: number;
  /** Since when, within the window, the counts hold (the window's start; null: the queue keeps no history). */
  readonly since: number | null;
  /** Every minute of the window, oldest first, the current one (so far) last (a quiet minute counts zeros). */
  readonly points: readonly MinutePoint[];
}

/** `GET /api/queue?name=…`: a queue's counts, state, totals and throughput. */
export interface QueueReply {
  readonly name: string;
  readonly href: string;
  /** Whether the queue exists (its `meta` was written by a first use). */
  readonly exists: boolean;
  readonly counts: CountsView;
  readonly paused: boolean;
  /** Its limits (`mq.limit`) and park (`mq.penalize`). */
  readonly limits: QueueLimits;
  /** The totals its `meta` keeps ({@link TOTALS}). */
  readonly totals: { readonly [K in (typeof TOTALS)[number]]: number };
  /** Acked jobs per second, oldest first (the server samples a watched queue's totals). */
  readonly rate: readonly RatePoint[];
  /** Processed and failed per minute over the last hour (the history the server keeps). */
  readonly minutes: MinutesView;
  /** When the oldest pending job (the next to be claimed) was admitted; absent when none waits. */
  readonly oldestPendingAt?: number;
  /** Wait-time and run-time percentiles, from the histograms the server keeps (`mq.metrics`' latency). */
  readonly latency: { readonly wait: Percentiles; readonly run: Percentiles };
  /** Its flows: parents waiting for children, its outbox's length and relay lag (`mq.flowStats`). */
  readonly flows: FlowStats;
}

/** One job as the page lists it. Times are ms since the epoch. */
export interface JobRow {
  readonly id: string;
  /** Its page ({@link jobHref}). */
  readonly href: string;
  readonly state: string;
  readonly attempts: number;
  /** Its name (`enqueue`'s `name`), if it has one. */
  readonly name?: string;
  /** The payload as JSON text (cut at {@link PAYLOAD_CHARS}), or why it could not be decoded. */
  readonly payload: string;
  /** True when `payload` is a decoding error, not the payload. */
  readonly payloadError?: boolean;
  readonly createdAt: number;
  readonly dueAt?: number;
  readonly reason?: string;
  readonly buriedAt?: number;
  /** When its lease runs out (active; the server's clock). */
  readonly leaseUntil?: number;
  /** The lease token of its current or last claim. */
  readonly token?: number;
  /** Its progress as JSON text, as the handler reported it. */
  readonly progress?: string;
  /** When it completed (completed). */
  readonly finishedAt?: number;
  /** Its handler's result as JSON text (completed; cut at {@link PAYLOAD_CHARS}); absent when it has none. */
  readonly result?: string;
}

/** `POST /api/cancel` (`{ name, id, reason? }`): what `mq.cancel` did. */
export interface CancelReply {
  /** `cancelled` (it waited), `aborting` (it ran: its handler's signal aborts at its worker's next heartbeat), `finished` or `missing`. */
  readonly outcome: "cancelled" | "aborting" | "finished" | "missing";
}

/**
 * `GET /api/logs?name=…&id=…`: a job's log (`mq.jobLogs`: the newest 1000 lines, oldest first) and
 * its state, which a job page polls while the job runs.
 */
export interface LogsReply {
  /** The job's state now; null when its row is gone. */
  readonly state: string | null;
  /** The newest lines (at most 1000), oldest first. */
  readonly lines: readonly string[];
  /** Lines logged in all: more than `lines.length` when the oldest were written over. */
  readonly total: number;
}

/** `POST /api/remove` (`{ name, id }`): whether the job was deleted. */
export interface RemoveReply {
  readonly removed: boolean;
}

/** `GET /api/jobs?name=…&state=…&offset=…&limit=…`: one page of a state's jobs. */
export interface JobsReply {
  readonly name: string;
  readonly state: ListedState;
  readonly offset: number;
  readonly limit: number;
  /** How many jobs the state holds (its count when the page was read). */
  readonly total: number;
  readonly jobs: readonly JobRow[];
}

/** `POST /api/requeue` (`{ name, ids? }`: the ids given, or every dead job). */
export interface RequeueReply {
  readonly moved: number;
}

/** `POST /api/run` (`{ name, ids }`: scheduled jobs, each must be scheduled): how many moved to pending. */
export interface RunReply {
  readonly moved: number;
}

/** `POST /api/remove-many` (`{ name, ids }`: pending, scheduled, dead or completed jobs): how many were deleted. */
export interface RemoveManyReply {
  readonly removed: number;
}

/** The most ids one action on a selection names (one verb call: all of them or none). */
export const MAX_SELECTION = 1000;

/**
 * `POST /api/pause` and `POST /api/resume` (`{ name, lane? }`): the queue's claims, or with `lane`
 * that lane's alone.
 */
export interface PauseReply {
  /** Whether this call changed the state. */
  readonly changed: boolean;
  readonly paused: boolean;
}

/** `POST /api/limit` (`{ name, concurrency?, rate? }`, as `mq.limit` takes them): the limits now in force. */
export interface LimitReply {
  readonly limits: QueueLimits;
}

/** `GET /api/lanes?name=…`: a queue's busiest lanes (`mq.lanes`' first page), and how many it has. */
export interface LanesReply {
  readonly name: string;
  readonly total: number;
  readonly lanes: readonly LaneInfo[];
}

/** How many lanes a queue page shows: the busiest, by backlog. */
export const LANES_SHOWN = 10;

/** One scheduler as a queue page lists it. Times are ms since the epoch. */
export interface SchedulerRow {
  /** Its name, as the server has it. */
  readonly name: string;
  /** When it runs, in words (scheduler_words.ts): `cron "0 9 * * *" tz Europe/Paris`, `every 60000 ms`. */
  readonly spec: string;
  readonly nextRun: number;
  /** The last run a tick fired; absent before the first. */
  readonly lastRun?: number;
  /** Jobs its ticks admitted so far. */
  readonly runs: number;
  /** Its missed-run policy: `latest`, `skip` or `max N`. */
  readonly missed: string;
}

/** `GET /api/schedulers?name=…`: a queue's schedulers, by next run. */
export interface SchedulersReply {
  readonly name: string;
  readonly schedulers: readonly SchedulerRow[];
}

/** How many of a queue's latest events its page shows (`GET /api/events`). */
export const EVENTS_SHOWN = 50;

/** `GET /api/events?name=…`: a queue's latest events ({@link EVENTS_SHOWN}), newest first. */
export interface EventsReply {
  readonly name: string;
  readonly events: readonly QueueEventItem[];
}

/** `POST /api/schedulers/remove` (`{ name, scheduler }`): whether the scheduler was removed. */
export interface RemoveSchedulerReply {
  readonly removed: boolean;
}

/** One worker serving a queue, as its claim connection shows in `CLIENT LIST` (`EchoMQ.workers`). */
export interface WorkerRow {
  /** Its random id (`Worker.id`). */
  readonly id: string;
  /** Its machine's host name (empty when its runtime could not read it). */
  readonly host: string;
  readonly pid: number;
  /** Handlers it runs at once. */
  readonly concurrency: number;
  /** Its client's `clientName` (empty without one). */
  readonly app: string;
  /** When it started, ms since the epoch (its machine's clock). */
  readonly startedAt: number;
  /** How long its claim connection has been open, ms (whole seconds, the server's count). */
  readonly connectedMs: number;
  /** Since its claim connection's last command (a claim, or an idle worker's wait), ms (whole seconds). */
  readonly idleMs: number;
  /** Where the server sees it connect from (ip:port). */
  readonly addr: string;
}

/** `GET /api/workers?name=…`: the workers serving a queue now, oldest first. */
export interface WorkersReply {
  readonly name: string;
  readonly workers: readonly WorkerRow[];
  /** Why the list could not be read (the dashboard's user may not run `CLIENT LIST`); absent when it was. */
  readonly unavailable?: string;
}

/**
 * How far in the past a next run may lie before the page says no worker is firing it, ms: a
 * firing worker looks at least every second (FIRE_POLL_MS), so a run this late has no firer.
 */
export const OVERDUE_MS = 5000;

/** An error answer of the API (4xx, 5xx). */
export interface ErrorReply {
  readonly error: string;
}

/** How much of a payload's JSON a row carries. */
export const PAYLOAD_CHARS = 240;

/** Jobs per page of a queue page's tables (`?limit=` changes it, 1 to {@link MAX_PAGE_SIZE}). */
export const DEFAULT_PAGE_SIZE = 10;

/** The most jobs a page of a table holds. */
export const MAX_PAGE_SIZE = 100;

/**
 * The address of `name`'s page, relative to the dashboard's base: `queues/<name>` with the name
 * percent-encoded as one segment (`/` included), or `queues/?name=<name>` for the names a path
 * cannot hold as a segment (the empty name, `.` and `..`, which URL parsing would drop or resolve).
 */
export function queueHref(name: string): string {
  const enc = encodeURIComponent(name);
  return name === "" || name === "." || name === ".." ? `queues/?name=${enc}` : `queues/${enc}`;
}

/**
 * The address of job `id`'s page, relative to the dashboard's base: `job?q=…&id=…`, the queue
 * name percent-encoded twice — the search form's hidden field holds it percent-encoded once
 * (an attribute's CR would come back LF), and the form encodes that again.
 */
export function jobHref(queue: string, id: string): string {
  return `job?q=${encodeURIComponent(encodeURIComponent(queue))}&id=${encodeURIComponent(id)}`;
}
