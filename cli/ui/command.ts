/**
 * `emq ui [--url valkey://host:port] [--cluster] [--port N]`: serves the key panel (`/`), the
 * dashboard (`/queues`, `/queues/<name>`, its JSON API under `/api/`) and Prometheus metrics
 * (`/metrics`) on 127.0.0.1 and prints the address; runs until interrupted. Without `--url` it
 * starts an embedded server (with the native module when built) and `emq demo`'s traffic on
 * queues of its own, so there is something to watch; with `--url` it writes nothing on its own
 * (only the user's clicks: requeue, pause, resume). SIGINT or SIGTERM stops everything it started.
 * What it serves is server/app.ts ({@link startUi}); the pages' scripts are browser/, and what both
 * halves share is shared/.
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
import { startUi, type Ui } from "./server/app.ts";
import { startUiTraffic, UI_QUEUES } from "./traffic.ts";

/** `emq ui`'s usage lines. */
export const UI_USAGE = `usage:
${COMMANDS.ui}
  serves the key panel (/), the dashboard (/queues) and Prometheus metrics (/metrics) on 127.0.0.1
  (a free port unless --port) and prints the address; Ctrl-C stops it and everything it started
  --url      a running server: the dashboard reads it, and writes only what you click (requeue, pause, resume)
             without --url: an embedded valkey-server (with the native module when built) and demo
             traffic on ${Object.keys(UI_QUEUES).join(", ")}
  --cluster  the server is a cluster (without --url: an embedded 3-primary cluster)
  --port     the port to listen on (default: a free one)`;

/** The signals that stop `emq ui`. */
const SIGNALS = ["SIGINT", "SIGTERM"] as const;

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw new UsageError(`--port must be a port number (0 to 65535), not ${JSON.stringify(text)}`);
  return port;
}

/** Runs `emq ui`; resolves with the exit code once interrupted (SIGINT or SIGTERM). */
export async function ui(argv: string[]): Promise<number> {
  const { values } = parseFlags({
    args: argv,
    options: {
      ...SERVER_FLAGS,
      port: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(UI_USAGE);
    return 0;
  }
  if (values.url !== undefined) parseUrl(values.url); // a bad address is refused before anything starts
  const port = values.port === undefined ? undefined : parsePort(values.port);
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
    app = await startUi({ ...(port === undefined ? {} : { port }), mq: target.mq });
    if (values.url === undefined) {
      traffic = startUiTraffic(target.mq);
      console.log(`emq ui: ${target.description}, backend ${target.mq.backend}; demo traffic on ${Object.keys(UI_QUEUES).join(", ")}`);
    } else {
      console.log(`emq ui: server ${target.description}, backend ${target.mq.backend} (it writes only what you click)`);
    }
    console.log(`emq ui: dashboard on ${app.url}queues, metrics on ${app.url}metrics`);
    console.log(`emq ui: key panel on ${app.url} (Ctrl-C stops it)`);
    const signal = await stopped;
    console.log(`emq ui: stopped (${signal})`);
    return 0;
  } finally {
    await traffic?.stop().catch(() => undefined);
    await app?.close();
    await target.close();
  }
}
