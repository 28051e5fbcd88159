// Running the `emq` command line in a child process, and what a refusal looks like.
import { expect } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { resolve } from "node:path";

/** The CLI's entry point. */
export const MAIN = resolve(import.meta.dir, "../../dev/main.ts");

/** What one run printed and its exit code. */
export interface Run {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs `emq …args` to its end (blocking). */
export function emq(...args: string[]): Run {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

/** Runs `emq …args` without blocking the test's event loop (servers in this process keep answering). */
export function emqAsync(...args: string[]): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => done({ code: code ?? -1, out, err }));
  });
}

/** A refusal: exactly one line on stderr, starting `emq: `, no stack trace, non-zero exit. */
export function expectOneLineError(r: Run, text: string): void {
  expect(r.code).not.toBe(0);
  const lines = r.err.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("emq: ");
  expect(lines[0]).toContain(text);
}
