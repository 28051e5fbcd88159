/**
 * A web-standard handler as a `node:http` request listener: the request read into a `Request`
 * (its URL from the `Host` header; `http:` unless told), the `Response` streamed back. For
 * `http.createServer`, Express (`app.use("/admin/queues", listener)` with a matching basePath:
 * the listener reads `req.originalUrl` when there is one) and anything else that speaks Node's
 * request and response.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** A `node:http` request listener. */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

async function toRequest(req: IncomingMessage, protocol: "http:" | "https:"): Promise<Request> {
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
  // Express strips its mount path from req.url; the handler routes by the whole path
  const path = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
  const host = req.headers.host ?? "localhost";
  return new Request(new URL(path, `${protocol}//${host}`), { method, headers, body: body as BodyInit | undefined });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  // streamed, so an answer may be long or open-ended
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!res.write(value)) await new Promise((r) => res.once("drain", r));
  }
  res.end();
}

/**
 * `handler` as a `node:http` listener (`protocol`: what the browser's address says, `https:`
 * behind a TLS-terminating proxy).
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * import { EchoMQ } from "../../client.ts";
 * import { dashboard, nodeListener } from "../../ui.ts";
 *
 * const mq = await EchoMQ.connect({ url: "valkey://127.0.0.1:6379" });
 * createServer(nodeListener(dashboard(mq))).listen(8080, "127.0.0.1");
 * ```
 */
export function nodeListener(handler: (request: Request) => Promise<Response>, protocol: "http:" | "https:" = "http:"): NodeListener {
  return async (req, res) => {
    try {
      await send(res, await handler(await toRequest(req, protocol)));
    } catch (e) {
      console.error(`EchoMQ dashboard: ${req.method} ${req.url}: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        res.end("internal error\n");
      } else res.destroy();
    }
  };
}
