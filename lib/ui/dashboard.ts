/**
 * The dashboard as a handler to mount in any server: a web-standard `(Request) => Promise<Response>`
 * for `Deno.serve`, `Bun.serve`, Node (through {@link nodeListener}) or a framework's catch-all
 * route. It serves the queues (`<base>/`), each queue's page, their JSON API and `/metrics`, under
 * a base path, behind the checks of guard.ts (Host, token, Origin, read-only); every answer carries
 * the security headers.
 *
 * @module
 */
import type { EchoMQ } from "../client/mod.ts";
import { apiRoutes } from "./api_routes.ts";
import { DASHBOARD_SCRIPT } from "./dashboard_script.ts";
import { type GuardOptions, loopbackHost } from "./guard.ts";
import { routeHandler, SECURITY_HEADERS } from "./handler.ts";
import { metricsRoute } from "./metrics.ts";
import { pageRoutes } from "./page_routes.ts";
import { answer } from "./responses.ts";
import type { Route } from "./route_table.ts";
import { Sampler } from "./sampler.ts";
import { Discovery, type DiscoveryOptions } from "./discovery.ts";
import { type SnapshotOptions, StatsSnapshot } from "./snapshot.ts";
import { WorkerList } from "./workers.ts";

/** How {@link dashboard} answers and whom. */
export interface DashboardOptions {
  /** The path it is mounted under, e.g. `/admin/queues` (default: the root). Requests elsewhere are 404. */
  readonly basePath?: string;
  /**
   * A secret every request must carry: `Authorization: Bearer <token>`, or HTTP Basic with the
   * token as the password (browsers ask for it). Without one, only loopback `Host`s are answered.
   */
  readonly token?: string;
  /**
   * The origin users reach the dashboard at (`https://ops.example.com`, behind a proxy or a
   * tunnel): its host is the only `Host` answered, and actions must come from it. A public origin
   * that is not loopback needs a `token`.
   */
  readonly publicOrigin?: string;
  /** No action (requeue, pause, resume) is shown or answered. */
  readonly readOnly?: boolean;
  /** How often the pages poll, ms (default 1000). */
  readonly pollMs?: number;
  /** How often a watched queue's totals are sampled for its throughput, ms (default 1000). */
  readonly sampleMs?: number;
  /** How the queues are discovered in the background (the keyspace is walked at a bounded rate). */
  readonly discovery?: DiscoveryOptions;
  /** How `/metrics`' background snapshot of every queue's stats is taken. */
  readonly snapshot?: SnapshotOptions;
  /** Links the pages' navigation adds (`emq ui` adds its key panel). */
  readonly links?: ReadonlyArray<{ readonly href: string; readonly text: string }>;
  /** More routes under the base path, behind the same checks (`emq ui`'s key panel). */
  readonly routes?: readonly Route[];
}

/** A mounted dashboard: call it with a request; `close()` stops its background sampling. */
export interface Dashboard {
  /** Answers one request. */
  (request: Request): Promise<Response>;
  /** The base path it answers under, without a trailing `/` (`""` at the root). */
  readonly basePath: string;
  /** Stops the background reads: the sampler, discovery, the snapshot (the handler answers 503 afterwards). */
  close(): void;
}

/** The options checked and resolved; a bad one throws a `TypeError` naming it. */
export function resolveDashboard(options: DashboardOptions): GuardOptions & { basePath: string } {
  const basePath = (options.basePath ?? "").replace(/\/+$/, "");
  if (basePath !== "" && !/^\/[^?#\s]*$/.test(basePath)) throw new TypeError(`dashboard: basePath must start with / (got ${JSON.stringify(options.basePath)})`);
  const token = options.token ?? null;
  if (token !== null && (typeof token !== "string" || token.length < 8)) throw new TypeError("dashboard: token must be a string of at least 8 characters");
  let publicOrigin: string | null = null;
  if (options.publicOrigin !== undefined) {
    let url: URL;
    try {
      url = new URL(options.publicOrigin);
    } catch {
      throw new TypeError(`dashboard: publicOrigin must be an origin such as https://ops.example.com (got ${JSON.stringify(options.publicOrigin)})`);
    }
    if (!/^https?:$/.test(url.protocol) || url.origin !== options.publicOrigin.replace(/\/$/, "")) {
      throw new TypeError(
        `dashboard: publicOrigin must be an origin such as https://ops.example.com, without a path (got ${JSON.stringify(options.publicOrigin)})`,
      );
    }
    publicOrigin = url.origin;
    if (token === null && !loopbackHost(url.host)) throw new TypeError(`dashboard: a public origin off loopback (${url.origin}) needs a token`);
  }
  return { basePath, token, publicOrigin, readOnly: options.readOnly === true };
}

/**
 * The dashboard of `client`'s server as a request handler (a client of any payload type).
 *
 * @example
 * ```ts
 * import { EchoMQ } from "../../client.ts";
 * import { dashboard } from "../../ui.ts";
 *
 * const mq = await EchoMQ.connect({ url: "valkey://127.0.0.1:6379" });
 * const ui = dashboard(mq, { basePath: "/admin/queues", token: "a-long-random-secret" });
 * Deno.serve((request) => ui(request));
 * ```
 */
export function dashboard<P>(client: EchoMQ<P>, options: DashboardOptions = {}): Dashboard {
  // a client of any payload type: the dashboard only shows payloads (and admits none)
  const mq = client as EchoMQ<unknown>;
  const guard = resolveDashboard(options);
  const sampler = new Sampler(mq, options.sampleMs ?? 1000);
  const discovery = new Discovery(mq, options.discovery);
  const snapshot = new StatsSnapshot(mq, discovery, options.snapshot);
  const page = {
    ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
    basePath: guard.basePath,
    readOnly: guard.readOnly,
    links: options.links ?? [],
  };
  const routes = routeHandler(
    [
      ...pageRoutes(mq, sampler, discovery, page),
      { path: "/dashboard.js", handle: () => answer(DASHBOARD_SCRIPT, "text/javascript; charset=utf-8") },
      ...apiRoutes(mq, sampler, discovery, new WorkerList(mq)),
      metricsRoute(snapshot, discovery),
      ...(options.routes ?? []),
    ],
    guard,
    guard.basePath,
  );
  let closed = false;
  const handle = (request: Request): Promise<Response> =>
    closed
      ? Promise.resolve(
        new Response("the dashboard is closed\n", { status: 503, headers: { ...SECURITY_HEADERS, "content-type": "text/plain; charset=utf-8" } }),
      )
      : routes(request);
  return Object.assign(handle, {
    basePath: guard.basePath,
    close: () => {
      closed = true;
      sampler.close();
      discovery.close();
      snapshot.close();
    },
  });
}
