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
 * The tests run in a copy of the checkout's tracked files (.tmp/mutants-verbs/repo/).
 *
 * Run: node_modules/.bin/bun tools/mutants_verbs.ts [--n 40] [--seed 1] [--files claim,settle,…] [--runs 20] [--list]
 * [--no-baseline] [--from k] [--only <substrings of names, |-separated>]
 * Needs `cargo install cargo-mutants --locked`. Minutes per mutant: not part of the test command.
 */
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { arg, campaign, type Mutant, sampleOptions } from "./mutants_run.ts";
import { buildModule, FILES, nativeScratch, repoScratch, ROOT, sh, suite } from "./mutants_scratch.ts";

const SCRATCH = join(ROOT, ".tmp", "mutants-verbs");
/** The suites a verb mutant should meet, after the differential (each a few seconds to a minute). */
const SUITES = [
  "tests/native/lanes.test.ts",
  "tests/client/settle.test.ts",
  "tests/client/limits.test.ts",
  "tests/client/dedup.test.ts",
  "tests/client/lanes.test.ts",
  "tests/client/schedulers.test.ts",
  "tests/client/flows.test.ts",
];

const native = nativeScratch(SCRATCH);
// the tests run in a copy of the checkout: edits to it during a campaign change nothing
const REPO = join(SCRATCH, "repo");
if (!process.argv.includes("--list")) repoScratch(REPO);
const files = arg("files", FILES.join(",")).split(",").flatMap((f) => ["--file", `src/verbs/${f}.rs`]);
const listed = sh("cargo", ["mutants", "--list", "--json", "--diff", ...files], { cwd: native });
if (!listed.ok) throw new Error(listed.out);
const all = (JSON.parse(listed.out) as Array<{ name: string; diff: string; file: string }>).map((m): Mutant => ({ name: m.name, diff: m.diff, file: m.file }));
const target = join(SCRATCH, "target");

let so: string | null = null;
const log = join(SCRATCH, "last-failure.log");
/** A suite against the mutant's module (module backend, standalone). */
const run = (file: string, env: Record<string, string> = {}): true | string => suite(REPO, file, { EMQ_MODULE: so!, EMQ_BACKENDS: "module", ...env }, log);

await campaign({
  all,
  ...sampleOptions(SCRATCH),
  apply: patch,
  build: () => (so = buildModule(native, target)) !== null,
  differential: () => run("tests/client/differential.test.ts", { EMQ_DIFF_RUNS: arg("runs", "20"), EMQ_DIFF_SHRINK: "0" }),
  suites: () => {
    for (const s of SUITES) {
      const r = run(s);
      if (r !== true) return r;
    }
    const unit = sh("cargo", ["test", "--quiet", "--lib"], { cwd: native, env: { CARGO_TARGET_DIR: join(SCRATCH, "target-test"), RUST_BACKTRACE: "0" } });
    return unit.ok || "cargo test --lib";
  },
});

/** Applies (or undoes) a mutant's diff in the scratch copy. */
function patch(m: Mutant, undo: boolean): boolean {
  const file = join(SCRATCH, "mutant.diff");
  writeFileSync(file, m.diff!);
  return sh("patch", [...(undo ? ["-R"] : []), "-p0", "-s", "-i", file], { cwd: native }).ok;
}
