/**
 * ACL key patterns of queues: {@link aclKeyPattern} grants one queue's keys and no other's. A
 * Valkey ACL key pattern is a glob (`*`, `?`, `[…]`, `\` escapes), and a queue name may hold those
 * characters: granted `~emq:{t*}:*` written by hand, a user reaches every queue whose name starts
 * with `t`. The pattern built here escapes them, so it matches exactly the keys of the queue.
 *
 * @module
 */
import { assertValidQueue } from "./queue_name.ts";

/** The access a key pattern grants: read (`%R~`), write (`%W~`), or both (`~`, the same as `%RW~`). */
export type AclAccess = "R" | "W" | "RW";

/** `text` with every glob character of a Valkey pattern (`*`, `?`, `[`, `]`, `\`) escaped by `\`. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, "\\$&");
}

/**
 * The ACL key pattern of every key of `queue`, and of no other queue's: `~emq:{<queue>}:*` with
 * the name's glob characters escaped, for `ACL SETUSER … <pattern>` (one argument; an ACL file
 * splits rules at spaces, so a name with a space cannot be written there). `access` narrows it
 * to reads (`%R~…`) or writes (`%W~…`). A name that breaks the queue-name rules is refused
 * (`KeyspaceError`).
 *
 * @example
 * ```ts
 * import { aclKeyPattern } from "./mod.ts";
 *
 * console.log(aclKeyPattern("orders"));    // ~emq:{orders}:*
 * console.log(aclKeyPattern("t*"));        // ~emq:{t\*}:*  (not every queue starting with t)
 * console.log(aclKeyPattern("t*", "R"));   // %R~emq:{t\*}:*
 * ```
 */
export function aclKeyPattern(queue: string, access: AclAccess = "RW"): string {
  assertValidQueue(queue);
  if (access !== "R" && access !== "W" && access !== "RW") {
    throw new TypeError(`ACL access must be "R", "W" or "RW", got ${JSON.stringify(access)}`);
  }
  return `${access === "RW" ? "" : `%${access}`}~emq:{${escapeGlob(queue)}}:*`;
}
