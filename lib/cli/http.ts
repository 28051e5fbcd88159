/**
 * The `emq ui` web server: one web-standard handler (the package's dashboard, lib/ui) served
 * through `node:http` (lib/ui/node.ts), so it runs under Deno, Bun and Node alike, on the address
 * `--bind` gives (loopback unless told). Who may ask what is the handler's business (guard.ts).
 *
 * @module
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { nodeListener } from "../ui/node.ts";
import { UsageError } from "./usage.ts";

/** A running server. */
export interface UiServer {
  /** `http://<address>:<port>/` (a loopback name when bound to every address). */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and closes open connections (waiting at most 2 s for responses in flight). */
  close(): Promise<void>;
}

/** Where the server listens. */
export interface ListenOptions {
  /** The port; 0 or absent = a free one. */
  readonly port?: number;
  /** The address (default 127.0.0.1). */
  readonly hostname?: string;
}

/** The address as a URL's host: IPv6 in brackets; every address (`0.0.0.0`, `::`) as loopback. */
function urlHost(hostname: string): string {
  if (hostname === "0.0.0.0") return "127.0.0.1";
  if (hostname === "::") return "[::1]";
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** Serves `handler` on `hostname:port`; resolves once it listens. */
export async function serve(handler: (request: Request) => Promise<Response>, options: ListenOptions = {}): Promise<UiServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const server = createServer(nodeListener(handler));
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e: Error & { code?: string }) =>
      reject(
        e.code === "EADDRINUSE"
          ? new UsageError(`port ${options.port} on ${hostname} is in use`)
          : e.code === "EADDRNOTAVAIL"
          ? new UsageError(`--bind ${hostname}: no such address on this machine`)
          : e,
      ));
    server.listen(options.port ?? 0, hostname, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${urlHost(hostname)}:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // a response still being written (a handler awaiting the server) must not hold the
        // stop forever: it is cut after 2 s
        const cut = setTimeout(resolve, 2000);
        (cut as { unref?: () => void }).unref?.();
        server.close(() => {
          clearTimeout(cut);
          resolve();
        });
        server.closeAllConnections?.();
      }),
  };
}
