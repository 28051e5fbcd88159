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
 * What every error of EchoMQ that enforces a rule carries: the `rule` it names, and a `name` that
 * is its class's. {@link KeyspaceError} and the client's `EchoMQError` (the root of the client's
 * errors) are the two classes of it, built by {@link ruleErrorOf}.
 */
export interface RuleError<R extends string = string> extends Error {
  /** Which rule was broken. */
  readonly rule: R;
}

/** A class of {@link RuleError}s whose instances are also `E`s: what {@link ruleErrorOf} returns. */
export type RuleErrorClass<E extends Error> = new <R extends string>(rule: R, message: string, cause?: unknown) => E & RuleError<R>;

/**
 * The one root of the errors with a rule, over a built-in error class (`Error`, `TypeError`): its
 * constructor takes the rule, a human message and the error's `cause` if it has one (left unset
 * when `undefined`), and names the error after the class it builds (`new.target`), so a
 * subclass's stack trace prints its own name without setting it.
 */
export function ruleErrorOf<E extends Error>(base: new (message: string) => E): RuleErrorClass<E> {
  const root = base as new (message: string) => Error;
  class Ruled extends root {
    readonly rule: string;
    constructor(rule: string, message: string, cause?: unknown) {
      super(message);
      this.name = new.target.name;
      this.rule = rule;
      if (cause !== undefined) this.cause = cause;
    }
  }
  return Ruled as unknown as RuleErrorClass<E>;
}

/** A `TypeError` naming a rule: the root of {@link KeyspaceError}. */
export const RuleTypeError: RuleErrorClass<TypeError> = ruleErrorOf(TypeError);

/**
 * Raised before any wire when a queue name, lane name, key type, priority or job id breaks the grammar.
 * The message names the rule and quotes the offending value. Built as `new KeyspaceError(rule, message)`.
 */
export class KeyspaceError extends RuleTypeError<KeyspaceRule> {}

/** Quotes a value so that NUL and other control bytes stay visible in a message. */
export function quote(x: unknown): string {
  return typeof x === "string" ? JSON.stringify(x) : String(x);
}
