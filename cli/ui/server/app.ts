/**
 * What `emq ui` serves: the key panel's routes (its page, script and the keyspace wasm; no client
 * needed) and, given a connected client, the dashboard's (its pages, script, JSON API and
 * `/metrics`), all on one loopback server (http.ts).
 *
 * @module
 */
import type { EchoMQ } from "../../../client.ts";
import { apiRoutes } from "./api_routes.ts";
import { buildBundle, bundleRoute, dashboardEntry } from "./bundle.ts";
import { serve, type UiServer } from "./http.ts";
import { metricsRoute } from "./metrics.ts";
import { keyPanelRoute, pageRoutes } from "./page_routes.ts";
import type { Route } from "./route_table.ts";
import { Sampler } from "./sampler.ts";
import { readWasm, wasmRoute } from "./wasm.ts";

/** What {@link startUi} serves and where. */
export interface UiOptions {
  /** The port; absent or 0 = a free one. */
  readonly port?: number;
  /** A connected client: with it the dashboard and metrics are served too (the key panel needs none). */
  readonly mq?: EchoMQ<unknown>;
  /** How often the dashboard's pages poll, ms (default 1000). */
  readonly pollMs?: number;
  /** How often a watched queue's totals are sampled for its throughput, ms (default 1000). */
  readonly sampleMs?: number;
}

/** A running `emq ui`. */
export interface Ui extends UiServer {
  /** Whether the dashboard is served (a client was given). */
  readonly dashboard: boolean;
}

/** The key panel's routes: the page, its bundled script and the keyspace wasm. */
export async function keyPanelRoutes(): Promise<Route[]> {
  const wasm = readWasm(); // first: a missing build is the likelier refusal, and the cheaper
  return [keyPanelRoute(), bundleRoute(await buildBundle()), wasmRoute(wasm)];
}

/** The dashboard's routes: its pages, their bundled script, the JSON API and `/metrics`. */
export async function dashboardRoutes(mq: EchoMQ<unknown>, sampler: Sampler, options: { pollMs?: number } = {}): Promise<Route[]> {
  return [
    ...pageRoutes(mq, sampler, options),
    bundleRoute(await buildBundle(dashboardEntry()), "/dashboard.js"),
    ...apiRoutes(mq, sampler),
    metricsRoute(mq),
  ];
}

/** Builds the routes and serves them; resolves once the server listens. */
export async function startUi(options: UiOptions = {}): Promise<Ui> {
  const sampler = options.mq ? new Sampler(options.mq, options.sampleMs ?? 1000) : null;
  try {
    const [panel, dashboard] = await Promise.all([
      keyPanelRoutes(),
      options.mq && sampler ? dashboardRoutes(options.mq, sampler, options.pollMs ? { pollMs: options.pollMs } : {}) : [],
    ]);
    const server = await serve([...panel, ...dashboard], options.port === undefined ? {} : { port: options.port });
    return {
      ...server,
      dashboard: sampler !== null,
      close: async () => {
        sampler?.close();
        await server.close();
      },
    };
  } catch (e) {
    sampler?.close();
    throw e;
  }
}
