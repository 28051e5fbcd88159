// A queue handle's result type (`mq.queue<P, R>`), with exact messages (`@ts-expect-error` would
// accept any error): the fixture's `//~` marks, each a diagnostic's lines joined by spaces; its
// `Is<…>` checks fail to compile unless each result is typed exactly as JSON gives it back.
import { test } from "bun:test";
import { expectMarks } from "./compiler.ts";

test("typed results: the handler must return the queue's result type; result() and enqueue's wait give it back as JSON does", () => {
  expectMarks("results.ts", 12, (m) => m.split("\n").map((l) => l.trim()).join(" "));
});
