/**
 * Queue names, at both levels: {@link CheckQueue} refuses a bad literal at compile time with a
 * message naming the rule; {@link validQueue} / {@link assertValidQueue} check any value at run
 * time, in the same order (`}`, `{`, NUL) as the type and the native mirror (`valid_queue`).
 *
 * @module
 */
import { KeyspaceError, quote } from "./error.ts";

/** Compiler message for a queue name literal that contains `}`. */
export type QueueCloseBraceError =
  "queue name must not contain '}': a brace would move the cluster hashtag";
/** Compiler message for a queue name literal that contains `{`. */
export type QueueOpenBraceError =
  "queue name must not contain '{': a brace would move the cluster hashtag";
/** Compiler message for a queue name literal that contains NUL. */
export type QueueNulError = "queue name must not contain NUL: it would corrupt NUL-joined entries";

/**
 * `Q` itself when it is a legal queue name (or a widened `string`, checked at run time), else the
 * message of the first broken rule. The valid path is one template match with no recursion, so
 * long names cost no more than short ones; only a refused literal pays for {@link DiagnoseQueue}.
 */
export type CheckQueue<Q extends string> = string extends Q ? Q
  : Q extends `${string}${"{" | "}" | "\0"}${string}` ? DiagnoseQueue<Q>
  : Q;

/** Which rule a refused queue name literal broke, in the runtime's order: `}`, `{`, NUL. */
export type DiagnoseQueue<Q extends string> = Q extends `${string}}${string}` ? QueueCloseBraceError
  : Q extends `${string}{${string}` ? QueueOpenBraceError
  : QueueNulError;

// One regular expression for the three forbidden bytes: the fast path of every key builder.
const FORBIDDEN = /[{}\0]/;

/**
 * True when `x` is a legal queue name: a string with no `{`, `}` or NUL.
 * The empty name is legal on the host (docs/GRAMMAR.md); the native module refuses it.
 */
export function validQueue(x: unknown): x is string {
  return typeof x === "string" && !FORBIDDEN.test(x);
}

/**
 * Throws a {@link KeyspaceError} naming the broken rule unless `x` is a legal queue name.
 * Checks in the same order as the type level and the native mirror: `}`, `{`, NUL.
 */
export function assertValidQueue(x: unknown): asserts x is string {
  if (typeof x !== "string") {
    throw new KeyspaceError("queue-not-string", `queue name must be a string, got ${typeof x}`);
  }
  if (!FORBIDDEN.test(x)) return;
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
