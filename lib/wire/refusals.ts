/**
 * Every refusal of the wire, with its exact text: written once here, rendered by the Lua twin's
 * prelude, parsed back by the client's error decoder, generated into the native module's
 * `native/src/refusal.rs` (whose texts its unit tests check through `tests/vectors/wire.json`) and
 * printed in docs/WIRE.md.
 *
 * A template's `{verb}` is the upper-case verb (`EMQ.ENQUEUE`); other `{…}` are the refusal's
 * parameters. Two refusals are the server's own texts, so that clients and cluster routers treat
 * them as they treat the server's: `migrating` (TRYAGAIN: retry, nothing was written) and `noperm`.
 *
 * @module
 */
import { MAX_COUNTER_DIGITS, WIRE } from "./verbs.ts";

/** The step of the wire at which a refusal happens (docs/WIRE.md, "Steps"). */
export type Step = "shape" | "layout" | "fence" | "gate" | "domain";

/** One refusal: the step that gives it and its text. */
export interface RefusalSpec {
  /** The step. */
  readonly step: Step;
  /** The text, with `{verb}` and the refusal's parameters as `{name}`. */
  readonly template: string;
  /** What it means, for docs/WIRE.md. */
  readonly doc: string;
}

/** The refusals, in the order the steps check them. */
export const REFUSALS = {
  arity: {
    step: "shape",
    template: "ERR wrong number of arguments for '{verb}' command",
    doc: "numkeys is not 1, or the arguments are not the fixed ones plus a whole number (≥ 1) of groups",
  },
  layout: {
    step: "layout",
    template: `ERR {verb} keys do not match the wire-${WIRE} layout`,
    doc: "the declared key is not `emq:{q}:meta` of a valid queue name (non-empty for the module)",
  },
  fenced: {
    step: "fence",
    template: `ERR {verb} fenced: this server speaks wire {found}, not wire ${WIRE}`,
    doc: "the server's wire identity is another wire (`found`: its number, or `unknown` when not a number)",
  },
  batch: {
    step: "shape",
    template: "ERR {verb} at most {max} jobs per call",
    doc: "more groups (jobs) in one call than the wire allows",
  },
  "job-id": {
    step: "gate",
    template: "ERR {verb} id must be a JOB id",
    doc: "an id does not start with the 3 bytes `JOB`",
  },
  positive: {
    step: "gate",
    template: "ERR {verb} {arg} must be a positive integer",
    doc: "a number argument that must be ≥ 1 is not 1 to 15 ASCII digits (a token: 16), or is 0",
  },
  "non-negative": {
    step: "gate",
    template: "ERR {verb} {arg} must be a non-negative integer",
    doc: "a number argument that may be 0 is not 1 to 15 ASCII digits",
  },
  "too-large": {
    step: "gate",
    template: "ERR {verb} {arg} must be at most {max}",
    doc: "a number argument above its bound",
  },
  payload: {
    step: "gate",
    template: "ERR {verb} payload exceeds {limit} bytes",
    doc: "a payload longer than the limit in force (`emq.max-payload`; the scripts use its default)",
  },
  reason: {
    step: "gate",
    template: "ERR {verb} reason exceeds {limit} bytes",
    doc: "a failure reason longer than 4096 bytes",
  },
  failure: {
    step: "gate",
    template: "ERR {verb} failure exceeds {limit} bytes",
    doc: "a failed attempt's error longer than 8192 bytes",
  },
  log: {
    step: "gate",
    template: "ERR {verb} log line exceeds {limit} bytes",
    doc: "a log line longer than 1024 bytes",
  },
  name: {
    step: "gate",
    template: "ERR {verb} {arg} must be a name of 1 to {max} bytes without braces or NUL",
    doc: "a name argument (a scheduler's) that breaks the name rule: empty, longer than 1024 bytes, or " +
      "holding `{`, `}` or NUL",
  },
  spec: {
    step: "gate",
    template: "ERR {verb} spec exceeds {limit} bytes",
    doc: "a scheduler spec longer than 1024 bytes",
  },
  result: {
    step: "gate",
    template: "ERR {verb} result exceeds {limit} bytes",
    doc: "a result longer than the limit in force (`emq.max-payload`, as a payload's)",
  },
  entry: {
    step: "gate",
    template: "ERR {verb} entry exceeds {limit} bytes",
    doc: "an outbox entry longer than a child's payload limit and its header",
  },
  progress: {
    step: "gate",
    template: "ERR {verb} progress exceeds {limit} bytes",
    doc: "a progress value longer than 65536 bytes",
  },
  options: {
    step: "gate",
    template: "ERR {verb} options exceed {limit} bytes",
    doc: "a job's options longer than 4096 bytes",
  },
  "option-form": {
    step: "gate",
    template: "ERR {verb} options must be key=value items joined by NUL",
    doc: "a job's options hold an item without `=`, or with an empty key",
  },
  "option-unknown": {
    step: "gate",
    template: "ERR {verb} unknown option {option}",
    doc: "a job's options name a key that is not an option of this wire (`option`: the key, each byte outside printable ASCII as `?`)",
  },
  "option-repeated": {
    step: "gate",
    template: "ERR {verb} option {option} appears twice",
    doc: "a job's options give one key twice",
  },
  "option-needs": {
    step: "gate",
    template: "ERR {verb} option {option} needs option {needs}",
    doc: "a job's options give an option without the one it qualifies (`dedup_ms` or `debounce` without `dedup`)",
  },
  repeated: {
    step: "domain",
    template: "ERR {verb} id {id} appears twice",
    doc: "one call names the same job twice",
  },
  duplicate: {
    step: "domain",
    template: "ERR {verb} duplicate id {id}",
    doc: "ENQUEUE or SCHEDULE of an id whose row exists (the first such id)",
  },
  noperm: {
    step: "domain",
    template: "NOPERM No permissions to access a key",
    doc: "the caller's ACL user may not access a key the verb derives (the server's own text)",
  },
  wrongtype: {
    step: "domain",
    template: "WRONGTYPE Operation against a key holding the wrong kind of value",
    doc: "a key the verb reads or writes exists with another Valkey type",
  },
  "lease-lost": {
    step: "domain",
    template: "ERR {verb} lease lost: {ids}",
    doc: "a job (every such id, space-separated) is not active under this token: its lease ran out and " +
      "another claim holds it or it was settled, or it never was",
  },
  cancelled: {
    step: "domain",
    template: "ERR {verb} cancelled: {ids}",
    doc: "EXTEND of jobs cancelled under this token (every such id, space-separated): CANCEL buried them while " +
      "their worker held them; their handlers should stop (checked before `lease-lost`, of which they are a case)",
  },
  "entry-form": {
    step: "domain",
    template: "ERR {verb} malformed outbox entry",
    doc: "APPLY of an entry that is not one an outbox holds for this queue (its kind, fields or destination); FLOW or " +
      "ADOPT of a child with children (policy 4 or more) whose subtree is malformed or deeper than MAX_FLOW_DEPTH",
  },
  "outbox-lost": {
    step: "domain",
    template: "ERR {verb} outbox lease lost",
    doc: "UNBOX of an entry another relay now holds under a later token (this relay's lease ran out)",
  },
  active: {
    step: "domain",
    template: "ERR {verb} job is active: {ids}",
    doc: "REMOVE of jobs a worker holds (every such id, space-separated): remove them once settled",
  },
  "not-open": {
    step: "domain",
    template: "ERR {verb} the parent is not open and waiting for children",
    doc: "ADOPT for a parent whose row is missing, is no parent, was sealed (a one-shot FLOW is), or no longer waits " +
      "(the text names no id: an id that passed the gate may hold any bytes)",
  },
  "flow-place": {
    step: "domain",
    template: "ERR {verb} the parent has {found} children: the first added takes that place",
    doc: "ADOPT whose `from` is not the parent's count of children so far (another call added children first: read it again)",
  },
  "fan-in": {
    step: "domain",
    template: "ERR {verb} at most {max} children per parent",
    doc: "ADOPT that would take a parent past the most children one parent may have",
  },
  "not-dead": {
    step: "domain",
    template: "ERR {verb} job is not dead: {ids}",
    doc: "REQUEUE of ids that are not in the dead set (every such id, space-separated)",
  },
  "not-scheduled": {
    step: "domain",
    template: "ERR {verb} job is not scheduled: {ids}",
    doc: "RUN of ids that are not in the schedule (every such id, space-separated)",
  },
  counter: {
    step: "domain",
    template: "ERR hash value is not an integer",
    doc: "a counter the verb increments (a row's `attempts`, `meta`'s totals, `tokens` and `claimed`) is not an " +
      `integer as HINCRBY reads it, or has more than ${MAX_COUNTER_DIGITS} digits (HINCRBY's own text)`,
  },
  migrating: {
    step: "domain",
    template: "TRYAGAIN Multiple keys request during rehashing of slot",
    doc: "cluster: the queue's slot is being migrated and a key the verb needs is not on this node " +
      "(the server's own text; nothing written, retry)",
  },
} as const satisfies Record<string, RefusalSpec>;

/** The name of a refusal. */
export type Refusal = keyof typeof REFUSALS;

/** Every refusal name, in check order. */
export const REFUSAL_NAMES: readonly Refusal[] = Object.keys(REFUSALS) as Refusal[];

/** The parameter names of a template (`{verb}` excluded). */
export type Params<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? (P extends "verb" ? never : P) | Params<Rest>
  : never;

/** The parameters of refusal `R`. */
export type RefusalParams<R extends Refusal> = { readonly [P in Params<(typeof REFUSALS)[R]["template"]>]: string };

/** A template cut at its parameters: literal text and parameter names, alternating. */
export function pieces(template: string): Array<{ text: string } | { param: string }> {
  const out: Array<{ text: string } | { param: string }> = [];
  for (const part of template.split(/(\{\w+\})/)) {
    if (part === "") continue;
    const m = /^\{(\w+)\}$/.exec(part);
    out.push(m ? { param: m[1]! } : { text: part });
  }
  return out;
}

/** The exact text of refusal `name` for `verb` (`EMQ.CLAIM`) with its parameters. */
export function renderRefusal<R extends Refusal>(name: R, verb: string, params: RefusalParams<R>): string {
  const values = params as Readonly<Record<string, string>>;
  return pieces(REFUSALS[name].template)
    .map((p) => ("text" in p ? p.text : p.param === "verb" ? verb : values[p.param] ?? ""))
    .join("");
}

/** A server text recognised as a refusal: its name, the verb it names (if any) and its parameters. */
export interface ParsedRefusal {
  /** Which refusal. */
  readonly name: Refusal;
  /** The verb the text names (`EMQ.CLAIM`), or null for texts that name none (WRONGTYPE, …). */
  readonly verb: string | null;
  /** The parameters, by name. */
  readonly params: Readonly<Record<string, string>>;
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What a parameter matches: the verb, free text (found, ids), or one word. */
function paramPattern(p: string): string {
  if (p === "verb") return "(EMQ\\.[A-Z]+)";
  if (p === "found" || p === "ids") return "([\\s\\S]*)";
  if (p === "option") return "([\\s\\S]*?)";
  return "([^ ]+)";
}

// One anchored regular expression per refusal.
const PARSERS: ReadonlyArray<{ name: Refusal; re: RegExp; params: string[] }> = REFUSAL_NAMES.map((name) => {
  const params: string[] = [];
  const source = pieces(REFUSALS[name].template).map((p) => {
    if ("text" in p) return escape(p.text);
    params.push(p.param);
    return paramPattern(p.param);
  }).join("");
  return { name, re: new RegExp(`^${source}$`), params };
});

/** Recognises a server's error text as one of the wire's refusals; `null` when it is none of them. */
export function parseRefusal(text: string): ParsedRefusal | null {
  for (const { name, re, params } of PARSERS) {
    const m = re.exec(text);
    if (m === null) continue;
    const values: Record<string, string> = {};
    let verb: string | null = null;
    params.forEach((p, i) => {
      if (p === "verb") verb = m[i + 1]!;
      else values[p] = m[i + 1]!;
    });
    return { name, verb, params: values };
  }
  return null;
}
