/**
 * Names inside a queue — lane names, scheduler names, dedup keys — at both levels: {@link CheckName}
 * refuses a bad literal at compile time with a message naming the rule (one type for every kind
 * of name: a builder or a call that takes a name gets the check by taking `CheckName<N, kind>`);
 * {@link validName} / {@link assertName} check any value at run time. A name follows the
 * queue-name rule (no `{`, `}` or NUL, well-formed UTF-16) and must also be non-empty (the empty
 * name is the server's name for "none": the default lane) and at most {@link MAX_NAME_BYTES} bytes
 * of UTF-8 (names are stored in lists and hashes and sent with every job). The native twin is
 * `valid_name` in `native/src/keyspace.rs`; the order of checks is the same everywhere: not a
 * string, empty, `}`, `{`, NUL, not well-formed (host only), too long.
 *
 * @module
 */
import { KeyspaceError, quote } from "./error.ts";

/** The longest name, in bytes of UTF-8. */
export const MAX_NAME_BYTES = 1024;

/**
 * Every kind of name, as messages say it, with why the compiler refuses it empty. A new kind of
 * name (a flow's, a job's) is one more entry: {@link CheckName} then words its refusals.
 */
export interface NameKinds {
  /** A job's lane: `enqueue`'s `lane`, `pause`, `limit`, `penalize`; keys `lane:`, `ready:`, `levels:`. */
  "lane name": "the default lane has no name (omit the lane)";
  /** A scheduler's name: `upsertScheduler`, `removeScheduler`; key `scheduler:`. */
  "scheduler name": "a scheduler is known by its name";
  /** A deduplication key: `enqueue`'s / `submit`'s `dedup.key`; an entry of `dedup`. */
  "dedup key": "omit dedup to admit without deduplication";
  /** A job's name: `enqueue`'s / `schedule`'s / `submit`'s / `enqueueMany`'s `name` (the option `name`). */
  "job name": "omit the name for a job without one";
}

/** What a name names, as messages say it (`lane name`, …). */
export type NameKind = keyof NameKinds;

/** A rule of the names the compiler checks: empty, `}`, `{`, NUL (the byte length is a run-time rule). */
export type NameRule = "empty" | "}" | "{" | "NUL";

/** The compiler's message for a name literal of kind `K` that breaks rule `R`. */
export type NameRuleMessage<K extends NameKind, R extends NameRule> = R extends "empty" ? `${K} must not be empty: ${NameKinds[K]}`
  : R extends "NUL" ? `${K} must not contain NUL: it would corrupt NUL-joined entries`
  : `${K} must not contain '${R}': names follow the queue-name rule`;

/** Every compiler message for a refused name literal of kind `K`. */
export type NameError<K extends NameKind> = NameRuleMessage<K, NameRule>;

/**
 * `N` itself when it is a legal name of kind `K` (or a widened `string`, checked at run time),
 * else the message of the first broken rule (empty, `}`, `{`, NUL). The valid path is three
 * checks, no recursion; only a refused literal pays for {@link DiagnoseName}. Length is checked at
 * run time only.
 */
export type CheckName<N extends string, K extends NameKind> = string extends N ? N
  : N extends "" ? NameRuleMessage<K, "empty">
  : N extends `${string}${"{" | "}" | "\0"}${string}` ? DiagnoseName<N, K>
  : N;

/** Which rule a refused name literal broke, in the runtime's order: `}`, `{`, NUL. */
export type DiagnoseName<N extends string, K extends NameKind> = N extends `${string}}${string}` ? NameRuleMessage<K, "}">
  : N extends `${string}{${string}` ? NameRuleMessage<K, "{">
  : NameRuleMessage<K, "NUL">;

/** Compiler messages for a refused lane-name literal, by rule. */
export type LaneNameError = NameError<"lane name">;

/** {@link CheckName} for a lane name: what `enqueue`'s `lane`, `pause`, `limit` and `penalize` take. */
export type CheckLane<L extends string> = CheckName<L, "lane name">;

/**
 * A lane as the keys take it: `""` (the default lane's `lane:`, `levels:`, `ready:<p>:`) or a
 * lane name {@link CheckLane} passes.
 */
export type CheckKeyLane<L extends string> = L extends "" ? L : CheckLane<L>;

const FORBIDDEN = /[{}\0]/;
const UTF8 = new TextEncoder();

interface WellFormed {
  isWellFormed(): boolean;
}
const wellFormed = (s: string): boolean => (s as unknown as WellFormed).isWellFormed();

/** Whether `s` fits in {@link MAX_NAME_BYTES} bytes of UTF-8 (without encoding short strings). */
function fits(s: string): boolean {
  return s.length * 3 <= MAX_NAME_BYTES || UTF8.encode(s).length <= MAX_NAME_BYTES;
}

/** True when `x` is a legal name: a non-empty, well-formed string of at most 1024 bytes without `{`, `}` or NUL. */
export function validName(x: unknown): x is string {
  return typeof x === "string" && x !== "" && !FORBIDDEN.test(x) && wellFormed(x) && fits(x);
}

/**
 * Throws a {@link KeyspaceError} naming the broken rule (`name-…`) unless `x` is a legal name;
 * `kind` says what the name names in the message.
 */
export function assertName(x: unknown, kind: NameKind): asserts x is string {
  if (typeof x !== "string") throw new KeyspaceError("name-not-string", `${kind} must be a string, got ${typeof x}`);
  if (x === "") {
    throw new KeyspaceError("name-empty", `${kind} must not be empty: the empty name is the server's "none"`);
  }
  const rule = x.includes("}") ? "}" : x.includes("{") ? "{" : x.includes("\0") ? "NUL" : null;
  if (rule !== null) {
    throw new KeyspaceError(
      rule === "}" ? "name-close-brace" : rule === "{" ? "name-open-brace" : "name-nul",
      `${kind} ${quote(x)} must not contain ${rule === "NUL" ? "NUL" : `"${rule}"`}: names follow the queue-name rule`,
    );
  }
  if (!wellFormed(x)) {
    throw new KeyspaceError("name-not-well-formed", `${kind} ${quote(x)} must be well-formed UTF-16 (no lone surrogate)`);
  }
  if (!fits(x)) {
    throw new KeyspaceError("name-too-long", `${kind} must be at most ${MAX_NAME_BYTES} bytes of UTF-8, got ${UTF8.encode(x).length}`);
  }
}
