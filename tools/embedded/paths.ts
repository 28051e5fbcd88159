/**
 * Where the launcher finds things on disk: the repository root, the built native module and the
 * Valkey binaries.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The process environment, read without depending on a runtime-specific module. */
function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return proc?.env?.[name];
}

/** This file's directory, from `import.meta.url` (works in Bun, Deno and Node). */
function hereDir(): string {
  const url = new URL(import.meta.url);
  return dirname(decodeURIComponent(url.pathname));
}

/**
 * The repository root: the nearest directory above this file that holds `native/Cargo.toml` or
 * `package.json`. `EMQ_ROOT` overrides it.
 */
export function repoRoot(): string {
  const override = env("EMQ_ROOT");
  if (override) return resolve(override);
  let dir = hereDir();
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, "native", "Cargo.toml")) || existsSync(join(dir, "package.json"))) {
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return resolve(hereDir(), "..", "..");
}

/**
 * The path of the native module as `cargo build --release --manifest-path native/Cargo.toml`
 * leaves it: `<root>/native/target/release/libemq.so`. `EMQ_MODULE` overrides it. The file may not
 * exist yet; see {@link moduleBuilt}.
 */
export function modulePath(): string {
  const override = env("EMQ_MODULE");
  if (override) return resolve(override);
  return join(repoRoot(), "native", "target", "release", "libemq.so");
}

/** Whether the native module file exists at {@link modulePath}. */
export function moduleBuilt(): boolean {
  return existsSync(modulePath());
}

/**
 * The native module's path when it is built, else `false`: a server's `module` option where the
 * module is optional (the scripts backend is tested either way).
 */
export function moduleIfBuilt(): string | false {
  return moduleBuilt() ? modulePath() : false;
}

export { serverBinary } from "../../lib/server/server.ts";

/** The `valkey-cli` binary: `VALKEY_CLI` or the one on `PATH`. */
export function cliBinary(): string {
  return env("VALKEY_CLI") ?? "valkey-cli";
}
