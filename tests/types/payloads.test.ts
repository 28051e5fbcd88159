// Payload types the compiler checks, with exact messages (`@ts-expect-error` would accept any
// error): the fixture's `//~` marks, each a diagnostic's lines joined by spaces.
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { diagnose, marks, ROOT } from "./compiler.ts";

const fixture = resolve(ROOT, "tests/types/fixtures/payloads.ts");

test("JSON payloads: what JSON cannot carry fails with a message naming it; what comes back is JSON's; queue handles carry their own type", () => {
  const expected = marks(fixture);
  expect(expected.length).toBe(11);
  const got = diagnose([fixture]).map(([file, line, message]) => {
    expect(file).toBe(fixture);
    return [line, message.split("\n").map((l) => l.trim()).join(" ")] as const;
  });
  expect(got).toEqual(expected);
});
