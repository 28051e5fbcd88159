/**
 * The pages' routes: `GET /` (the queues; `/queues` too) and a queue's page, `/queues/<name>` (or
 * `/queues/?name=…` for the names a path segment cannot hold), all under the base path. Each page is HTML rendered afresh
 * from the client; one it cannot render is a problem page with the status `failure`
 * (api_errors.ts) gives. The scripts' routes are added by the caller (bundle.ts: they are built
 * once).
 *
 * @module
 */
import { type EchoMQ, JOB_EVENTS_SCAN } from "../client/mod.ts";
import { isJobId } from "../keyspace/mod.ts";
import { MAX_PAGE_SIZE } from "./json_api.ts";
import { answerWith, ApiError, queueName } from "./api_errors.ts";
import { baseTag, type PageOptions } from "./frame_html.ts";
import type { Route } from "./route_table.ts";
import { findHtml } from "./find_html.ts";
import { jobHtml } from "./job_html.ts";
import { queueHtml } from "./queue_html.ts";
import type { Discovery } from "./discovery.ts";
import { MAX_QUEUES_PAGE, queueExists, QUEUES_PAGE, queuesPage } from "./queue_rows.ts";
import { queuesHtml } from "./queues_html.ts";
import { esc, html } from "./responses.ts";
import type { Sampler } from "./sampler.ts";

/** A page saying why another could not be rendered, with a link back to the queues. */
function problem(options: PageOptions, status: number, text: string): Response {
  return html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8">${baseTag(options)}<title>EchoMQ — ${status}</title></head>` +
      `<body><main><h1>${status}</h1><p>${esc(text)}</p><p><a href="./">Queues</a></p></main></body></html>`,
    status,
  );
}

/** The name in `/queues/<name>` (one percent-encoded segment; a raw `/` is part of the name too). */
export function nameFromPath(path: string): string {
  try {
    return decodeURIComponent(path.slice("/queues/".length));
  } catch {
    throw new ApiError(400, "the queue name in the address is not percent-encoded text");
  }
}

/** A query parameter as a whole number from 0 to `max`; anything else is the default (undefined). */
function wholeParam(text: string | null, max: number): number | undefined {
  return text !== null && /^\d+$/.test(text) && +text <= max ? +text : undefined;
}

/** A queue page's `?limit=`: a whole number from 1 to {@link MAX_PAGE_SIZE}; anything else is the default (undefined). */
function pageLimit(request: Request): number | undefined {
  const n = wholeParam(new URL(request.url).searchParams.get("limit"), MAX_PAGE_SIZE);
  return n === 0 ? undefined : n;
}

/** The dashboard pages' routes. */
export function pageRoutes(mq: EchoMQ<unknown>, sampler: Sampler, discovery: Discovery, options: PageOptions = {}): Route[] {
  /** Renders a page: its HTML, or a problem page with the status `failure` gives. */
  const answerHtml = (render: () => Promise<string>): Promise<Response> =>
    answerWith(render, (page) => html(page), (status, text) => problem(options, status, text));
  const queues = (request: Request): Promise<Response> =>
    answerHtml(async () => {
      const query = new URL(request.url).searchParams;
      const offset = wholeParam(query.get("offset"), 1e9) ?? 0;
      const limit = wholeParam(query.get("limit"), MAX_QUEUES_PAGE) ?? QUEUES_PAGE;
      return queuesHtml(await queuesPage(mq, discovery, offset, limit), discovery.unreadable, options);
    });
  const queuePage = (request: Request, name: () => string | null): Promise<Response> =>
    answerHtml(async () => {
      const queue = queueName(name());
      const limit = pageLimit(request);
      const stats = await mq.stats(queue);
      sampler.record(queue, stats);
      if (queueExists(stats)) discovery.saw(queue);
      return queueHtml(queue, stats, { ...options, ...(limit ? { limit } : {}) });
    });
  return [
    { path: "/", handle: queues },
    {
      // `/job?q=<queue, percent-encoded>&id=<id>`: one job's page (the search form's target)
      path: "/job",
      handle: (request) =>
        answerHtml(async () => {
          const query = new URL(request.url).searchParams;
          let queue: string;
          try {
            queue = queueName(decodeURIComponent(query.get("q") ?? ""));
          } catch (e) {
            throw e instanceof ApiError ? e : new ApiError(400, "q: the queue name, percent-encoded");
          }
          const id = (query.get("id") ?? "").trim();
          // anything else than a job id: a search (mq.findJobs, a bounded scan), its answer a page
          if (!isJobId(id)) {
            if (id === "") throw new ApiError(400, "id: a job id, or a name, dedup key or payload text to find");
            const cursor = query.get("cursor") ?? undefined;
            return findHtml(queue, id, await mq.findJobs(queue, id, cursor === undefined ? {} : { cursor }), options);
          }
          // its events: among the newest JOB_EVENTS_SCAN entries of the queue (one bounded read);
          // when they cannot be read (an ACL user without +xrevrange) the page says so, and shows the rest
          const events = mq.jobEvents(queue, id, { scan: JOB_EVENTS_SCAN }).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
          const logs = mq.jobLogs(queue, id).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
          const job = await mq.getJob(queue, id);
          if (job === null) throw new ApiError(404, `no job ${id} in ${JSON.stringify(queue)} (acked, removed, or never there)`);
          return jobHtml(job, Date.now(), options, await events, await logs);
        }),
    },
    { path: "/queues", handle: queues },
    {
      // `/queues/?name=…`: the names a path segment cannot hold ("", ".", "..").
      path: "/queues/",
      handle: (request) => {
        const name = new URL(request.url).searchParams.get("name");
        if (name === null) return new Response(null, { status: 303, headers: { location: "../" } });
        return queuePage(request, () => name);
      },
    },
    {
      path: "/queues/",
      prefix: true,
      handle: (request, path) => queuePage(request, () => nameFromPath(path)),
    },
  ];
}
