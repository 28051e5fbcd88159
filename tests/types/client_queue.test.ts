// CheckClientQueue refuses the empty name with a message naming the rule, on top of CheckQueue's
// rules, and leaves legal and widened names alone. Exact messages: `@ts-expect-error` would accept
// any error.
import { test } from "bun:test";
import { expectMarks } from "./compiler.ts";

test("CheckClientQueue: the empty name and every CheckQueue rule fail with the rule's message", () => {
  expectMarks("client_queue.ts", 4);
});
