/**
 * A table of routes as one web-standard handler under a base path: every request passes the
 * guard first (guard.ts), then goes to its route by method and path under the base; every answer
 * carries the security headers, and a HEAD answer has no body.
 *
 * @module
 */
import { type GuardOptions, refusal } from "./guard.ts";
import { plain } from "./responses.ts";
import { type Route, RouteTable } from "./route_table.ts";

/** Headers every answer carries: no framing, no sniffing, scripts and wasm from this origin only. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; " +
    "style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** `response` with the security headers (a HEAD answer without its body). */
function secured(response: Response, head: boolean): Response {
  const headers = new Headers(SECURITY_HEADERS);
  response.headers.forEach((value, name) => headers.set(name, value));
  return new Response(head ? null : response.body, { status: response.status, headers });
}

/** `routes` behind `guard`, under `basePath` (no trailing `/`; `""` at the root). */
export function routeHandler(routes: readonly Route[], guard: GuardOptions, basePath: string): (request: Request) => Promise<Response> {
  const table = new RouteTable(routes);
  return async (request) => {
    const head = request.method === "HEAD";
    const refused = refusal(request, guard);
    if (refused !== null) {
      const r = plain(refused.status, refused.text);
      for (const [k, v] of Object.entries(refused.headers ?? {})) r.headers.set(k, v);
      return secured(r, head);
    }
    const url = new URL(request.url);
    if (basePath !== "" && url.pathname === basePath) {
      // the pages' links are relative to `<base>/`: the base path itself redirects there
      return secured(new Response(null, { status: 308, headers: { location: `${basePath}/${url.search}` } }), head);
    }
    if (!url.pathname.startsWith(`${basePath}/`)) return secured(plain(404, `no page at ${url.pathname}`), head);
    const path = url.pathname.slice(basePath.length);
    const route = table.find(head ? "GET" : request.method, path);
    if (route === undefined) {
      return secured(table.answers(path) ? plain(405, `${request.method} is not allowed on ${path}`) : plain(404, `no page at ${path}`), head);
    }
    try {
      return secured(await route.handle(request, path), head);
    } catch (e) {
      console.error(`EchoMQ dashboard: ${request.method} ${path}: ${e instanceof Error ? e.message : String(e)}`);
      return secured(plain(500, "internal error (see the server's log)"), head);
    }
  };
}
