/**
 * Mutation campaign on the Lua twin (lib/lua/): the mutants are made here, one line of Lua each —
 * a comparison flipped (`<` `<=` `>` `>=` `==` `~=`), `+ 1`/`- 1` swapped, `and`/`or` swapped, a
 * write removed (a `redis.call` of a writing command on a line of its own) — over the Lua text in
 * the template strings of lib/lua/*.ts (comment lines and generated scripts.ts left alone). A seeded
 * sample runs through tools/mutants_run.ts: the differential test alone, then the suites that
 * should catch it (`SUITES`, scripts backend, standalone).
 *
 * Everything runs in a scratch copy of the checkout (.tmp/mutants-lua/repo: the tracked files,
 * node_modules and the Valkey build linked), so the checkout never holds a mutated file; the
 * module the differential compares against is the checkout's native/target/release/libemq.so.
 * Results: .tmp/mutants-lua/results.jsonl.
 *
 * Run: node_modules/.bin/bun tools/mutate_lua.ts [--n 40] [--seed 1] [--files claim,walk,…|all] [--runs 20] [--list]
 * [--no-baseline] [--from k] [--only <substrings of names, |-separated>]
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { arg, campaign, type Mutant, sampleOptions } from "./mutants_run.ts";
import { FILES, repoScratch, ROOT, suite } from "./mutants_scratch.ts";

const SCRATCH = join(ROOT, ".tmp", "mutants-lua");
const REPO = join(SCRATCH, "repo");
const SUITES = [
  "tests/client/settle.test.ts",
  "tests/client/limits.test.ts",
  "tests/client/dedup.test.ts",
  "tests/client/lanes.test.ts",
  "tests/client/schedulers.test.ts",
  "tests/client/flows.test.ts",
];
/** Writing commands: a line that only calls one of these is a write a mutant may remove. */
const WRITES = ["HSET", "HDEL", "HINCRBY", "ZADD", "ZREM", "ZINCRBY", "LPUSH", "RPUSH", "LREM", "RPOP", "DEL", "XADD", "XTRIM", "SET"];
/** Each operator and what it becomes, applied to one occurrence at a time. */
const OPERATORS: Array<[RegExp, (m: string) => string, string]> = [
  [/ <= /g, () => " < ", "<= to <"],
  [/ < /g, () => " <= ", "< to <="],
  [/ >= /g, () => " > ", ">= to >"],
  [/ > /g, () => " >= ", "> to >="],
  [/ == /g, () => " ~= ", "== to ~="],
  [/ ~= /g, () => " == ", "~= to =="],
  [/ \+ 1\b/g, () => " - 1", "+ 1 to - 1"],
  [/ - 1\b/g, () => " + 1", "- 1 to + 1"],
  [/ and /g, () => " or ", "and to or"],
  [/ or /g, () => " and ", "or to and"],
];

interface LuaMutant extends Mutant {
  line: number;
  from: string;
  to: string;
}

/** The mutants of one file: every operator occurrence and removable write on its Lua lines. */
function mutantsOf(file: string): LuaMutant[] {
  const lines = readFileSync(join(ROOT, "lib", "lua", file), "utf8").split("\n");
  const out: LuaMutant[] = [];
  let lua = false;
  lines.forEach((text, i) => {
    const ticks = (text.match(/`/g) ?? []).length;
    const inside = lua;
    if (ticks % 2 === 1) lua = !lua;
    const t = text.trim();
    if (!inside || ticks > 0 || t.startsWith("--") || t === "") return;
    const at = (col: number, name: string, to: string) =>
      out.push({ name: `lib/lua/${file}:${i + 1}:${col + 1}: ${name}`, file: `lib/lua/${file}`, line: i, from: text, to });
    for (const [re, to, name] of OPERATORS) {
      for (const m of text.matchAll(re)) at(m.index!, name, text.slice(0, m.index) + to(m[0]) + text.slice(m.index! + m[0].length));
    }
    const write = t.match(/^redis\.call\('([A-Z]+)'.*\)$/);
    if (write && WRITES.includes(write[1]!)) at(text.indexOf(t), `remove ${write[1]}`, text.replace(t, `-- ${t}`));
  });
  return out;
}

/** A suite in the scratch copy, against the checkout's module; a failure's output in .tmp/mutants-lua/last-failure.log. */
const run = (file: string, env: Record<string, string> = {}): true | string =>
  suite(REPO, file, { EMQ_MODULE: join(ROOT, "native", "target", "release", "libemq.so"), ...env }, join(SCRATCH, "last-failure.log"));

const chosen = arg("files", FILES.join(","));
const files = chosen === "all"
  ? readdirSync(join(ROOT, "lib", "lua")).filter((f) => f.endsWith(".ts") && f !== "scripts.ts" && f !== "mod.ts")
  : chosen.split(",").map((f) => `${f}.ts`);
const all = files.flatMap(mutantsOf);
if (!process.argv.includes("--list")) repoScratch(REPO);

await campaign({
  all,
  ...sampleOptions(SCRATCH),
  apply: (m, undo) => {
    const lm = m as LuaMutant;
    const path = join(REPO, lm.file);
    const lines = readFileSync(path, "utf8").split("\n");
    if (lines[lm.line] !== (undo ? lm.to : lm.from)) return false;
    lines[lm.line] = undo ? lm.from : lm.to;
    writeFileSync(path, lines.join("\n"));
    return true;
  },
  build: () => true,
  differential: () => run("tests/client/differential.test.ts", { EMQ_DIFF_RUNS: arg("runs", "20"), EMQ_DIFF_SHRINK: "0" }),
  suites: () => {
    for (const s of SUITES) {
      const r = run(s, { EMQ_BACKENDS: "scripts" });
      if (r !== true) return r;
    }
    return true;
  },
});
