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
