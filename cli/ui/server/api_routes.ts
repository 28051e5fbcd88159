/**
 * The dashboard's JSON API over a connected client: the queues with their counts, one queue's
 * counts, totals and throughput, pages of its jobs, and the three actions (requeue, pause,
 * resume). Reads only, except for the actions, which only POSTs from the page's own origin reach
 * (server.ts). Every answer is JSON with `<`, `>`, `&` and the line separators escaped, so a
 * queue name or payload can never read as markup, even to a sniffing client.
 *
 * @module
 */
import type { EchoMQ, JobInfo, QueueStats } from "../../client.ts";
import { validQueue } from "../../mod.ts";
import type {
  CountsView,
  JobRow,
  JobsReply,
  ListedState,
  PauseReply,
  QueueReply,
  QueueRow,
  QueuesReply,
  RatePoint,
  RequeueReply,
} from "./page/api.ts";
import { DEFAULT_PAGE_SIZE, LISTED_STATES, PAYLOAD_CHARS, queueHref } from "./page/api.ts";
import type { Route } from "./server.ts";

/** JSON text safe anywhere: `<`, `>`, `&`, U+2028 and U+2029 as `\u` escapes. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A JSON answer. */
export function json(value: unknown, status = 200): Response {
  return new Response(safeJson(value), { status, headers: { "content-type": "application/json; charset=utf-8" } });
}

/** A refusal the API answers with a status and `{ error }`. */
export class ApiError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** Says why, with its status. */
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** `name` as a queue name, or a 400 naming the rule it breaks. */
export function queueName(name: string | null | undefined): string {
  if (typeof name !== "string") throw new ApiError(400, "name: a queue name is required");
  if (!validQueue(name)) throw new ApiError(400, `${JSON.stringify(name)} is not a queue name (no {, } or NUL; well-formed text)`);
  return name;
}

/** The four counts under the page's names. */
export function countsView(s: QueueStats): CountsView {
  return { pending: s.pending, active: s.active, scheduled: s.schedule, dead: s.dead };
}

/** A queue's row of the Queues table. */
export function queueRow(name: string, s: QueueStats): QueueRow {
  return { name, href: queueHref(name), ...countsView(s), paused: s.paused };
}

/** Every queue's stats, read a few at a time; a queue that vanished between the scan and its read still has stats (zeros). */
export async function allStats(mq: EchoMQ<unknown>): Promise<Array<[string, QueueStats]>> {
  const names = await mq.queues();
  const out: Array<[string, QueueStats]> = [];
  for (let i = 0; i < names.length; i += 16) {
    const run = names.slice(i, i + 16);
    const stats = await Promise.all(run.map((n) => mq.stats(n)));
    run.forEach((n, j) => out.push([n, stats[j]!]));
  }
  return out;
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
  if (payload.length > PAYLOAD_CHARS) payload = `${payload.slice(0, PAYLOAD_CHARS - 1)}…`;
  const row: Record<string, unknown> = { id: j.id, state: j.state, attempts: j.attempts, payload, createdAt: j.createdAt };
  if (payloadError) row.payloadError = true;
  if (j.dueAt !== undefined) row.dueAt = j.dueAt;
  if (j.reason !== undefined) row.reason = j.reason;
  if (j.buriedAt !== undefined) row.buriedAt = j.buriedAt;
  return row as unknown as JobRow;
}

interface Series {
  samples: Array<{ t: number; acked: number }>;
  watchedAt: number;
}

/**
 * Samples the `acked` total of the queues a page watches (asked for within the last
 * `forgetMs`), every `everyMs`, keeping the last `keep` samples: the throughput sparkline.
 */
export class Sampler {
  readonly #mq: EchoMQ<unknown>;
  readonly #every: number;
  readonly #keep: number;
  readonly #forget: number;
  readonly #series = new Map<string, Series>();
  readonly #timer: ReturnType<typeof setInterval>;
  #busy = false;

  /** Starts sampling (nothing is read until a queue is watched). */
  constructor(mq: EchoMQ<unknown>, everyMs = 1000, keep = 60, forgetMs = 30_000) {
    this.#mq = mq;
    this.#every = everyMs;
    this.#keep = keep;
    this.#forget = forgetMs;
    this.#timer = setInterval(() => void this.#tick(), everyMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** The interval between samples, ms. */
  get everyMs(): number {
    return this.#every;
  }

  /** Marks `queue` watched (sampled from now on) and records `stats` if a sample is due. */
  record(queue: string, stats: QueueStats, now = Date.now()): void {
    let s = this.#series.get(queue);
    if (s === undefined) this.#series.set(queue, (s = { samples: [], watchedAt: now }));
    s.watchedAt = now;
    const last = s.samples[s.samples.length - 1];
    if (last !== undefined && now - last.t < this.#every / 2) return;
    s.samples.push({ t: now, acked: stats.acked });
    if (s.samples.length > this.#keep + 1) s.samples.splice(0, s.samples.length - this.#keep - 1);
  }

  /** `queue`'s acked jobs per second between consecutive samples, oldest first. */
  rate(queue: string): RatePoint[] {
    const s = this.#series.get(queue)?.samples ?? [];
    const out: RatePoint[] = [];
    for (let i = 1; i < s.length; i++) {
      const dt = (s[i]!.t - s[i - 1]!.t) / 1000;
      const d = s[i]!.acked - s[i - 1]!.acked; // below 0 when the queue was made anew
      out.push({ t: s[i]!.t, perSec: dt > 0 && d > 0 ? d / dt : 0 });
    }
    return out;
  }

  async #tick(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const now = Date.now();
      for (const [queue, s] of this.#series) {
        if (now - s.watchedAt > this.#forget) {
          this.#series.delete(queue);
          continue;
        }
        try {
          const stats = await this.#mq.stats(queue);
          const watchedAt = s.watchedAt;
          this.record(queue, stats);
          s.watchedAt = watchedAt; // sampling is not watching
        } catch {
          // the next tick tries again; the page shows the error when its own read fails
        }
      }
    } finally {
      this.#busy = false;
    }
  }

  /** Stops sampling. */
  close(): void {
    clearInterval(this.#timer);
  }
}

/**
 * An error as an answer's status and text: an {@link ApiError} as it says; the client's refusals
 * of the input (a name it refuses, a job that is not dead) as 400 and 409; the rest (the server
 * refused or did not answer) as 502.
 */
export function failure(e: unknown): { status: number; text: string } {
  if (e instanceof ApiError) return { status: e.status, text: e.message };
  const text = (e instanceof Error ? e.message : String(e)).split("\n")[0]!;
  const name = (e as { name?: unknown } | null)?.name;
  if (name === "KeyspaceError") return { status: 400, text };
  if (name === "JobNotDeadError") return { status: 409, text };
  return { status: 502, text: `the server refused or did not answer: ${text}` };
}

/** Runs a handler: its value as JSON, or `{ error }` with the status {@link failure} gives. */
async function answer(run: () => Promise<unknown>): Promise<Response> {
  try {
    return json(await run());
  } catch (e) {
    const f = failure(e);
    return json({ error: f.text }, f.status);
  }
}

function whole(text: string | null, name: string, min: number, max: number, fallback: number): number {
  if (text === null || text === "") return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new ApiError(400, `${name} must be an integer from ${min} to ${max}`);
  return n;
}

async function body(request: Request): Promise<Record<string, unknown>> {
  if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
    throw new ApiError(415, "the body must be JSON (content-type: application/json)");
  }
  let value: unknown;
  try {
    value = await request.json();
  } catch {
    throw new ApiError(400, "the body is not JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ApiError(400, "the body must be a JSON object");
  return value as Record<string, unknown>;
}

/** One queue's counts, state, totals and throughput (and marks it watched). */
export async function queueReply(mq: EchoMQ<unknown>, sampler: Sampler, name: string): Promise<QueueReply> {
  const s = await mq.stats(name);
  sampler.record(name, s);
  return {
    name,
    href: queueHref(name),
    exists: s.createdAt > 0 || s.pending + s.active + s.schedule + s.dead > 0,
    counts: countsView(s),
    paused: s.paused,
    totals: { enqueued: s.enqueued, acked: s.acked, retried: s.retried, buried: s.buried, claims: s.claims },
    rate: sampler.rate(name),
  };
}

/** The API's routes. */
export function apiRoutes(mq: EchoMQ<unknown>, sampler: Sampler): Route[] {
  const param = (request: Request, key: string): string | null => new URL(request.url).searchParams.get(key);
  return [
    {
      path: "/api/queues",
      handle: () =>
        answer(async (): Promise<QueuesReply> => ({ queues: (await allStats(mq)).map(([n, s]) => queueRow(n, s)) })),
    },
    {
      path: "/api/queue",
      handle: (request) => answer(() => queueReply(mq, sampler, queueName(param(request, "name")))),
    },
    {
      path: "/api/jobs",
      handle: (request) =>
        answer(async (): Promise<JobsReply> => {
          const name = queueName(param(request, "name"));
          const state = param(request, "state") as ListedState;
          if (!LISTED_STATES.includes(state)) throw new ApiError(400, `state must be one of ${LISTED_STATES.join(", ")}`);
          const offset = whole(param(request, "offset"), "offset", 0, 1e9, 0);
          const limit = whole(param(request, "limit"), "limit", 1, 100, DEFAULT_PAGE_SIZE);
          const [jobs, counts] = await Promise.all([mq.jobs(name, state, { offset, limit }), mq.counts(name)]);
          const total = { pending: counts.pending, scheduled: counts.schedule, dead: counts.dead }[state];
          return { name, state, offset, limit, total, jobs: jobs.map(jobRow) };
        }),
    },
    {
      method: "POST",
      path: "/api/requeue",
      handle: (request) =>
        answer(async (): Promise<RequeueReply> => {
          const b = await body(request);
          const name = queueName(b.name as string);
          if (b.ids === undefined) return { moved: await mq.requeueDead(name) };
          if (!Array.isArray(b.ids) || b.ids.length > 1000 || !b.ids.every((id) => typeof id === "string")) {
            throw new ApiError(400, "ids: a list of at most 1000 job ids");
          }
          return { moved: await mq.requeueDead(name, { ids: b.ids as string[] }) };
        }),
    },
    ...(["pause", "resume"] as const).map((verb): Route => ({
      method: "POST",
      path: `/api/${verb}`,
      handle: (request) =>
        answer(async (): Promise<PauseReply> => {
          const name = queueName((await body(request)).name as string);
          const changed = verb === "pause" ? await mq.pause(name) : await mq.resume(name);
          return { changed, paused: await mq.isPaused(name) };
        }),
    })),
  ];
}
