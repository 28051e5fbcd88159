// Shared TypeScript compiler helpers for the type tests (pinned typescript 5.9: the compiler API).
import { expect } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";

/** The repository root. */
export const ROOT: string = resolve(import.meta.dir, "../..");

/** The project's compiler options (tsconfig.json), for fixtures checked outside the main run. */
export function projectOptions(): ts.CompilerOptions {
  const file = resolve(ROOT, "tsconfig.json");
  const { config } = ts.readConfigFile(file, ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config, ts.sys, ROOT).options;
}

/** Diagnostics of `files` (real or in-memory), each as [file, 1-based line, flattened message]. */
export function diagnose(files: string[], memory: Map<string, string> = new Map()): [string, number, string][] {
  const options = projectOptions();
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (f) => memory.get(f) ?? read(f);
  host.fileExists = (f) => memory.has(f) || existsSync(f);
  const program = ts.createProgram(files, options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return [d.file?.fileName ?? "", line, ts.flattenDiagnosticMessageText(d.messageText, "\n")];
  });
}

/** The `//~ <message>` marks of a compile-fail fixture, each as [1-based line, message]. */
export function marks(file: string): (readonly [number, string])[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .flatMap((text, i) => {
      const at = text.indexOf("//~ ");
      return at <= 0 || text.startsWith("//") ? [] : [[i + 1, text.slice(at + 4)] as const];
    });
}

/**
 * Asserts that compiling `fixture` (a file of tests/types/fixtures) reports exactly its `count`
 * `//~` marks, line by line, each message shaped by `shape` first (as the fixture writes it).
 */
export function expectMarks(fixture: string, count: number, shape: (message: string) => string = (m) => m): void {
  const file = resolve(ROOT, "tests/types/fixtures", fixture);
  const expected = marks(file);
  expect(expected.length).toBe(count);
  const got = diagnose([file]).map(([at, line, message]) => {
    expect(at).toBe(file);
    return [line, shape(message)] as const;
  });
  expect(got).toEqual(expected);
}

/**
 * Diagnostics of `file` under `deno check` (Deno's own TypeScript, the repository's deno.json),
 * each as [file, 1-based line, message]: the message is the first line Deno prints for it.
 */
export function denoDiagnose(file: string): [string, number, string][] {
  const env: Record<string, string> = { ...process.env as Record<string, string>, NO_COLOR: "1" };
  delete env.RUST_BACKTRACE;
  const deno = resolve(ROOT, "node_modules/.bin/deno");
  const run = spawnSync(deno, ["check", "--quiet", file], { cwd: ROOT, encoding: "utf8", env });
  const got: [string, number, string][] = [];
  let message: string | null = null;
  for (const line of `${run.stdout}${run.stderr}`.split("\n")) {
    const head = /^TS\d+ \[ERROR\]: (.*)$/.exec(line);
    if (head) message = head[1];
    const at = /^\s+at file:\/\/(.+):(\d+):\d+$/.exec(line);
    if (at && message !== null) {
      got.push([at[1], Number(at[2]), message]);
      message = null;
    }
  }
  if (got.length === 0 && run.status !== 0) throw new Error(`deno check failed without diagnostics:\n${run.stdout}${run.stderr}`);
  return got;
}

/** {@link expectMarks} under `deno check`: the same `count` marks, line by line, the same messages. */
export function expectDenoMarks(fixture: string, count: number): void {
  const file = resolve(ROOT, "tests/types/fixtures", fixture);
  const expected = marks(file);
  expect(expected.length).toBe(count);
  const got = denoDiagnose(file).map(([at, line, message]) => {
    expect(at).toBe(file);
    return [line, message] as const;
  });
  expect(got).toEqual(expected);
}
