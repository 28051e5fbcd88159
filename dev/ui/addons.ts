/**
 * What a repository checkout adds to the package's `emq ui` (lib/cli/ui.ts): without `--url` an
 * embedded server (tools/embedded) running `emq demo`'s traffic, and the key panel (`/keys`: its
 * page, the bundle `bun build` makes, the keyspace wasm cargo builds) beside the dashboard.
 *
 * @module
 */
import { UI_FLAGS, type UiAddons } from "../../lib/cli/ui.ts";
import { deferSignals } from "../../tools/embedded/mod.ts";
import { COMMANDS } from "../help.ts";
import { openTarget } from "../target.ts";
import { keyPanelRoutes } from "./server/app.ts";
import { startUiTraffic, UI_QUEUES } from "./traffic.ts";

/** `emq ui --help` in a checkout. */
export const UI_USAGE = `usage:
${COMMANDS.ui}
  serves the dashboard (/), the key panel (/keys) and Prometheus metrics (/metrics) and prints the
  address; Ctrl-C stops it and everything it started
  --url            a running server (valkey://[user:password@]host:port, valkeys:// for TLS): the
                   dashboard reads it, and writes only what you click (requeue, pause, resume)
                   without --url: an embedded valkey-server (with the native module when built)
                   and demo traffic on ${Object.keys(UI_QUEUES).join(", ")}
  --cluster        the server is a cluster (without --url: an embedded 3-primary cluster)
${UI_FLAGS}`;

/** The checkout's additions to `emq ui`. */
export const UI_ADDONS: UiAddons = {
  usage: UI_USAGE,
  embedded: async (flags) => {
    // The embedded launcher would kill its servers and exit at once (130, 143) on these signals;
    // emq ui stops in order instead (traffic, pages, client, then the servers). Its exit hook and
    // watchdog still kill the servers should this process die without.
    deferSignals(() => {});
    const target = await openTarget<unknown>({ ...flags, backend: "auto" });
    return { target, queues: Object.keys(UI_QUEUES), traffic: (mq) => startUiTraffic(mq) };
  },
  keyPanel: () => keyPanelRoutes(true),
};
