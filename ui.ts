/**
 * The EchoMQ dashboard, to mount in your own server: `dashboard(mq, options)` is a web-standard
 * `(Request) => Promise<Response>` handler — the queues, each queue's jobs and actions (requeue,
 * run now, delete — one job or a selection — pause, resume), their JSON API and Prometheus `/metrics` — for `Deno.serve`, `Bun.serve`, Node
 * (through `nodeListener`), Hono or any framework with a catch-all route. Off loopback it needs a
 * token (Bearer, or Basic with the token as the password) and answers only to its public origin;
 * `readOnly` shows and answers no action.
 *
 * @example
 * ```ts
 * import { EchoMQ } from "./client.ts";
 * import { dashboard } from "./ui.ts";
 *
 * const mq = await EchoMQ.connect({ url: "valkeys://ops:secret@db.internal:6380" });
 * const ui = dashboard(mq, {
 *   basePath: "/admin/queues",
 *   token: "a-long-random-secret",
 *   publicOrigin: "https://ops.example.com",
 * });
 * Deno.serve({ port: 8080 }, (request) => ui(request));
 * ```
 *
 * @module
 */
export { type Dashboard, dashboard, type DashboardOptions } from "./lib/ui/dashboard.ts";
export type { DiscoveryOptions } from "./lib/ui/discovery.ts";
export type { SnapshotOptions } from "./lib/ui/snapshot.ts";
export { type NodeListener, nodeListener } from "./lib/ui/node.ts";
export { SECURITY_HEADERS } from "./lib/ui/handler.ts";
export type { Route } from "./lib/ui/route_table.ts";
