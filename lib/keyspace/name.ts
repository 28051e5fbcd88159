/**
 * Names inside a queue — lane names today, dedup keys and scheduler names next — at both levels:
 * {@link CheckLane} refuses a bad literal at compile time with a message naming the rule;
 * {@link validName} / {@link assertName} check any value at run time. A name follows the queue-name
 * rule (no `{`, `}` or NUL, well-formed UTF-16) and must also be non-empty (the empty name is the
 * server's name for "none": the default lane) and at most {@link MAX_NAME_BYTES} bytes of UTF-8
 * (names are stored in lists and hashes and sent with every job). The native twin is
 * `valid_name` in `native/src/keyspace.rs`; the order of checks is the same everywhere: not a
 * string, empty, `}`, `{`, NUL, not well-formed (host only), too long.
 *
 * @module
 */
import { KeyspaceError, quote } from "./error.ts";

/** The longest name, in bytes of UTF-8. */
export const MAX_NAME_BYTES = 1024;

/** What a name names, as messages say it (`lane name`, …). */
export type NameKind = "lane name" | "scheduler name" | "dedup key";

/** Compiler messages for a refused lane-name literal, by rule. */
export type LaneNameError =
  | "lane name must not be empty: the default lane has no name (omit the lane)"
  | "lane name must not contain '}': names follow the queue-name rule"
  | "lane name must not contain '{': names follow the queue-name rule"
  | "lane name must not contain NUL: it would corrupt NUL-joined entries";

/**
 * `L` itself when it is a legal lane name (or a widened `string`, checked at run time), else the
 * message of the first broken rule (empty, `}`, `{`, NUL). Length is checked at run time only.
 */
export type CheckLane<L extends string> = string extends L ? L
  : L extends "" ? "lane name must not be empty: the default lane has no name (omit the lane)"
  : L extends `${string}}${string}` ? "lane name must not contain '}': names follow the queue-name rule"
  : L extends `${string}{${string}` ? "lane name must not contain '{': names follow the queue-name rule"
  : L extends `${string}\0${string}` ? "lane name must not contain NUL: it would corrupt NUL-joined entries"
  : L;

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
