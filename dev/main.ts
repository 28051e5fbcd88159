/**
 * The `emq` command line of a repository checkout (`./emq`, under Bun or Deno): the package's
 * commands (lib/cli, what `cli.ts` ships) in the checkout's setting (repository.ts), which adds
 * `emq demo`, embedded servers and the key panel to `emq ui`, and lists `emq test` and `emq bench`
 * (run by the `emq` script itself).
 *
 * @module
 */
import { runProgram } from "../lib/cli/program.ts";
import { REPOSITORY } from "./repository.ts";

await runProgram(REPOSITORY);
