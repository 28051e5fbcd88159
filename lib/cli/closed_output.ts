/**
 * When the reader of the `emq` program's stdout goes away early (`emq inspect orders | head -1`),
 * the command stops where it is and the program exits 0, saying nothing — as `yes | head` stops,
 * but with 0 rather than a shell's SIGPIPE status (141), so a script under `set -o pipefail` that
 * keeps only the head of the output does not fail. The runtimes differ in how they tell:
 *
 * - Node: the write returns and an `EPIPE` comes later as an `error` event on `process.stdout`
 *   (unhandled, it printed a stack): {@link exitOnClosedStdout} ends the program there.
 * - Deno: `console.log` throws `BrokenPipe` (code `EPIPE`) at once, which `runCli` catches
 *   ({@link isClosedOutput}) and answers 0 instead of printing "emq: Broken pipe".
 * - Bun drops the write and carries on; the command finishes as usual.
 *
 * @module
 */
import process from "node:process";

let closed = false;

/** Whether `e` says stdout's reader has gone (Node's `EPIPE`, Deno's `BrokenPipe`); remembers it. */
export function isClosedOutput(e: unknown): boolean {
  const { code, name } = (e ?? {}) as { code?: unknown; name?: unknown };
  const gone = code === "EPIPE" || name === "BrokenPipe";
  if (gone) closed = true;
  return gone;
}

/** Whether a write to stdout has found its reader gone in this process. */
export function stdoutClosed(): boolean {
  return closed;
}

/**
 * Makes the program end quietly with status 0 once stdout's reader has gone (Node's asynchronous
 * `EPIPE`). For the program only: a library caller's process is not ours to end. Any other error
 * on stdout is thrown as before.
 */
export function exitOnClosedStdout(): void {
  process.stdout.on("error", (e: unknown) => {
    if (isClosedOutput(e)) process.exit(0);
    throw e;
  });
}
