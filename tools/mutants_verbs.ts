/**
 * Mutation campaign on the module's verbs (native/src/verbs/): cargo-mutants lists the mutants
 * (`--list --json --diff`), this samples some at random (seeded), and for each applies its diff in
 * a scratch copy of native/, builds the module (release) and runs, in order, the differential test,
 * then — when it survives — the suites that should catch it (`SUITES` below, module backend,
 * standalone) and the module's `cargo test --lib`. A mutant that fails to build is unviable.
 *
 * The scratch copy (.tmp/mutants-verbs/) keeps its own target directory, so each mutant's build
 * is incremental and the checkout's libemq.so is never touched; the verbs' modules, which
 * `verbs/mod.rs` pulls in by `include!("handlers.rs")` (where cargo-mutants does not look), are
 * declared there in place. Results: .tmp/mutants-verbs/results.jsonl, one line per mutant.
 *
 * Run: node_modules/.bin/bun tools/mutants_verbs.ts [--n 40] [--seed 1] [--files claim,settle,…] [--list] [--no-baseline]
 * Needs `cargo install cargo-mutants --locked`. Minutes per mutant: not part of the test command.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { arg, campaign, type Mutant, sampleOptions } from "./mutants_run.ts";

const ROOT = resolve(import.meta.dir, "..");
const SCRATCH = join(ROOT, ".tmp", "mutants-verbs");
/** The suites a verb mutant should meet, after the differential (each a few seconds to a minute). */
const SUITES = [
  "tests/native/lanes.test.ts",
  "tests/client/settle.test.ts",
  "tests/client/limits.test.ts",
  "tests/client/dedup.test.ts",
  "tests/client/lanes.test.ts",
];
/** The verbs' newest logic: the files a sample is drawn from (by default). */
const FILES = ["claim", "settle", "ack", "limit", "limits", "dedup", "lanes", "tick", "walk", "admit", "leases", "ready", "bury", "retry", "release"];

/** Runs a command; one that outlasts `timeout` ms (a mutant that hangs the server) fails. */
function sh(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; timeout?: number } = {}): { ok: boolean; out: string } {
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

/** The scratch copy of native/ (and tests/vectors, which its unit tests read), verbs declared in place. */
function prepare(): string {
  const native = join(SCRATCH, "native");
  rmSync(join(SCRATCH, "native", "src"), { recursive: true, force: true });
  mkdirSync(SCRATCH, { recursive: true });
  cpSync(join(ROOT, "native"), native, { recursive: true, filter: (p) => !p.includes("/target") });
  cpSync(join(ROOT, "tests", "vectors"), join(SCRATCH, "tests", "vectors"), { recursive: true });
  const mod = join(native, "src", "verbs", "mod.rs");
  const handlers = readFileSync(join(native, "src", "verbs", "handlers.rs"), "utf8");
  writeFileSync(mod, readFileSync(mod, "utf8").replace('include!("handlers.rs");', handlers));
  return native;
}

const native = prepare();
const files = arg("files", FILES.join(",")).split(",").flatMap((f) => ["--file", `src/verbs/${f}.rs`]);
const listed = sh("cargo", ["mutants", "--list", "--json", "--diff", ...files], { cwd: native });
if (!listed.ok) throw new Error(listed.out);
const all = (JSON.parse(listed.out) as Array<{ name: string; diff: string; file: string }>).map((m): Mutant => ({ name: m.name, diff: m.diff, file: m.file }));
const target = join(SCRATCH, "target");
const so = join(target, "release", "libemq.so");

await campaign({
  all,
  ...sampleOptions(SCRATCH),
  apply: patch,
  // the release profile without LTO and with parallel, incremental codegen: the same code, built
  // in a fraction of the time (a mutant's build would otherwise take minutes on 2 cores)
  build: () =>
    sh("cargo", ["build", "--release", "--quiet"], {
      cwd: native,
      env: {
        CARGO_TARGET_DIR: target,
        CARGO_PROFILE_RELEASE_LTO: "false",
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS: "16",
        CARGO_PROFILE_RELEASE_INCREMENTAL: "true",
      },
    }).ok,
  differential: () => bun(["tests/client/differential.test.ts"], { EMQ_DIFF_RUNS: "20", EMQ_DIFF_SHRINK: "0" }),
  suites: () =>
    SUITES.every((s) => bun([s], {})) &&
    sh("cargo", ["test", "--quiet", "--lib"], { cwd: native, env: { CARGO_TARGET_DIR: join(SCRATCH, "target-test"), RUST_BACKTRACE: "0" } }).ok,
});

/** Applies (or undoes) a mutant's diff in the scratch copy. */
function patch(m: Mutant, undo: boolean): boolean {
  const file = join(SCRATCH, "mutant.diff");
  writeFileSync(file, m.diff!);
  return sh("patch", [...(undo ? ["-R"] : []), "-p0", "-s", "-i", file], { cwd: native }).ok;
}

/** Whether a bun suite passes against the mutant's module (module backend, standalone). */
function bun(suite: string[], env: Record<string, string>): boolean {
  const r = sh(join(ROOT, "node_modules", ".bin", "bun"), ["test", "--timeout", "180000", ...suite], {
    env: { EMQ_MODULE: so, EMQ_BACKENDS: "module", EMQ_TOPOLOGIES: "standalone", ...env },
    timeout: 300_000,
  });
  return r.ok;
}
