/**
 * The `emq` program around {@link runCli}: its arguments from the process, its exit code set, and
 * a reader of its output that stops early ends it quietly (closed_output.ts). Used by `cli.ts` run
 * as a program, the npm build's `emq` bin and a checkout's `./emq`.
 *
 * @module
 */
import process from "node:process";
import { exitOnClosedStdout, stdoutClosed } from "./closed_output.ts";
import { type CliSetting, PACKAGE_SETTING, runCli } from "./run.ts";

/** Runs the process's own command line (`process.argv` after the script) in `setting` and sets its exit code. */
export async function runProgram(setting: CliSetting = PACKAGE_SETTING): Promise<void> {
  exitOnClosedStdout();
  const code = await runCli(process.argv.slice(2), setting);
  // A command cut short by a closed stdout may leave what would keep the process up (emq ui's
  // signal listeners, under Deno): nothing more is to be said, so the program ends here.
  if (stdoutClosed()) process.exit(code);
  // A refused command ends here too: a connect that failed may leave glide's own attempt running
  // in the background for seconds (a TLS handshake refused: 6 s), which would keep the process up
  // after its one line was printed. (stderr is a file or a pipe: written synchronously.)
  if (code !== 0) process.exit(code);
  process.exitCode = code;
}
