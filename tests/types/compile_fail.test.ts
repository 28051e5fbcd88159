// Compile-fail cases with exact messages: `@ts-expect-error` would accept any error.
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { diagnose, marks, ROOT } from "./compiler.ts";

const fixture = resolve(ROOT, "tests/types/fixtures/compile_fail.ts");

test("every misbuilt key fails with a message that names the rule", () => {
  const expected = marks(fixture);
  expect(expected.length).toBe(18);
  const got = diagnose([fixture]).map(([file, line, message]) => {
    expect(file).toBe(fixture);
    return [line, message] as const;
  });
  expect(got).toEqual(expected);
});
