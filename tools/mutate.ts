/**
 * Mutation testing of the TypeScript keyspace (lib/keyspace): applies each mutation below — one
 * search-and-replace in one file — runs `bun test tests/keyspace tests/types`, then (when the
 * tests still pass) `tsc --noEmit`, which checks tests/types/literal_types.ts, and restores the
 * file. A mutation is killed when either fails; a survivor is a change no test notices.
 *
 * By default everything runs in a scratch copy of the keyspace, its tests and a tsconfig limited
 * to them (node_modules linked), so other work in the checkout never sees a mutated file;
 * `--in-place` mutates the checkout itself (and restores each file, on failure and on SIGINT too).
 *
 * Run: node_modules/.bin/bun tools/mutate.ts [--in-place] [--only <text>] [--list]
 *   --only <text>  only the mutations whose file or description contains <text>
 *   --list         print the mutations and exit
 * Exit status: 0 when every mutation is killed, 1 with survivors, 2 when a mutation no longer
 * applies (its search text is not found exactly once: update the list with the code).
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** One mutation: replace `search` (found exactly once) by `replace` in `file`. */
export interface Mutation {
  /** Path under lib/keyspace/. */
  file: string;
  search: string;
  replace: string;
  /** What breaks, in words. */
  description: string;
}

export const MUTATIONS: Mutation[] = [
  // slot.ts
  {
    file: "slot.ts",
    search: "      c = 0xfffd;\n",
    replace: "",
    description: "hash a lone surrogate's raw code unit (ED A0 80) instead of U+FFFD (EF BF BD)",
  },
  {
    file: "slot.ts",
    search: "if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {",
    replace: "if (c <= 0xdbff && d >= 0xd800 && d <= 0xdfff) {",
    description: "pair a high surrogate with a following high surrogate",
  },
  {
    file: "slot.ts",
    search: "if (c < 0x800) {",
    replace: "if (c < 0x400) {",
    description: "encode U+0400…U+07FF in three bytes",
  },
  {
    file: "slot.ts",
    search: "crc = crcByte(crc, 0xf0 | (c >> 18));",
    replace: "crc = crcByte(crc, 0xf0 | (c >> 19));",
    description: "wrong lead byte for astral characters",
  },
  {
    file: "slot.ts",
    search: "for (let b = 0; b < 8; b++)",
    replace: "for (let b = 0; b < 7; b++)",
    description: "CRC16 table built from 7 bits",
  },
  {
    file: "slot.ts",
    search: 'const open = key.indexOf("{");',
    replace: 'const open = key.lastIndexOf("{");',
    description: "string hashtag from the last `{`",
  },
  {
    file: "slot.ts",
    search: "const open = key.indexOf(0x7b);",
    replace: "const open = key.lastIndexOf(0x7b);",
    description: "byte hashtag from the last `{`",
  },
  {
    file: "slot.ts",
    search: 'return typeof key === "string"\n    ? key.slice(span[0], span[1])',
    replace: 'return typeof key === "string"\n    ? key.slice(span[0] - 1, span[1])',
    description: "hashtag() includes the opening brace",
  },
  // queue_name.ts
  {
    file: "queue_name.ts",
    search: "const FORBIDDEN = /[{}\\0]/;",
    replace: "const FORBIDDEN = /[{}]/;",
    description: "accept NUL in a queue name",
  },
  {
    file: "queue_name.ts",
    search: 'return typeof x === "string" && !FORBIDDEN.test(x) && wellFormed(x);',
    replace: 'return typeof x === "string" && !FORBIDDEN.test(x);',
    description: "validQueue accepts a lone surrogate",
  },
  {
    file: "queue_name.ts",
    search: "    if (wellFormed(x)) return;\n",
    replace: "    return;\n",
    description: "assertValidQueue accepts a lone surrogate",
  },
  {
    file: "queue_name.ts",
    search: '  if (x.includes("}")) {',
    replace: '  if (x.includes("\\0")) {',
    description: "assertValidQueue names NUL before `}`",
  },
  {
    file: "queue_name.ts",
    search: ': Q extends `${string}${"{" | "}" | "\\0"}${string}` ? DiagnoseQueue<Q>',
    replace: ': Q extends `${string}${"{" | "}"}${string}` ? DiagnoseQueue<Q>',
    description: "CheckQueue accepts a NUL literal",
  },
  {
    file: "queue_name.ts",
    search: "export type DiagnoseQueue<Q extends string> = Q extends `${string}}${string}` ? QueueCloseBraceError",
    replace: "export type DiagnoseQueue<Q extends string> = Q extends `${string}{${string}` ? QueueCloseBraceError",
    description: "DiagnoseQueue tests `{` for the close-brace message",
  },
  {
    file: "queue_name.ts",
    search: 'export type CheckClientQueue<Q extends string> = Q extends "" ? QueueEmptyError : CheckQueue<Q>;',
    replace: "export type CheckClientQueue<Q extends string> = CheckQueue<Q>;",
    description: 'CheckClientQueue accepts ""',
  },
  {
    file: "queue_name.ts",
    search: '  if (x === "") {',
    replace: '  if (x === " ") {',
    description: 'assertClientQueue accepts ""',
  },
  // branded_id.ts
  {
    file: "branded_id.ts",
    search: "const BRANDED = /^[A-Z]{3}[0-9A-Za-z]{11}$/;",
    replace: "const BRANDED = /^[A-Z]{3}[0-9A-Za-z_]{11}$/;",
    description: "accept `_` in an id payload",
  },
  {
    file: "branded_id.ts",
    search: "const NAMESPACE = /^[A-Z]{3}/;",
    replace: "const NAMESPACE = /^[A-Za-z]{3}/;",
    description: "assertBrandedId: a lower-case namespace reported as a payload error",
  },
  {
    file: "branded_id.ts",
    search: 'return isBrandedId(x) && x.startsWith("JOB");',
    replace: "return isBrandedId(x);",
    description: "isJobId accepts any namespace",
  },
  {
    file: "branded_id.ts",
    search: '  if (!x.startsWith("JOB")) {',
    replace: '  if (!x.startsWith("JO")) {',
    description: "assertJobId accepts a JOx namespace",
  },
  {
    file: "branded_id.ts",
    search: "? N0 | N1 | N2 extends Upper ? C0",
    replace: "? N0 | N1 | N2 extends B62 ? C0",
    description: "CheckBrandedId accepts digits in the namespace",
  },
  {
    file: "branded_id.ts",
    search: "C9 | C10 extends B62 ? Id : DiagnoseBrandedId<Id>",
    replace: "C9 | C10 extends string ? Id : DiagnoseBrandedId<Id>",
    description: "CheckBrandedId's JOB fast path skips the payload check",
  },
  {
    file: "branded_id.ts",
    search: '? Rest extends "" ? A | B | C extends Upper ? BrandedIdPayloadError : BrandedIdNamespaceError',
    replace: '? Rest extends "" ? A | B | C extends Upper ? BrandedIdNamespaceError : BrandedIdPayloadError',
    description: "DiagnoseBrandedId swaps the namespace and payload messages",
  },
  {
    file: "branded_id.ts",
    search: "  if (now > lastMs) {",
    replace: "  if (now >= lastMs) {",
    description: "newJobId restarts the sequence at random within one millisecond",
  },
  {
    file: "branded_id.ts",
    search: "out = BASE62[n % 62] + out;",
    replace: "out = out + BASE62[n % 62];",
    description: "newJobId writes base62 digits least significant first",
  },
  // keys.ts
  {
    file: "keys.ts",
    search: "  if (!isBrandedId(id)) assertBrandedId(id);\n",
    replace: "",
    description: "jobKey skips the id check at run time",
  },
  {
    file: "keys.ts",
    search: "  if (!isQueueType(type)) assertQueueType(type);\n",
    replace: "",
    description: "queueKey skips the type check at run time",
  },
  {
    file: "keys.ts",
    search: "export type JobKey<Q extends string, Id extends string> = `emq:{${Q}}:job:${Id}`;",
    replace: "export type JobKey<Q extends string, Id extends string> = `emq:{${Q}}:${Id}`;",
    description: "JobKey type drops `job:`",
  },
  {
    file: "keys.ts",
    search: "return `emq:{${queue}}:job:${id}` as JobKey<Q, Id>;",
    replace: "return `emq:{${queue}}:job${id}` as JobKey<Q, Id>;",
    description: "jobKey drops the colon after `job`",
  },
  // keyspace.ts
  {
    file: "keyspace.ts",
    search: 'this.slot = slot(name === "" ? this.pending : `{${name}}`);',
    replace: "this.slot = slot(`{${name}}`);",
    description: 'keyspace("").slot hashes `{}` (15257) instead of emq:{}:pending (7387)',
  },
  {
    file: "keyspace.ts",
    search: 'if (parts === null || parts.type !== type || parts.queue === "") return null;',
    replace: "if (parts === null || parts.type !== type) return null;",
    description: "Keyspace.fromKey accepts the empty name",
  },
  {
    file: "keyspace.ts",
    search: "    assertBrandedId(id);\n",
    replace: "",
    description: "Keyspace.job skips the id check at run time",
  },
  {
    file: "keyspace.ts",
    search: "    assertValidQueue(name);\n",
    replace: "",
    description: "the Keyspace constructor skips the name check",
  },
  // split.ts
  {
    file: "split.ts",
    search: "if (close < 0 || key.charCodeAt(close + 1) !== 0x3a /* : */) return null;",
    replace: "if (close < 0) return null;",
    description: "splitQueueKey does not require `:` after `}`",
  },
  {
    file: "split.ts",
    search: "  if (!validQueue(queue)) return null;\n",
    replace: "",
    description: "splitQueueKey accepts any name",
  },
  {
    file: "split.ts",
    search: 'const close = key.indexOf("}", PREFIX.length);',
    replace: 'const close = key.lastIndexOf("}");',
    description: "splitQueueKey ends the name at the last `}`",
  },
  {
    file: "split.ts",
    search: '  : Q extends `${string}\\0${string}` ? KeyParseError<"queue name must not contain NUL">\n',
    replace: "",
    description: "ParseQueueKey accepts a NUL in the name",
  },
  // error.ts
  {
    file: "error.ts",
    search: "    this.rule = rule;",
    replace: '    this.rule = "queue-nul";',
    description: "KeyspaceError forgets its rule",
  },
  {
    file: "error.ts",
    search: '    this.name = "KeyspaceError";\n',
    replace: "",
    description: "KeyspaceError is named TypeError",
  },
  {
    file: "error.ts",
    search: 'return typeof x === "string" ? JSON.stringify(x) : String(x);',
    replace: "return String(x);",
    description: "messages quote names raw (NUL invisible)",
  },
  // queue_type.ts
  {
    file: "queue_type.ts",
    search: 'return typeof x === "string" && TYPES.has(x);',
    replace: 'return typeof x === "string" && TYPES.has(x) && x !== "schedule";',
    description: "isQueueType refuses schedule",
  },
  // mod.ts
  {
    file: "mod.ts",
    search: 'export { hashtag, slot, SLOTS } from "./slot.ts";',
    replace: 'export { slot, SLOTS } from "./slot.ts";',
    description: "hashtag is not exported",
  },
  {
    file: "mod.ts",
    search: "  assertClientQueue,\n",
    replace: "",
    description: "assertClientQueue is not exported",
  },
];

const ROOT = resolve(import.meta.dir, "..");
const BIN = join(ROOT, "node_modules/.bin");
const args = process.argv.slice(2);
const inPlace = args.includes("--in-place");
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
const chosen = MUTATIONS.filter((m) => only === undefined || `${m.file} ${m.description}`.includes(only));

if (args.includes("--list")) {
  for (const m of chosen) console.log(`${m.file}: ${m.description}`);
  process.exit(0);
}

/** The tree the tests run in: the checkout, or a scratch copy of what the keyspace tests need. */
function workspace(): string {
  if (inPlace) return ROOT;
  const dir = mkdtempSync(join(tmpdir(), "emq-mutate-"));
  for (const p of ["mod.ts", "lib/keyspace", "tests/keyspace", "tests/types", "tests/vectors", "tests/_preload.ts", "bunfig.toml", "package.json"]) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    cpSync(join(ROOT, p), join(dir, p), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const config = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8"));
  config.include = ["mod.ts", "lib/keyspace", "tests/keyspace", "tests/types", "tests/vectors"];
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2));
  return dir;
}

const dir = workspace();
const libPath = (m: Mutation): string => join(dir, "lib/keyspace", m.file);

// Restore on SIGINT / SIGTERM: the file being mutated, then the scratch copy.
let restore: (() => void) | null = null;
let child: ReturnType<typeof spawn> | null = null;
function cleanup(): void {
  restore?.();
  restore = null;
  if (!inPlace) rmSync(dir, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    child?.kill("SIGKILL");
    cleanup();
    console.error(`\n${signal}: restored, stopped`);
    process.exit(130);
  });
}

/** Runs a command in the workspace; resolves to whether it exited 0 (a timeout counts as a failure). */
function run(cmd: string[], timeoutMs = 300_000): Promise<boolean> {
  return new Promise((done) => {
    const env = { ...process.env };
    delete env.RUST_BACKTRACE;
    const p = spawn(cmd[0]!, cmd.slice(1), { cwd: dir, stdio: "ignore", env });
    child = p;
    const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
    p.on("exit", (code) => {
      clearTimeout(timer);
      child = null;
      done(code === 0);
    });
  });
}

const bunTest = [join(BIN, "bun"), "test", "--timeout", "180000", "tests/keyspace", "tests/types"];
const tsc = [join(BIN, "tsc"), "--noEmit", "-p", join(dir, "tsconfig.json")];

let exit = 0;
try {
  // Every mutation must apply to the code as it is, and the unmutated tree must pass.
  for (const m of chosen) {
    const count = readFileSync(libPath(m), "utf8").split(m.search).length - 1;
    if (count !== 1) {
      console.error(`stale mutation (${count} matches): ${m.file}: ${m.description}`);
      exit = 2;
    }
  }
  if (exit === 0 && !((await run(bunTest)) && (await run(tsc)))) {
    console.error("the unmutated tree fails its tests: nothing to measure");
    exit = 2;
  }
  if (exit === 0) {
    const survivors: Mutation[] = [];
    for (const [i, m] of chosen.entries()) {
      const path = libPath(m);
      const original = readFileSync(path, "utf8");
      restore = () => writeFileSync(path, original);
      let verdict: string;
      try {
        writeFileSync(path, original.replace(m.search, () => m.replace));
        if (!(await run(bunTest))) verdict = "killed (bun test)";
        else if (!(await run(tsc))) verdict = "killed (tsc)";
        else {
          verdict = "SURVIVED";
          survivors.push(m);
        }
      } finally {
        restore();
        restore = null;
      }
      console.log(`[${i + 1}/${chosen.length}] ${verdict}: ${m.file}: ${m.description}`);
    }
    const killed = chosen.length - survivors.length;
    console.log(`\nmutation score: ${killed}/${chosen.length} killed`);
    for (const m of survivors) console.log(`  survivor: ${m.file}: ${m.description}`);
    exit = survivors.length === 0 ? 0 : 1;
  }
} finally {
  cleanup();
}
process.exit(exit);
