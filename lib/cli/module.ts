/**
 * `emq module path`: the native module's file for `valkey-server --loadmodule` (or `MODULE LOAD`),
 * from the platform package installed with the package, else a local build (lib/module/find.ts).
 * Prints the path alone on stdout, so that `valkey-server --loadmodule "$(npx emq module path)"`
 * works; where it came from goes to stderr with `--verbose`. No module: exit 1 with what to do.
 *
 * @module
 */
import { findModule, noModule } from "../module/find.ts";
import { parseFlags, UsageError } from "./usage.ts";

/** Runs `emq module <subcommand>`; resolves with the exit code. */
export function moduleCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({ args: argv, allowPositionals: true, options: { verbose: { type: "boolean", default: false } } });
  if (parsed.positionals.length !== 1 || parsed.positionals[0] !== "path") {
    throw new UsageError("emq module takes one subcommand: path (emq module path prints the module file for --loadmodule)");
  }
  const found = findModule();
  if (found === null) throw new Error(noModule());
  console.log(found.path);
  if (parsed.values.verbose) console.error(found.from === "package" ? `from the package ${found.source}` : `built in ${found.source}`);
  return Promise.resolve(0);
}
