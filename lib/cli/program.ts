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
  followNpx();
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

/**
 * Under `npx` / `npm exec` (npm sets `npm_command=exec`), which does not pass its signals on: when
 * it ends (a SIGTERM to it, its terminal closed), this program stops as on a SIGTERM, instead of
 * running on orphaned (`emq ui`, `emq events`). Elsewhere nothing is watched: a program run under
 * `nohup` or `&` outlives its shell on purpose. The parent is gone when the process's parent id
 * changes (Node reads it live) or the parent no longer exists (Bun and Deno read it once).
 */
function followNpx(): void {
  if (process.env.npm_command !== "exec") return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    let gone = process.ppid !== parent;
    if (!gone) {
      try {
        process.kill(parent, 0);
      } catch {
        gone = true;
      }
    }
    if (!gone) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, 1000);
  (timer as { unref?: () => void }).unref?.();
}
