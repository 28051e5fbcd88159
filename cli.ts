/**
 * The `emq` command line, as the package ships it: look at a queue, pause and resume it, requeue
 * its dead jobs, set its retention, drop it, check a key, or serve the dashboard — on any server
 * you reach by URL (`valkey://[user:password@]host:port`, `valkeys://` for TLS; `--cluster` for a
 * cluster). Needs neither the repository nor Rust.
 *
 * Run as a program, it runs the command line it was given and sets the exit code: 0 done, 1
 * refused (a queue that does not exist, a key either half refuses), 2 bad usage or a server it
 * cannot use (unreachable, wrong password, TLS). `--help` lists every command; `emq <command>
 * --help` shows one.
 *
 * Under Deno, run this entry of the JSR package `@echomq/echomq` (its `./cli` export) with
 * `deno run -A` (docs/PACKAGE.md, "The command line"); under Node and Bun, the npm build's bin:
 *
 * ```sh
 * npx emq inspect orders --url valkey://127.0.0.1:6379     # after npm install of the npm build
 * bunx --bun emq --help                                     # the same, under Bun
 * ```
 *
 * @example Run a command from your own code
 * ```ts
 * import { runCli } from "./cli.ts";
 *
 * const code = await runCli(["pause", "orders", "--url", "valkey://127.0.0.1:6379"]);
 * if (code !== 0) console.error(`emq pause exited ${code}`);
 * ```
 *
 * @module
 */
import { runProgram } from "./lib/cli/program.ts";
import { PACKAGE_SETTING, runCli as run } from "./lib/cli/run.ts";

/**
 * Runs one `emq` command line: `argv` is what follows the program's name, e.g.
 * `["inspect", "orders", "--url", "valkey://127.0.0.1:6379"]`. What the command says goes to
 * stdout, a refusal to stderr as one `emq: …` line. Resolves with the exit code (0 done, 1
 * refused, 2 bad usage or a server it cannot use); it never rejects.
 */
export function runCli(argv: readonly string[]): Promise<number> {
  return run([...argv], PACKAGE_SETTING);
}

// Run as a program (`deno run …/cli.ts`, `bun …/cli.ts`): the process's own arguments. The npm
// build's `emq` bin calls runProgram itself (Node ≥ 20 has no import.meta.main).
if ((import.meta as { main?: boolean }).main) await runProgram();
