// Properties over random names and types (fast-check).
import { expect, test } from "bun:test";
import fc from "fast-check";
import { keyspace, QUEUE_TYPES, queueKey, slot, splitQueueKey, validQueue } from "../../mod.ts";

// Names drawn from full Unicode plus the three forbidden bytes, so both verdicts are exercised.
const names = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("a", ":", "{", "}", "\0", "é", "🚀"), maxLength: 12 }),
);
const types = fc.constantFrom(...QUEUE_TYPES);

test("splitQueueKey(queueKey(q, t)) round-trips whenever validQueue(q)", () => {
  let valid = 0;
  fc.assert(
    fc.property(names, types, (q, t) => {
      if (!validQueue(q)) {
        expect(() => queueKey(q, t)).toThrow(TypeError);
        return;
      }
      valid++;
      expect(splitQueueKey(queueKey(q, t))).toEqual({ queue: q, type: t });
    }),
    { numRuns: 3000 },
  );
  expect(valid).toBeGreaterThan(500);
});

test("slot(queueKey(q, t)) === keyspace(q).slot for every non-empty valid q", () => {
  fc.assert(
    fc.property(names.filter((q) => q !== "" && validQueue(q)), types, (q, t) => {
      expect(slot(queueKey(q, t))).toBe(keyspace(q).slot);
    }),
    { numRuns: 3000 },
  );
});

test("slot agrees on a string and its UTF-8 bytes", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 30 }), (k) => {
      expect(slot(k)).toBe(slot(new TextEncoder().encode(k)));
    }),
    { numRuns: 3000 },
  );
});
