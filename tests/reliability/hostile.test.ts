/**
 * Hostile input: 200k random and mutated argument vectors (a seeded generator: valid calls
 * of every verb the module registers — batches of several groups included — with flipped /
 * inserted / deleted bytes, the meta key moved to another queue or type, ids or tokens swapped
 * between groups, groups duplicated or dropped, bad tokens, braces and NUL in names, empty
 * elements, wrong numkeys, bad numbers, bad ids, dropped / extra arguments and partial groups,
 * wrong verbs, garbage keys, a few payloads over 1 MiB, a few batches of 10000 and 10001 groups;
 * FLOW's and ADOPT's children of policy ≥ 4 mostly carry well-formed subtrees, 1 to 7 levels deep
 * and now and then 8, one level too many, before the mutations) go
 * through the host's keyspace checks (`splitQueueKey`, `Keyspace.fromKey`, `validQueue`) and as
 * raw `EMQ.*` calls to a standalone server with the module. For every call the host predicts the
 * module's verdict from the spec (lib/wire): an unknown command; shape (numkeys must be `1`, the
 * arguments the fixed ones plus k whole groups, 1 ≤ k ≤ 10000 for a verb with a group: the
 * `batch` refusal beyond); layout (the one key is the meta of a valid, non-empty queue name); a
 * gate with its exact text (the fixed arguments, then each group, in argument order); or "runs",
 * where the reply is a success or one of the verb's domain refusals with the call's own ids — and
 * exactly `repeated` when the call names a job twice, exactly `entry-form` when a subtree is
 * malformed (a host twin of the module's parser decides) and never when each is well formed. Calls go in non-atomic batches with
 * `DEBUG DIGEST` between every two, and every refusal leaves the digest unchanged. The server
 * survives.
 *
 * Keys and arguments are handled as binary strings (one char per byte, sent as latin1), so the host
 * checks see exactly the server's bytes; keys that are valid UTF-8 are also checked as decoded
 * text, and must get the same verdict.
 */
import { expect, test } from "bun:test";
import { Batch, Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import { Buffer } from "node:buffer";
import { EchoMQ, EchoMQError, WireError } from "../../client.ts";
import { serverText } from "../../lib/client/errors.ts";
import { prng } from "../../tools/prng.ts";
import { Keyspace, MAX_NAME_BYTES, splitQueueKey, validQueue } from "../../mod.ts";
import { argv as wireArgv, call, digest, expectOk, expectRefused, jobId, refusal, registeredVerbs, useModuleServer } from "../native/_native.ts";
import {
  type ArgName,
  ARGS,
  type Gate,
  gateDigits,
  MAX_BATCH,
  MAX_ERROR_BYTES,
  MAX_FLOW_DEPTH,
  MAX_LOG_LINE_BYTES,
  MAX_OPTIONS_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_REASON_BYTES,
  OPTION_NAMES,
  type OptionName,
  OPTIONS,
  parseRefusal,
  pieces,
  type Refusal,
  REFUSALS,
  refusalsOf,
  renderRefusal,
  type Verb,
  VERBS as SPEC,
  type VerbSpec,
} from "../../lib/wire/mod.ts";

const SEED = 0x5eed_2026;
const CASES = Number(process.env["EMQ_HOSTILE_CASES"] ?? 200_000);
const BATCH = 125; // calls per batch; the keyspace is reset (FLUSHALL) and re-seeded before each
const OVERSIZED_AT = new Set([1_234, 77_777, 150_001, 199_998]); // cases that carry a > 1 MiB payload
/** Cases that carry a whole batch: this many groups (the most a call may carry, and one more). */
const FULL_BATCH_AT = new Map([[4_321, MAX_BATCH + 1], [99_999, MAX_BATCH], [160_000, MAX_BATCH + 1]]);

/** The spec's verbs the module registers (the standalone suite asserts that is all of them). */
const VERBS: Verb[] = await registeredVerbs();

const site = useModuleServer(["--enable-debug-command", "yes"]);

// ---------------------------------------------------------------------------------------------
// Byte strings and a seeded generator

/** A binary string: one char per byte. */
type Bin = string;
const bin = (s: string): Bin => Buffer.from(s, "utf8").toString("latin1");
const wire = (b: Bin): Buffer => Buffer.from(b, "latin1");
/** Whether binary string `b` is valid UTF-8. */
const utf8 = (b: Bin): boolean => bin(Buffer.from(b, "latin1").toString("utf8")) === b;

const random = prng(SEED);
const int = (n: number): number => Math.floor(random() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
const bytes = (n: number): Bin => {
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(int(256));
  return s;
};

// ---------------------------------------------------------------------------------------------
// The host's prediction of what the module does with an argument vector, from the spec

const spec = (v: Verb): VerbSpec => SPEC[v];
const minGroups = (v: Verb): number => (spec(v) as { minGroups?: number }).minGroups ?? 1;

/** What the module must do with a call, as the host predicts it. */
type Prediction =
  | { kind: "unknown" }
  | { kind: "shape"; texts: string[] }
  | { kind: "batch"; text: string }
  | { kind: "layout"; text: string }
  | { kind: "gate"; text: string }
  | { kind: "runs"; verb: Verb; ids: Bin[]; repeated: Bin | null; forms: Forms };

/**
 * FLOW's and ADOPT's subtrees (a child of policy ≥ 4 carries one as its body): null for a verb
 * without them or a call without such a child, else whether every one is well formed — "bad" must
 * be refused `entry-form` (step 5's first check after `repeated`), "ok" never is.
 */
type Forms = "ok" | "bad" | null;

const ASCII_UPPER = (s: string): string => s.replace(/[a-z]/g, (c) => c.toUpperCase());
const digits = (s: Bin, most: number): number | null => (new RegExp(`^[0-9]{1,${most}}$`).test(s) ? Number(s) : null);
/** An error reply is one line: CR, LF and NUL become spaces (docs/WIRE.md; both backends). */
const oneLine = (s: Bin): Bin => s.replace(/[\r\n\0]/g, " ");

/** The verb a call names (any ASCII casing), if the module registers it. */
function verbOf(argv: Bin[]): Verb | null {
  const name = ASCII_UPPER(argv[0] ?? "");
  const verb = name.startsWith("EMQ.") ? (name.slice(4) as Verb) : null;
  return verb !== null && VERBS.includes(verb) ? verb : null;
}

/** The step-4 refusal of argument `name` holding `a`, or null when it passes its gate. */
function gateText(verb: Verb, name: ArgName, a: Bin): string | null {
  return gated(`EMQ.${verb}`, name, ARGS[name].gate, a);
}

/**
 * The options gate as docs/WIRE.md ("Options") states it: at most MAX_OPTIONS_BYTES; each NUL-joined
 * item `key=value` with a non-empty key, the key an option given once, its value through the option's
 * gate; then each option's `needs`, in the table's order.
 */
function optionsText(V: string, a: Bin): string | null {
  if (a.length > MAX_OPTIONS_BYTES) return renderRefusal("options", V, { limit: String(MAX_OPTIONS_BYTES) });
  if (a === "") return null;
  const seen = new Set<string>();
  for (const item of a.split("\0")) {
    const eq = item.indexOf("=");
    if (eq < 1) return renderRefusal("option-form", V, {});
    const key = item.slice(0, eq);
    if (!(OPTION_NAMES as readonly string[]).includes(key)) return renderRefusal("option-unknown", V, { option: key.replace(/[^\x20-\x7e]/g, "?") });
    if (seen.has(key)) return renderRefusal("option-repeated", V, { option: key });
    seen.add(key);
    const text = gated(V, key, OPTIONS[key as OptionName].gate, item.slice(eq + 1));
    if (text !== null) return text;
  }
  for (const o of OPTION_NAMES) {
    const needs = (OPTIONS[o] as { needs?: string }).needs;
    if (needs !== undefined && seen.has(o) && !seen.has(needs)) return renderRefusal("option-needs", V, { option: o, needs });
  }
  return null;
}

/** The refusal of `gate` for an argument (or option) `name` holding `a`, or null when it passes. */
function gated(V: string, name: string, gate: Gate, a: Bin): string | null {
  switch (gate.kind) {
    case "options":
      return optionsText(V, a);
    case "job-id":
      return a.startsWith("JOB") ? null : renderRefusal("job-id", V, {});
    case "number": {
      const n = digits(a, gateDigits(gate));
      if (n === null || n < gate.min) return renderRefusal(gate.min === 0 ? "non-negative" : "positive", V, { arg: name });
      if (gate.max !== undefined && n > gate.max) return renderRefusal("too-large", V, { arg: name, max: String(gate.max) });
      return null;
    }
    case "bytes":
      return a.length > gate.limit ? renderRefusal(gate.refusal, V, { limit: String(gate.limit) }) : null;
    case "lane":
      return a.length <= MAX_NAME_BYTES && !/[{}\0]/.test(a) ? null : renderRefusal("name", V, { arg: name, max: String(MAX_NAME_BYTES) });
    case "name":
      return a.length >= 1 && a.length <= MAX_NAME_BYTES && !/[{}\0]/.test(a) ? null : renderRefusal("name", V, { arg: name, max: String(MAX_NAME_BYTES) });
  }
}

/** `<decimal>\0<rest>`: at most `most` digits, no leading zero; null when not. */
function numberThen(b: Bin, most: number): [number, Bin] | null {
  const at = b.indexOf("\0");
  if (at < 0) return null;
  const n = digits(b.slice(0, at), most);
  return n !== null && String(n) === b.slice(0, at) ? [n, b.slice(at + 1)] : null;
}

/**
 * Whether `body` is a well-formed subtree of at most `levels` levels of children, as
 * `native/src/verbs/flows.rs` `subtree` parses it (docs/WIRE.md, "Flows"): `<n>\0<payload
 * length>\0<payload>` then per child `<id>\0<queue>\0<policy>\0<opts length>\0<opts><body
 * length>\0<body>`, 1 ≤ n ≤ MAX_BATCH, ids `JOB…`, queues by the name rule, options through their
 * gate, policies 0–7 (≥ 4: the body a subtree one level less), nothing left over.
 */
function subtreeOk(body: Bin, levels: number): boolean {
  if (levels < 1) return false;
  const head = numberThen(body, 5);
  const size = head && numberThen(head[1], 7);
  if (!head || !size || head[0] === 0 || head[0] > MAX_BATCH || size[1].length < size[0]) return false;
  let rest = size[1].slice(size[0]);
  for (let i = 0; i < head[0]; i++) {
    const f: Bin[] = [];
    for (let k = 0; k < 3; k++) {
      const at = rest.indexOf("\0");
      if (at < 0) return false;
      f.push(rest.slice(0, at));
      rest = rest.slice(at + 1);
    }
    const [id, queue, policyText] = f as [Bin, Bin, Bin];
    const policy = digits(policyText, 1);
    const o = numberThen(rest, 4);
    if (policy === null || !o || o[0] > MAX_OPTIONS_BYTES || o[1].length < o[0]) return false;
    if (optionsText("EMQ.FLOW", o[1].slice(0, o[0])) !== null) return false;
    const b = numberThen(o[1].slice(o[0]), 7);
    if (!b || !id.startsWith("JOB") || gated("", "queue", { kind: "name" }, queue) !== null || policy > 7 || b[1].length < b[0]) return false;
    if (policy >= 4 && !subtreeOk(b[1].slice(0, b[0]), levels - 1)) return false;
    rest = b[1].slice(b[0]);
  }
  return rest === "";
}

/** {@link Forms} of a call that passed its gates, from its groups' policies and bodies. */
function formsOf(s: VerbSpec, values: Bin[], k: number): Forms {
  const [at, body] = [s.group.indexOf("policy"), s.group.indexOf("body")];
  if (at < 0 || body < 0) return null;
  let forms: Forms = null;
  for (let j = 0; j < k; j++) {
    const g = s.args.length + j * s.group.length;
    if (Number(values[g + at]) < 4) continue;
    if (!subtreeOk(values[g + body]!, MAX_FLOW_DEPTH - 1)) return "bad";
    forms = "ok";
  }
  return forms;
}

function predict(argv: Bin[]): Prediction {
  const verb = verbOf(argv);
  if (verb === null) return { kind: "unknown" };
  const s = spec(verb);
  const V = `EMQ.${verb}`;
  const arity = renderRefusal("arity", V, {});
  // 1. shape: the server's own arity check (no argument at all), then numkeys "1" and whole groups
  if (argv.length < 2) return { kind: "shape", texts: [arity.replace(V, V.toLowerCase())] };
  if (argv.length < 3 || argv[1] !== "1") return { kind: "shape", texts: [arity] };
  const rest = argv.length - 3 - s.args.length;
  const G = s.group.length;
  if (rest < 0 || (G === 0 && rest !== 0) || (G > 0 && (rest < G * minGroups(verb) || rest % G !== 0))) {
    return { kind: "shape", texts: [arity] };
  }
  const k = G === 0 ? 0 : rest / G;
  if (k > MAX_BATCH) return { kind: "batch", text: renderRefusal("batch", V, { max: String(MAX_BATCH) }) };
  // 2. layout: the one key is the meta of a valid, non-empty queue name
  if (Keyspace.fromKey(argv[2]!, "meta") === null) return { kind: "layout", text: renderRefusal("layout", V, {}) };
  // 3. fence: this server is not fenced. 4. gates: the fixed arguments, then each group
  const values = argv.slice(3);
  const names: ArgName[] = [...s.args, ...Array.from({ length: k }, () => s.group).flat()];
  for (let i = 0; i < names.length; i++) {
    const text = gateText(verb, names[i]!, values[i]!);
    if (text !== null) return { kind: "gate", text };
  }
  // 5. the domain: repeated first, when the verb names jobs
  const at = s.group.indexOf("id");
  const children = at < 0 ? [] : Array.from({ length: k }, (_, j) => values[s.args.length + j * G + at]!);
  // FLOW names its parent first: no id twice among the parent and its children
  const parent = (s.args as readonly ArgName[]).indexOf("parent");
  const ids = parent < 0 ? children : [values[parent]!, ...children];
  let repeated: Bin | null = null;
  const seen = new Set<Bin>();
  for (const id of ids) {
    if (seen.has(id)) {
      repeated = id;
      break;
    }
    seen.add(id);
  }
  if (s.domain[0] !== "repeated") repeated = null;
  return { kind: "runs", verb, ids, repeated, forms: repeated === null ? formsOf(s, values, k) : null };
}

/** Refusals a call that passed every gate may still get on a standalone server as the default user. */
function domainRefusals(verb: Verb): Refusal[] {
  return refusalsOf(verb).filter((r) => REFUSALS[r].step === "domain" && r !== "noperm" && r !== "migrating");
}

/** Whether `ids` (space-separated in `text`) is a non-empty subsequence of the call's ids. */
function subsequence(text: string, ids: Bin[]): boolean {
  const want = text.split(" ");
  if (ids.length > 12) return want.length > 0; // too many to enumerate: the parse had to succeed
  for (let mask = 1; mask < 1 << ids.length; mask++) {
    const sub = ids.filter((_, i) => mask & (1 << i)).map(oneLine).join(" ");
    if (sub === text) return true;
  }
  return false;
}

/**
 * Whether `err` is a refusal the verb may give once it runs, naming the call's own ids (a verb
 * that names no job, DROP, names ids of the queue's state: JOB ids).
 */
function domainAgrees(p: Extract<Prediction, { kind: "runs" }>, err: string): boolean {
  const V = `EMQ.${p.verb}`;
  if (p.repeated !== null) return err === renderRefusal("repeated", V, { id: oneLine(p.repeated) });
  const malformed = renderRefusal("entry-form", V, {});
  if (p.forms === "bad") return err === malformed;
  if (p.forms === "ok" && err === malformed) return false;
  // an id with CR, LF or NUL is named with spaces, which the parser cannot tell from the text's own
  if (domainRefusals(p.verb).includes("duplicate") && p.ids.some((id) => err === renderRefusal("duplicate", V, { id: oneLine(id) }))) {
    return true;
  }
  const parsed = parseRefusal(err);
  if (parsed === null || !domainRefusals(p.verb).includes(parsed.name)) return false;
  if (parsed.verb !== null && parsed.verb !== V) return false;
  const namesJobs = spec(p.verb).group.includes("id");
  for (const piece of pieces(REFUSALS[parsed.name].template)) {
    if (!("param" in piece) || piece.param === "verb") continue;
    const value = parsed.params[piece.param]!;
    if (!namesJobs) {
      // the queue's own ids: JOB ids, but one with CR, LF or NUL is named with spaces, so only the
      // first is sure to start the text
      if ((piece.param === "id" || piece.param === "ids") && !value.startsWith("JOB")) return false;
      continue;
    }
    if (piece.param === "id" && !p.ids.map(oneLine).includes(value)) return false;
    if (piece.param === "ids" && !subsequence(value, p.ids)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Valid calls and their mutations

const NAMES: Bin[] = ["a", "b", "orders", "x:y", bin("ü-queue"), bin("队列"), "n".repeat(60), "sp ace", "\x7f\xff"];
const HOSTILE_NAMES: Bin[] = ["", "a}b", "{a", "a{b}c", "a\0b", "}", "{", "{}", "emq:{a}", "\0"];
const TYPES: Bin[] = ["pending", "active", "schedule", "dead", "wake", "job:JOB00000000001", "meta:x", "META", "", "meta\0", "metas"];
const IDS: Bin[] = Array.from({ length: 24 }, (_, i) => jobId(i + 1));
const SPECIAL = ["{", "}", "\0", ":", "0", "-", " ", "\xff", "\x80", "J", "9", "\r", "\n"];
const BAD_NUMKEYS = ["999999999", "0", "-1", "-2", "2", "3", "01", " 1", "1 ", "abc", "", "99999999999999999999", "+1", "1e0", "\xd9\xa1"];
const BAD_NUMBERS = [
  "-5",
  "-1",
  "0",
  "abc",
  "1e3",
  "1234567890123456",
  "",
  " 5",
  "5 ",
  "+5",
  "007",
  "999999999999999",
  "0x10",
  "5.5",
  "18446744073709551616",
  "\xd9\xa1",
  "00",
  "1",
  "10000",
  "10001",
];
const BAD_IDS = ["job00000000001", "", "JOB", "JO", "XJOB0000000001", "JOB\0", "JOB}", `${jobId(1)}x`, "J", "\0JOB", "JOB\r\nX", "JOB\xff"];
const WRONG_VERBS = ["EMQ.ENQUEUEX", "EMQ.FOO", "EMQ", "EMQ.", "EMQ.ACK ", "EMQ.ACK\0", "EMQ.ACK|x", "QME.CLAIM", "EMQ.CLAIMS", "emq.reapx"];
const CASINGS = (v: string): string[] => [`EMQ.${v}`, `emq.${v.toLowerCase()}`, `Emq.${v[0]}${v.slice(1).toLowerCase()}`];

/** A valid value of argument `name` (job `j` of the call, ids drawn without repeats). */
function valueOf(name: ArgName, ids: Bin[]): Bin {
  switch (name) {
    case "id":
      return ids.length > 0 ? ids.pop()! : pick(IDS);
    case "token":
      return String(T + (random() < 0.7 ? 1 + int(4) : 1 + int(50)));
    case "payload":
      return bytes(int(48));
    case "reason":
      return random() < 0.02 ? "r".repeat(MAX_REASON_BYTES + int(2)) : bytes(int(16));
    case "line": // a log line: sometimes past its bound
      return random() < 0.02 ? "l".repeat(MAX_LOG_LINE_BYTES + 1 + int(2)) : bytes(int(32));
    case "failure": // a failed attempt's error: often none, sometimes past its bound
      return random() < 0.02 ? "e".repeat(MAX_ERROR_BYTES + int(2)) : random() < 0.5 ? "" : bytes(int(64));
    case "due_ms":
      return String(random() < 0.7 ? int(1000) : Date.now() + 60_000);
    case "lease_ms":
      return String(random() < 0.3 ? 1 : 1 + int(60_000));
    case "delay_ms":
      return String(1 + int(50));
    case "limit":
      return String(1 + int(100));
    case "count":
      return String(random() < 0.01 ? MAX_BATCH + int(2) : 1 + int(5));
    case "block_ms":
      return random() < 0.9 ? "0" : String(1 + int(10));
    case "opts":
    case "parent_opts":
      return pick(OPTS);
    case "result": // one in a thousand past the limit (about ten of a run: a MiB each)
      return random() < 0.001 ? "v".repeat(MAX_PAYLOAD_BYTES + int(2)) : random() < 0.3 ? "" : bytes(int(48));
    case "policy": // FLOW, ADOPT: 0–3, or 4–7 with a subtree as the body (withSubtrees)
      return String(int(8));
    case "op": // SETTLE: ack, retry, bury, release
      return String(int(4));
    case "want": // SETTLE: often no claim at all
      return String(random() < 0.3 ? 0 : 1 + int(5));
    case "completed_max":
      return pick(["0", "1", "2", "1000", String(int(100))]);
    case "completed_age_ms":
      return pick(["0", "1", "86400000", String(int(100_000))]);
    case "events_max":
      return pick(["0", "1", "3", "10000", String(int(100))]);
    case "history_minutes":
      return pick(["0", "1", "1440", String(int(100))]);
  }
  // an argument added to the spec since: a valid value from its gate
  const gate: Gate = ARGS[name as ArgName].gate;
  if (gate.kind === "number") return String(Math.min(gate.min + int(100), gate.max ?? Infinity));
  if (gate.kind === "bytes") return random() < 0.02 ? "v".repeat(gate.limit + 1) : bytes(int(24));
  if (gate.kind === "name") return pick(["nightly", "n", "a{b", "", "x}"]);
  return pick(IDS);
}

/** Options, valid and not: none, each option, keys held twice, bad forms, gates and needs. */
const OPTS: readonly Bin[] = [
  "",
  "",
  "",
  "timeout_ms=5000",
  "dedup=k1",
  "dedup=k2",
  "dedup=k1\0debounce=1",
  "dedup=k1\0dedup_ms=50",
  "dedup=k1\0dedup_ms=50\0debounce=1",
  "timeout_ms=0",
  "timeout_ms=x",
  "dedup=a{b",
  "dedup=",
  "debounce=2\0dedup=k1",
  "dedup_ms=5",
  "debounce=1",
  "lane=x",
  "dedup=k1\0dedup=k2",
  "dedup",
  "=v",
  "dedup=k1\0",
  "\0",
  "x".repeat(4097),
  `dedup=${"k".repeat(1025)}`,
  "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  "timeout_ms=5000\0traceparent=x",
  "traceparent={x",
  "traceparent=\0",
  `traceparent=${"t".repeat(1025)}`,
  "name=send-invoice",
  "dedup=k\0name=x",
  "name={x",
  `name=${"n".repeat(1025)}`,
  "priority=1",
  "priority=7",
  "priority=0",
  "priority=2097151",
  "priority=2097152",
  "priority=-1",
  "priority=1\0priority=2",
  "dedup=k1\0priority=3",
];

/** Valid options of a flow step (a subtree's child carries its own). */
const STEP_OPTS: readonly Bin[] = ["", "", "priority=3", "lane=x", "name=n", "lane=x\0priority=1", "timeout_ms=5000"];
let subtreeIds = 0;

/**
 * A well-formed subtree (docs/WIRE.md, "Flows") with `levels` levels of children below its payload:
 * 1 to 3 children, ids of their own, valid queues, options and policies; one child of each level
 * but the last carries the next level.
 */
function subtreeOf(levels: number): Bin {
  const n = 1 + int(3);
  const payload = bytes(int(12));
  let out = `${n}\0${payload.length}\0${payload}`;
  for (let i = 0; i < n; i++) {
    const nested = levels > 1 && i === 0;
    const body = nested ? subtreeOf(levels - 1) : bytes(int(12));
    const opts = pick(STEP_OPTS);
    const id = `JOB${String(++subtreeIds).padStart(11, "0")}`;
    out += `${id}\0${pick(NAMES.filter((q) => q.length <= MAX_NAME_BYTES))}\0${int(4) + (nested ? 4 : 0)}\0${opts.length}\0${opts}${body.length}\0${body}`;
  }
  return out;
}

/** FLOW and ADOPT: most children of policy ≥ 4 get a well-formed subtree, now and then one level too deep. */
function withSubtrees(argv: Bin[]): void {
  const shape = layoutOf(argv);
  if (shape === null || !shape.s.group.includes("body") || !shape.s.group.includes("policy")) return;
  for (const g of shape.groups) {
    const policy = Number(argv[shape.at(g, "policy")]);
    if (policy < 4 || random() < 0.2) continue;
    argv[shape.at(g, "body")] = subtreeOf(random() < 0.05 ? MAX_FLOW_DEPTH : 1 + int(MAX_FLOW_DEPTH - 1));
  }
}

function validCall(): Bin[] {
  const verb = random() < 0.05 ? pick(["FLOW", "ADOPT"] as const) : pick(VERBS); // subtrees are seldom whole otherwise
  const s = spec(verb);
  const ks = new Keyspace(pick(NAMES));
  const argv = [random() < 0.8 ? `EMQ.${verb}` : pick(CASINGS(verb)), "1", ks.meta];
  const ids = [...IDS].sort(() => random() - 0.5);
  for (const a of s.args) argv.push(valueOf(a, ids));
  if (s.group.length > 0) {
    const k = random() < 0.6 ? Math.max(1, minGroups(verb)) : minGroups(verb) + int(5);
    for (let j = 0; j < k; j++) for (const a of s.group) argv.push(valueOf(a, ids));
  }
  withSubtrees(argv);
  return argv;
}

/** Where a call's arguments are, for the verb it was built as: its fixed ones and its groups. */
function layoutOf(argv: Bin[]): { verb: Verb; s: VerbSpec; groups: number[]; at: (g: number, a: ArgName) => number } | null {
  const verb = verbOf(argv);
  if (verb === null) return null;
  const s = spec(verb);
  const G = s.group.length;
  const first = 3 + s.args.length;
  const k = G === 0 ? 0 : Math.max(0, Math.floor((argv.length - first) / G));
  return {
    verb,
    s,
    groups: Array.from({ length: k }, (_, j) => first + j * G),
    at: (g, a) => g + s.group.indexOf(a),
  };
}

function renameQueue(key: Bin, name: Bin): Bin {
  const open = key.indexOf("{");
  const close = key.indexOf("}", open + 1);
  if (open < 0 || close < 0) return key;
  return key.slice(0, open + 1) + name + key.slice(close);
}

function retype(key: Bin, type: Bin): Bin {
  const close = key.indexOf("}:");
  return close < 0 ? key : key.slice(0, close + 2) + type;
}

function mutate(argv: Bin[]): void {
  const at = (): number => 1 + int(Math.max(1, argv.length - 1));
  const shape = layoutOf(argv);
  const G = shape?.s.group.length ?? 0;
  const group = (): number | undefined => (shape && shape.groups.length > 0 ? pick(shape.groups) : undefined);
  switch (int(19)) {
    case 0: { // flip or replace one byte
      const i = at();
      const s = argv[i] ?? "";
      if (s.length === 0) break;
      const p = int(s.length);
      const c = random() < 0.5 ? String.fromCharCode(s.charCodeAt(p) ^ (1 << int(8))) : pick(SPECIAL);
      argv[i] = s.slice(0, p) + c + s.slice(p + 1);
      break;
    }
    case 1: { // insert a byte
      const i = at();
      const s = argv[i] ?? "";
      const p = int(s.length + 1);
      argv[i] = s.slice(0, p) + (random() < 0.5 ? pick(SPECIAL) : bytes(1)) + s.slice(p);
      break;
    }
    case 2: { // delete a byte
      const i = at();
      const s = argv[i] ?? "";
      if (s.length === 0) break;
      const p = int(s.length);
      argv[i] = s.slice(0, p) + s.slice(p + 1);
      break;
    }
    case 3: // the key moved to another (possibly hostile) queue name
      if (argv[2] !== undefined) argv[2] = renameQueue(argv[2], pick(random() < 0.6 ? NAMES : HOSTILE_NAMES));
      break;
    case 4: // the key of another type of the same queue
      if (argv[2] !== undefined) argv[2] = retype(argv[2], pick(TYPES));
      break;
    case 5: { // ids swapped between two groups (each then names another's token)
      const [g1, g2] = [group(), group()];
      if (g1 === undefined || g2 === undefined || !shape!.s.group.includes("id")) break;
      const [i, j] = [shape!.at(g1, "id"), shape!.at(g2, "id")];
      [argv[i], argv[j]] = [argv[j]!, argv[i]!];
      break;
    }
    case 6: { // tokens (or another group argument) swapped between two groups
      const [g1, g2] = [group(), group()];
      if (g1 === undefined || g2 === undefined) break;
      const a = shape!.s.group.includes("token") ? "token" : pick(shape!.s.group);
      const [i, j] = [shape!.at(g1, a), shape!.at(g2, a)];
      [argv[i], argv[j]] = [argv[j]!, argv[i]!];
      break;
    }
    case 7: { // a group duplicated (the same job twice)
      const g = group();
      if (g === undefined) break;
      const copy = argv.slice(g, g + G);
      argv.splice(pick(shape!.groups), 0, ...copy);
      break;
    }
    case 8: { // a bad token
      const g = group();
      if (g === undefined || !shape!.s.group.includes("token")) break;
      argv[shape!.at(g, "token")] = pick(BAD_NUMBERS);
      break;
    }
    case 9: // an empty element
      argv[at()] = "";
      break;
    case 10: // numkeys
      argv[1] = pick(BAD_NUMKEYS);
      break;
    case 11: { // a number argument, fixed or in a group
      if (!shape) break;
      const slots: number[] = [];
      shape.s.args.forEach((a, i) => ARGS[a].gate.kind === "number" && 3 + i < argv.length && slots.push(3 + i));
      for (const g of shape.groups) for (const a of shape.s.group) if (ARGS[a].gate.kind === "number") slots.push(shape.at(g, a));
      if (slots.length > 0) argv[pick(slots)] = pick(BAD_NUMBERS);
      break;
    }
    case 12: { // an id: a bad one, or another valid one
      const g = group();
      if (g === undefined || !shape!.s.group.includes("id")) break;
      argv[shape!.at(g, "id")] = random() < 0.5 ? pick(BAD_IDS) : pick(IDS);
      break;
    }
    case 13: // drop an element
      argv.splice(at(), 1);
      break;
    case 14: { // more: one element, part of a group, or a whole extra group
      const r = random();
      if (r < 0.3 || G === 0) argv.push(random() < 0.5 ? "extra" : bytes(int(8)));
      else if (r < 0.6) argv.push(...argv.slice(-G, -1));
      else argv.push(...argv.slice(-G));
      break;
    }
    case 15: // a wrong verb
      argv[0] = pick(WRONG_VERBS);
      break;
    case 16: { // a garbage key
      if (argv.length < 3) break;
      let s = "";
      for (let n = int(6); n >= 0; n--) {
        s += pick(["emq:{", "}", ":", "meta", "pending", "job:", "{", "\0", "emq:", "}:", bytes(1 + int(4))]);
      }
      argv[2] = s;
      break;
    }
    case 17: { // a whole group dropped
      const g = group();
      if (g !== undefined) argv.splice(g, G);
      break;
    }
    case 18: // the arguments of one verb sent as another
      argv[0] = `EMQ.${pick(VERBS)}`;
      break;
  }
}

function hostileCall(n: number): Bin[] {
  if (OVERSIZED_AT.has(n)) {
    const ks = new Keyspace(pick(NAMES));
    const big = "P".repeat(MAX_PAYLOAD_BYTES + 1 + int(MAX_PAYLOAD_BYTES));
    return random() < 0.5
      ? wireArgv("ENQUEUE", ks, {}, [{ id: pick(IDS), payload: big }])
      : wireArgv("SCHEDULE", ks, {}, [{ id: pick(IDS), due_ms: 0 }, { id: jobId(900), due_ms: 0, payload: big }]);
  }
  const k = FULL_BATCH_AT.get(n);
  if (k !== undefined) {
    const ks = new Keyspace(pick(NAMES));
    const verb = pick(["ENQUEUE", "ACK"] as const);
    return wireArgv(verb, ks, {}, Array.from({ length: k }, (_, j) => ({ id: jobId(10_000 + j), token: 1, payload: "x" })));
  }
  if (random() < 0.03) { // fully random vector
    return Array.from({ length: 1 + int(8) }, (_, i) => (i === 0 ? pick([...WRONG_VERBS, ...VERBS.map((v) => `EMQ.${v}`)]) : bytes(int(24))));
  }
  const argv = validCall();
  const rounds = random() < 0.15 ? 0 : 1 + int(3);
  for (let r = 0; r < rounds; r++) mutate(argv);
  if (argv.some((a) => typeof a !== "string")) throw new Error(`a mutation left a hole: ${JSON.stringify(argv)}`);
  return argv;
}

/**
 * What glide can carry and a pipeline can survive. The server echoes the first arguments of an
 * unknown command in its error text, byte for byte, and the module names ids in some refusals
 * (repeated, duplicate, lease-lost); glide 2.2.5 cannot parse an error reply that is not UTF-8: it
 * drops the connection (and every request in flight on it). So the arguments of an unknown command
 * are sent as printable ASCII, and ids of a call that runs as valid UTF-8. A CLAIM that runs waits
 * at most 20 ms (a longer wait would stall the pipeline). The prediction is made again after.
 */
/** Whether `verb` admits jobs (its reply is an array when a job carries a dedup key). */
const admits = (verb: Verb): boolean => spec(verb).group.includes("opts");

function sendable(argv: Bin[], p: Prediction): Bin[] {
  if (p.kind === "unknown") return argv.map((a, i) => (i === 0 ? a : a.replace(/[^\x20-\x7e]/g, "?")));
  if (p.kind !== "runs") return argv;
  const out = [...argv];
  const s = spec(p.verb);
  if (s.group.includes("id")) {
    const at = s.group.indexOf("id");
    for (let i = 3 + s.args.length + at; i < out.length; i += s.group.length) {
      if (!utf8(out[i]!)) out[i] = out[i]!.replace(/[\x80-\xff]/g, "?");
    }
  }
  const block = s.args.indexOf("block_ms");
  if (block >= 0 && Number(out[3 + block]) > 20) out[3 + block] = String(int(21));
  return out;
}

/** meta's `tokens` in the seed, above now × 1000 (until 2255): the seed's claims get T+1, T+2, … */
const T = 9_000_000_000_000_000;

// State for the domain steps to meet: rows, pending, active (tokens T+1 – T+3), scheduled and dead ids,
// keys of the wrong Valkey type, a counter that is not an integer. Rebuilt (after FLUSHALL) at the
// start of every batch.
function seed(): Bin[][] {
  const out: Bin[][] = [["FLUSHALL", "SYNC"]];
  // small on purpose: DEBUG DIGEST, run after every call, costs time in proportion to the keys
  for (const name of ["a", bin("ü-queue")]) {
    const ks = new Keyspace(name);
    out.push(wireArgv("ENQUEUE", ks, {}, IDS.slice(0, 4).map((id) => ({ id, payload: "p" }))));
    out.push(["HSET", ks.meta, "tokens", String(T)]);
    out.push(wireArgv("CLAIM", ks, { lease_ms: 60_000, count: 2, block_ms: 0 }));
    out.push(wireArgv("SCHEDULE", ks, {}, [{ id: IDS[10]!, due_ms: Date.now() + 60_000, payload: "s" }]));
    out.push(wireArgv("CLAIM", ks, { lease_ms: 1, count: 1, block_ms: 0 }));
    out.push(wireArgv("BURY", ks, {}, [{ id: IDS[0]!, token: T + 1, reason: "dead" }]));
  }
  out.push(["SET", "emq:{b}:pending", "not a list"]);
  out.push(["SET", "emq:{b}:active", "not a zset"]);
  out.push(["LPUSH", `emq:{orders}:job:${IDS[12]}`, "not a hash"]);
  out.push(["HSET", `emq:{x:y}:job:${IDS[13]}`, "attempts", "NaN", "state", "pending"]);
  out.push(["LPUSH", "emq:{x:y}:pending", IDS[13]!]);
  out.push(["HSET", "emq:{sp ace}:meta", "tokens", "x", "enqueued", "1.5"]);
  return out;
}

// ---------------------------------------------------------------------------------------------

function plainError(r: GlideReturnType | Error): string | null {
  if (!(r instanceof Error)) return null;
  return serverText(r) ?? r.message;
}

test(`${CASES} hostile calls: host and module agree on every verdict; refusals change nothing`, async () => {
  const pid = site.server.pid;
  const tally = { unknown: 0, shape: 0, batch: 0, layout: 0, gate: 0, domain: 0, repeated: 0, ok: 0, utf8Checked: 0, subtreesOk: 0, subtreesBad: 0 };
  const mismatches: string[] = [];
  const note = (what: string): void => {
    if (mismatches.length < 20) mismatches.push(what);
  };
  const show = (argv: Bin[]): string =>
    JSON.stringify(argv.slice(0, 12).map((a) => (a.length > 80 ? `${a.slice(0, 40)}…(${a.length} bytes)` : a))) +
    (argv.length > 12 ? `…(${argv.length} elements)` : "");

  for (let done = 0; done < CASES; done += BATCH) {
    const raw = Array.from({ length: Math.min(BATCH, CASES - done) }, (_, i) => hostileCall(done + i));
    const calls = raw.map((argv) => sendable(argv, predict(argv)));
    const predictions = calls.map(predict);

    // The host checks alone, on the key: bytes and (when valid UTF-8) text agree.
    for (const argv of calls) {
      const b = argv[2];
      if (b === undefined) continue;
      const split = splitQueueKey(b);
      if (split !== null && !validQueue(split.queue)) note(`splitQueueKey accepted an invalid name: ${show([b])}`);
      const text = Buffer.from(b, "latin1").toString("utf8");
      if (bin(text) !== b) continue; // not valid UTF-8: the byte view is the only one
      tally.utf8Checked++;
      const t = splitQueueKey(text);
      const same = (split === null && t === null) ||
        (split !== null && t !== null && bin(t.queue) === split.queue && bin(t.type) === split.type);
      if (!same) note(`byte and text verdicts differ for ${show([b])}`);
      if ((Keyspace.fromKey(text, "meta") === null) !== (Keyspace.fromKey(b, "meta") === null)) {
        note(`Keyspace.fromKey differs on bytes and text for ${show([b])}`);
      }
    }

    const batch = new Batch(false);
    for (const c of seed()) batch.customCommand(c.map(wire));
    batch.customCommand(["DEBUG", "DIGEST"]);
    for (const argv of calls) {
      batch.customCommand(argv.map(wire));
      batch.customCommand(["DEBUG", "DIGEST"]);
    }
    const replies = (await site.db.exec(batch, false, { decoder: Decoder.Bytes, timeout: 60_000 })) as Array<
      GlideReturnType | Error
    >;
    const base = seed().length;
    for (let i = 0; i < base; i++) {
      if (replies[i] instanceof Error) note(`the seed failed: ${show(seed()[i]!)} → ${plainError(replies[i]!)}`);
    }
    for (let i = 0; i < calls.length; i++) {
      const before = String(replies[base + 2 * i]);
      const reply = replies[base + 2 * i + 1]!;
      const after = String(replies[base + 2 * i + 2]);
      if (before.length !== 40 || after.length !== 40) note(`DEBUG DIGEST failed around ${show(calls[i]!)}`);
      const p = predictions[i]!;
      const err = plainError(reply);
      if (p.kind === "runs" && p.forms !== null) tally[p.forms === "ok" ? "subtreesOk" : "subtreesBad"]++;
      if (err === null) {
        tally.ok++;
        if (p.kind !== "runs" || p.repeated !== null || p.forms === "bad") note(`host predicted ${JSON.stringify(p)}, module ran ${show(calls[i]!)}`);
        else if (p.verb === "SETTLE") {
          // `[next_ms, [status…], job…]`: one status (0, 1 or 2) per settlement
          const k = p.ids.length;
          const statuses = Array.isArray(reply) ? reply[1] : undefined;
          if (
            !Array.isArray(reply) || typeof reply[0] !== "number" || !Array.isArray(statuses) || statuses.length !== k ||
            !statuses.every((x) => x === 0 || x === 1 || x === 2)
          ) note(`not a SETTLE reply: ${show(calls[i]!)}`);
        } else if (p.verb === "CANCEL") {
          // one status (0 to 3) per id
          if (!Array.isArray(reply) || reply.length !== p.ids.length || !reply.every((x) => x === 0 || x === 1 || x === 2 || x === 3)) {
            note(`not a CANCEL reply: ${show(calls[i]!)}`);
          }
        } else if (p.verb === "OUTBOX") {
          // `[token, entry]…`: pairs
          if (!Array.isArray(reply) || reply.length % 2 !== 0) note(`not an OUTBOX reply: ${show(calls[i]!)}`);
        } else if (p.verb !== "CLAIM" && typeof reply !== "number" && !(admits(p.verb) && Array.isArray(reply))) {
          note(`not an integer reply: ${show(calls[i]!)}`);
        } else if (p.verb === "CLAIM" && !(Array.isArray(reply) && typeof reply[0] === "number")) {
          note(`not a CLAIM reply: ${show(calls[i]!)}`);
        }
        continue;
      }
      if (before !== after) note(`refusal ${JSON.stringify(err)} changed the digest: ${show(calls[i]!)}`);
      let agree: boolean;
      switch (p.kind) {
        case "unknown":
          agree = err.startsWith("ERR unknown command");
          break;
        case "shape":
          agree = p.texts.includes(err);
          break;
        case "batch":
        case "layout":
        case "gate":
          agree = err === p.text;
          break;
        case "runs":
          agree = domainAgrees(p, err);
          break;
      }
      if (!agree) note(`host predicted ${JSON.stringify(p)}, module said ${JSON.stringify(err)}: ${show(calls[i]!)}`);
      tally[p.kind === "runs" ? (p.repeated !== null ? "repeated" : "domain") : p.kind]++;
    }
  }

  // The server is alive and well.
  expect(await site.db.ping()).toBe("PONG");
  expect(() => process.kill(pid, 0)).not.toThrow();
  expect(site.server.log()).not.toMatch(/BUG REPORT|panicked|Segmentation|crashed/i);
  console.log(
    `[hostile] ${CASES} calls: unknown verb ${tally.unknown}, shape ${tally.shape}, batch ${tally.batch}, ` +
      `layout ${tally.layout}, gate ${tally.gate}, repeated ${tally.repeated}, domain ${tally.domain} refusals, ` +
      `${tally.ok} ran; ${tally.utf8Checked} keys also checked as UTF-8 text; FLOW/ADOPT with subtrees: ` +
      `${tally.subtreesOk} well formed, ${tally.subtreesBad} malformed; disagreements ${mismatches.length}`,
  );
  expect(mismatches).toEqual([]);
  expect(tally.layout).toBeGreaterThan(CASES / 20);
  expect(tally.gate).toBeGreaterThan(CASES / 20);
  expect(tally.shape).toBeGreaterThan(CASES / 20);
  expect(tally.domain).toBeGreaterThan(CASES / 50);
  expect(tally.repeated).toBeGreaterThan(CASES / 200);
  if (CASES > 4_321) expect(tally.batch).toBeGreaterThan(0);
  expect(tally.ok).toBeGreaterThan(CASES / 20);
  expect(tally.subtreesOk).toBeGreaterThan(CASES / 4000);
  expect(tally.subtreesBad).toBeGreaterThan(CASES / 4000);
}, 900_000);

test("clear error texts: oversized payloads and batches, bad numbers, huge numkeys, zero leases, delays and tokens", async () => {
  const ks = new Keyspace("texts");
  const id = jobId(1);
  const groups = (n: number) => Array.from({ length: n }, (_, j) => ({ id: jobId(100 + j), token: 1 }));
  const cases: Array<[string[], string]> = [
    [wireArgv("ENQUEUE", ks, {}, [{ id, payload: "x".repeat(MAX_PAYLOAD_BYTES + 1) }]), refusal("payload", "ENQUEUE", { limit: String(MAX_PAYLOAD_BYTES) })],
    [
      wireArgv("SCHEDULE", ks, {}, [{ id, due_ms: 0, payload: "x".repeat(2 * MAX_PAYLOAD_BYTES) }]),
      refusal("payload", "SCHEDULE", { limit: String(MAX_PAYLOAD_BYTES) }),
    ],
    [wireArgv("SCHEDULE", ks, {}, [{ id, due_ms: "soon" }]), refusal("non-negative", "SCHEDULE", { arg: "due_ms" })],
    [wireArgv("SCHEDULE", ks, {}, [{ id, due_ms: "-1" }]), refusal("non-negative", "SCHEDULE", { arg: "due_ms" })],
    [wireArgv("SCHEDULE", ks, {}, [{ id, due_ms: "1234567890123456" }]), refusal("non-negative", "SCHEDULE", { arg: "due_ms" })],
    [wireArgv("CLAIM", ks, { lease_ms: "abc" }), refusal("positive", "CLAIM", { arg: "lease_ms" })],
    [wireArgv("CLAIM", ks, { lease_ms: "0" }), refusal("positive", "CLAIM", { arg: "lease_ms" })],
    [wireArgv("CLAIM", ks, { lease_ms: "-30000" }), refusal("positive", "CLAIM", { arg: "lease_ms" })],
    [wireArgv("CLAIM", ks, { count: "0" }), refusal("positive", "CLAIM", { arg: "count" })],
    [wireArgv("CLAIM", ks, { count: String(MAX_BATCH + 1) }), refusal("too-large", "CLAIM", { arg: "count", max: String(MAX_BATCH) })],
    [wireArgv("CLAIM", ks, { block_ms: "-1" }), refusal("non-negative", "CLAIM", { arg: "block_ms" })],
    [wireArgv("RETRY", ks, {}, [{ id, delay_ms: "-5" }]), refusal("non-negative", "RETRY", { arg: "delay_ms" })],
    [wireArgv("RETRY", ks, {}, [{ id, delay_ms: "1.5" }]), refusal("non-negative", "RETRY", { arg: "delay_ms" })],
    [wireArgv("ACK", ks, {}, [{ id, token: "9007199254740992" }]), refusal("too-large", "ACK", { arg: "token", max: "9007199254740991" })],
    [wireArgv("ACK", ks, {}, [{ id, token: "0" }]), refusal("positive", "ACK", { arg: "token" })],
    [wireArgv("ACK", ks, {}, [{ id, token: "abc" }]), refusal("positive", "ACK", { arg: "token" })],
    [wireArgv("EXTEND", ks, { lease_ms: "0" }, [{ id }]), refusal("positive", "EXTEND", { arg: "lease_ms" })],
    [wireArgv("PROMOTE", ks, { limit: "all" }), refusal("positive", "PROMOTE", { arg: "limit" })],
    [wireArgv("REAP", ks, { limit: "0" }), refusal("positive", "REAP", { arg: "limit" })],
    [wireArgv("BURY", ks, {}, [{ id, reason: "r".repeat(MAX_REASON_BYTES + 1) }]), refusal("reason", "BURY", { limit: String(MAX_REASON_BYTES) })],
    [wireArgv("ACK", ks, {}, groups(MAX_BATCH + 1)), refusal("batch", "ACK", { max: String(MAX_BATCH) })],
    [wireArgv("ENQUEUE", ks, {}, [{ id }, { id: jobId(2) }, { id }]), refusal("repeated", "ENQUEUE", { id })],
    [wireArgv("ACK", ks, {}, [{ id, token: 1 }, { id: jobId(2), token: 3 }]), refusal("lease-lost", "ACK", { ids: `${id} ${jobId(2)}` })],
    [["EMQ.ENQUEUE", "999999999", ks.meta, id, "p"], refusal("arity", "ENQUEUE", {})],
    [["EMQ.CLAIM", "999999999", ks.meta, "1", "1", "0"], refusal("arity", "CLAIM", {})],
    [["EMQ.ACK", "-1", ks.meta, id, "1"], refusal("arity", "ACK", {})],
    [["EMQ.ACK", "2", ks.meta, id, "1"], refusal("arity", "ACK", {})],
    [wireArgv("ENQUEUE", ks, {}, [{ id: "nope" }]), refusal("job-id", "ENQUEUE", {})],
    [wireArgv("ENQUEUE", { meta: ks.pending }, {}, [{ id }]), refusal("layout", "ENQUEUE", {})],
  ];
  for (const [argv, text] of cases) {
    const before = await digest(site.db);
    expectRefused(await call(site.db, argv), text);
    expect(await digest(site.db)).toBe(before);
  }
  // exactly the limits are accepted
  expectOk(await call(site.db, wireArgv("ENQUEUE", ks, {}, [{ id, payload: "x".repeat(MAX_PAYLOAD_BYTES) }])), 1);
  expectOk(await call(site.db, wireArgv("ENQUEUE", ks, {}, groups(MAX_BATCH))), MAX_BATCH);

  // through the client: the same rules, checked before any wire or named by the server's text
  const mq = await EchoMQ.connect<string>({ addresses: [{ host: "127.0.0.1", port: site.server.port }], requestTimeout: 10_000 });
  try {
    const before = await digest(site.db);
    const big = await mq.enqueue("texts", "x".repeat(MAX_PAYLOAD_BYTES + 1)).catch((e) => e);
    expect(big).toBeInstanceOf(WireError);
    expect((big as WireError).rule).toBe("gate");
    expect((big as WireError).text).toBe(refusal("payload", "ENQUEUE", { limit: String(MAX_PAYLOAD_BYTES) }));
    const ref = { id: id as never, queue: "texts", token: 1 };
    for (
      const [run, rule] of [
        [() => mq.claim("texts", { leaseMs: 0 }), "lease-ms"],
        [() => mq.claim("texts", { leaseMs: -1 }), "lease-ms"],
        [() => mq.claim("texts", { leaseMs: Number.NaN }), "lease-ms"],
        [() => mq.claimMany("texts", 0, { leaseMs: 1000 }), "count"],
        [() => mq.extend(ref, 0), "lease-ms"],
        [() => mq.retry(ref, { delayMs: -5 }), "delay-ms"],
        [() => mq.schedule("texts", "p", { delayMs: -1 }), "delay-ms"],
        [() => mq.schedule("texts", "p", { at: 1e16 }), "due-ms"],
        [() => mq.promote("texts", 0), "limit"],
        [() => mq.reap("texts", -1), "limit"],
      ] as Array<[() => Promise<unknown>, EchoMQError["rule"]]>
    ) {
      const e = await run().catch((x) => x);
      expect(e).toBeInstanceOf(EchoMQError);
      expect((e as EchoMQError).rule).toBe(rule);
      expect((e as EchoMQError).message).toMatch(/must be an integer from \d+ to 999999999999999/);
      // the wire is 5: a message naming wire-4 is stale
      expect((e as EchoMQError).message).not.toMatch(/wire-4/);
    }
    const tooMany = await mq.claimMany("texts", MAX_BATCH + 1, { leaseMs: 1000 }).catch((x) => x);
    expect(tooMany).toBeInstanceOf(EchoMQError);
    expect((tooMany as EchoMQError).rule).toBe("count");
    expect(await digest(site.db)).toBe(before);
  } finally {
    await mq.close();
  }
}, 120_000);
