/**
 * A claimed job as CLAIM's and SETTLE's replies carry it (wire 12): one bulk string,
 * `<attempts> <token> <id_len> <opts_len> <payload_len>\n<id><opts><payload>` (`payload_len` -1:
 * the row had no payload). One reply element per job rather than five, because a client pays per
 * element: glide builds a value for each (bench/reply_shape.ts).
 *
 * @module
 */

/** A claimed job's parts, cut from its entry without copying. */
export interface ClaimedEntry {
  /** How many times it has been claimed, this claim included. */
  readonly attempts: number;
  /** The lease token of this claim. */
  readonly token: number;
  /** The id's bytes. */
  readonly id: Uint8Array;
  /** The options it was admitted with, as stored (empty when none). */
  readonly opts: Uint8Array;
  /** The payload's bytes; null when the row had none. */
  readonly payload: Uint8Array | null;
}

const NEWLINE = 10;
const SPACE = 32;
const MINUS = 45;
const ZERO = 48;

/**
 * The parts of `entry`, or null when it is not a claimed job's entry (a header of five decimal
 * integers whose lengths add up to the bytes that follow).
 */
export function claimedEntry(entry: Uint8Array): ClaimedEntry | null {
  const end = entry.indexOf(NEWLINE);
  if (end < 0) return null;
  // five integers, read in place: this runs once per claimed job
  const ints = [0, 0, 0, 0, 0];
  let at = 0;
  for (let n = 0; n < 5; n++) {
    const negative = entry[at] === MINUS;
    if (negative) at++;
    const from = at;
    let value = 0;
    while (at < end && entry[at] !== SPACE) {
      const digit = entry[at]! - ZERO;
      if (digit < 0 || digit > 9) return null;
      value = value * 10 + digit;
      at++;
    }
    if (at === from || at - from > 16) return null;
    ints[n] = negative ? -value : value;
    if (n < 4 && entry[at++] !== SPACE) return null;
  }
  if (at !== end) return null;
  const [attempts, token, idLen, optsLen, payloadLen] = ints as [number, number, number, number, number];
  const idAt = end + 1;
  const optsAt = idAt + idLen;
  const payloadAt = optsAt + optsLen;
  if (idLen < 0 || optsLen < 0 || payloadLen < -1 || payloadAt + Math.max(0, payloadLen) !== entry.length) return null;
  return {
    attempts,
    token,
    id: entry.subarray(idAt, optsAt),
    opts: entry.subarray(optsAt, payloadAt),
    payload: payloadLen < 0 ? null : entry.subarray(payloadAt),
  };
}
