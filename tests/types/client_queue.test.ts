// CheckClientQueue refuses the empty name with a message naming the rule, on top of CheckQueue's
// rules, and leaves legal and widened names alone. Exact messages: `@ts-expect-error` would accept
// any error.
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { diagnose, marks, ROOT } from "./compiler.ts";

const fixture = resolve(ROOT, "tests/types/fixtures/client_queue.ts");

test("CheckClientQueue: the empty name and every CheckQueue rule fail with the rule's message", () => {
  const expected = marks(fixture);
  expect(expected.length).toBe(4);
  const got = diagnose([fixture]).map(([file, line, message]) => {
    expect(file).toBe(fixture);
    return [line, message] as const;
  });
  expect(got).toEqual(expected);
});
