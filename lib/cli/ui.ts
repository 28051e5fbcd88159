/**
 * `emq ui --url … [--cluster] [--port N] [--bind ADDR] [--token T] [--public-origin URL]
 * [--read-only] [--queues a,b]`: serves the package's dashboard (`/`, `/queues/<name>`, its JSON
 * API under `/api/`, Prometheus metrics at `/metrics`) for the server `--url` names, on 127.0.0.1
 * unless `--bind` says otherwise (off loopback only with a token), and prints the address; runs
 * until interrupted (SIGINT or SIGTERM), writing nothing on its own (only the user's clicks).
 *
 * A repository checkout adds to it ({@link UiAddons}, dev/ui/addons.ts): without `--url` an
 * embedded server with demo traffic, and the key panel (`/keys`, built with cargo and bun) beside
 * the dashboard. The package has neither, and says so.
 *
 * @module
 */
import process from "node:process";
import type { EchoMQ } from "../client/mod.ts";
import { resolveDashboard } from "../ui/dashboard.ts";
import { loopbackHost } from "../ui/guard.ts";
import type { Route } from "../ui/route_table.ts";
import { parseUrl } from "./address.ts";
import { serveDashboard } from "./dashboard_server.ts";
import { PACKAGE_COMMANDS } from "./help.ts";
import type { UiServer } from "./http.ts";
import { openUrlTarget, type Target } from "./target.ts";
import { parseFlags, SERVER_FLAGS, type ServerFlags, serverFlags, UsageError } from "./usage.ts";

/** Something running that `emq ui` stops when it stops (demo traffic). */
export interface Stoppable {
  /** Stops it; resolves once stopped. */
  stop(): Promise<void>;
}

/** A server `emq ui` started itself (no `--url`), and the traffic to watch on it. */
export interface Embedded {
  /** The client on it; closing the target stops the server. */
  readonly target: Target<unknown>;
  /** The queues the traffic runs on. */
  readonly queues: readonly string[];
  /** Starts the traffic. */
  traffic(mq: EchoMQ<unknown>): Stoppable;
}

/** What a repository checkout adds to `emq ui`; the package's CLI passes none. */
export interface UiAddons {
  /** `emq ui --help`. */
  readonly usage: string;
  /** Starts a server when no `--url` is given (its launcher leaving SIGINT and SIGTERM to `emq ui`). */
  embedded(flags: ServerFlags): Promise<Embedded>;
  /** The key panel's routes, served at `/keys` beside the dashboard behind the same checks. */
  keyPanel(): Promise<Route[]>;
}

/** The flags of `emq ui` after `--url` and `--cluster`, the same in the package and a checkout. */
export const UI_FLAGS = `  --tls-ca FILE    the CA of a valkeys:// server's certificate; --insecure: no check (tests only)
  --port N         the port to listen on (default: a free one)
  --bind ADDR      the address to listen on (default 127.0.0.1); off loopback it needs --token
  --token T        every request must carry it: Authorization: Bearer T, or the browser's login
                   with T as the password (or set EMQ_UI_TOKEN, which ps does not show)
  --public-origin  the origin users open it at (https://ops.example.com, an SSH tunnel's
                   http://localhost:9000): the only Host answered, the only Origin that may act
  --read-only      no action shown or answered
  --queues a,b     show these queues only, without walking the keyspace (an ACL user limited to them)`;

/** `emq ui --help` in the package. */
export const UI_USAGE = `usage:
${PACKAGE_COMMANDS.ui}
  serves the dashboard (/) and Prometheus metrics (/metrics) of the server --url names and prints
  the address; Ctrl-C stops it
  --url            the server (valkey://[user:password@]host:port, valkeys:// for TLS): the
                   dashboard reads it, and writes only what you click (requeue, pause, resume, …)
  --cluster        the server is a cluster
${UI_FLAGS}
  In a clone of the repository, ./emq ui also runs without --url (an embedded server with demo
  traffic) and serves the key panel (/keys).`;

/** Why the package's `emq ui` wants `--url`. */
const NEEDS_URL =
  "ui needs --url valkey://host:port: the embedded server with demo traffic (and the key panel) come with ./emq ui in a clone of the repository";

/** The signals that stop `emq ui`. */
const SIGNALS = ["SIGINT", "SIGTERM"] as const;

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`--port must be a port number (0 to 65535), not ${JSON.stringify(text)}`);
  return port;
}

/** `--bind`, `--token` (or `EMQ_UI_TOKEN`), `--public-origin`, `--read-only`, checked before anything starts. */
function accessOptions(values: Record<string, unknown>): { bind?: string; token?: string; publicOrigin?: string; readOnly: boolean } {
  const bind = values.bind as string | undefined;
  const token = (values.token as string | undefined) ?? (process.env.EMQ_UI_TOKEN || undefined);
  const publicOrigin = values["public-origin"] as string | undefined;
  if (bind !== undefined && !loopbackHost(bind.includes(":") ? `[${bind}]` : bind) && token === undefined) {
    throw new UsageError(`--bind ${bind} is off loopback: add --token (or EMQ_UI_TOKEN); there is no login without one`);
  }
  const access = {
    ...(bind === undefined ? {} : { bind }),
    ...(token === undefined ? {} : { token }),
    ...(publicOrigin === undefined ? {} : { publicOrigin }),
    readOnly: values["read-only"] === true,
  };
  try {
    resolveDashboard(access); // a bad token or origin is refused before anything starts
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/^dashboard: /, "").replace("publicOrigin", "--public-origin").replace("token must", "--token must"));
  }
  return access;
}

/** Runs `emq ui` (with a checkout's `addons`, if any); resolves with the exit code once interrupted. */
export async function ui(argv: string[], addons: UiAddons | null = null): Promise<number> {
  const { values } = parseFlags({
    args: argv,
    options: {
      ...SERVER_FLAGS,
      port: { type: "string" },
      bind: { type: "string" },
      token: { type: "string" },
      "public-origin": { type: "string" },
      "read-only": { type: "boolean", default: false },
      queues: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(addons?.usage ?? UI_USAGE);
    return 0;
  }
  const flags = serverFlags(values);
  if (flags.url !== undefined) parseUrl(flags.url); // a bad address is refused before anything starts
  else if (addons === null) throw new UsageError(NEEDS_URL);
  const port = values.port === undefined ? undefined : parsePort(values.port);
  const access = accessOptions(values);
  // Listening for the signals first: one that comes while things start stops them once started.
  const stopped = new Promise<string>((resolve) => {
    for (const s of SIGNALS) process.once(s, () => resolve(s));
  });
  const embedded = flags.url === undefined ? await addons!.embedded(flags) : null;
  const target = embedded?.target ?? await openUrlTarget<unknown>({ ...flags, url: flags.url!, backend: "auto" });
  let traffic: Stoppable | null = null;
  let app: UiServer | null = null;
  try {
    const queues = values.queues?.split(",").map((q) => q.trim()).filter((q) => q !== "");
    const panel = addons === null ? null : await addons.keyPanel();
    app = await serveDashboard({
      mq: target.mq,
      ...(port === undefined ? {} : { port }),
      ...access,
      ...(queues ? { discovery: { queues } } : {}),
      ...(panel === null ? {} : { links: [{ href: "keys", text: "Key panel" }], routes: panel }),
    });
    if (embedded !== null) {
      traffic = embedded.traffic(target.mq);
      console.log(`emq ui: ${target.description}, backend ${target.mq.backend}; demo traffic on ${embedded.queues.join(", ")}`);
    } else {
      console.log(`emq ui: server ${target.description}, backend ${target.mq.backend} (it writes only what you click)`);
    }
    const shown = access.publicOrigin === undefined ? app.url : `${access.publicOrigin}/`;
    console.log(`emq ui: dashboard on ${shown}, metrics on ${shown}metrics${access.token ? " (token required)" : ""}${access.readOnly ? ", read-only" : ""}`);
    console.log(panel === null ? "emq ui: Ctrl-C stops it" : `emq ui: key panel on ${shown}keys (Ctrl-C stops it)`);
    const signal = await stopped;
    console.log(`emq ui: stopped (${signal})`);
    return 0;
  } finally {
    await traffic?.stop().catch(() => undefined);
    await app?.close();
    await target.close();
  }
}
