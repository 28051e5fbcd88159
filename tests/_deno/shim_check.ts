/**
 * The shim's own check, run by `deno test` next to the suites it maps (tools/test.sh): every
 * matcher fails when it should, `.not` / `.resolves` / `.rejects` behave as under Bun, and hooks
 * run once around their suite. It imports the shim by path (the module `bun:test` maps to under
 * Deno), so `tsc` checks it against the shim's types; it is not named `*.test.ts`, so Bun skips it.
 */
import { afterAll, beforeAll, beforeEach, describe, equals, expect, ExpectationError, test } from "./shim.ts";

const fails = (f: () => unknown): void => expect(f).toThrow(ExpectationError);

test("matchers pass and fail", () => {
  expect(1).toBe(1);
  fails(() => expect(1).toBe(2));
  fails(() => expect({ a: 1 }).toBe({ a: 1 }));
  expect({ a: 1, b: undefined, c: [1, { d: "x" }] }).toEqual({ a: 1, c: [1, { d: "x" }] });
  fails(() => expect({ a: 1 }).toEqual({ a: 2 }));
  fails(() => expect([1, 2]).toEqual([1, 2, 3]));
  fails(() => expect({ a: 1, b: undefined }).toStrictEqual({ a: 1 }));
  expect(new Uint8Array([1, 2])).toEqual(new Uint8Array([1, 2]));
  expect({ name: "E", rule: "r", extra: 1 }).toMatchObject({ name: "E", rule: "r" });
  fails(() => expect({ name: "E" }).toMatchObject({ name: "E", rule: "r" }));
  expect(() => {
    throw new TypeError("bad thing");
  }).toThrow(TypeError);
  expect(() => {
    throw new TypeError("bad thing");
  }).toThrow("bad");
  expect(() => {
    throw new TypeError("bad thing");
  }).toThrow(/thing$/);
  fails(() => expect(() => {}).toThrow());
  fails(() =>
    expect(() => {
      throw new Error("x");
    }).toThrow(TypeError)
  );
  expect(new TypeError("x")).toBeInstanceOf(Error);
  fails(() => expect(new Error("x")).toBeInstanceOf(TypeError));
  expect({ ok: { v: [5] } }).toHaveProperty("ok");
  expect({ ok: { v: [5] } }).toHaveProperty("ok.v[0]", 5);
  fails(() => expect({ err: 1 }).toHaveProperty("ok"));
  expect("wire 4").toMatch(/wire \d/);
  fails(() => expect("wire 4").toMatch("wire 3"));
  expect(["a", "b"]).toContain("b");
  fails(() => expect(["a"]).toContain("b"));
  expect(2).toBeGreaterThan(1);
  fails(() => expect(1).toBeGreaterThan(1));
  expect(1).toBeGreaterThanOrEqual(1);
  fails(() => expect(0).toBeGreaterThanOrEqual(1));
  expect(1).toBeLessThanOrEqual(1);
  fails(() => expect(2).toBeLessThanOrEqual(1));
  expect(null).toBeNull();
  fails(() => expect(undefined).toBeNull());
  expect(1).not.toBe(2);
  fails(() => expect(1).not.toBe(1));
  expect(equals(new Map([[1, { a: 1 }]]), new Map([[1, { a: 1 }]]))).toBe(true);
});

test("resolves and rejects", async () => {
  await expect(Promise.resolve(3)).resolves.toBe(3);
  await expect(Promise.reject(new TypeError("no"))).rejects.toBeInstanceOf(TypeError);
  await expect(Promise.reject(Object.assign(new Error("no"), { rule: "limit" }))).rejects.toMatchObject({
    rule: "limit",
  });
  await expect(Promise.reject(new Error("no way"))).rejects.toThrow("no way");
  await expect(expect(Promise.resolve(1)).rejects.toBe(1)).rejects.toBeInstanceOf(ExpectationError);
  await expect(expect(Promise.reject(new Error("x"))).rejects.toBeInstanceOf(TypeError)).rejects.toBeInstanceOf(
    ExpectationError,
  );
  await expect(expect(Promise.reject(new Error("x"))).resolves.toBe(1)).rejects.toBeInstanceOf(ExpectationError);
});

const log: string[] = [];
describe("hooks", () => {
  beforeAll(() => void log.push("beforeAll"));
  beforeEach(() => void log.push("beforeEach"));
  afterAll(() => void log.push("afterAll"));
  test("first", () => void log.push("first"));
  test.skipIf(true)("skipped", () => void log.push("skipped"));
  test.each([[1, "one"], [2, "two"]])("each %d is %s", (n, word) => void log.push(`${n}:${word}`));
});

test("hooks ran once around their suite, skipped tests did not run", () => {
  expect(log).toEqual([
    "beforeAll",
    "beforeEach",
    "first",
    "beforeEach",
    "1:one",
    "beforeEach",
    "2:two",
    "afterAll",
  ]);
});
