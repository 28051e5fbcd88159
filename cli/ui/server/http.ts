/**
 * The `emq ui` web server: a table of routes (route_table.ts) on 127.0.0.1, each a web-standard
 * `Request → Response` handler, served through `node:http` so it runs under Bun and Deno alike.
 * A request whose `Host` is not this server's loopback address is refused, and a POST is answered
 * only when its `Origin` is this server's own (a page elsewhere cannot requeue, pause or resume
 * through the user's browser).
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { UsageError } from "../../usage.ts";
import { plain } from "./responses.ts";
import { type Route, RouteTable } from "./route_table.ts";

/** A running server. */
export interface UiServer {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Where the server listens. */
export interface ListenOptions {
  /** The port; 0 or absent = a free one. */
  readonly port?: number;
  /** The address; only loopback is offered (default 127.0.0.1). */
  readonly hostname?: "127.0.0.1";
}

/** Headers every answer carries: no framing, no sniffing, scripts and wasm from this origin only. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; " +
    "style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const method = req.method ?? "GET";
  let body: Uint8Array | undefined;
  if (method !== "GET" && method !== "HEAD") {
    const chunks: Uint8Array[] = [];
    for await (const chunk of req) chunks.push(chunk as Uint8Array);
    body = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) body.set(c, (at += c.length) - c.length);
  }
  return new Request(new URL(req.url ?? "/", origin), { method, headers, body: body as BodyInit | undefined });
}

async function send(res: ServerResponse, response: Response, head: boolean): Promise<void> {
  const headers: Record<string, string> = { ...SECURITY_HEADERS };
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (head || response.body === null) {
    res.end();
    return;
  }
  // Streams the body, so a later route can answer with server-sent events.
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((r) => res.once("drain", r));
  }
  res.end();
}

/**
 * Serves `routes` on 127.0.0.1. Requests whose `Host` is not this server's loopback address are
 * refused (a page elsewhere cannot reach it through DNS rebinding).
 */
export async function serve(routes: readonly Route[], options: ListenOptions = {}): Promise<UiServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const table = new RouteTable(routes);
  let port = 0;
  const server = createServer(async (req, res) => {
    try {
      const allowed = [`127.0.0.1:${port}`, `localhost:${port}`];
      if (!allowed.includes(req.headers.host ?? "")) {
        await send(res, plain(421, `this server answers only to ${allowed.join(" or ")}`), false);
        return;
      }
      const origin = `http://${req.headers.host}`;
      const path = new URL(req.url ?? "/", origin).pathname;
      const head = req.method === "HEAD";
      const method = head ? "GET" : (req.method ?? "GET");
      const route = table.find(method, path);
      if (route === undefined) {
        const other = table.answers(path);
        await send(res, other ? plain(405, `${req.method} is not allowed on ${path}`) : plain(404, `no page at ${path}`), head);
        return;
      }
      if (method !== "GET" && req.headers.origin !== origin) {
        // A browser sends Origin with every POST; only this page's own may act.
        await send(res, plain(403, `${method} ${path} is answered only from ${origin}`), false);
        return;
      }
      await send(res, await route.handle(await toRequest(req, origin)), head);
    } catch (e) {
      console.error(`emq ui: ${req.method} ${req.url}: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) await send(res, plain(500, "internal error (see the emq ui output)"), false);
      else res.destroy();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: Error & { code?: string }) =>
      reject(e.code === "EADDRINUSE" ? new UsageError(`port ${options.port} on ${hostname} is in use`) : e));
    server.listen(options.port ?? 0, hostname, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://${hostname}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
