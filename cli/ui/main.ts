/**
 * `emq ui [--url valkey://host:port] [--port N]`: serves the key panel on 127.0.0.1 and prints
 * its address; runs until interrupted. The key panel needs no server (`--url` is kept for the
 * parts that will read one).
 *
 * @module
 */
import process from "node:process";
import { parseUrl, type ServerAddress } from "../address.ts";
import { parseFlags, UsageError } from "../usage.ts";
import { buildBundle, bundleRoute } from "./bundle.ts";
import { pageRoute } from "./page.ts";
import { type Route, serve, type UiServer } from "./server.ts";
import { readWasm, wasmRoute } from "./wasm.ts";

/** `emq ui`'s usage lines. */
export const UI_USAGE = `usage: emq ui [--url valkey://host:port] [--port N]
  serves the key panel on 127.0.0.1 (a free port unless --port) and prints its address; Ctrl-C stops it
  --url   a running server (not needed by the key panel)
  --port  the port to listen on (default: a free one)`;

/** What {@link startUi} serves and where. */
export interface UiOptions {
  /** The port; absent or 0 = a free one. */
  readonly port?: number;
  /** A server to read (none needed by the key panel). */
  readonly server?: ServerAddress;
}

/** A running `emq ui`. */
export interface Ui extends UiServer {
  /** The server it was given, if any. */
  readonly server: ServerAddress | undefined;
}

/** The key panel's routes: the page, its bundled script and the keyspace wasm. */
export async function keyPanelRoutes(): Promise<Route[]> {
  const wasm = readWasm(); // first: a missing build is the likelier refusal, and the cheaper
  return [pageRoute(), bundleRoute(await buildBundle()), wasmRoute(wasm)];
}

/** Builds the routes and serves them; resolves once the server listens. */
export async function startUi(options: UiOptions = {}): Promise<Ui> {
  const routes = await keyPanelRoutes();
  const server = await serve(routes, options.port === undefined ? {} : { port: options.port });
  return { ...server, server: options.server };
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`--port must be a port number (0 to 65535), not ${JSON.stringify(text)}`);
  return port;
}

/** Runs `emq ui`; resolves with the exit code once interrupted (SIGINT or SIGTERM). */
export async function ui(argv: string[]): Promise<number> {
  const { values } = parseFlags({
    args: argv,
    options: { url: { type: "string" }, port: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.log(UI_USAGE);
    return 0;
  }
  const server = values.url === undefined ? undefined : parseUrl(values.url);
  const port = values.port === undefined ? undefined : parsePort(values.port);
  const app = await startUi({ ...(port === undefined ? {} : { port }), ...(server ? { server } : {}) });
  // Listening for the signals before printing the address: whoever reads it may stop us at once.
  const stopped = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  if (server) console.log(`emq ui: server ${server.host}:${server.port} (the key panel does not need it)`);
  console.log(`emq ui: key panel on ${app.url} (Ctrl-C stops it)`);
  const signal = await stopped;
  await app.close();
  console.log(`emq ui: stopped (${signal})`);
  return 0;
}
