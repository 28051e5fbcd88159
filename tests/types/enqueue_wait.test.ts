// enqueue's return type follows its `wait` option, with exact messages (`@ts-expect-error` would
// accept any error): the fixture's `//~` marks, each a diagnostic's lines joined by spaces; its
// `Is<…>` checks fail to compile unless each call's type is exactly the one named.
import { test } from "bun:test";
import { expectMarks } from "./compiler.ts";

test("enqueue: a JobId without wait, { id, result } with it, either when the compiler cannot tell; the handle the same", () => {
  expectMarks("enqueue_wait.ts", 6, (m) => m.split("\n").map((l) => l.trim()).join(" "));
});
