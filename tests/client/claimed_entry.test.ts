/**
 * The client's parser of a claimed job's entry (wire 12): every well-formed entry comes back
 * whole, byte for byte; anything else is null (the caller reports the reply as unexpected).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { claimedEntry } from "../../lib/client/claimed_entry.ts";

const enc = new TextEncoder();
/** An entry as the module and the Lua twin write it. */
function entry(attempts: number, token: number, id: Uint8Array, opts: Uint8Array, payload: Uint8Array | null): Uint8Array {
  const head = enc.encode(`${attempts} ${token} ${id.length} ${opts.length} ${payload === null ? -1 : payload.length}\n`);
  const out = new Uint8Array(head.length + id.length + opts.length + (payload?.length ?? 0));
  out.set(head);
  out.set(id, head.length);
  out.set(opts, head.length + id.length);
  if (payload !== null) out.set(payload, head.length + id.length + opts.length);
  return out;
}

describe("claimedEntry", () => {
  test("every well-formed entry comes back whole (any bytes: newlines, spaces, NUL in the parts)", () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 2 ** 31 }),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.uint8Array({ maxLength: 40 }),
      fc.uint8Array({ maxLength: 40 }),
      fc.option(fc.uint8Array({ maxLength: 200 })),
      (attempts, token, id, opts, payload) => {
        const parts = claimedEntry(entry(attempts, token, id, opts, payload));
        expect(parts).not.toBeNull();
        expect(parts!.attempts).toBe(attempts);
        expect(parts!.token).toBe(token);
        expect([...parts!.id]).toEqual([...id]);
        expect([...parts!.opts]).toEqual([...opts]);
        expect(parts!.payload === null ? null : [...parts!.payload]).toEqual(payload === null ? null : [...payload]);
      },
    ));
  });

  test("anything else is null: no header, a header of four, a non-digit, lengths that do not add up", () => {
    const bad = [
      "",
      "JOB00000000001",
      "1 2 3 4 5",
      "1 2 14 0\nJOB00000000001",
      "1 x 14 0 2\nJOB00000000001{}",
      "1 2 14 0 2 \nJOB00000000001{}",
      " 1 2 14 0 2\nJOB00000000001{}",
      "1 2 14 0 3\nJOB00000000001{}",
      "1 2 14 0 1\nJOB00000000001{}",
      "1 2 14 0 -1\nJOB00000000001{}",
      "1 2 -14 0 2\nJOB00000000001{}",
      "1 2 99999999999999999 0 2\nJOB00000000001{}",
    ];
    for (const text of bad) expect({ text, parts: claimedEntry(enc.encode(text)) }).toEqual({ text, parts: null });
    expect(claimedEntry(enc.encode("1 2 14 0 2\nJOB00000000001{}"))).not.toBeNull();
    expect(claimedEntry(enc.encode("1 2 14 0 -1\nJOB00000000001"))!.payload).toBeNull();
  });
});
