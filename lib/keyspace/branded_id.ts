import type { BrandedId, JobId } from "../types/branded_id.ts";
import { KeyspaceError, quote } from "./error.ts";

export type { BrandedId, JobId };

/** Base62 digits in ASCII order, so that string order of ids is numeric order. */
export const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

const BRANDED = /^[A-Z]{3}[0-9A-Za-z]{11}$/;

/** True when `x` is a branded id: 3 capital letters, then 11 Base62 characters (14 bytes). */
export function isBrandedId(x: unknown): x is BrandedId {
  return typeof x === "string" && x.length === 14 && BRANDED.test(x);
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
  if (typeof x !== "string") {
    throw new KeyspaceError("id-not-string", `job id must be a string, got ${typeof x}`);
  }
  if (x.length !== 14) {
    throw new KeyspaceError(
      "id-length",
      `job id ${quote(x)} must be 14 characters: the namespace JOB and 11 Base62 characters`,
    );
  }
  if (!x.startsWith("JOB")) {
    throw new KeyspaceError("id-namespace", `job id ${quote(x)} must start with the namespace JOB`);
  }
  if (!BRANDED.test(x)) {
    throw new KeyspaceError(
      "id-payload",
      `job id ${quote(x)} payload must be 11 Base62 characters [0-9A-Za-z]`,
    );
  }
}

// Payload = 7 digits of milliseconds (good until year 2081) + 4 digits of sequence.
const SEQ_SPAN = 62 ** 4;
let lastMs = 0;
let lastSeq = 0;

function base62(n: number, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
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
  return `JOB${base62(lastMs, 7)}${base62(lastSeq, 4)}` as JobId;
}
