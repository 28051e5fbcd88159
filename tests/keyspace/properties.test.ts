// Properties over random names and types (fast-check).
import { expect, test } from "bun:test";
import fc from "fast-check";
import { hashtag, keyspace, QUEUE_TYPES, queueKey, slot, splitQueueKey, validQueue } from "../../mod.ts";
import { wellFormed } from "../vectors/keys.ts";

// One UTF-16 code unit or pair of any kind, lone surrogates included: fast-check's own string units
// ("grapheme", "binary") only ever produce well-formed strings, so they never reach the U+FFFD
// branch of the string hash nor the well-formedness rule of names.
const loneHigh = fc.integer({ min: 0xd800, max: 0xdbff }).map((c) => String.fromCharCode(c));
const loneLow = fc.integer({ min: 0xdc00, max: 0xdfff }).map((c) => String.fromCharCode(c));
const unit = fc.oneof(
  loneHigh,
  loneLow,
  fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff", "\ufffd", "{", "}", "\0", "a", ":"),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }), // any code point, astral pairs included
);
/** Strings of any UTF-16 units: lone high and low surrogates, pairs (in and out of order), braces. */
const utf16 = fc.string({ unit, maxLength: 16 });

// Names drawn from full Unicode plus the three forbidden bytes and lone surrogates, so every
// verdict is exercised.
const names = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: fc.constantFrom("a", ":", "{", "}", "\0", "é", "🚀", "\ud800", "\udc00"), maxLength: 12 }),
  utf16,
);
const types = fc.constantFrom(...QUEUE_TYPES);

test("splitQueueKey(queueKey(q, t)) round-trips whenever validQueue(q)", () => {
  let valid = 0;
  let lone = 0;
  fc.assert(
    fc.property(names, types, (q, t) => {
      if (!validQueue(q)) {
        if (!/[{}\0]/.test(q)) {
          lone++;
          expect(wellFormed(q)).toBe(false);
        }
        expect(() => queueKey(q, t)).toThrow(TypeError);
        return;
      }
      valid++;
      expect(wellFormed(q)).toBe(true);
      expect(splitQueueKey(queueKey(q, t))).toEqual({ queue: q, type: t });
    }),
    { numRuns: 3000 },
  );
  expect(valid).toBeGreaterThan(500);
  expect(lone).toBeGreaterThan(50); // the well-formedness rule was exercised on its own
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

// TextEncoder turns each lone surrogate into U+FFFD (EF BF BD), and so must the string hash: the
// mutation "hash the raw code unit" (ED A0 80 for U+D800) fails this, as does pairing a high
// surrogate with anything but a low one.
test("slot agrees on a string with lone surrogates and its UTF-8 bytes, inside and outside a tag", () => {
  let lone = 0;
  fc.assert(
    fc.property(utf16, utf16, fc.boolean(), (a, b, tagged) => {
      const k = tagged ? `emq:{${a}}:${b}` : `${a}${b}`;
      if (!wellFormed(k)) lone++;
      const bytes = new TextEncoder().encode(k);
      expect(slot(k)).toBe(slot(bytes));
      const tag = hashtag(k);
      expect(hashtag(bytes)).toBe(tag === null ? null : new TextDecoder().decode(new TextEncoder().encode(tag)));
    }),
    { numRuns: 3000 },
  );
  expect(lone).toBeGreaterThan(1000);
});

test.each([
  ["emq:{a\ud800b}:pending", 5618], // lone high inside the tag: hashed as a EF BF BD b
  ["emq:{a\udc00b}:pending", 5618], // lone low: the same bytes, the same slot
  ["emq:{a\ufffdb}:pending", 5618], // U+FFFD itself: why a lone surrogate name is refused
  ["emq:{\ud800\ud800}:x", null], // high followed by high: two replacements, not a pair
  ["emq:{a\ud800}:pending", null], // high at the end of the tag: the `}` after it is no low half
  ["\ude80\ud83d", null], // a pair in the wrong order, no tag, high at the very end
  ["emq:{\ud83d\ude80}:pending", null], // a real pair: the four-byte encoding
])("slot(%j) is the slot of its TextEncoder bytes", (key, want) => {
  const bytes = new TextEncoder().encode(key);
  expect(slot(key)).toBe(slot(bytes));
  if (want !== null) expect(slot(key)).toBe(want);
});
