/**
 * Where the native module is on this machine: the platform package installed beside the package
 * (lib/module/platform.ts), else a local build (`cargo build --release --manifest-path
 * native/Cargo.toml` in a clone, found from the working directory or from this file upwards).
 * `emq module path` prints it; `emq server` loads it.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { MODULE_FILE, PACKAGE_NAME, platformPackage, PLATFORMS, platformTag } from "./platform.ts";

/** A module file found, and where it came from. */
export interface FoundModule {
  /** The file, absolute: what `valkey-server --loadmodule` takes. */
  readonly path: string;
  /** `package`: the installed platform package; `build`: cargo's release build in a clone. */
  readonly from: "package" | "build";
  /** The platform package's name, or the clone's directory. */
  readonly source: string;
}

/** The module file of the platform package for this machine, when it is installed (resolved as `import` would). */
function fromPackage(): FoundModule | null {
  const tag = platformTag();
  if (PLATFORMS[tag] === undefined) return null;
  const name = platformPackage(tag);
  try {
    // Resolved from this file, as the package's own imports are: node_modules beside or above it.
    // (Under Deno from a remote URL there is no node_modules to look in: createRequire throws.)
    const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
    const path = join(dirname(manifest), MODULE_FILE);
    return existsSync(path) ? { path, from: "package", source: name } : null;
  } catch {
    return null;
  }
}

/** The directories `dir` and above it. */
function upwards(dir: string): string[] {
  const out = [resolve(dir)];
  for (let up = dirname(out[0]!); up !== out.at(-1); up = dirname(up)) out.push(up);
  return out;
}

/** cargo's release build in the nearest clone above the working directory, or above this file. */
function fromBuild(): FoundModule | null {
  const starts = [process.cwd()];
  if (import.meta.url.startsWith("file:")) starts.push(dirname(fileURLToPath(import.meta.url)));
  for (const start of starts) {
    for (const dir of upwards(start)) {
      if (!existsSync(join(dir, "native", "Cargo.toml"))) continue;
      const path = join(dir, "native", "target", "release", MODULE_FILE);
      if (existsSync(path)) return { path, from: "build", source: dir };
    }
  }
  return null;
}

/** The module for this machine: the installed platform package's, else a local build's; null when neither is there. */
export function findModule(): FoundModule | null {
  return fromPackage() ?? fromBuild();
}

/** Why {@link findModule} found nothing, and what to do: one paragraph for a refusal. */
export function noModule(): string {
  const tag = platformTag();
  const prebuilt = Object.keys(PLATFORMS).join(", ");
  const install = PLATFORMS[tag] === undefined
    ? `no prebuilt module for ${tag} (prebuilt: ${prebuilt})`
    : `the platform package ${platformPackage(tag)} is not installed (npm installs it with ${PACKAGE_NAME} unless optional dependencies are omitted)`;
  return `no native module found: ${install}, and no local build (native/target/release/${MODULE_FILE} in a clone above the working directory); ` +
    "build one in a clone with cargo build --release --manifest-path native/Cargo.toml";
}
