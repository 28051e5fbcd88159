/**
 * What the package suites share: one build of every package per test process (tools/package.ts,
 * into a temporary directory removed at exit), consumer directories outside the repository, the
 * Deno permissions docs/PACKAGE.md documents, and the caches (Deno, Bun, npm) in the repository's
 * gitignored .tmp/, reused between runs.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { buildPackages, type JsrBuild, type NpmBuild, ROOT } from "../../tools/package.ts";

/** The repository's tool binaries (deno, bun, tsc). */
export const BIN: string = join(ROOT, "node_modules", ".bin");

/** The real Deno executable: node_modules/.bin/deno is a Node shim that would take a signal itself. */
export const DENO_EXE: string = existsSync(join(ROOT, "node_modules", "deno", "deno")) ? join(ROOT, "node_modules", "deno", "deno") : join(BIN, "deno");

/** Exactly what docs/PACKAGE.md tells Deno users to grant the client. */
export const DENO_PERMISSIONS: string[] = ["--allow-sys", "--allow-ffi", "--allow-env", "--allow-read", "--allow-write=/tmp"];

/** The package managers' caches and quiet switches. */
export const CACHE_ENV: Record<string, string> = {
  BUN_INSTALL_CACHE_DIR: join(ROOT, ".tmp", "bun-cache"),
  npm_config_cache: join(ROOT, ".tmp", "npm-cache"),
  npm_config_update_notifier: "false",
  npm_config_fund: "false",
  npm_config_audit: "false",
};

const made: string[] = [];
process.once("exit", () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

let built: Promise<{ jsr: JsrBuild; npm: NpmBuild; platforms: NpmBuild[] }> | null = null;

/** Every package, built once per process (every suite of tests/package shares the build). */
export function packages(): Promise<{ jsr: JsrBuild; npm: NpmBuild; platforms: NpmBuild[] }> {
  built ??= (() => {
    const out = mkdtempSync(join(tmpdir(), "emq-package-"));
    made.push(out);
    return buildPackages(out);
  })();
  return built;
}

/** A fresh consumer directory outside the repository (removed at exit). */
export function consumerDir(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `emq-consumer-${name}-`));
  made.push(d);
  return d;
}
