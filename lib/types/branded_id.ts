/** The namespace every job id carries. */
export type JobNamespace = "JOB";

/**
 * A branded id: 14 bytes, a 3-letter namespace `[A-Z]{3}` then an 11-character Base62 payload.
 * The brand is a phantom property: only {@link isBrandedId}-checked strings or `newJobId()` carry it.
 */
export type BrandedId<NS extends string = string> = `${NS}${string}` & { readonly "emq.brand": NS };

/** A branded id in the `JOB` namespace: what `newJobId()` returns and `jobKey` takes. */
export type JobId = BrandedId<JobNamespace>;

type Upper =
  | "A" | "B" | "C" | "D" | "E" | "F" | "G" | "H" | "I" | "J" | "K" | "L" | "M"
  | "N" | "O" | "P" | "Q" | "R" | "S" | "T" | "U" | "V" | "W" | "X" | "Y" | "Z";
type Digit = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";
type B62 = Digit | Upper | Lowercase<Upper>;

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
 * Fourteen one-character `infer`s and two tuple checks: no recursion.
 */
export type CheckJobId<Id extends string> = Id extends JobId ? Id
  : string extends Id ? Id
  : Id extends `${infer A}${infer B}${infer C}${infer P0}${infer P1}${infer P2}${infer P3}${infer P4}${infer P5}${infer P6}${infer P7}${infer P8}${infer P9}${infer P10}${infer Rest}`
    ? Rest extends "" ? [A, B, C] extends ["J", "O", "B"]
        ? [P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10] extends [B62, B62, B62, B62, B62, B62, B62, B62, B62, B62, B62]
          ? Id
        : IdPayloadError
      : IdNamespaceError
    : IdLengthError
  : IdLengthError;
