/**
 * The divergences issue 42 named (§13, §14) as hand-made mutants of either twin, each run against
 * the differential test's random runs alone (`-t "identical replies and keyspaces, every step"`:
 * the known sequences left out), standalone, no shrinking: whether they kill it, and after how many
 * runs. A Lua mutant is made in a scratch copy of the checkout (.tmp/mutants-named-<twin>/repo) and runs
 * against the checkout's module; a module mutant is built in a scratch copy of native/
 * (.tmp/mutants-named-<twin>/native). Results: results.jsonl there.
 *
 * Run: node_modules/.bin/bun tools/mutants_named.ts [--runs 100] [--twin lua|module] [--only <substrings of names, |-separated>] [--no-baseline]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { arg, campaign, type Mutant } from "./mutants_run.ts";
import { buildModule, nativeScratch, repoScratch, ROOT, suite } from "./mutants_scratch.ts";

/** A mutant: one text of a file (found exactly once) replaced. */
interface Named extends Mutant {
  twin: "lua" | "module";
  from: string;
  to: string;
}

const NAMED: Named[] = [
  // the ring (a laned claim's round-robin)
  { twin: "lua", name: "ring not rotated", file: "lib/lua/walk.ts", from: "turns = turns + 1", to: "turns = turns + 0" },
  { twin: "lua", name: "ring rotated twice", file: "lib/lua/walk.ts", from: "turns = turns + 1", to: "turns = turns + 2" },
  { twin: "module", name: "ring not rotated", file: "src/verbs/claim.rs", from: "RingOp::Rotate => turns += 1,", to: "RingOp::Rotate => turns += 0," },
  { twin: "module", name: "ring rotated twice", file: "src/verbs/claim.rs", from: "RingOp::Rotate => turns += 1,", to: "RingOp::Rotate => turns += 2," },
  // a lane's priority levels, lowest first
  {
    twin: "lua",
    name: "priority levels walked in reverse",
    file: "lib/lua/walk.ts",
    from: "    table.sort(ps)\n",
    to: "    table.sort(ps, function(a, b) return a > b end)\n",
  },
  {
    twin: "module",
    name: "priority levels walked in reverse",
    file: "src/verbs/walk.rs",
    from: "        order.sort_unstable();",
    to: "        order.sort_unstable_by(|a, b| b.cmp(a));",
  },
  // TICK's compare-and-set on the scheduler's next run
  {
    twin: "lua",
    name: "TICK fires without its compare-and-set",
    file: "lib/lua/tick.ts",
    from: "if redis.call('HGET', sched, '${SCHED.next_ms}') ~= emq_int(expected_ms) or next_ms <= expected_ms",
    to: "if next_ms <= expected_ms",
  },
  {
    twin: "module",
    name: "TICK fires without its compare-and-set",
    file: "src/verbs/tick.rs",
    from: "let fires = held.is_some_and(|h| h.bytes() == expected_text.as_str().bytes())",
    to: "let fires = held.is_some()",
  },
  // SETTLE's held check, for a release
  {
    twin: "lua",
    name: "SETTLE accepts a stale token for a release",
    file: "lib/lua/settle.ts",
    from: "local held = v and v[1] == emq_int(token[j])",
    to: "local held = v and (v[1] == emq_int(token[j]) or op[j] == 3)",
  },
  {
    twin: "module",
    name: "SETTLE accepts a stale token for a release",
    file: "src/verbs/settle.rs",
    from: "                .is_some_and(|t| t.bytes() == token.as_bytes());",
    to: "                .is_some_and(|t| t.bytes() == token.as_bytes() || args.job_number(j, OP) == 3);",
  },
  // ACK lets a job's deduplication key go
  { twin: "lua", name: "ACK keeps the dedup key", file: "lib/lua/ack.ts", from: "    emq_let_go(going, now)\n", to: "    -- emq_let_go(going, now)\n" },
  {
    twin: "module",
    name: "ACK (and BURY) keep the dedup key",
    file: "src/verbs/leases.rs",
    from: "    settle.let_go(now);\n",
    to: "    // settle.let_go(now);\n",
  },
  // issue 42 §13's survivors
  {
    twin: "lua",
    name: "the next rate token rounded down",
    file: "lib/lua/limits.ts",
    from: "if x >= 0 then return q + emq_div(x + rate.max - 1, rate.max) end",
    to: "if x >= 0 then return q + emq_div(x, rate.max) end",
  },
  {
    twin: "lua",
    name: "ACK keeps completed rows only when completed_max > 1",
    file: "lib/lua/ack.ts",
    from: "local keep = emq_kept('${KEY.completed}') > 0",
    to: "local keep = emq_kept('${KEY.completed}') > 1",
  },
  // a survivor of the module's sample (seed 7), killed since by a known sequence
  {
    twin: "module",
    name: "a laned claim's expired lease read past its level's end",
    file: "src/verbs/walk.rs",
    from: "return Ok(copy(m.expired, self.exp[self.exp.len() - i]));",
    to: "return Ok(copy(m.expired, self.exp[self.exp.len() + i]));",
  },
];

const only = arg("only", "");
const twin = arg("twin", "");
// one scratch per twin: the two may run side by side
const SCRATCH = join(ROOT, ".tmp", `mutants-named${twin ? `-${twin}` : ""}`);
const REPO = join(SCRATCH, "repo");
const chosen = NAMED.filter((m) => only.split("|").some((o) => m.name.includes(o)) && m.twin.startsWith(twin)).map((m) => ({
  ...m,
  name: `${m.twin}: ${m.name}`,
}));
repoScratch(REPO);
const native = chosen.some((m) => m.twin === "module") ? nativeScratch(SCRATCH) : "";
let so = join(ROOT, "native", "target", "release", "libemq.so");
let current: Named | undefined;

await campaign({
  all: chosen,
  n: chosen.length,
  seed: 0,
  list: process.argv.includes("--list"),
  results: join(SCRATCH, "results.jsonl"),
  ordered: true,
  apply: (m, undo) => {
    const nm = m as Named;
    const path = join(nm.twin === "lua" ? REPO : native, nm.file);
    const text = readFileSync(path, "utf8");
    const [a, b] = undo ? [nm.to, nm.from] : [nm.from, nm.to];
    if (text.split(a).length !== 2) return false;
    writeFileSync(path, text.replace(a, b));
    current = undo ? undefined : nm;
    return true;
  },
  build: () => {
    if (current?.twin !== "module" && native === "") return true;
    const built = buildModule(native, join(SCRATCH, "target"));
    if (built) so = built;
    return built !== null;
  },
  differential: () =>
    suite(
      REPO,
      "tests/client/differential.test.ts",
      { EMQ_MODULE: so, EMQ_DIFF_RUNS: arg("runs", "100"), EMQ_DIFF_SHRINK: "0" },
      join(SCRATCH, "last-failure.log"),
      ["-t", "identical replies and keyspaces, every step"],
    ),
  suites: () => true,
});
