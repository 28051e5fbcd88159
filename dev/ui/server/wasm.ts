/**
 * The native half of the key panel on disk: the module's keyspace built to WebAssembly by the
 * crate `native/wasm` (it includes `native/src/keyspace.rs` by path), its build, and its route.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "../../../tools/embedded/paths.ts";
import { UsageError } from "../../../lib/cli/usage.ts";
import type { Route } from "../../../lib/ui/route_table.ts";
import { answer } from "../../../lib/ui/responses.ts";

/** The Rust target the crate is built for. */
export const WASM_TARGET = "wasm32-unknown-unknown";

/** The crate's manifest. */
export function wasmManifest(): string {
  return join(repoRoot(), "native", "wasm", "Cargo.toml");
}

/** The crate's own target directory (never the module's `native/target`). */
export function wasmTargetDir(): string {
  return join(repoRoot(), "native", "wasm", "target");
}

/** Where the built wasm is. */
export function wasmPath(): string {
  return join(wasmTargetDir(), WASM_TARGET, "release", "emq_keyspace.wasm");
}

/** The command that builds it (tools/bootstrap.sh runs the same). */
export function wasmBuildCommand(): string[] {
  return [
    "cargo",
    "build",
    "--release",
    "--quiet",
    "--target",
    WASM_TARGET,
    "--manifest-path",
    wasmManifest(),
    "--target-dir",
    wasmTargetDir(),
  ];
}

/** Builds the wasm (cargo decides what is stale: a no-op when it is fresh); resolves with its path. */
export function buildWasm(): Promise<string> {
  const [cmd, ...args] = wasmBuildCommand();
  return new Promise((resolve, reject) => {
    execFile(cmd!, args, { cwd: repoRoot(), maxBuffer: 16 << 20 }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`${wasmBuildCommand().join(" ")} failed:\n${stderr}`));
      else resolve(wasmPath());
    });
  });
}

/** The built wasm's bytes; a one-line {@link UsageError} naming the build when it is missing. */
export function readWasm(): Uint8Array {
  const path = wasmPath();
  if (!existsSync(path)) {
    throw new UsageError(`the keyspace wasm is not built (${path}): run tools/bootstrap.sh`);
  }
  return new Uint8Array(readFileSync(path));
}

/** `GET /keyspace.wasm`: the bytes read once, when the route is made. */
export function wasmRoute(bytes: Uint8Array = readWasm()): Route {
  return { path: "/keyspace.wasm", handle: () => answer(bytes as BodyInit, "application/wasm") };
}
