// Compile-fail cases with exact messages: `@ts-expect-error` would accept any error.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { diagnose, ROOT } from "./compiler.ts";

const fixture = resolve(ROOT, "tests/types/fixtures/compile_fail.ts");

test("every misbuilt key fails with a message that names the rule", () => {
  const expected = readFileSync(fixture, "utf8")
    .split("\n")
    .flatMap((text, i) => {
      const at = text.indexOf("//~ ");
      return at <= 0 || text.startsWith("//") ? [] : [[i + 1, text.slice(at + 4)] as const];
    });
  expect(expected.length).toBe(11);
  const got = diagnose([fixture]).map(([file, line, message]) => {
    expect(file).toBe(fixture);
    return [line, message] as const;
  });
  expect(got).toEqual(expected);
});
