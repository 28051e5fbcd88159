// Every name that becomes part of a key or an entry fails at compile time with the rule's
// message, under tsc and under deno check (Deno's own TypeScript): the keyspace's named builders,
// scheduler names, dedup keys, lanes. Exact messages: `@ts-expect-error` would accept any error.
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { denoDiagnose, expectDenoMarks, expectMarks, ROOT } from "./compiler.ts";

const MARKS = 29;

test("tsc: every misbuilt name fails with a message that names the rule; legal and widened names compile", () => {
  expectMarks("names.ts", MARKS);
});

test("deno check: the same failures, the same messages", () => {
  expectDenoMarks("names.ts", MARKS);
});

test("deno check: the literal key types hold (tests/types/literal_types.ts compiles)", () => {
  expect(denoDiagnose(resolve(ROOT, "tests/types/literal_types.ts"))).toEqual([]);
});
