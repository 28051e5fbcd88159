/**
 * `emq ui [--url …] [--cluster] [--port N] [--bind ADDR] [--token T] [--public-origin URL]
 * [--read-only]`: serves the package's dashboard (`/`, `/queues/<name>`, its JSON API under
 * `/api/`, Prometheus metrics at `/metrics`) and the key panel (`/keys`), on 127.0.0.1 unless
 * `--bind` says otherwise (off loopback only with a token), and prints the address; runs until
 * interrupted. Without `--url` it starts an embedded server (with the native module when built)
 * and `emq demo`'s traffic on queues of its own, so there is something to watch; with `--url` it
 * writes nothing on its own (only the user's clicks: requeue, pause, resume). SIGINT or SIGTERM
 * stops everything it started. What it serves is server/app.ts ({@link startUi}) around the
 * package's dashboard (lib/ui); the pages' scripts are browser/.
 *
 * @module
 */
import process from "node:process";
import { parseUrl } from "../address.ts";
import { COMMANDS } from "../help.ts";
import type { Traffic } from "../demo.ts";
import { openTarget, type Target } from "../target.ts";
import { deferSignals } from "../../tools/embedded/mod.ts";
import { parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "../usage.ts";
import { resolveDashboard } from "../../lib/ui/dashboard.ts";
import { loopbackHost } from "../../lib/ui/guard.ts";
import { startUi, type Ui } from "./server/app.ts";
import { startUiTraffic, UI_QUEUES } from "./traffic.ts";

/** `emq ui`'s usage lines. */
export const UI_USAGE = `usage:
${COMMANDS.ui}
  serves the dashboard (/), the key panel (/keys) and Prometheus metrics (/metrics) and prints the
  address; Ctrl-C stops it and everything it started
  --url            a running server (valkey://[user:password@]host:port, valkeys:// for TLS): the
                   dashboard reads it, and writes only what you click (requeue, pause, resume)
                   without --url: an embedded valkey-server (with the native module when built)
                   and demo traffic on ${Object.keys(UI_QUEUES).join(", ")}
  --cluster        the server is a cluster (without --url: an embedded 3-primary cluster)
  --tls-ca FILE    the CA of a valkeys:// server's certificate; --insecure: no check (tests only)
  --port N         the port to listen on (default: a free one)
  --bind ADDR      the address to listen on (default 127.0.0.1); off loopback it needs --token
  --token T        every request must carry it: Authorization: Bearer T, or the browser's login
                   with T as the password (or set EMQ_UI_TOKEN, which ps does not show)
  --public-origin  the origin users open it at (https://ops.example.com, an SSH tunnel's
                   http://localhost:9000): the only Host answered, the only Origin that may act
  --read-only      no action shown or answered
  --queues a,b     show these queues only, without walking the keyspace (an ACL user limited to them)`;

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

/** Runs `emq ui`; resolves with the exit code once interrupted (SIGINT or SIGTERM). */
export async function ui(argv: string[]): Promise<number> {
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
    console.log(UI_USAGE);
    return 0;
  }
  if (values.url !== undefined) parseUrl(values.url); // a bad address is refused before anything starts
  const port = values.port === undefined ? undefined : parsePort(values.port);
  const access = accessOptions(values);
  // Listening for the signals first: one that comes while things start stops them once started.
  const stopped = new Promise<string>((resolve) => {
    for (const s of SIGNALS) process.once(s, () => resolve(s));
  });
  // The embedded launcher would kill its servers and exit at once (130, 143) on these signals;
  // emq ui stops in order instead (traffic, pages, client, then the servers). Its exit hook and
  // watchdog still kill the servers should this process die without.
  deferSignals(() => {});
  const target: Target<unknown> = await openTarget<unknown>({ ...serverFlags(values), backend: "auto" });
  let traffic: Traffic | null = null;
  let app: Ui | null = null;
  try {
    const queues = values.queues?.split(",").map((q) => q.trim()).filter((q) => q !== "");
    app = await startUi({ ...(port === undefined ? {} : { port }), ...access, ...(queues ? { discovery: { queues } } : {}), mq: target.mq });
    if (values.url === undefined) {
      traffic = startUiTraffic(target.mq);
      console.log(`emq ui: ${target.description}, backend ${target.mq.backend}; demo traffic on ${Object.keys(UI_QUEUES).join(", ")}`);
    } else {
      console.log(`emq ui: server ${target.description}, backend ${target.mq.backend} (it writes only what you click)`);
    }
    const shown = access.publicOrigin === undefined ? app.url : `${access.publicOrigin}/`;
    console.log(`emq ui: dashboard on ${shown}, metrics on ${shown}metrics${access.token ? " (token required)" : ""}${access.readOnly ? ", read-only" : ""}`);
    console.log(`emq ui: key panel on ${shown}keys (Ctrl-C stops it)`);
    const signal = await stopped;
    console.log(`emq ui: stopped (${signal})`);
    return 0;
  } finally {
    await traffic?.stop().catch(() => undefined);
    await app?.close();
    await target.close();
  }
}
