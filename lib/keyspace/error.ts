/**
 * {@link KeyspaceError}: a name, id or type that breaks the grammar, refused before any wire.
 *
 * @module
 */
/** The rule a refused name, id or type broke; tests and callers match on it. */
export type KeyspaceRule =
  | "queue-not-string"
  | "queue-close-brace"
  | "queue-open-brace"
  | "queue-nul"
  | "queue-not-well-formed"
  | "queue-empty"
  | "queue-type"
  | "name-not-string"
  | "name-empty"
  | "name-close-brace"
  | "name-open-brace"
  | "name-nul"
  | "name-not-well-formed"
  | "name-too-long"
  | "priority"
  | "id-not-string"
  | "id-length"
  | "id-namespace"
  | "id-payload";

/**
 * Raised before any wire when a queue name, lane name, key type, priority or job id breaks the grammar.
 * The message names the rule and quotes the offending value.
 */
export class KeyspaceError extends TypeError {
  /** Which rule was broken. */
  readonly rule: KeyspaceRule;
  /** Builds the error for `rule` with a human message. */
  constructor(rule: KeyspaceRule, message: string) {
    super(message);
    this.name = "KeyspaceError";
    this.rule = rule;
  }
}

/** Quotes a value so that NUL and other control bytes stay visible in a message. */
export function quote(x: unknown): string {
  return typeof x === "string" ? JSON.stringify(x) : String(x);
}
