/** The namespace every job id carries. */
export type JobNamespace = "JOB";

/**
 * A branded id: 14 bytes, a 3-letter namespace `[A-Z]{3}` then an 11-character Base62 payload.
 * The brand is a phantom property: only {@link isBrandedId}-checked strings or `newJobId()` carry it.
 */
export type BrandedId<NS extends string = string> = `${NS}${string}` & { readonly "emq.brand": NS };

/** A branded id in the `JOB` namespace: what `newJobId()` returns and `jobKey` takes. */
export type JobId = BrandedId<JobNamespace>;

/** An ASCII capital letter: one character of a branded id's namespace. */
export type Upper =
  | "A" | "B" | "C" | "D" | "E" | "F" | "G" | "H" | "I" | "J" | "K" | "L" | "M"
  | "N" | "O" | "P" | "Q" | "R" | "S" | "T" | "U" | "V" | "W" | "X" | "Y" | "Z";
/** An ASCII digit. */
export type Digit = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";
/** One Base62 character, `[0-9A-Za-z]`: one character of a branded id's payload. */
export type B62 = Digit | Upper | Lowercase<Upper>;

/** Compiler message when a job id literal has the wrong length. */
export type IdLengthError =
  "job id must be 14 characters: the namespace JOB and 11 Base62 characters";
/** Compiler message when a job id literal does not start with `JOB`. */
export type IdNamespaceError = "job id must start with the namespace JOB";
/** Compiler message when a job id literal's payload is not Base62. */
export type IdPayloadError = "job id payload must be 11 Base62 characters [0-9A-Za-z]";

/**
 * `Id` itself when it is a job id (or not a literal: checked at run time), else the message of the
 * first broken rule — length, namespace, payload — so the compiler prints the rule.
 * The valid path is one template match (`JOB` + eleven one-character `infer`s) and one union
 * check, no recursion; only a refused literal pays for {@link DiagnoseJobId}.
 */
export type CheckJobId<Id extends string> = Id extends JobId ? Id
  : string extends Id ? Id
  : Id extends
    `JOB${infer C0}${infer C1}${infer C2}${infer C3}${infer C4}${infer C5}${infer C6}${infer C7}${infer C8}${infer C9}${infer C10}`
    // The last `infer` takes the rest, so a longer id leaves a multi-character C10 outside B62.
    ? C0 | C1 | C2 | C3 | C4 | C5 | C6 | C7 | C8 | C9 | C10 extends B62 ? Id : DiagnoseJobId<Id>
  : DiagnoseJobId<Id>;

/** Which rule a refused job id literal broke, in the runtime's order: length, namespace, payload. */
export type DiagnoseJobId<Id extends string> = Id extends
  `${infer A}${infer B}${infer C}${string}${string}${string}${string}${string}${string}${string}${string}${string}${string}${string}${infer Rest}`
  ? Rest extends "" ? [A, B, C] extends ["J", "O", "B"] ? IdPayloadError : IdNamespaceError
  : IdLengthError
  : IdLengthError;
