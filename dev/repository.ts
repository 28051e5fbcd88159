/**
 * What a repository checkout's `./emq` adds to the package's command line: `emq demo` (on an
 * embedded server unless `--url`), `emq test` and `emq bench` in the help (the `emq` script runs
 * them), and `emq ui` without `--url` (an embedded server with demo traffic) and with the key
 * panel. None of it ships: it needs tools/embedded, cargo's builds and bun.
 *
 * @module
 */
import type { CliSetting } from "../lib/cli/run.ts";
import { COMMANDS } from "./help.ts";
import { UI_ADDONS } from "./ui/addons.ts";

/** The checkout's setting of the command line. */
export const REPOSITORY: CliSetting = {
  commands: COMMANDS,
  note: "",
  extra: {
    demo: async (argv) => (await import("./demo.ts")).demo(argv),
  },
  ui: UI_ADDONS,
};
