/**
 * BullMQ's job identity on EchoMQ's branded ids (docs/design/bullmq.md, "Identity"): a BullMQ id
 * (its counter ids `'1'`, `'2'`, … and custom `jobId`s) maps to one `JOB` id by a fixed rule, with
 * no look-up key, so a `getJob('42')` is one row read:
 *
 * - a counter id n (decimal, no leading zero, n < 62¹⁰) → `JOB0` + n in 10 Base62 digits: one to
 *   one, and in the same order as the counter (Base62's digits are in ASCII order);
 * - an EchoMQ id (`JOB` + 11 Base62: a job an EchoMQ producer admitted, which a BullMQ worker
 *   claimed and so named) → itself, unless it lies in the counter space (`JOB0…`, which no
 *   EchoMQ id does): that one is hashed like any other string;
 * - any other string → `JOB` + one of the 61 digits `1`…`z` + 10 Base62 digits of a 128-bit hash
 *   of its UTF-8 bytes. Two strings may meet on one id: the row keeps its BullMQ id (the payload's
 *   `id`), and every write and read compares it ({@link IdCollisionError}), so a collision is
 *   refused, never merged.
 *
 * @module
 */
import { isBrandedId, type JobId } from "../keyspace/mod.ts";

const DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** The counter space: 10 Base62 digits. */
const COUNTER_SPACE = 62n ** 10n;
/** The hashed space: a first digit `1`…`z` (61 of them), then 10 Base62 digits. */
const HASHED_SPACE = 61n * COUNTER_SPACE;

/** `n` in `width` Base62 digits (n < 62^width). */
function base62(n: bigint, width: number): string {
  let out = "";
  for (let i = 0; i < width; i++) {
    out = DIGITS[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

/** FNV-1a over `bytes` with 64-bit arithmetic from `seed`: two seeds make the 128 bits the rule uses. */
function fnv1a64(bytes: Uint8Array, seed: bigint): bigint {
  let h = seed;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

/** True for a BullMQ counter id the rule maps one to one: decimal, no leading zero, below 62¹⁰. */
export function isCounterId(bullId: string): boolean {
  return /^[1-9][0-9]{0,17}$/.test(bullId) && BigInt(bullId) < COUNTER_SPACE;
}

/** The EchoMQ id of BullMQ id `bullId` (see the module's rule). */
export function emqIdOf(bullId: string): JobId {
  if (isCounterId(bullId)) return `JOB0${base62(BigInt(bullId), 10)}` as JobId;
  if (isBrandedId(bullId) && bullId.startsWith("JOB") && bullId[3] !== "0") return bullId as JobId;
  const bytes = new TextEncoder().encode(bullId);
  const h = (fnv1a64(bytes, 0xcbf29ce484222325n) << 64n) | fnv1a64(bytes, 0x84222325cbf29ce4n);
  const n = h % HASHED_SPACE;
  return `JOB${DIGITS[1 + Number(n / COUNTER_SPACE)]}${base62(n % COUNTER_SPACE, 10)}` as JobId;
}

/** The BullMQ counter id an EchoMQ id stands for (`JOB0…`), or null for a hashed one (read its row). */
export function counterIdOf(emqId: string): string | null {
  if (emqId.length !== 14 || !emqId.startsWith("JOB0")) return null;
  let n = 0n;
  for (const ch of emqId.slice(4)) {
    const d = DIGITS.indexOf(ch);
    if (d < 0) return null;
    n = n * 62n + BigInt(d);
  }
  return n === 0n ? null : String(n);
}

/** Two BullMQ ids met on one EchoMQ id: the second is refused (nothing written). */
export class IdCollisionError extends Error {
  /** The EchoMQ id both map to. */
  readonly emqId: string;
  /** The BullMQ id that holds it. */
  readonly holder: string;
  /** The BullMQ id refused. */
  readonly refused: string;
  /** A collision of `refused` with `holder` on `emqId`. */
  constructor(emqId: string, holder: string, refused: string) {
    super(
      `EchoMQ backend: job id ${JSON.stringify(refused)} maps to ${emqId}, which job ${JSON.stringify(holder)} holds ` +
        "(a hash collision of two custom jobIds): nothing was written; choose another jobId",
    );
    this.name = "IdCollisionError";
    this.emqId = emqId;
    this.holder = holder;
    this.refused = refused;
  }
}
