/**
 * Runs a child script (`_child_worker.ts` unless named) in a process of its own and reads what it
 * prints, line by line.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { repoRoot } from "../../tools/embedded/mod.ts";
import { sleep } from "./_recorder.ts";

/**
 * Spawns the child `script` of tests/reliability; `lines` fills with what it prints; `exited`
 * resolves at its exit, with the signal that ended it (`null` when it exited by itself).
 */
export function child(
  args: string[],
  script = "_child_worker.ts",
): { proc: ChildProcess; lines: string[]; exited: Promise<NodeJS.Signals | null> } {
  const root = repoRoot();
  const proc = spawn(join(root, "node_modules", ".bin", "bun"), [join(root, "tests", "reliability", script), ...args], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  let buffer = "";
  proc.stdout!.on("data", (chunk: Uint8Array) => {
    buffer += new TextDecoder().decode(chunk);
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    lines.push(...parts);
  });
  const exited = new Promise<NodeJS.Signals | null>((done) => proc.once("exit", (_code, signal) => done(signal)));
  return { proc, lines, exited };
}

/** Waits until `lines` has a line starting with `prefix` (at most `ms`); returns it. */
export async function line(lines: string[], prefix: string, ms = 30_000): Promise<string> {
  const until = Date.now() + ms;
  for (;;) {
    const found = lines.find((l) => l.startsWith(prefix));
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`no line "${prefix}…" within ${ms} ms; got ${JSON.stringify(lines)}`);
    await sleep(2);
  }
}
