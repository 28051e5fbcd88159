/**
 * A repository checkout's usage table: its own commands (`demo`, and `test` and `bench`, which the
 * `emq` script runs itself) first, then the package's (lib/cli/help.ts), `ui` wider.
 *
 * @module
 */
import { type CommandTable, PACKAGE_COMMANDS } from "../lib/cli/help.ts";

/** The checkout's commands, in `emq help`'s order. */
export const COMMANDS: CommandTable = {
  demo: `  emq demo [--cluster] [--backend auto|module|scripts] [--url valkey://host:port] [--seconds N]
                                  the main job: producers and workers, live progress, a summary`,
  test: `  emq test                        every test (what CI runs)`,
  bench: `  emq bench                       the benchmarks; rewrites bench/RESULTS.md`,
  ...PACKAGE_COMMANDS,
  ui: `  emq ui [--url valkey://host:port] [--cluster] [--port N] [--bind ADDR] [--token T]
         [--public-origin URL] [--read-only] [--queues a,b]
                                  the dashboard (/), the key panel (/keys) and /metrics
                                  (no --url: an embedded server with demo traffic to watch)`,
};
