// Compile-fail cases with exact messages: `@ts-expect-error` would accept any error.
import { test } from "bun:test";
import { expectMarks } from "./compiler.ts";

test("every misbuilt key fails with a message that names the rule", () => {
  expectMarks("compile_fail.ts", 18);
});
