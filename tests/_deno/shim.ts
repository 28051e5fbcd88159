/**
 * `bun:test` on Deno: `tests/deno.json` maps the `bun:test` specifier here, so the keyspace and
 * client suites run unchanged under `deno test`. Only what those suites use is mapped:
 * `describe`, `test` (`each`, `skipIf`, `skip`), `beforeAll` / `afterAll` / `beforeEach` /
 * `afterEach`, and `expect` with the matchers below, `.not`, `.resolves` and `.rejects`.
 *
 * Every test becomes one `Deno.test` named `suite > … > test`. Hooks run lazily: a suite's
 * `beforeAll` runs (once) before its first test that runs, its `afterAll` right after its last
 * one, so servers a suite starts live exactly as long as under Bun. Sanitizers are off because
 * those servers outlive single tests by design. Per-test timeouts (`test(name, fn, ms)`, the
 * second argument of the hooks) are accepted and ignored; Deno has none.
 *
 * @module
 */

type Fn = () => unknown;

/** The part of `Deno.test`'s options this shim uses (typed locally so `tsc` with Bun's types passes). */
interface DenoTestDefinition {
  name: string;
  fn: () => Promise<void>;
  ignore?: boolean;
  sanitizeOps?: boolean;
  sanitizeResources?: boolean;
  sanitizeExit?: boolean;
}

interface DenoLike {
  test(t: DenoTestDefinition): void;
  inspect?(value: unknown, options?: Record<string, unknown>): string;
}

function deno(): DenoLike {
  const d = (globalThis as { Deno?: DenoLike }).Deno;
  if (!d) throw new Error("tests/_deno/shim.ts is bun:test for Deno; under Bun import bun:test itself");
  return d;
}

class Suite {
  readonly beforeAll: Fn[] = [];
  readonly afterAll: Fn[] = [];
  readonly beforeEach: Fn[] = [];
  readonly afterEach: Fn[] = [];
  /** Tests in this suite and below that will run (not skipped). */
  planned = 0;
  finished = 0;
  #setup: Promise<void> | null = null;

  constructor(readonly name: string, readonly parent: Suite | null) {}

  /** Root first. */
  chain(): Suite[] {
    const out: Suite[] = [];
    for (let s: Suite | null = this; s; s = s.parent) out.unshift(s);
    return out;
  }

  /** Runs the `beforeAll` hooks once; a failure fails every test of the suite. */
  setup(): Promise<void> {
    return (this.#setup ??= (async () => {
      for (const h of this.beforeAll) await h();
    })());
  }

  async teardown(): Promise<void> {
    const errors: unknown[] = [];
    for (const h of this.afterAll) {
      try {
        await h();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length) throw errors[0];
  }
}

const root = new Suite("", null);
let current = root;

/** Groups tests; the body runs now, as under Bun. */
export function describe(name: string, body: () => void): void {
  const parent = current;
  current = new Suite(name, parent);
  try {
    body();
  } finally {
    current = parent;
  }
}
describe.skip = (name: string, _body: () => void): void => void name;

/** Runs `fn` once before the enclosing suite's first test. */
export function beforeAll(fn: Fn, _timeoutMs?: number): void {
  current.beforeAll.push(fn);
}
/** Runs `fn` once after the enclosing suite's last test. */
export function afterAll(fn: Fn, _timeoutMs?: number): void {
  current.afterAll.push(fn);
}
/** Runs `fn` before every test of the enclosing suite. */
export function beforeEach(fn: Fn, _timeoutMs?: number): void {
  current.beforeEach.push(fn);
}
/** Runs `fn` after every test of the enclosing suite. */
export function afterEach(fn: Fn, _timeoutMs?: number): void {
  current.afterEach.push(fn);
}

function register(name: string, fn: Fn, skip: boolean): void {
  const suite = current;
  const chain = suite.chain();
  const full = [...chain.slice(1).map((s) => s.name), name].join(" > ");
  if (!skip) { for (const s of chain) s.planned++; }
  deno().test({
    name: full,
    ignore: skip,
    sanitizeOps: false,
    sanitizeResources: false,
    sanitizeExit: false,
    fn: async () => {
      let failure: unknown = null;
      try {
        for (const s of chain) await s.setup();
        for (const s of chain) for (const h of s.beforeEach) await h();
        await fn();
      } catch (e) {
        failure = e;
      }
      for (const s of [...chain].reverse()) {
        for (const h of s.afterEach) {
          try {
            await h();
          } catch (e) {
            failure ??= e;
          }
        }
      }
      for (const s of [...chain].reverse()) {
        if (++s.finished !== s.planned) continue;
        try {
          await s.teardown();
        } catch (e) {
          failure ??= e;
        }
      }
      if (failure !== null) throw failure;
    },
  });
}

/** `test.each` titles: `%s %d %i %f %j %o %p %#` and `%%`, as Bun formats them. */
function title(template: string, args: readonly unknown[], index: number): string {
  let i = 0;
  return template.replace(/%([sdifjop#%])/g, (whole, c: string) => {
    if (c === "%") return "%";
    if (c === "#") return String(index);
    if (i >= args.length) return whole;
    const a = args[i++];
    if (c === "s") return typeof a === "string" ? a : show(a);
    if (c === "d" || c === "i") return String(c === "i" ? Math.trunc(Number(a)) : Number(a));
    if (c === "f") return String(Number(a));
    if (c === "j") return JSON.stringify(a);
    return show(a);
  });
}

/** Each row's elements are the test function's arguments (a row that is not an array is one). */
type Each = <T>(
  rows: readonly T[],
) => (name: string, fn: (...args: T extends readonly unknown[] ? T : [T]) => unknown, timeoutMs?: number) => void;

interface TestFn {
  (name: string, fn: Fn, timeoutMs?: number): void;
  each: Each;
  skip(name: string, fn: Fn, timeoutMs?: number): void;
  skipIf(condition: boolean): (name: string, fn: Fn, timeoutMs?: number) => void;
  if(condition: boolean): (name: string, fn: Fn, timeoutMs?: number) => void;
}

function makeEach(skip: boolean): Each {
  return <T>(rows: readonly T[]) => (name: string, fn: (...args: never[]) => unknown): void => {
    rows.forEach((row, index) => {
      const args = (Array.isArray(row) ? row : [row]) as never[];
      register(title(name, args, index), () => fn(...args), skip);
    });
  };
}

/** A test. */
export const test: TestFn = Object.assign(
  (name: string, fn: Fn, _timeoutMs?: number): void => register(name, fn, false),
  {
    each: makeEach(false),
    skip: (name: string, fn: Fn): void => register(name, fn, true),
    skipIf: (condition: boolean) => (name: string, fn: Fn): void => register(name, fn, condition),
    if: (condition: boolean) => (name: string, fn: Fn): void => register(name, fn, !condition),
  },
);
/** Bun's alias of {@link test}. */
export const it: TestFn = test;

// ---------------------------------------------------------------------------------------------
// expect

function show(value: unknown): string {
  const d = (globalThis as { Deno?: DenoLike }).Deno;
  if (d?.inspect) return d.inspect(value, { depth: 6, colors: false, strAbbreviateSize: 200 });
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function isObject(x: unknown): x is Record<PropertyKey, unknown> {
  return typeof x === "object" && x !== null;
}

/** Deep equality as Bun's `toEqual` (undefined properties ignored) or `toStrictEqual`. */
export function equals(a: unknown, b: unknown, strict = false): boolean {
  if (Object.is(a, b)) return true;
  if (!isObject(a) || !isObject(b)) return false;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
  }
  if (a instanceof RegExp || b instanceof RegExp) return String(a) === String(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (ArrayBuffer.isView(a) || ArrayBuffer.isView(b)) {
    if (!ArrayBuffer.isView(a) || !ArrayBuffer.isView(b) || a.byteLength !== b.byteLength) return false;
    const x = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const y = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    return x.every((v, i) => v === y[i]);
  }
  if (a instanceof Map || b instanceof Map) {
    if (!(a instanceof Map && b instanceof Map) || a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !equals(v, b.get(k), strict)) return false;
    return true;
  }
  if (a instanceof Set || b instanceof Set) {
    if (!(a instanceof Set && b instanceof Set) || a.size !== b.size) return false;
    for (const v of a) if (!b.has(v) && ![...b].some((w) => equals(v, w, strict))) return false;
    return true;
  }
  if (a instanceof Error && b instanceof Error && a.message !== b.message) return false;
  if (strict && Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equals(a[i], b[i], strict)) return false;
    return true;
  }
  const keys = (o: Record<PropertyKey, unknown>): string[] => Object.keys(o).filter((k) => strict || o[k] !== undefined);
  const ka = keys(a);
  const kb = keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !equals(a[k], b[k], strict)) return false;
  return true;
}

/** `actual` has every property of `expected`, recursively (arrays element by element). */
function matchesObject(actual: unknown, expected: unknown): boolean {
  if (!isObject(expected) || expected instanceof Date || expected instanceof RegExp) return equals(actual, expected);
  if (!isObject(actual)) return false;
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length &&
      expected.every((e, i) => matchesObject(actual[i], e));
  }
  for (const k of Object.keys(expected)) {
    if (!(k in actual) || !matchesObject(actual[k], expected[k])) return false;
  }
  return true;
}

/** The property at `path` (`"a.b"`, `"a[0]"` or `["a", "b"]`), and whether it exists. */
function property(obj: unknown, path: string | readonly (string | number)[]): { found: boolean; value: unknown } {
  const parts = typeof path === "string" ? path.replace(/\[(\d+)\]/g, ".$1").split(".").filter((p) => p !== "") : path;
  let cur: unknown = obj;
  for (const p of parts) {
    if (cur === null || cur === undefined || !(p in Object(cur))) {
      return { found: false, value: undefined };
    }
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return { found: true, value: cur };
}

/** A failed expectation (Deno prints the message). */
export class ExpectationError extends Error {
  override name = "ExpectationError";
}

type Outcome = { threw: true; error: unknown } | { threw: false };

/** The matchers these suites use; under `.resolves` / `.rejects` each returns a promise. */
export interface Matchers<R = void> {
  not: Matchers<R>;
  resolves: Matchers<Promise<void>>;
  rejects: Matchers<Promise<void>>;
  toBe(expected: unknown): R;
  toEqual(expected: unknown): R;
  toStrictEqual(expected: unknown): R;
  toMatchObject(expected: unknown): R;
  toThrow(expected?: unknown): R;
  toBeInstanceOf(expected: abstract new (...args: never[]) => unknown): R;
  toHaveProperty(path: string | readonly (string | number)[], value?: unknown): R;
  toMatch(expected: string | RegExp): R;
  toContain(expected: unknown): R;
  toContainEqual(expected: unknown): R;
  toHaveLength(expected: number): R;
  toBeGreaterThan(expected: number | bigint): R;
  toBeGreaterThanOrEqual(expected: number | bigint): R;
  toBeLessThan(expected: number | bigint): R;
  toBeLessThanOrEqual(expected: number | bigint): R;
  toBeNull(): R;
  toBeUndefined(): R;
  toBeDefined(): R;
  toBeTruthy(): R;
  toBeFalsy(): R;
  toBeNaN(): R;
}

type Check = (actual: unknown, ...args: never[]) => [pass: boolean, says: string];

const checks: Record<string, Check> = {
  toBe: (a, e: unknown) => [Object.is(a, e), `to be ${show(e)}`],
  toEqual: (a, e: unknown) => [equals(a, e), `to equal ${show(e)}`],
  toStrictEqual: (a, e: unknown) => [equals(a, e, true), `to strictly equal ${show(e)}`],
  toMatchObject: (a, e: unknown) => [matchesObject(a, e), `to match object ${show(e)}`],
  toBeInstanceOf: (a, e: new () => unknown) => [a instanceof e, `to be an instance of ${e.name}`],
  toHaveProperty: (a, path: string | (string | number)[], ...rest: unknown[]) => {
    const { found, value } = property(a, path);
    if (rest.length === 0) return [found, `to have property ${show(path)}`];
    return [found && equals(value, rest[0]), `to have property ${show(path)} equal to ${show(rest[0])}`];
  },
  toMatch: (a, e: string | RegExp) => [
    typeof a === "string" && (typeof e === "string" ? a.includes(e) : e.test(a)),
    `to match ${show(e)}`,
  ],
  toContain: (a, e: unknown) => [
    typeof a === "string" ? typeof e === "string" && a.includes(e) : [...(a as Iterable<unknown>)].some((x) => x === e),
    `to contain ${show(e)}`,
  ],
  toContainEqual: (a, e: unknown) => [[...(a as Iterable<unknown>)].some((x) => equals(x, e)), `to contain ${show(e)}`],
  toHaveLength: (a, e: number) => [(a as { length?: unknown })?.length === e, `to have length ${e}`],
  toBeGreaterThan: (a, e: number) => [(a as number) > e, `to be > ${show(e)}`],
  toBeGreaterThanOrEqual: (a, e: number) => [(a as number) >= e, `to be >= ${show(e)}`],
  toBeLessThan: (a, e: number) => [(a as number) < e, `to be < ${show(e)}`],
  toBeLessThanOrEqual: (a, e: number) => [(a as number) <= e, `to be <= ${show(e)}`],
  toBeNull: (a) => [a === null, "to be null"],
  toBeUndefined: (a) => [a === undefined, "to be undefined"],
  toBeDefined: (a) => [a !== undefined, "to be defined"],
  toBeTruthy: (a) => [Boolean(a), "to be truthy"],
  toBeFalsy: (a) => [!a, "to be falsy"],
  toBeNaN: (a) => [Number.isNaN(a), "to be NaN"],
};

/** Whether `outcome` (a call's throw, or a rejection) matches `toThrow(expected)`. */
function thrown(outcome: Outcome, expected: unknown): [boolean, string] {
  if (!outcome.threw) return [false, expected === undefined ? "to throw" : `to throw ${show(expected)}`];
  const e = outcome.error;
  const message = isObject(e) && typeof e["message"] === "string" ? e["message"] : String(e);
  if (expected === undefined) return [true, "to throw"];
  if (typeof expected === "string") return [message.includes(expected), `to throw a message containing ${show(expected)}`];
  if (expected instanceof RegExp) return [expected.test(message), `to throw a message matching ${String(expected)}`];
  if (typeof expected === "function") return [e instanceof expected, `to throw an instance of ${expected.name}`];
  if (expected instanceof Error) return [message === expected.message, `to throw ${show(expected.message)}`];
  if (isObject(expected)) return [matchesObject(e, expected), `to throw an error matching ${show(expected)}`];
  return [false, `to throw ${show(expected)}`];
}

function matchers(actual: unknown, negated: boolean, mode: "value" | "resolves" | "rejects"): Matchers<unknown> {
  const verdict = (pass: boolean, says: string, shown: unknown): void => {
    if (pass === negated) throw new ExpectationError(`expected ${show(shown)} ${negated ? "not " : ""}${says}`);
  };
  const run = (name: string, args: unknown[]): unknown => {
    const apply = (value: unknown, outcome: Outcome | null): void => {
      if (name === "toThrow") {
        let o = outcome;
        if (o === null) {
          if (typeof value !== "function") throw new ExpectationError("toThrow needs a function or .rejects");
          try {
            (value as () => unknown)();
            o = { threw: false };
          } catch (error) {
            o = { threw: true, error };
          }
        }
        const [pass, says] = thrown(o, args[0]);
        return verdict(pass, says, o.threw ? o.error : "a function that returned");
      }
      const [pass, says] = (checks[name] as (a: unknown, ...r: unknown[]) => [boolean, string])(value, ...args);
      verdict(pass, says, value);
    };
    if (mode === "value") return apply(actual, null);
    return Promise.resolve(actual).then(
      (value) => {
        if (mode === "rejects") throw new ExpectationError(`expected a rejection, got a value: ${show(value)}`);
        apply(value, null);
      },
      (error: unknown) => {
        if (mode === "resolves") throw new ExpectationError(`expected a value, got a rejection: ${show(error)}`);
        apply(error, { threw: true, error });
      },
    );
  };
  const m: Record<string, unknown> = {};
  for (const name of [...Object.keys(checks), "toThrow"]) m[name] = (...args: unknown[]) => run(name, args);
  Object.defineProperties(m, {
    not: { get: () => matchers(actual, !negated, mode) },
    resolves: { get: () => matchers(actual, negated, "resolves") },
    rejects: { get: () => matchers(actual, negated, "rejects") },
  });
  return m as unknown as Matchers<unknown>;
}

/** An expectation on `actual`. */
export function expect<T = unknown>(actual: T): Matchers {
  return matchers(actual, false, "value") as Matchers;
}
