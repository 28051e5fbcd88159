/**
 * Queue names, at both levels: {@link CheckQueue} refuses a bad literal at compile time with a
 * message naming the rule; {@link validQueue} / {@link assertValidQueue} check any value at run
 * time, in the same order as the type and the native mirror (`valid_queue`): `}`, `{`, NUL, then
 * (run time only) well-formed UTF-16. {@link CheckClientQueue} / {@link assertClientQueue} add the
 * client's rule on top: the name must not be empty, because the server refuses an empty hashtag.
 *
 * Order of checks, everywhere: not a string, `}`, `{`, NUL, not well-formed. Only the last is
 * host-only: the server sees bytes, which cannot hold a lone surrogate (the client's UTF-8 encoder
 * turns one into U+FFFD), so `valid_queue` has no twin of it. The type level does not check it
 * either (a union of the 2048 surrogate code units would cost every literal call); a literal with
 * a lone surrogate compiles and is refused at run time.
 *
 * @module
 */
import { KeyspaceError, quote } from "./error.ts";

/** Compiler message for a queue name literal that contains `}`. */
export type QueueCloseBraceError = "queue name must not contain '}': a brace would move the cluster hashtag";
/** Compiler message for a queue name literal that contains `{`. */
export type QueueOpenBraceError = "queue name must not contain '{': a brace would move the cluster hashtag";
/** Compiler message for a queue name literal that contains NUL. */
export type QueueNulError = "queue name must not contain NUL: it would corrupt NUL-joined entries";
/** Compiler message for the empty queue name where a client talks to the server. */
export type QueueEmptyError = "queue name must not be empty: the server refuses an empty hashtag";

/**
 * `Q` itself when it is a legal queue name (or a widened `string`, checked at run time), else the
 * message of the first broken rule. The valid path is one template match with no recursion, so
 * long names cost no more than short ones; only a refused literal pays for {@link DiagnoseQueue}.
 * The empty name passes: the keyspace functions build its keys (`emq:{}:pending`), which only a
 * standalone server's scripts accept; the native module refuses it (see {@link CheckClientQueue}).
 */
export type CheckQueue<Q extends string> = string extends Q ? Q
  : Q extends `${string}${"{" | "}" | "\0"}${string}` ? DiagnoseQueue<Q>
  : Q;

/** Which rule a refused queue name literal broke, in the runtime's order: `}`, `{`, NUL. */
export type DiagnoseQueue<Q extends string> = Q extends `${string}}${string}` ? QueueCloseBraceError
  : Q extends `${string}{${string}` ? QueueOpenBraceError
  : QueueNulError;

/**
 * {@link CheckQueue} for a name the client sends to a server: the literal `""` is refused with
 * {@link QueueEmptyError} (an empty `{}` carries no hashtag; the native module refuses it), every
 * other name as {@link CheckQueue} says. The run-time twin is {@link assertClientQueue}.
 */
export type CheckClientQueue<Q extends string> = Q extends "" ? QueueEmptyError : CheckQueue<Q>;

// One regular expression for the three forbidden bytes: the fast path of every key builder.
const FORBIDDEN = /[{}\0]/;

// `String.prototype.isWellFormed` (ES2024: Node 20+, Deno, Bun, browsers since 2023), reached
// through a local type so that the module still compiles against ES2022 libraries.
interface WellFormed {
  isWellFormed(): boolean;
}
const wellFormed = (s: string): boolean => (s as unknown as WellFormed).isWellFormed();

/**
 * True when `x` is a legal queue name: a well-formed string with no `{`, `}` or NUL.
 * The empty name is legal on the host (docs/GRAMMAR.md); the native module refuses it.
 */
export function validQueue(x: unknown): x is string {
  return typeof x === "string" && !FORBIDDEN.test(x) && wellFormed(x);
}

/**
 * Throws a {@link KeyspaceError} naming the broken rule unless `x` is a legal queue name.
 * Checks in the same order as the type level and the native mirror: `}`, `{`, NUL, then
 * well-formedness (host only: a lone surrogate would reach the server as U+FFFD).
 */
export function assertValidQueue(x: unknown): asserts x is string {
  if (typeof x !== "string") {
    throw new KeyspaceError("queue-not-string", `queue name must be a string, got ${typeof x}`);
  }
  if (!FORBIDDEN.test(x)) {
    if (wellFormed(x)) return;
    throw new KeyspaceError(
      "queue-not-well-formed",
      `queue name ${quote(x)} must be well-formed UTF-16 (no lone surrogate): it would alias another ` +
        `queue on the server ("\\uD800", "\\uDFFF" and "\\uFFFD" all become the bytes EF BF BD)`,
    );
  }
  if (x.includes("}")) {
    throw new KeyspaceError(
      "queue-close-brace",
      `queue name ${quote(x)} must not contain "}": a brace would move the cluster hashtag`,
    );
  }
  if (x.includes("{")) {
    throw new KeyspaceError(
      "queue-open-brace",
      `queue name ${quote(x)} must not contain "{": a brace would move the cluster hashtag`,
    );
  }
  throw new KeyspaceError(
    "queue-nul",
    `queue name ${quote(x)} must not contain NUL: it would corrupt NUL-joined entries`,
  );
}

/**
 * Throws a {@link KeyspaceError} unless `x` is a queue name the server accepts: a non-empty name
 * (rule `queue-empty`: the server refuses an empty hashtag) that passes {@link assertValidQueue}.
 * The same order as the native `Queue::new`: empty first, then the name's bytes.
 */
export function assertClientQueue(x: unknown): asserts x is string {
  if (x === "") {
    throw new KeyspaceError("queue-empty", "queue name must not be empty: the server refuses an empty hashtag");
  }
  assertValidQueue(x);
}
