import { KeyspaceError, quote } from "./error.ts";

// One regular expression for the three forbidden bytes: the fast path of every key builder.
const FORBIDDEN = /[{}\0]/;

/**
 * True when `x` is a legal queue name: a string with no `{`, `}` or NUL.
 * The empty name is legal on the host (DESIGN §1); the native module refuses it.
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
