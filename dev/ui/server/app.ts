/**
 * What a checkout's `emq ui` serves: the package's dashboard (lib/ui: the queues at `/`, their
 * pages, JSON API and `/metrics`) given a connected client, with the key panel's routes (`/keys`,
 * its script and the keyspace wasm; no client needed) mounted beside it behind the same checks, on
 * one server (lib/cli/dashboard_server.ts, lib/cli/http.ts). `emq ui` itself mounts the key panel
 * through ../addons.ts; {@link startUi} is the same server for the tests and the screenshots.
 *
 * @module
 */
import type { EchoMQ } from "../../../client.ts";
import { resolveDashboard } from "../../../lib/ui/dashboard.ts";
import { serveDashboard } from "../../../lib/cli/dashboard_server.ts";
import type { DiscoveryOptions } from "../../../lib/ui/discovery.ts";
import { routeHandler } from "../../../lib/ui/handler.ts";
import type { SnapshotOptions } from "../../../lib/ui/snapshot.ts";
import { html } from "../../../lib/ui/responses.ts";
import type { Route } from "../../../lib/ui/route_table.ts";
import { buildBundle, bundleRoute } from "./bundle.ts";
import { serve, type UiServer } from "../../../lib/cli/http.ts";
import { panelHtml } from "./key_panel_html.ts";
import { readWasm, wasmRoute } from "./wasm.ts";

/** What {@link startUi} serves, where, and to whom. */
export interface UiOptions {
  /** The port; absent or 0 = a free one. */
  readonly port?: number;
  /** The address to listen on (default 127.0.0.1). */
  readonly bind?: string;
  /** A connected client: with it the dashboard and metrics are served too (the key panel needs none). */
  readonly mq?: EchoMQ<unknown>;
  /** How often the dashboard's pages poll, ms (default 1000). */
  readonly pollMs?: number;
  /** How often a watched queue's totals are sampled for its throughput, ms (default 1000). */
  readonly sampleMs?: number;
  /** How the dashboard discovers queues, and snapshots their stats for /metrics (tests go faster). */
  readonly discovery?: DiscoveryOptions;
  readonly snapshot?: SnapshotOptions;
  /** The token every request must carry (see the dashboard's options). */
  readonly token?: string;
  /** The origin users reach it at (a tunnel, a proxy). */
  readonly publicOrigin?: string;
  /** No action shown or answered. */
  readonly readOnly?: boolean;
}

/** A running `emq ui`. */
export interface Ui extends UiServer {
  /** Whether the dashboard is served (a client was given). */
  readonly dashboard: boolean;
  /** The key panel's address (`<url>keys`). */
  readonly panelUrl: string;
}

/** The key panel's routes: the page (`/keys`), its bundled script and the keyspace wasm. */
export async function keyPanelRoutes(withDashboard: boolean): Promise<Route[]> {
  const wasm = readWasm(); // first: a missing build is the likelier refusal, and the cheaper
  const page = panelHtml(withDashboard);
  return [{ path: "/keys", handle: () => html(page) }, bundleRoute(await buildBundle()), wasmRoute(wasm)];
}

/** The key panel's navigation link from the dashboard's pages. */
const KEY_PANEL_LINK = { href: "keys", text: "Key panel" };

/** Builds the routes and serves them; resolves once the server listens. */
export async function startUi(options: UiOptions = {}): Promise<Ui> {
  const access = {
    ...(options.token === undefined ? {} : { token: options.token }),
    ...(options.publicOrigin === undefined ? {} : { publicOrigin: options.publicOrigin }),
    readOnly: options.readOnly === true,
  };
  const listen = { ...(options.port === undefined ? {} : { port: options.port }), ...(options.bind ? { bind: options.bind } : {}) };
  const panel = await keyPanelRoutes(options.mq !== undefined);
  if (options.mq) {
    // the package's dashboard server (what emq ui serves), the key panel mounted beside it
    const server = await serveDashboard({
      mq: options.mq,
      ...listen,
      ...access,
      ...(options.pollMs === undefined ? {} : { pollMs: options.pollMs }),
      ...(options.sampleMs === undefined ? {} : { sampleMs: options.sampleMs }),
      ...(options.discovery === undefined ? {} : { discovery: options.discovery }),
      ...(options.snapshot === undefined ? {} : { snapshot: options.snapshot }),
      links: [KEY_PANEL_LINK],
      routes: panel,
    });
    return { ...server, dashboard: true, panelUrl: `${server.url}keys` };
  }
  const server = await serve(routeHandler(panel, resolveDashboard(access), ""), {
    ...(listen.port === undefined ? {} : { port: listen.port }),
    ...(listen.bind ? { hostname: listen.bind } : {}),
  });
  return { ...server, dashboard: false, panelUrl: `${server.url}keys` };
}
