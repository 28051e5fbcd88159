/**
 * The prebuilt native module's npm packages, one per platform, as glide ships its addon: the
 * package `@echomq/echomq` lists each as an optional dependency of its own version, and npm (or
 * Bun) installs the one whose `os`, `cpu` and `libc` match the machine. Each holds the module file,
 * `libemq.so`. tools/package.ts builds them; {@link findModule} (lib/module/find.ts) finds the
 * installed one.
 *
 * @module
 */
import process from "node:process";

/** The package the platform packages belong to (deno.json's name; tests/package checks they agree). */
export const PACKAGE_NAME = "@echomq/echomq";

/** The module's file name inside a platform package and in cargo's `target/release`. */
export const MODULE_FILE = "libemq.so";

/** What a platform package is for, in npm's `os`, `cpu` and `libc` terms. */
export interface Platform {
  readonly os: string;
  readonly cpu: string;
  readonly libc: "glibc" | "musl";
}

/**
 * The platforms a module is built for, by tag. Only Linux x64 with glibc: arm64 and musl need a
 * cross toolchain (and a machine to load the result on) that the release machine does not have.
 */
export const PLATFORMS: Readonly<Record<string, Platform>> = {
  "linux-x64-gnu": { os: "linux", cpu: "x64", libc: "glibc" },
};

/** The platform package of `tag`: `@echomq/echomq-linux-x64-gnu`. */
export function platformPackage(tag: string): string {
  return `${PACKAGE_NAME}-${tag}`;
}

/** This machine's tag (`linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, …), whether or not a module is built for it. */
export function platformTag(): string {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform !== "linux") return base;
  return `${base}-${isMusl() ? "musl" : "gnu"}`;
}

/** Whether this Linux runs on musl: Node's report has no glibc version there (as glide's loader tells). */
function isMusl(): boolean {
  try {
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    return report?.header !== undefined && report.header.glibcVersionRuntime === undefined;
  } catch {
    return false;
  }
}
