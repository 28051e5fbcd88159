/**
 * The dashboard's JSON API over a connected client: the queues with their counts, one queue's
 * counts, totals and throughput, pages of its jobs, its workers, its schedulers, its busiest lanes, and the
 * actions (requeue, run now, remove — one job or a selection, each one atomic verb call — cancel, pause, resume
 * (the queue or a lane), set the
 * limits (limit_api.ts), remove a scheduler). Reads only, except for the actions, which only POSTs from the page's own origin reach
 * (http.ts). Every answer is JSON with `<`, `>`, `&` and the line separators escaped
 * (responses.ts), so a queue name or payload can never read as markup, even to a sniffing client.
 *
 * @module
 */
import type { EchoMQ } from "../client/mod.ts";
import type {
  CancelReply,
  EventsReply,
  JobsReply,
  LanesReply,
  ListedState,
  LogsReply,
  PauseReply,
  QueueReply,
  QueuesReply,
  RemoveManyReply,
  RemoveReply,
  RemoveSchedulerReply,
  RequeueReply,
  RunReply,
  SchedulersReply,
} from "./json_api.ts";
import { DEFAULT_PAGE_SIZE, EVENTS_SHOWN, LANES_SHOWN, LISTED_STATES, MAX_PAGE_SIZE, MAX_SELECTION, queueHref } from "./json_api.ts";
import { answerWith, ApiError, queueName } from "./api_errors.ts";
import type { Route } from "./route_table.ts";
import { HOUR_MINUTES, minutesView } from "./minutes.ts";
import { percentiles } from "./latency_text.ts";
import type { Discovery } from "./discovery.ts";
import { countsView, jobRow, MAX_QUEUES_PAGE, queueExists, QUEUES_PAGE, queuesPage, totalsView } from "./queue_rows.ts";
import { json } from "./responses.ts";
import { body } from "./request_body.ts";
import { limitReply } from "./limit_api.ts";
import { existingQueue } from "./existing.ts";
import { schedulerRows } from "./scheduler_rows.ts";
import { isJobId, validName } from "../keyspace/mod.ts";
import type { Sampler } from "./sampler.ts";
import type { WorkerList } from "./workers.ts";

/** Runs a handler: its value as JSON, or `{ error }` with the status `failure` gives. */
function answerJson(run: () => Promise<unknown>): Promise<Response> {
  return answerWith(run, (value) => json(value), (status, error) => json({ error }, status));
}

function whole(text: string | null, name: string, min: number, max: number, fallback: number): number {
  if (text === null || text === "") return fallback;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min || n > max) throw new ApiError(400, `${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** One queue's counts, state, totals and throughput (and marks it watched). */
export async function queueReply(mq: EchoMQ<unknown>, sampler: Sampler, name: string, discovery?: Discovery): Promise<QueueReply> {
  const [s, [oldest], history, flows] = await Promise.all([
    mq.stats(name),
    mq.jobs(name, "pending", { limit: 1 }),
    mq.metrics(name, { minutes: HOUR_MINUTES }),
    mq.flowStats(name),
  ]);
  sampler.record(name, s);
  if (queueExists(s)) discovery?.saw(name);
  return {
    ...(oldest === undefined ? {} : { oldestPendingAt: oldest.createdAt }),
    name,
    href: queueHref(name),
    exists: queueExists(s),
    counts: countsView(s),
    paused: s.paused,
    limits: s.limits,
    totals: totalsView(s),
    rate: sampler.rate(name),
    minutes: minutesView(history, Date.now()),
    latency: { wait: percentiles(history.latency.wait), run: percentiles(history.latency.run) },
    flows,
  };
}

/** The query parameter `key` of `request`. */
function param(request: Request, key: string): string | null {
  return new URL(request.url).searchParams.get(key);
}

/** `GET /api/jobs?name=…&state=…&offset=…&limit=…`: one page of a state's jobs, and how many it holds. */
async function jobsReply(mq: EchoMQ<unknown>, request: Request): Promise<JobsReply> {
  const name = queueName(param(request, "name"));
  const state = param(request, "state") as ListedState;
  if (!LISTED_STATES.includes(state)) throw new ApiError(400, `state must be one of ${LISTED_STATES.join(", ")}`);
  const offset = whole(param(request, "offset"), "offset", 0, 1e9, 0);
  const limit = whole(param(request, "limit"), "limit", 1, MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE);
  const [jobs, counts] = await Promise.all([mq.jobs(name, state, { offset, limit }), mq.counts(name)]);
  const total = { active: counts.active, pending: counts.pending, scheduled: counts.schedule, dead: counts.dead, completed: counts.completed }[state];
  return { name, state, offset, limit, total, jobs: jobs.map(jobRow) };
}

/** The `ids` of a body: a list of 1 to {@link MAX_SELECTION} strings (one verb call). */
function selection(ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_SELECTION || !ids.every((id) => typeof id === "string")) {
    throw new ApiError(400, `ids: a list of 1 to ${MAX_SELECTION} job ids`);
  }
  return ids as string[];
}

/** `POST /api/requeue` (`{ name, ids? }`): the dead jobs `ids` names (each must be dead), or every one, back to pending. */
async function requeueReply(mq: EchoMQ<unknown>, request: Request): Promise<RequeueReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  if (b.ids === undefined) return { moved: await mq.requeueDead(name) };
  return { moved: await mq.requeueDead(name, { ids: selection(b.ids) }) };
}

/** `POST /api/run` (`{ name, ids }`): the scheduled jobs `ids` names (each must be scheduled: else 409, none moves) to pending now. */
async function runReply(mq: EchoMQ<unknown>, request: Request): Promise<RunReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  return { moved: await mq.runNow(name, selection(b.ids)) };
}

/** `POST /api/remove-many` (`{ name, ids }`): deletes those pending, scheduled or dead jobs (an active one: 409, none deleted). */
async function removeManyReply(mq: EchoMQ<unknown>, request: Request): Promise<RemoveManyReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  return { removed: await mq.removeMany(name, selection(b.ids)) };
}

/** `POST /api/cancel` (`{ name, id, reason? }`): cancels the job from anywhere (`mq.cancel`): a finished one is said so, not refused. */
async function cancelReply(mq: EchoMQ<unknown>, request: Request): Promise<CancelReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  if (typeof b.id !== "string") throw new ApiError(400, "id: a job id is required");
  if (b.reason !== undefined && typeof b.reason !== "string") throw new ApiError(400, "reason: a string");
  return { outcome: await mq.cancel(name, b.id, b.reason === undefined ? {} : { reason: b.reason }) };
}

/** `GET /api/logs?name=…&id=…`: the job's log and its state (a job page polls it while the job runs). */
async function logsReply(mq: EchoMQ<unknown>, request: Request): Promise<LogsReply> {
  const name = queueName(param(request, "name"));
  const id = param(request, "id") ?? "";
  if (!isJobId(id)) throw new ApiError(400, "id: a job id is required");
  const [logs, job] = await Promise.all([mq.jobLogs(name, id), mq.getJob(name, id)]);
  return { state: job?.state ?? null, lines: logs.lines, total: logs.total };
}

/** `POST /api/remove` (`{ name, id }`): deletes a pending, scheduled or dead job (an active one is refused: 409). */
async function removeReply(mq: EchoMQ<unknown>, request: Request): Promise<RemoveReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  if (typeof b.id !== "string") throw new ApiError(400, "id: a job id is required");
  return { removed: await mq.remove(name, b.id) };
}

/**
 * `POST /api/pause` and `POST /api/resume` (`{ name, lane? }`): whether the call changed the state,
 * and the state — the queue's, or with `lane` that lane's (its name the client's to check: a bad
 * one is a 400); a queue that does not exist is refused (404), not created (existing.ts).
 */
async function pauseReply(mq: EchoMQ<unknown>, verb: "pause" | "resume", request: Request): Promise<PauseReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  await existingQueue(mq, name);
  if (b.lane !== undefined) {
    const opts = { lane: b.lane as string };
    const changed = verb === "pause" ? await mq.pause(name, opts) : await mq.resume(name, opts);
    return { changed, paused: verb === "pause" };
  }
  const changed = verb === "pause" ? await mq.pause(name) : await mq.resume(name);
  return { changed, paused: await mq.isPaused(name) };
}

/** `POST /api/schedulers/remove` (`{ name, scheduler }`): removes queue `name`'s scheduler `scheduler`. */
async function removeSchedulerReply(mq: EchoMQ<unknown>, request: Request): Promise<RemoveSchedulerReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  if (!validName(b.scheduler)) throw new ApiError(400, "scheduler: a scheduler name is required (1 to 1024 bytes, no {, } or NUL)");
  return { removed: await mq.removeScheduler(name, b.scheduler) };
}

/** The API's routes. */
export function apiRoutes(mq: EchoMQ<unknown>, sampler: Sampler, discovery: Discovery, workers: WorkerList): Route[] {
  return [
    {
      path: "/api/queues",
      handle: (request) =>
        answerJson(async (): Promise<QueuesReply> => {
          const offset = whole(param(request, "offset"), "offset", 0, 1e9, 0);
          const limit = whole(param(request, "limit"), "limit", 1, MAX_QUEUES_PAGE, QUEUES_PAGE);
          const page = await queuesPage(mq, discovery, offset, limit);
          return { offset, limit, total: page.total, complete: page.complete, queues: page.rows, unreadable: discovery.unreadable };
        }),
    },
    {
      path: "/api/queue",
      handle: (request) => answerJson(() => queueReply(mq, sampler, queueName(param(request, "name")), discovery)),
    },
    { path: "/api/jobs", handle: (request) => answerJson(() => jobsReply(mq, request)) },
    { path: "/api/logs", handle: (request) => answerJson(() => logsReply(mq, request)) },
    { path: "/api/workers", handle: (request) => answerJson(() => workers.reply(queueName(param(request, "name")))) },
    {
      path: "/api/schedulers",
      handle: (request) =>
        answerJson(async (): Promise<SchedulersReply> => {
          const name = queueName(param(request, "name"));
          return { name, schedulers: await schedulerRows(mq, name) };
        }),
    },
    {
      path: "/api/lanes",
      handle: (request) =>
        answerJson(async (): Promise<LanesReply> => {
          const name = queueName(param(request, "name"));
          const { lanes, total } = await mq.lanes(name, { limit: LANES_SHOWN });
          return { name, total, lanes };
        }),
    },
    {
      path: "/api/events",
      handle: (request) =>
        answerJson(async (): Promise<EventsReply> => {
          const name = queueName(param(request, "name"));
          return { name, events: await mq.recentEvents(name, { limit: EVENTS_SHOWN }) };
        }),
    },
    { method: "POST", path: "/api/schedulers/remove", handle: (request) => answerJson(() => removeSchedulerReply(mq, request)) },
    { method: "POST", path: "/api/requeue", handle: (request) => answerJson(() => requeueReply(mq, request)) },
    { method: "POST", path: "/api/remove", handle: (request) => answerJson(() => removeReply(mq, request)) },
    { method: "POST", path: "/api/cancel", handle: (request) => answerJson(() => cancelReply(mq, request)) },
    { method: "POST", path: "/api/remove-many", handle: (request) => answerJson(() => removeManyReply(mq, request)) },
    { method: "POST", path: "/api/run", handle: (request) => answerJson(() => runReply(mq, request)) },
    { method: "POST", path: "/api/limit", handle: (request) => answerJson(() => limitReply(mq, request)) },
    ...(["pause", "resume"] as const).map((verb): Route => ({
      method: "POST",
      path: `/api/${verb}`,
      handle: (request) => answerJson(() => pauseReply(mq, verb, request)),
    })),
  ];
}
