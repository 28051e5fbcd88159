/**
 * The scratch copies a mutation campaign works in (the checkout never holds a mutated file), and
 * how a suite runs there: a copy of the tracked files, where the tests run frozen and the Lua twin is mutated (tools/mutate_lua.ts), the
 * module's copy of native/ with its own target directory (tools/mutants_verbs.ts), and both for
 * the named mutants (tools/mutants_named.ts).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The checkout. */
export const ROOT: string = resolve(import.meta.dir, "..");

/** Runs a command; one that outlasts `timeout` ms (a mutant that hangs the server) fails. */
export function sh(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}): { ok: boolean; out: string } {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    encoding: "utf8",
    maxBuffer: 1 << 28,
    timeout: opts.timeout,
    killSignal: "SIGKILL",
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
}

/** A copy of the checkout's tracked files but native/ in `repo` (node_modules and the Valkey 9 build linked). */
export function repoScratch(repo: string): void {
  rmSync(repo, { recursive: true, force: true });
  const tracked = sh("git", ["ls-files"]).out.split("\n").filter(Boolean);
  for (const f of tracked) {
    if (f.startsWith("native/") || !existsSync(join(ROOT, f))) continue;
    mkdirSync(dirname(join(repo, f)), { recursive: true });
    cpSync(join(ROOT, f), join(repo, f));
  }
  symlinkSync(join(ROOT, "node_modules"), join(repo, "node_modules"));
  mkdirSync(join(repo, ".tmp"), { recursive: true });
  if (existsSync(join(ROOT, ".tmp", "valkey-9"))) symlinkSync(join(ROOT, ".tmp", "valkey-9"), join(repo, ".tmp", "valkey-9"));
}

/**
 * A copy of native/ (and tests/vectors, which its unit tests read) under `scratch`, the verbs'
 * modules declared in place: `verbs/mod.rs` pulls them in by `include!("handlers.rs")`, where
 * cargo-mutants does not look. Returns the copy's native/.
 */
export function nativeScratch(scratch: string): string {
  const native = join(scratch, "native");
  rmSync(join(native, "src"), { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  cpSync(join(ROOT, "native"), native, { recursive: true, filter: (p) => !p.includes("/target") });
  cpSync(join(ROOT, "tests", "vectors"), join(scratch, "tests", "vectors"), { recursive: true });
  const mod = join(native, "src", "verbs", "mod.rs");
  const handlers = readFileSync(join(native, "src", "verbs", "handlers.rs"), "utf8");
  writeFileSync(mod, readFileSync(mod, "utf8").replace('include!("handlers.rs");', handlers));
  return native;
}

/**
 * Builds the module in `native` into `target` (release without LTO, parallel and incremental
 * codegen: the same code in a fraction of the time); returns the built libemq.so, or null when it
 * does not build.
 */
export function buildModule(native: string, target: string): string | null {
  const built = sh("cargo", ["build", "--release", "--quiet"], {
    cwd: native,
    env: {
      CARGO_TARGET_DIR: target,
      CARGO_PROFILE_RELEASE_LTO: "false",
      CARGO_PROFILE_RELEASE_CODEGEN_UNITS: "16",
      CARGO_PROFILE_RELEASE_INCREMENTAL: "true",
    },
  });
  return built.ok ? join(target, "release", "libemq.so") : null;
}

/**
 * Runs one bun suite in `cwd` (standalone only); true when it passes, else what failed: the failing
 * tests' names and, for the differential's random runs, after how many runs (fast-check's "after N
 * tests"). A failure's whole output is kept in `log`; `args` go to bun test (e.g. `-t <pattern>`).
 */
export function suite(cwd: string, file: string, env: Record<string, string>, log: string, args: string[] = []): true | string {
  const r = sh(join(ROOT, "node_modules", ".bin", "bun"), ["test", "--timeout", "180000", file, ...args], {
    cwd,
    env: { EMQ_TOPOLOGIES: "standalone", ...env },
    timeout: 600_000,
  });
  if (r.ok) return true;
  writeFileSync(log, `${file}\n${r.out}`);
  const failed = [...r.out.matchAll(/^\(fail\) (?:.* > )?(.*?)(?: \[[\d.]+ms\])?$/gm)].map((m) => m[1]!);
  const after = r.out.match(/Property failed after (\d+) tests?/);
  const known = failed.filter((f) => f.startsWith("known sequence")).length;
  const others = failed.filter((f) => !f.startsWith("known sequence"));
  const what = [...(known ? [`${known} known sequence${known > 1 ? "s" : ""}`] : []), ...others].join("; ");
  return `${file.split("/").at(-1)}: ${what || "did not finish"}${after ? ` (random run ${after[1]})` : ""}`;
}

/** The twins' newest logic: the verb files a campaign samples by default, in either twin (`native/src/verbs/<f>.rs`, `lib/lua/<f>.ts`). */
export const FILES = [
  "claim",
  "settle",
  "ack",
  "limit",
  "limits",
  "dedup",
  "lanes",
  "tick",
  "walk",
  "admit",
  "leases",
  "ready",
  "bury",
  "retry",
  "release",
  "flow",
  "flows",
  "adopt",
  "seal",
  "outbox",
  "apply",
  "unbox",
  "cancel",
];
