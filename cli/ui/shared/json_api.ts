/**
 * The dashboard's JSON API as both halves see it (the server in `cli/ui/api.ts`, the page in
 * `dashboard.ts`): the shapes of its answers and the few rules both follow — where a queue's page
 * is, how a name with control characters is shown, the sparkline's geometry. No DOM, no client.
 *
 * @module
 */

/** The job states a queue page lists, in its order. */
export const LISTED_STATES = ["pending", "scheduled", "dead"] as const;

/** One of {@link LISTED_STATES}. */
export type ListedState = (typeof LISTED_STATES)[number];

/** A queue's four counts, named as the page shows them. */
export interface CountsView {
  readonly pending: number;
  readonly active: number;
  readonly scheduled: number;
  readonly dead: number;
}

/** One row of the Queues table (`GET /api/queues`). */
export interface QueueRow extends CountsView {
  /** The queue's name, as the server has it. */
  readonly name: string;
  /** Its page ({@link queueHref}). */
  readonly href: string;
  readonly paused: boolean;
}

/** `GET /api/queues`. */
export interface QueuesReply {
  readonly queues: readonly QueueRow[];
}

/** One throughput sample: acked jobs per second over the interval that ended at `t` (ms). */
export interface RatePoint {
  readonly t: number;
  readonly perSec: number;
}

/** `GET /api/queue?name=…`: a queue's counts, state, totals and throughput. */
export interface QueueReply {
  readonly name: string;
  readonly href: string;
  /** Whether the queue exists (its `meta` was written by a first use). */
  readonly exists: boolean;
  readonly counts: CountsView;
  readonly paused: boolean;
  /** The totals its `meta` keeps. */
  readonly totals: {
    readonly enqueued: number;
    readonly acked: number;
    readonly retried: number;
    readonly buried: number;
    readonly claims: number;
  };
  /** Acked jobs per second, oldest first (the server samples a watched queue's totals). */
  readonly rate: readonly RatePoint[];
}

/** One job as the page lists it. Times are ms since the epoch. */
export interface JobRow {
  readonly id: string;
  readonly state: string;
  readonly attempts: number;
  /** The payload as JSON text (cut at {@link PAYLOAD_CHARS}), or why it could not be decoded. */
  readonly payload: string;
  /** True when `payload` is a decoding error, not the payload. */
  readonly payloadError?: boolean;
  readonly createdAt: number;
  readonly dueAt?: number;
  readonly reason?: string;
  readonly buriedAt?: number;
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

/** `POST /api/pause` and `POST /api/resume` (`{ name }`). */
export interface PauseReply {
  /** Whether this call changed the state. */
  readonly changed: boolean;
  readonly paused: boolean;
}

/** An error answer of the API (4xx, 5xx). */
export interface ErrorReply {
  readonly error: string;
}

/** How much of a payload's JSON a row carries. */
export const PAYLOAD_CHARS = 240;

/** Jobs per page of a queue page's tables (`?limit=` changes it, 1 to 100). */
export const DEFAULT_PAGE_SIZE = 10;

/**
 * The path of `name`'s page: `/queues/<name>` with the name percent-encoded as one segment
 * (`/` included), or `/queues/?name=<name>` for the names a path cannot hold as a segment
 * (the empty name, `.` and `..`, which URL parsing would drop or resolve).
 */
export function queueHref(name: string): string {
  const enc = encodeURIComponent(name);
  return name === "" || name === "." || name === ".." ? `/queues/?name=${enc}` : `/queues/${enc}`;
}

/** Text with control characters (NUL, tab, newline, DEL, …) shown as escapes, as the key panel does. */
export function shown(s: string): string {
  let out = "";
  for (const ch of s) {
    const c = ch.charCodeAt(0);
    out += c === 0x7f ? "\\x7f" : c < 0x20 ? JSON.stringify(ch).slice(1, -1) : ch;
  }
  return out;
}

/** A throughput figure in words: `0`, `0.5`, `12`, `1.2k`. */
export function perSecText(x: number): string {
  if (x >= 10_000) return `${Math.round(x / 1000)}k`;
  if (x >= 1000) return `${(x / 1000).toFixed(1)}k`;
  if (x >= 10) return String(Math.round(x));
  return String(Math.round(x * 10) / 10);
}

/**
 * The sparkline's polyline points in a `width`×`height` box: time on x (the newest point at the
 * right edge; the last `span` ms, or all the samples when they cover less), rate on y from 0 up to
 * the peak. Empty for fewer than two points.
 */
export function sparkPoints(rate: readonly RatePoint[], width: number, height: number, span = 60_000): string {
  const end = rate.length === 0 ? 0 : rate[rate.length - 1]!.t;
  const shown = rate.filter((p) => p.t >= end - span);
  if (shown.length < 2) return "";
  const start = shown[0]!.t;
  const peak = Math.max(1, ...shown.map((p) => p.perSec));
  const pad = 2;
  return shown
    .map((p) => {
      const x = ((p.t - start) / (end - start)) * width;
      const y = height - pad - (p.perSec / peak) * (height - 2 * pad);
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(" ");
}

/** What the sparkline says in words (its accessible description). */
export function rateSummary(rate: readonly RatePoint[]): string {
  if (rate.length === 0) return "Throughput: no samples yet";
  const now = rate[rate.length - 1]!.perSec;
  const peak = Math.max(...rate.map((p) => p.perSec));
  const seconds = rate.length < 2 ? 0 : Math.round((rate[rate.length - 1]!.t - rate[0]!.t) / 1000);
  return `Throughput: ${perSecText(now)} acked/s now, peak ${perSecText(peak)}/s over the last ${seconds} s`;
}
