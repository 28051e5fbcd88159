/**
 * Writes what the wire spec (`lib/wire`) generates: the tables of docs/WIRE.md (between its
 * `BEGIN GENERATED` / `END GENERATED` markers), `tests/vectors/wire.json` (which the native module's
 * unit tests read to prove that the texts it sends are the spec's), and the module's view of the
 * spec: `native/src/spec.rs` (data: the wire's constants, every argument with its gate, every verb's
 * call shape, the options, the names the verbs store), `native/src/refusal.rs` (every refusal with
 * its parameters, name and text) and `native/src/table.rs` (the verb table: each verb's handler and
 * C entry point, the one generated file that names the layers above the spec), and the two lists a
 * new verb would otherwise be registered in by hand: `native/src/verbs/handlers.rs` (its module)
 * and `lib/lua/scripts.ts` (its script in `SCRIPTS`). `--check` writes
 * nothing and fails when a committed file differs from what the spec generates (the test command
 * runs it).
 *
 *   bun tools/gen_wire.ts [--check]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import { MAX_NAME_BYTES } from "../lib/keyspace/mod.ts";
import {
  type ArgName,
  ARGS,
  type Gate,
  gateDigits,
  HISTORY_FIELDS,
  LANE_FIELDS,
  META_FIELDS,
  OPTION_NAMES,
  OPTIONS,
  pieces,
  type Refusal,
  REFUSAL_NAMES,
  REFUSALS,
  refusalsOf,
  renderRefusal,
  ROW_FIELDS,
  SCHEDULER_FIELDS,
  STATES,
  type Verb,
  VERB_NAMES,
  VERBS,
  type VerbSpec,
  WAKE_MARKERS,
} from "../lib/wire/mod.ts";
// The constants by their names in lib/wire, so that RUST_CONSTANTS names each one once.
import * as wire from "../lib/wire/mod.ts";

const ROOT = resolve(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const DOC = resolve(ROOT, "docs/WIRE.md");
const VECTORS = resolve(ROOT, "tests/vectors/wire.json");
const RUST = resolve(ROOT, "native/src/spec.rs");
const RUST_REFUSALS = resolve(ROOT, "native/src/refusal.rs");
const RUST_TABLE = resolve(ROOT, "native/src/table.rs");
const RUST_HANDLERS = resolve(ROOT, "native/src/verbs/handlers.rs");
const LUA_SCRIPTS = resolve(ROOT, "lib/lua/scripts.ts");

/** A gate as one word, the same in the JSON and in the Rust test. */
function gateName(g: Gate): string {
  if (g.kind === "job-id") return "job-id";
  if (g.kind === "name") return "name";
  if (g.kind === "lane") return "lane";
  if (g.kind === "options") return `options<=${wire.MAX_OPTIONS_BYTES}`;
  if (g.kind === "number") {
    return `number>=${g.min}${g.max === undefined ? "" : `<=${g.max}`}${g.digits === undefined ? "" : `:${g.digits}`}`;
  }
  return g.config !== undefined ? `bytes:${g.refusal}` : `bytes:${g.refusal}<=${g.limit}`;
}

/** The parameters a sample of refusal `r` of `verb` is rendered with (one per number argument). */
function sampleParams(verb: Verb, r: Refusal): Array<Record<string, string>> {
  const spec: VerbSpec = VERBS[verb];
  const all = [...spec.args, ...spec.group] as ArgName[];
  // the options an options argument carries gate as arguments named by their keys
  const opts = all.some((a) => ARGS[a].gate.kind === "options") ? OPTION_NAMES : [];
  const gated: Array<readonly [string, Gate]> = [
    ...all.map((a) => [a, ARGS[a].gate as Gate] as const),
    ...opts.map((o) => [o, OPTIONS[o].gate as Gate] as const),
  ];
  const numbers = (pick: (g: Gate & { kind: "number" }) => boolean): string[] => gated.filter(([, g]) => g.kind === "number" && pick(g)).map(([a]) => a);
  switch (r) {
    case "fenced":
      return [{ found: "4" }, { found: "unknown" }];
    case "batch":
      return [{ max: String(wire.MAX_BATCH) }];
    case "positive":
      return numbers((g) => g.min === 1).map((arg) => ({ arg }));
    case "non-negative":
      return numbers((g) => g.min === 0).map((arg) => ({ arg }));
    case "too-large":
      return gated.flatMap(([arg, g]) => (g.kind === "number" && g.max !== undefined ? [{ arg, max: String(g.max) }] : []));
    case "repeated":
    case "duplicate":
      return [{ id: "JOB00000000001" }];
    case "flow-place":
      return [{ found: "3" }];
    case "fan-in":
      return [{ max: String(wire.MAX_FAN_IN) }];
    case "lease-lost":
    case "cancelled":
      return [{ ids: "JOB00000000001" }, { ids: "JOB00000000001 JOB00000000002" }];
    case "payload":
    case "result":
      return [{ limit: String(wire.MAX_PAYLOAD_BYTES) }];
    case "reason":
      return [{ limit: String((ARGS.reason.gate as Gate & { limit: number }).limit) }];
    case "log":
      return [{ limit: String((ARGS.line.gate as Gate & { limit: number }).limit) }];
    case "failure":
      return [{ limit: String((ARGS.failure.gate as Gate & { limit: number }).limit) }];
    case "progress":
      return [{ limit: String((ARGS.value.gate as Gate & { limit: number }).limit) }];
    case "spec":
      return [{ limit: String(wire.MAX_SPEC_BYTES) }];
    case "entry":
      return [{ limit: String(wire.MAX_ENTRY_BYTES) }];
    case "name":
      return gated.filter(([, g]) => g.kind === "name" || g.kind === "lane").map(([arg]) => ({ arg, max: String(MAX_NAME_BYTES) }));
    case "options":
      return [{ limit: String(wire.MAX_OPTIONS_BYTES) }];
    case "option-unknown":
      return [{ option: "group" }, { option: "x y" }];
    case "option-repeated":
      return opts.map((option) => ({ option }));
    case "option-needs":
      return opts.flatMap((option) => {
        const needs = (OPTIONS[option] as { needs?: string }).needs;
        return needs === undefined ? [] : [{ option, needs }];
      });
    case "active":
    case "not-dead":
    case "not-scheduled":
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
    wire: wire.WIRE,
    generatedBy: "tools/gen_wire.ts",
    maxBatch: wire.MAX_BATCH,
    claimMoveLimit: wire.CLAIM_MOVE_LIMIT,
    deadMaxDefault: wire.DEAD_MAX_DEFAULT,
    completedMaxDefault: wire.COMPLETED_MAX_DEFAULT,
    completedAgeDefaultMs: wire.COMPLETED_AGE_DEFAULT_MS,
    eventsMaxDefault: wire.EVENTS_MAX_DEFAULT,
    deadAgeDefaultMs: wire.DEAD_AGE_DEFAULT_MS,
    trimLimit: wire.TRIM_LIMIT,
    maxDigits: wire.MAX_DIGITS,
    maxCounterDigits: wire.MAX_COUNTER_DIGITS,
    maxPayloadBytes: wire.MAX_PAYLOAD_BYTES,
    maxOptionsBytes: wire.MAX_OPTIONS_BYTES,
    fenceKey: wire.FENCE_KEY,
    options: OPTION_NAMES.map((name) => {
      const o: { gate: Gate; needs?: string } = OPTIONS[name];
      return { name, gate: gateName(o.gate), needs: o.needs ?? null };
    }),
  };
  const stored = {
    row: Object.keys(ROW_FIELDS),
    states: Object.keys(STATES),
    meta: Object.keys(META_FIELDS),
    lane: Object.keys(LANE_FIELDS),
    wake: Object.keys(WAKE_MARKERS),
    scheduler: Object.keys(SCHEDULER_FIELDS),
    history: Object.keys(HISTORY_FIELDS),
    events: Object.fromEntries(wire.EVENT_TYPES.map((t) => [t, wire.EVENTS[t].fields])),
  };
  return `${JSON.stringify({ ...head, verbs, ...stored, refusals: templates, samples }, null, 2)}\n`;
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
      const touches = s.touches.join(", ") + (s.admits ? " (deny-oom: refused under maxmemory)" : "");
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
        : g.kind === "options"
        ? `at most ${wire.MAX_OPTIONS_BYTES} bytes: empty, or \`key=value\` items joined by NUL, each key an option below, once`
        : g.kind === "lane"
        ? `empty, or 1 to ${MAX_NAME_BYTES} bytes, none of them \`{\`, \`}\` or NUL`
        : g.kind === "name"
        ? `1 to ${MAX_NAME_BYTES} bytes, none of them \`{\`, \`}\` or NUL`
        : g.kind === "number"
        ? `1 to ${gateDigits(g)} ASCII digits, nothing else (no sign, no space), ≥ ${g.min}${g.max === undefined ? "" : `, ≤ ${g.max}`}`
        : `at most ${g.config !== undefined ? `\`emq.${g.config}\` (default ${g.limit})` : g.limit} bytes`;
      return `| ${a} | ${gate} | ${cell(ARGS[a].doc)} |`;
    }),
  ].join("\n");
  const options = [
    "| option | gate | needs | meaning |",
    "| --- | --- | --- | --- |",
    ...OPTION_NAMES.map((o) => {
      const spec: { gate: Gate; needs?: string; doc: string } = OPTIONS[o];
      return `| ${o} | ${gateName(spec.gate)} | ${spec.needs ?? "—"} | ${cell(spec.doc)} |`;
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
  const table = (head: string, rows: Readonly<Record<string, string>>): string =>
    [`| ${head} |`, "| --- | --- |", ...Object.entries(rows).map(([k, v]) => `| ${k} | ${cell(v)} |`)].join("\n");
  const row = `${table("field | holds", ROW_FIELDS)}\n\n${table("state | where the job is", STATES)}`;
  const meta = table("field | holds", META_FIELDS);
  const wake = table("marker | means", WAKE_MARKERS);
  const scheduler = table("field | holds", SCHEDULER_FIELDS);
  const lane = table("field | holds", LANE_FIELDS);
  const events = [
    "| type | written by | fields after `type` | says |",
    "| --- | --- | --- | --- |",
    ...wire.EVENT_TYPES.map((t) => {
      const e = wire.EVENTS[t];
      return `| ${t} | ${e.verbs.join(", ")} | ${e.fields.map((f) => `\`${f}\``).join(" ")} | ${cell(e.doc)} |`;
    }),
    "",
    table("field | holds", wire.EVENT_FIELDS),
  ].join("\n");
  return { calls, args, options, refusals, "refusals-by-verb": byVerb, writes, row, meta, wake, scheduler, lane, events };
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

/** The doc comment of `export const <name>` in `source`, as one line. */
function docOf(source: string, name: string): string {
  const m = new RegExp(`/\\*\\*((?:(?!\\*/)[^])*)\\*/\\s*export const ${name}\\b`).exec(source);
  if (m === null) throw new Error(`gen_wire: no doc comment for ${name}`);
  return m[1]!.split("\n").map((l) => l.replace(/^\s*\*?\s?/, "").trim()).filter((l) => l !== "").join(" ");
}

/** A Rust string literal of `s` (printable ASCII only). */
function rustString(s: string): string {
  if (!/^[\x20-\x7e]*$/.test(s)) throw new Error(`gen_wire: not printable ASCII: ${s}`);
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** A Rust identifier a stored name can be (the `names!` sets use the name as the field). */
function rustField(name: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(name) || ["type", "move", "ref", "loop", "match", "use"].includes(name)) {
    throw new Error(`gen_wire: ${name} cannot be a Rust field name`);
  }
  return name;
}

/** The opening lines of a generated Rust file: what it is, and that it is not to be edited. */
function generated(what: string): string[] {
  return [
    `//! ${what}.`,
    "//!",
    "//! GENERATED by `tools/gen_wire.ts` from `lib/wire`: do not edit; change the spec and run",
    "//! `bun tools/gen_wire.ts` (its `--check`, a step of the test command, fails while this file",
    "//! differs from what the spec generates).",
    "//!",
  ];
}

/** A refusal's name as its Rust variant (`lease-lost` → `LeaseLost`). */
function rustVariant(refusal: string): string {
  return refusal.split("-").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

/** How the Rust refusals carry a template parameter (its type) and write it (a method of `wire::Text`). */
interface RustParam {
  readonly type: string;
  readonly write: "text" | "number" | "id" | "ids" | "printable";
}

/**
 * Each template parameter as the Rust refusals carry it, by name: an argument's or option's spec
 * name is static, a limit is the gate's (an `i64`, as `emq.max-payload`), ids are bytes as sent
 * (one line: CR, LF and NUL written as spaces; several: space-joined). A parameter not here fails
 * the generator.
 */
const RUST_PARAMS: Readonly<Record<string, RustParam>> = {
  found: { type: "String", write: "text" },
  arg: { type: "&'static str", write: "text" },
  option: { type: "&'static str", write: "text" },
  needs: { type: "&'static str", write: "text" },
  max: { type: "u64", write: "number" },
  limit: { type: "i64", write: "number" },
  id: { type: "Vec<u8>", write: "id" },
  ids: { type: "Vec<Vec<u8>>", write: "ids" },
};

/** Where one refusal's parameter differs from {@link RUST_PARAMS}. */
const RUST_PARAMS_OF: Readonly<Record<string, Readonly<Record<string, RustParam>>>> = {
  // the bounds of these are the module's `usize` constants (MAX_BATCH, MAX_NAME_BYTES, MAX_OPTIONS_BYTES)
  batch: { max: { type: "usize", write: "number" } },
  name: { max: { type: "usize", write: "number" } },
  options: { limit: { type: "usize", write: "number" } },
  // the key as sent, any bytes: written printable ASCII only (others as `?`), so that every client parses the error
  "option-unknown": { option: { type: "Vec<u8>", write: "printable" } },
};

/** The parameters of refusal `r`'s template, in order of first use, with how Rust carries each. */
function rustParams(r: Refusal): Array<readonly [string, RustParam]> {
  const names = pieces(REFUSALS[r].template).flatMap((p) => ("param" in p && p.param !== "verb" ? [p.param] : []));
  return [...new Set(names)].map((name) => {
    const p = RUST_PARAMS_OF[r]?.[name] ?? RUST_PARAMS[name];
    if (p === undefined) throw new Error(`gen_wire: refusal ${r}: no Rust type for parameter {${name}} (RUST_PARAMS)`);
    return [name, p] as const;
  });
}

/** native/src/refusal.rs: every refusal of the spec with its parameters, name and text. */
export function rustRefusals(): string {
  const fields = (r: Refusal) => rustParams(r).map(([name]) => name);
  const pattern = (r: Refusal) => {
    const f = fields(r);
    return `Refusal::${rustVariant(r)}${f.length === 0 ? "" : `(${f.join(", ")})`}`;
  };
  const wildcard = (r: Refusal) => `Refusal::${rustVariant(r)}${fields(r).length === 0 ? "" : "(..)"}`;
  const write = (r: Refusal) => {
    const how = new Map(rustParams(r));
    return pieces(REFUSALS[r].template).map((p) => {
      if ("text" in p) return `t.text(${rustString(p.text)});`;
      if (p.param === "verb") return "t.text(verb.name);";
      return `t.${how.get(p.param)!.write}(${p.param});`;
    }).join(" ");
  };
  const sample = (r: Refusal) => {
    const f = fields(r);
    const args = f.map((name) => `Sample::sample(param(${rustString(name)}))`).join(", ");
    return `${rustString(r)} => Refusal::${rustVariant(r)}${f.length === 0 ? "" : `(${args})`},`;
  };
  const lines = [
    ...generated("Every refusal of the wire (`lib/wire/refusals.ts`)"),
    "//! One variant per refusal, carrying its template's parameters in order; its spec name; its exact",
    "//! text, each parameter written as `wire::Text` writes its kind. Every refusal writes nothing.",
    "",
    "use crate::wire::{Text, Verb};",
    "",
    '/// Why a call is refused, by the step that refuses it (docs/WIRE.md, "Refusals").',
    "#[derive(Debug, Clone, PartialEq, Eq)]",
    "pub enum Refusal {",
    ...REFUSAL_NAMES.flatMap((r) => {
      const types = rustParams(r).map(([, p]) => p.type);
      return [
        `    /// \`${r}\` (${REFUSALS[r].step}): ${REFUSALS[r].doc}.`,
        `    ${rustVariant(r)}${types.length === 0 ? "" : `(${types.join(", ")})`},`,
      ];
    }),
    "}",
    "",
    "impl Refusal {",
    "    /// Every refusal's spec name, in the spec's order.",
    `    pub const NAMES: [&'static str; ${REFUSAL_NAMES.length}] = [${REFUSAL_NAMES.map(rustString).join(", ")}];`,
    "",
    "    /// The spec's name of the refusal (`lib/wire/refusals.ts`).",
    "    pub fn name(&self) -> &'static str {",
    "        match self {",
    ...REFUSAL_NAMES.map((r) => `            ${wildcard(r)} => ${rustString(r)},`),
    "        }",
    "    }",
    "",
    "    /// The exact error text (with its code) for `verb`, as `docs/WIRE.md` fixes it.",
    "    pub fn text(&self, verb: &Verb) -> Vec<u8> {",
    "        let mut t = Text::default();",
    "        match self {",
    ...REFUSAL_NAMES.map((r) => `            ${pattern(r)} => { ${write(r)} }`),
    "        }",
    "        t.into_bytes()",
    "    }",
    "",
    "    /// Refusal `name` with the parameters of a sample of `tests/vectors/wire.json` (`param`: one",
    "    /// parameter's text), for the unit tests; `None` for a name the spec does not have.",
    "    #[cfg(test)]",
    "    pub fn from_sample(name: &str, param: impl Fn(&str) -> String) -> Option<Refusal> {",
    "        use crate::wire::Sample;",
    "        Some(match name {",
    ...REFUSAL_NAMES.map((r) => `            ${sample(r)}`),
    "            _ => return None,",
    "        })",
    "    }",
    "}",
  ];
  return `${lines.join("\n")}\n`;
}

/** native/src/table.rs: every verb with its handler and C entry point. */
export function rustTable(): string {
  const lines = [
    ...generated("The verb table"),
    "//! Every verb in wire order with its handler (`crate::verbs::<verb>::run`, steps 5–6) and its C",
    "//! entry point (the dispatcher with the verb's place here): a verb of the spec without a handler",
    "//! does not compile. The top of the crate: it names the dispatcher, the handlers and `ffi`; the",
    "//! data it pairs them with (`spec`) names none of them.",
    "",
    "use crate::command::{Command, Dispatcher};",
    "use crate::ffi::entry;",
    "use crate::spec::verb;",
    "use crate::verbs;",
    "",
    "/// Every verb in wire order (`spec::verb::ALL`'s), with its handler and its C entry point.",
    `pub static VERBS: [Command; ${VERB_NAMES.length}] = [`,
    ...VERB_NAMES.map((v, i) => `    Command { verb: verb::${v}, run: verbs::${v.toLowerCase()}::run, entry: entry::<Dispatcher, ${i}> },`),
    "];",
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * native/src/verbs/handlers.rs: one module per verb (`pub mod <verb>;`, its file `<verb>.rs`),
 * included by `verbs/mod.rs`: a verb's handler file is all a new verb writes in `verbs/`.
 */
export function rustHandlers(): string {
  const lines = [
    "// The verbs' modules, one per verb of the spec: `verbs/<verb>.rs` with its `run` (steps 5–6),",
    "// which `table.rs` names. Included by `verbs/mod.rs`. GENERATED by `tools/gen_wire.ts` from",
    "// `lib/wire`: do not edit (its `--check`, a step of the test command, fails while this differs).",
    "",
    ...[...VERB_NAMES].map((v) => v.toLowerCase()).sort().map((m) => `pub mod ${m};`),
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * lib/lua/scripts.ts: every verb's script by verb, each `<VERB>_LUA` of `lib/lua/<verb>.ts` (a verb
 * of the spec without its file, or its file without that constant, does not compile).
 */
export function luaScripts(): string {
  const file = (v: string): string => v.toLowerCase();
  const lines = [
    "/**",
    " * Every verb's Lua script, by verb: each `<VERB>_LUA` of `lib/lua/<verb>.ts`. GENERATED by",
    " * `tools/gen_wire.ts` from the verbs of `lib/wire`: do not edit (its `--check`, a step of the test",
    " * command, fails while this file differs from what the spec generates).",
    " *",
    " * @module",
    " */",
    'import type { Verb } from "../wire/mod.ts";',
    ...[...VERB_NAMES].sort((a, b) => file(a) < file(b) ? -1 : 1).map((v) => `import { ${v}_LUA } from "./${file(v)}.ts";`),
    "",
    "/** Every verb's Lua source, by verb. */",
    "export const SCRIPTS: Readonly<Record<Verb, string>> = Object.freeze({",
    ...VERB_NAMES.map((v) => `  ${v}: ${v}_LUA,`),
    "});",
  ];
  return `${lines.join("\n")}\n`;
}

/** The Rust constants the module takes from the spec, by their names in lib/wire, with their Rust types. */
const RUST_CONSTANTS: ReadonlyArray<readonly [string, string, number | string | readonly number[]]> = ([
  ["WIRE", "i64"],
  ["FENCE_KEY", "&str"],
  ["EVENT_TYPE_FIELD", "&str"],
  ["MAX_PAYLOAD_BYTES", "i64"],
  ["MAX_OPTIONS_BYTES", "usize"],
  ["MAX_REASON_BYTES", "i64"],
  ["MAX_FAN_IN", "i64"],
  ["MAX_FLOW_DEPTH", "i64"],
  ["CHILD_RESULT_KEPT_BYTES", "i64"],
  ["WAITING_FOREVER", "i64"],
  ["TOMBSTONE_MS", "i64"],
  ["FAILURES_KEPT", "i64"],
  ["LOG_LINES_KEPT", "i64"],
  ["EVENT_RESULT_MAX_BYTES", "i64"],
  ["MAX_PROGRESS_BYTES", "i64"],
  ["MAX_SPEC_BYTES", "i64"],
  ["DEAD_MAX_DEFAULT", "i64"],
  ["COMPLETED_MAX_DEFAULT", "i64"],
  ["COMPLETED_AGE_DEFAULT_MS", "i64"],
  ["EVENTS_MAX_DEFAULT", "i64"],
  ["HISTORY_MINUTES_DEFAULT", "i64"],
  ["MAX_HISTORY_MINUTES", "i64"],
  ["HISTORY_MINUTE_MS", "i64"],
  ["LATENCY_BOUNDS_MS", "[i64; 15]"],
  ["DEAD_AGE_DEFAULT_MS", "i64"],
  ["TRIM_LIMIT", "i64"],
  ["MAX_DIGITS", "usize"],
  ["MAX_COUNTER_DIGITS", "usize"],
  ["MAX_BATCH", "usize"],
  ["CLAIM_MOVE_LIMIT", "u64"],
  ["TOKENS_PER_MS", "i64"],
  ["MAX_CONCURRENCY", "i64"],
  ["MAX_RATE", "i64"],
  ["MAX_RATE_PERIOD_MS", "i64"],
  ["MAX_BURST", "i64"],
  ["MAX_PRIORITY", "i64"],
] as const).map(([name, type]) => [name, type, wire[name]] as const);

/** A gate as the Rust `Gate` value. */
function rustGate(g: Gate): string {
  if (g.kind === "job-id") return "Gate::JobId";
  if (g.kind === "options") return "Gate::Options";
  if (g.kind === "name") return "Gate::Name";
  if (g.kind === "lane") return "Gate::Lane";
  if (g.kind === "number") {
    const max = g.max === undefined ? "None" : `Some(${g.max})`;
    return `Gate::Number { min: ${g.min}, max: ${max}, digits: ${gateDigits(g)} }`;
  }
  if (g.config !== undefined && g.config !== "max-payload") throw new Error(`gen_wire: unknown config ${g.config}`);
  const limit = g.config === "max-payload" ? "Limit::MaxPayload" : `Limit::Fixed(${g.limit})`;
  return `Gate::Bytes { refusal: Refusal::${rustVariant(g.refusal)}, limit: ${limit} }`;
}

/** A `names!` set of the Rust side: its doc, struct and constant, and each name with its doc. */
function rustNames(doc: string, set: string, konst: string, names: Readonly<Record<string, string>>): string[] {
  return [
    "names! {",
    `    /// ${doc}`,
    `    ${set} ${konst} {`,
    ...Object.entries(names).flatMap(([name, what]) => [`        /// ${what}`, `        ${rustField(name)},`]),
    "    }",
    "}",
  ];
}

/** native/src/spec.rs: the spec as the module reads it. */
export function rust(): string {
  const source = readFileSync(resolve(ROOT, "lib/wire/verbs.ts"), "utf8");
  const constName = (a: string) => a.toUpperCase();
  // arguments by path (`arg::LIMIT`): an argument may share its name with a verb (LIMIT)
  const list = (args: readonly ArgName[]) => `&[${args.map((a) => `arg::${constName(a)}`).join(", ")}]`;
  const lines = [
    ...generated("The wire spec as the module reads it, data only"),
    "//! The wire's constants, every argument with its gate (`arg`), every verb's call shape (`verb`),",
    "//! the options a job may carry, and the names the verbs store, from which the module makes its",
    "//! literals at load. It names nothing above the wire's types: the verb → handler table is",
    "//! `table.rs`.",
    "",
    "use crate::wire::{names, Gate, Opt};",
    "",
    ...RUST_CONSTANTS.flatMap(([name, type, value]) => [
      `/// ${docOf(source, name)}`,
      `pub const ${name}: ${type} = ${typeof value === "string" ? rustString(value) : Array.isArray(value) ? `[${value.join(", ")}]` : value};`,
    ]),
    "",
    "/// Every argument of the wire, with its gate (step 4).",
    "pub mod arg {",
    "    use crate::refusal::Refusal;",
    "    use crate::wire::{Arg, Gate, Limit};",
    "",
    ...(Object.keys(ARGS) as ArgName[]).flatMap((a) => [
      `    /// ${ARGS[a].doc}`,
      `    pub const ${constName(a)}: Arg = Arg { name: ${rustString(a)}, gate: ${rustGate(ARGS[a].gate)} };`,
    ]),
    "}",
    "",
    "/// Every option a job may carry (an options argument's keys), in spec order, with its gate.",
    `pub static OPTIONS: [Opt; ${OPTION_NAMES.length}] = [`,
    ...OPTION_NAMES.flatMap((o) => {
      const spec: { gate: Gate; needs?: string; doc: string } = OPTIONS[o];
      const needs = spec.needs === undefined ? "None" : `Some(${rustString(spec.needs)})`;
      return [
        `    // ${spec.doc.replace(/`/g, "")}`,
        `    Opt { name: ${rustString(o)}, gate: ${rustGate(spec.gate)}, needs: ${needs} },`,
      ];
    }),
    "];",
    "",
    "/// Every verb's call shape, in wire order.",
    "pub mod verb {",
    "    use super::arg;",
    "    use crate::wire::Verb;",
    "",
    ...VERB_NAMES.flatMap((v) => {
      const s: VerbSpec = VERBS[v];
      return [
        `    /// \`EMQ.${v}\`: ${s.effect}.`,
        `    pub const ${v}: Verb = Verb { name: "EMQ.${v}", command: "emq.${v.toLowerCase()}", args: ${list(s.args)}, group: ${list(s.group)}, min_groups: ${
          s.minGroups ?? 1
        }, admits: ${s.admits} };`,
      ];
    }),
    "",
    "    /// Every verb, in wire order (the order of the verb table, `table::VERBS`).",
    `    pub const ALL: [&Verb; ${VERB_NAMES.length}] = [${VERB_NAMES.map((v) => `&${v}`).join(", ")}];`,
    "}",
    "",
    ...rustNames("The fields of a job's row (`emq:{q}:job:<id>`, a hash).", "Row", "ROW", ROW_FIELDS),
    "",
    ...rustNames("The states a row's `state` takes.", "States", "STATE", STATES),
    "",
    ...rustNames("The fields of the queue's `meta` hash.", "Meta", "META", META_FIELDS),
    "",
    ...rustNames("The fields of a lane's state hash (`emq:{q}:lane:<lane>`).", "Lane", "LANE", LANE_FIELDS),
    "",
    ...rustNames("The markers on the queue's `wake` (a sorted set).", "Wake", "WAKE", WAKE_MARKERS),
    "",
    ...rustNames("The fields of a scheduler's hash (`emq:{q}:scheduler:<name>`).", "Scheduler", "SCHEDULER", SCHEDULER_FIELDS),
    "",
    ...rustNames("The fields of the queue's history hash (`emq:{q}:metrics`) besides its minutes.", "History", "HISTORY", HISTORY_FIELDS),
    "",
    ...rustNames(
      "The kinds of event an entry of `events` has (its `type`).",
      "Events",
      "EVENT",
      Object.fromEntries(wire.EVENT_TYPES.map((t) => [t, wire.EVENTS[t].doc])),
    ),
    "",
    ...rustNames("The fields of an event entry after `type` (`EVENT_TYPE_FIELD`).", "EventFields", "EVENT_FIELD", wire.EVENT_FIELDS),
  ];
  return `${lines.join("\n")}\n`;
}

if (import.meta.main) {
  const check = process.argv.includes("--check");
  const want = new Map([
    [VECTORS, vectors()],
    [DOC, doc(readFileSync(DOC, "utf8"))],
    [RUST, rust()],
    [RUST_REFUSALS, rustRefusals()],
    [RUST_TABLE, rustTable()],
    [RUST_HANDLERS, rustHandlers()],
    [LUA_SCRIPTS, luaScripts()],
  ]);
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
