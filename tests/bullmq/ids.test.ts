/**
 * The identity rule of the BullMQ backend (lib/bullmq/ids.ts, docs/design/bullmq.md "Identity"):
 * counter ids map one to one and in order into `JOB0…`, EchoMQ's own ids map to themselves, every
 * other string to a valid branded id outside the counter space, and the counter ids come back.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { isBrandedId, newJobId } from "../../mod.ts";
import { counterIdOf, emqIdOf, isCounterId } from "../../lib/bullmq/ids.ts";

describe("BullMQ ids on EchoMQ ids", () => {
  test("counter ids: JOB0 + 10 Base62 digits, one to one, in the counter's order", () => {
    expect(emqIdOf("1") as string).toBe("JOB00000000001");
    expect(emqIdOf("62") as string).toBe("JOB00000000010");
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 62n ** 10n - 1n }), fc.bigInt({ min: 1n, max: 62n ** 10n - 1n }), (a, b) => {
      const [x, y] = [emqIdOf(String(a)), emqIdOf(String(b))];
      expect(isBrandedId(x)).toBe(true);
      expect(counterIdOf(x)).toBe(String(a));
      expect(a < b ? x < y : a > b ? x > y : x === y).toBe(true);
    }));
  });

  test("not counter ids: a leading zero, a sign, past 62¹⁰, zero", () => {
    for (const s of ["0", "01", "-1", "+1", "1.5", " 1", String(62n ** 10n), ""]) expect(isCounterId(s)).toBe(false);
    expect(isCounterId(String(62n ** 10n - 1n))).toBe(true);
  });

  test("any other string: a branded id outside the counter space, the same every time", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", maxLength: 200 }), (s) => {
      fc.pre(!isCounterId(s) && !isBrandedId(s));
      const id = emqIdOf(s);
      expect(isBrandedId(id)).toBe(true);
      expect(id.startsWith("JOB")).toBe(true);
      expect(id[3]).not.toBe("0");
      expect(counterIdOf(id)).toBeNull();
      expect(emqIdOf(s)).toBe(id);
    }));
    expect(emqIdOf("order-17")).not.toBe(emqIdOf("order-18"));
  });

  test("EchoMQ's own ids map to themselves; a JOB0… string is hashed (the counter space holds counter ids only)", () => {
    const own = newJobId();
    expect(own[3]).not.toBe("0");
    expect(emqIdOf(own)).toBe(own);
    expect(emqIdOf("JOB00000000001") as string).not.toBe("JOB00000000001");
    expect(emqIdOf("JOB00000000001")[3]).not.toBe("0");
  });
});
