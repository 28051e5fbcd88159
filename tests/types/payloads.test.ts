// Payload types the compiler checks, with exact messages (`@ts-expect-error` would accept any
// error): the fixture's `//~` marks, each a diagnostic's lines joined by spaces.
import { test } from "bun:test";
import { expectMarks } from "./compiler.ts";

test("JSON payloads: what JSON cannot carry fails with a message naming it; what comes back is JSON's; queue handles carry their own type", () => {
  expectMarks("payloads.ts", 11, (m) => m.split("\n").map((l) => l.trim()).join(" "));
});
