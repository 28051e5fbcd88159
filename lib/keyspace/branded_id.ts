/**
 * Branded ids, at both levels: {@link CheckBrandedId} (any namespace: what a row key takes) and
 * {@link CheckJobId} (the `JOB` namespace: what the client's transitions take) refuse a bad id
 * literal at compile time with a message naming the rule; {@link isBrandedId},
 * {@link assertBrandedId}, {@link isJobId} and {@link assertJobId} check any value at run time, in
 * the same order (length, namespace, payload); {@link newJobId} makes new, time-ordered job ids.
 *
 * @module
 */
import { KeyspaceError, quote } from "./error.ts";

/** The namespace every job id carries. */
export type JobNamespace = "JOB";

/**
 * A branded id: 14 bytes, a 3-letter namespace `[A-Z]{3}` then an 11-character Base62 payload.
 * The brand is a phantom property: only {@link isBrandedId}-checked strings or `newJobId()` carry it.
 */
export type BrandedId<NS extends string = string> = `${NS}${string}` & { readonly "emq.brand": NS };

/** A branded id in the `JOB` namespace: what `newJobId()` returns and the client's transitions take. */
export type JobId = BrandedId<JobNamespace>;

/** An ASCII capital letter: one character of a branded id's namespace. */
export type Upper =
  | "A"
  | "B"
  | "C"
  | "D"
  | "E"
  | "F"
  | "G"
  | "H"
  | "I"
  | "J"
  | "K"
  | "L"
  | "M"
  | "N"
  | "O"
  | "P"
  | "Q"
  | "R"
  | "S"
  | "T"
  | "U"
  | "V"
  | "W"
  | "X"
  | "Y"
  | "Z";
/** An ASCII digit. */
export type Digit = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";
/** One Base62 character, `[0-9A-Za-z]`: one character of a branded id's payload. */
export type B62 = Digit | Upper | Lowercase<Upper>;

/**
 * The rules of an id, worded once for the compiler and the run time: for a job id (`job`) and for
 * a branded id of any namespace (`branded`), what the id is called and what each rule asks. A
 * refused literal's compiler message is `<what> <rule>` ({@link IdRuleMessage}); a refused value's
 * runtime message quotes the value between the two.
 */
export const ID_RULES = {
  job: {
    what: "job id",
    length: "must be 14 characters: the namespace JOB and 11 Base62 characters",
    namespace: "must start with the namespace JOB",
    payload: "payload must be 11 Base62 characters [0-9A-Za-z]",
  },
  branded: {
    what: "branded id",
    length: "must be 14 characters: a namespace of 3 capital letters [A-Z] and 11 Base62 characters",
    namespace: "namespace must be 3 capital letters [A-Z]",
    payload: "payload must be 11 Base62 characters [0-9A-Za-z]",
  },
} as const;

/** The compiler's message for an id literal of kind `K` (see {@link ID_RULES}) that breaks rule `R`. */
export type IdRuleMessage<K extends keyof typeof ID_RULES, R extends "length" | "namespace" | "payload"> =
  `${(typeof ID_RULES)[K]["what"]} ${(typeof ID_RULES)[K][R]}`;

/** Compiler message when a job id literal has the wrong length. */
export type IdLengthError = IdRuleMessage<"job", "length">;
/** Compiler message when a job id literal does not start with `JOB`. */
export type IdNamespaceError = IdRuleMessage<"job", "namespace">;
/** Compiler message when a job id literal's payload is not Base62. */
export type IdPayloadError = IdRuleMessage<"job", "payload">;

/**
 * `Id` itself when it is a job id (or not a literal: checked at run time), else the message of the
 * first broken rule — length, namespace, payload — so the compiler prints the rule.
 * The valid path is one template match (`JOB` + eleven one-character `infer`s) and one union
 * check, no recursion; only a refused literal pays for {@link DiagnoseJobId}.
 */
export type CheckJobId<Id extends string> = Id extends JobId ? Id
  : string extends Id ? Id
  : Id extends `JOB${infer C0}${infer C1}${infer C2}${infer C3}${infer C4}${infer C5}${infer C6}${infer C7}${infer C8}${infer C9}${infer C10}`
  // The last `infer` takes the rest, so a longer id leaves a multi-character C10 outside B62.
    ? C0 | C1 | C2 | C3 | C4 | C5 | C6 | C7 | C8 | C9 | C10 extends B62 ? Id : DiagnoseJobId<Id>
  : DiagnoseJobId<Id>;

/** Which rule a refused job id literal broke, in the runtime's order: length, namespace, payload. */
export type DiagnoseJobId<Id extends string> = Id extends
  `${infer A}${infer B}${infer C}${string}${string}${string}${string}${string}${string}${string}${string}${string}${string}${string}${infer Rest}`
  ? Rest extends "" ? [A, B, C] extends ["J", "O", "B"] ? IdPayloadError : IdNamespaceError
  : IdLengthError
  : IdLengthError;

/** Compiler message when a branded id literal has the wrong length. */
export type BrandedIdLengthError = IdRuleMessage<"branded", "length">;
/** Compiler message when a branded id literal does not start with 3 capital letters. */
export type BrandedIdNamespaceError = IdRuleMessage<"branded", "namespace">;
/** Compiler message when a branded id literal's payload is not Base62. */
export type BrandedIdPayloadError = IdRuleMessage<"branded", "payload">;

/**
 * `Id` itself when it is a branded id of any namespace (or not a literal: checked at run time),
 * else the message of the first broken rule — length, namespace, payload. No recursion; only a
 * refused literal pays for {@link DiagnoseBrandedId}. A `JOB` literal takes the same match as
 * {@link CheckJobId} (a literal prefix and eleven one-character `infer`s); any other namespace
 * takes fourteen `infer`s, about 10 instantiations more per call (tests/types/budget.test.ts
 * measures both).
 */
export type CheckBrandedId<Id extends string> = Id extends BrandedId ? Id
  : string extends Id ? Id
  : Id extends `JOB${string}`
    ? Id extends `JOB${infer C0}${infer C1}${infer C2}${infer C3}${infer C4}${infer C5}${infer C6}${infer C7}${infer C8}${infer C9}${infer C10}`
      // The last `infer` takes the rest, so a longer id leaves a multi-character C10 outside B62.
      ? C0 | C1 | C2 | C3 | C4 | C5 | C6 | C7 | C8 | C9 | C10 extends B62 ? Id : DiagnoseBrandedId<Id>
    : DiagnoseBrandedId<Id>
  : Id extends
    `${infer N0}${infer N1}${infer N2}${infer C0}${infer C1}${infer C2}${infer C3}${infer C4}${infer C5}${infer C6}${infer C7}${infer C8}${infer C9}${infer C10}`
    ? N0 | N1 | N2 extends Upper ? C0 | C1 | C2 | C3 | C4 | C5 | C6 | C7 | C8 | C9 | C10 extends B62 ? Id
      : DiagnoseBrandedId<Id>
    : DiagnoseBrandedId<Id>
  : DiagnoseBrandedId<Id>;

/** Which rule a refused branded id literal broke, in the runtime's order: length, namespace, payload. */
export type DiagnoseBrandedId<Id extends string> = Id extends
  `${infer A}${infer B}${infer C}${string}${string}${string}${string}${string}${string}${string}${string}${string}${string}${string}${infer Rest}`
  ? Rest extends "" ? A | B | C extends Upper ? BrandedIdPayloadError : BrandedIdNamespaceError
  : BrandedIdLengthError
  : BrandedIdLengthError;

/** Base62 digits in ASCII order, so that string order of ids is numeric order. */
export const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const BRANDED = /^[A-Z]{3}[0-9A-Za-z]{11}$/;
const NAMESPACE = /^[A-Z]{3}/;

/** True when `x` is a branded id: 3 capital letters, then 11 Base62 characters (14 bytes). */
export function isBrandedId(x: unknown): x is BrandedId {
  return typeof x === "string" && x.length === 14 && BRANDED.test(x);
}

/**
 * Throws a {@link KeyspaceError} naming the broken rule unless `x` is a branded id of any
 * namespace. Checks in the same order as the type level: length, namespace, payload.
 */
export function assertBrandedId(x: unknown): asserts x is BrandedId {
  assertId(x, "branded", (id) => NAMESPACE.test(id));
}

/**
 * The run-time checks of both kinds of id, in the type level's order (length, namespace, payload),
 * each refusal worded by {@link ID_RULES} with the value quoted.
 */
function assertId(x: unknown, kind: keyof typeof ID_RULES, namespaced: (id: string) => boolean): void {
  const rules = ID_RULES[kind];
  if (typeof x !== "string") throw new KeyspaceError("id-not-string", `${rules.what} must be a string, got ${typeof x}`);
  const refuse = (rule: "length" | "namespace" | "payload"): never => {
    throw new KeyspaceError(`id-${rule}`, `${rules.what} ${quote(x)} ${rules[rule]}`);
  };
  if (x.length !== 14) refuse("length");
  if (!namespaced(x)) refuse("namespace");
  if (!BRANDED.test(x)) refuse("payload");
}

/** True when `x` is a branded id in the `JOB` namespace. */
export function isJobId(x: unknown): x is JobId {
  return isBrandedId(x) && x.startsWith("JOB");
}

/**
 * Throws a {@link KeyspaceError} naming the broken rule unless `x` is a job id.
 * Checks in the same order as the type level: length, namespace, payload.
 */
export function assertJobId(x: unknown): asserts x is JobId {
  assertId(x, "job", (id) => id.startsWith("JOB"));
}

// Payload = 7 digits of milliseconds (good until year 2081) + 4 digits of sequence.
const SEQ_SPAN = 62 ** 4;
let lastMs = 0;
let lastSeq = 0;

/** Scratch for {@link newJobId}: the id's 14 character codes, `JOB` first. */
const ID_CODES: number[] = [74, 79, 66, ...new Array<number>(11).fill(48)];

/** Writes `n` as `width` Base62 digits into {@link ID_CODES} at `at`, most significant first. */
function base62(n: number, at: number, width: number): void {
  for (let i = at + width - 1; i >= at; i--) {
    ID_CODES[i] = BASE62.charCodeAt(n % 62);
    n = Math.floor(n / 62);
  }
}

/**
 * A new `JOB` id: time-ordered (the millisecond clock leads), strictly increasing within this
 * process, and starting each millisecond at a random sequence so two processes rarely collide.
 * A collision is refused by the server as a duplicate, never merged.
 */
export function newJobId(): JobId {
  const now = Date.now();
  if (now > lastMs) {
    lastMs = now;
    // A random start in the lower half leaves room to count up within the millisecond.
    lastSeq = crypto.getRandomValues(new Uint32Array(1))[0] % (SEQ_SPAN / 2);
  } else if (++lastSeq >= SEQ_SPAN) {
    // Sequence exhausted (or the clock went back): borrow the next millisecond.
    lastMs++;
    lastSeq = 0;
  }
  base62(lastMs, 3, 7);
  base62(lastSeq, 10, 4);
  // One flat string from the codes: concatenation would build a rope of 12 pieces, about 400
  // bytes an id held (385 MB for the million ids an enqueueMany of a million jobs returns).
  return String.fromCharCode(...ID_CODES) as JobId;
}
