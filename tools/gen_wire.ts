/**
 * Writes what the wire spec (`lib/wire`) generates: the tables of docs/WIRE.md (between its
 * `BEGIN GENERATED` / `END GENERATED` markers) and `tests/vectors/wire.json`, which the native
 * module's unit tests read to prove that the verbs it registers and the texts it sends are the
 * spec's. `--check` writes nothing and fails when a committed file differs from what the spec
 * generates (the test command runs it).
 *
 *   bun tools/gen_wire.ts [--check]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import {
  ARGS,
  type ArgName,
  CLAIM_MOVE_LIMIT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  type Gate,
  MAX_BATCH,
  MAX_PAYLOAD_BYTES,
  type Refusal,
  REFUSAL_NAMES,
  REFUSALS,
  refusalsOf,
  renderRefusal,
  TRIM_LIMIT,
  type Verb,
  VERB_NAMES,
  VERBS,
  type VerbSpec,
  WIRE,
} from "../lib/wire/mod.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const DOC = resolve(ROOT, "docs/WIRE.md");
const VECTORS = resolve(ROOT, "tests/vectors/wire.json");

/** A gate as one word, the same in the JSON and in the Rust test. */
function gateName(g: Gate): string {
  if (g.kind === "job-id") return "job-id";
  if (g.kind === "number") return `number>=${g.min}${g.max === undefined ? "" : `<=${g.max}`}`;
  return g.refusal === "payload" ? "bytes:payload" : `bytes:${g.refusal}<=${g.limit}`;
}

/** The parameters a sample of refusal `r` of `verb` is rendered with (one per number argument). */
function sampleParams(verb: Verb, r: Refusal): Array<Record<string, string>> {
  const spec: VerbSpec = VERBS[verb];
  const all = [...spec.args, ...spec.group] as ArgName[];
  const numbers = (pick: (g: Gate & { kind: "number" }) => boolean): ArgName[] =>
    all.filter((a) => {
      const g: Gate = ARGS[a].gate;
      return g.kind === "number" && pick(g);
    });
  switch (r) {
    case "fenced":
      return [{ found: "4" }, { found: "unknown" }];
    case "batch":
      return [{ max: String(MAX_BATCH) }];
    case "positive":
      return numbers((g) => g.min === 1).map((arg) => ({ arg }));
    case "non-negative":
      return numbers((g) => g.min === 0).map((arg) => ({ arg }));
    case "too-large":
      return numbers((g) => g.max !== undefined).map((arg) => {
        const g = ARGS[arg].gate as Gate & { kind: "number" };
        return { arg, max: String(g.max) };
      });
    case "repeated":
    case "duplicate":
      return [{ id: "JOB00000000001" }];
    case "lease-lost":
      return [{ ids: "JOB00000000001" }, { ids: "JOB00000000001 JOB00000000002" }];
    case "payload":
      return [{ limit: String(MAX_PAYLOAD_BYTES) }];
    case "reason":
      return [{ limit: String((ARGS.reason.gate as Gate & { limit: number }).limit) }];
    case "progress":
      return [{ limit: String((ARGS.value.gate as Gate & { limit: number }).limit) }];
    case "active":
    case "not-dead":
      return [{ ids: "JOB00000000001" }, { ids: "JOB00000000001 JOB00000000002" }];
    default:
      return [{}];
  }
}

/** tests/vectors/wire.json: the verbs, the templates and rendered samples of every refusal. */
export function vectors(): string {
  const verbs = VERB_NAMES.map((verb) => {
    const spec: VerbSpec = VERBS[verb];
    const arg = (name: ArgName) => ({ name, gate: gateName(ARGS[name].gate) });
    return {
      verb,
      keys: ["meta"],
      args: spec.args.map(arg),
      group: spec.group.map(arg),
      admits: spec.admits,
      minGroups: spec.minGroups ?? 1,
      touches: spec.touches,
      refusals: refusalsOf(verb),
    };
  });
  const samples = VERB_NAMES.flatMap((verb) =>
    refusalsOf(verb).flatMap((refusal) =>
      sampleParams(verb, refusal).map((params) => ({
        verb: `EMQ.${verb}`,
        refusal,
        params,
        text: renderRefusal(refusal, `EMQ.${verb}`, params as never),
      }))
    )
  );
  const templates = Object.fromEntries(REFUSAL_NAMES.map((r) => [r, REFUSALS[r].template]));
  const head = {
    wire: WIRE,
    generatedBy: "tools/gen_wire.ts",
    maxBatch: MAX_BATCH,
    claimMoveLimit: CLAIM_MOVE_LIMIT,
    deadMaxDefault: DEAD_MAX_DEFAULT,
    deadAgeDefaultMs: DEAD_AGE_DEFAULT_MS,
    trimLimit: TRIM_LIMIT,
  };
  return `${JSON.stringify({ ...head, verbs, refusals: templates, samples }, null, 2)}\n`;
}

const cell = (s: string): string => s.replace(/\|/g, "\\|");

/** The generated sections of docs/WIRE.md, by name. */
export function sections(): Record<string, string> {
  const calls = [
    "| verb | call | derives and touches | reply | effect |",
    "| --- | --- | --- | --- | --- |",
    ...VERB_NAMES.map((v) => {
      const s: VerbSpec = VERBS[v];
      const call = [`\`EMQ.${v} 1 <meta>`, ...s.args.map((a) => `<${a}>`)].join(" ") +
        (s.group.length > 0 ? ` (${s.group.map((a) => `<${a}>`).join(" ")})…\`` : "`");
      const touches = s.touches.join(", ") + (s.admits ? " (admits: refused under maxmemory)" : "");
      return `| ${v} | ${call} | ${touches} | ${cell(s.reply)} | ${cell(s.effect)} |`;
    }),
  ].join("\n");
  const args = [
    "| argument | gate (step 4) | meaning |",
    "| --- | --- | --- |",
    ...(Object.keys(ARGS) as ArgName[]).map((a) => {
      const g: Gate = ARGS[a].gate;
      const gate = g.kind === "job-id"
        ? "starts with the 3 bytes `JOB`"
        : g.kind === "number"
        ? `1 to 15 ASCII digits, nothing else (no sign, no space), ≥ ${g.min}${g.max === undefined ? "" : `, ≤ ${g.max}`}`
        : `at most ${g.refusal === "payload" ? "`emq.max-payload` (default 1048576)" : g.limit} bytes`;
      return `| ${a} | ${gate} | ${cell(ARGS[a].doc)} |`;
    }),
  ].join("\n");
  const refusals = [
    "| refusal | step | text | when |",
    "| --- | --- | --- | --- |",
    ...REFUSAL_NAMES.map((r) => `| ${r} | ${REFUSALS[r].step} | \`${cell(REFUSALS[r].template)}\` | ${cell(REFUSALS[r].doc)} |`),
  ].join("\n");
  const byVerb = [
    "| verb | refusals, in the order checked |",
    "| --- | --- |",
    ...VERB_NAMES.map((v) => `| ${v} | ${refusalsOf(v).join(", ")} |`),
  ].join("\n");
  const writes = [
    "| verb | writes |",
    "| --- | --- |",
    ...VERB_NAMES.map((v) => `| ${v} | ${cell(VERBS[v].writes)} |`),
  ].join("\n");
  return { calls, args, refusals, "refusals-by-verb": byVerb, writes };
}

/** docs/WIRE.md with every generated section replaced by what the spec generates now. */
export function doc(current: string): string {
  let out = current;
  for (const [name, body] of Object.entries(sections())) {
    const begin = `<!-- BEGIN GENERATED: ${name} (tools/gen_wire.ts) -->`;
    const end = `<!-- END GENERATED: ${name} -->`;
    const from = out.indexOf(begin);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`docs/WIRE.md lacks the markers of section ${name}`);
    out = `${out.slice(0, from + begin.length)}\n${body}\n${out.slice(to)}`;
  }
  return out;
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  const want = new Map([[VECTORS, vectors()], [DOC, doc(readFileSync(DOC, "utf8"))]]);
  const stale: string[] = [];
  for (const [file, text] of want) {
    const have = (() => {
      try {
        return readFileSync(file, "utf8");
      } catch {
        return "";
      }
    })();
    if (have === text) continue;
    if (check) stale.push(file.slice(ROOT.length + 1));
    else writeFileSync(file, text);
  }
  if (stale.length > 0) {
    console.error(`gen_wire: ${stale.join(", ")} differ from what lib/wire generates; run: bun tools/gen_wire.ts`);
    process.exit(1);
  }
}
