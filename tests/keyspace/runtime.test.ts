// The runtime mirror: refusals name the rule and quote the value; ids are well formed and ordered.
import { describe, expect, test } from "bun:test";
import {
  assertBrandedId,
  assertClientQueue,
  assertJobId,
  assertValidQueue,
  isBrandedId,
  isJobId,
  jobKey,
  Keyspace,
  keyspace,
  KeyspaceError,
  type KeyspaceRule,
  newJobId,
  queueKey,
  type QueueType,
  slot,
  splitQueueKey,
  validQueue,
} from "../../mod.ts";

const widen = (s: string): string => s;

/** The error `f` throws (fails the test when it throws nothing). */
function thrown(f: () => unknown): KeyspaceError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(KeyspaceError);
    expect(e).toBeInstanceOf(TypeError);
    expect((e as Error).name).toBe("KeyspaceError"); // what a stack trace prints
    return e as KeyspaceError;
  }
  throw new Error("accepted");
}

/** One test a case, titled by `title` (`%j` the name, `%s` the rule): `check(name)` refuses it with that rule. */
function refusesEach(title: string, check: (x: unknown) => unknown, cases: Array<[string, KeyspaceRule]>): void {
  test.each(cases)(title, (name, rule) => {
    expect(thrown(() => check(name)).rule).toBe(rule);
  });
}

const WELL_FORMED_MESSAGE = "must be well-formed UTF-16 (no lone surrogate): it would alias another queue on the " +
  'server ("\\uD800", "\\uDFFF" and "\\uFFFD" all become the bytes EF BF BD)';

describe("queue names", () => {
  test("validQueue is false for non-strings", () => {
    for (const x of [undefined, null, 1, {}, ["q"], Symbol("q")]) expect(validQueue(x)).toBe(false);
  });

  test.each([
    ["a}b", "queue-close-brace", 'queue name "a}b" must not contain "}": a brace would move the cluster hashtag'],
    ["a{b", "queue-open-brace", 'queue name "a{b" must not contain "{": a brace would move the cluster hashtag'],
    ["a\0b", "queue-nul", 'queue name "a\\u0000b" must not contain NUL: it would corrupt NUL-joined entries'],
  ])("assertValidQueue(%j) names the rule", (name, rule, message) => {
    const e = thrown(() => assertValidQueue(name));
    expect(e.rule).toBe(rule as KeyspaceRule);
    expect(e.message).toBe(message);
  });

  test.each([
    ["a\ud800b", '"a\\ud800b"'],
    ["\udfff", '"\\udfff"'],
    ["\ude80\ud83d", '"\\ude80\\ud83d"'], // a pair in the wrong order is two lone surrogates
    ["x\udbff", '"x\\udbff"'],
  ])("assertValidQueue(%j) refuses a lone surrogate: it would alias another queue", (name, quoted) => {
    const e = thrown(() => assertValidQueue(name));
    expect(e.rule).toBe("queue-not-well-formed");
    expect(e.message).toBe(`queue name ${quoted} ${WELL_FORMED_MESSAGE}`);
    expect(validQueue(name)).toBe(false);
  });

  test("a lone surrogate encodes to the same bytes as U+FFFD: the aliasing the rule prevents", () => {
    const utf8 = (s: string): string => [...new TextEncoder().encode(s)].map((b) => b.toString(16)).join(" ");
    expect(utf8("\ud800")).toBe("ef bf bd");
    expect(utf8("\udfff")).toBe("ef bf bd");
    expect(utf8("\ufffd")).toBe("ef bf bd");
  });

  test("well-formed non-BMP names, U+FFFD itself and the empty name stay valid", () => {
    for (const name of ["🚀", "a\ud83d\ude80b", "\ufffd", "队列", ""]) {
      expect(validQueue(name)).toBe(true);
      expect(() => assertValidQueue(name)).not.toThrow();
    }
  });

  refusesEach("order of checks: %j breaks %s before well-formedness", assertValidQueue, [
    ["\ud800}", "queue-close-brace"],
    ["{\udc00", "queue-open-brace"],
    ["\0\ud800", "queue-nul"],
    ["\ud800{}", "queue-close-brace"],
  ]);

  test("key builders and the split refuse a lone surrogate in the name", () => {
    expect(thrown(() => queueKey(widen("a\ud800"), "pending")).rule).toBe("queue-not-well-formed");
    expect(thrown(() => jobKey(widen("\udc00"), "JOB0Nb1VTbfnu4")).rule).toBe("queue-not-well-formed");
    expect(thrown(() => keyspace(widen("q\udbff"))).rule).toBe("queue-not-well-formed");
    expect(splitQueueKey("emq:{a\ud800}:pending")).toBeNull();
  });

  test("the name ends at the first `}:`; a later brace belongs to the type", () => {
    expect(splitQueueKey("emq:{orders}:pending}")).toEqual({ queue: "orders", type: "pending}" });
    expect(splitQueueKey("emq:{q}:job:a}:b")).toEqual({ queue: "q", type: "job:a}:b" });
    expect(Keyspace.fromKey("emq:{a\ud800}:pending", "pending")).toBeNull();
  });

  test("assertValidQueue refuses a non-string with its type", () => {
    expect(() => assertValidQueue(42)).toThrow("queue name must be a string, got number");
  });

  test("queueKey, jobKey and keyspace check widened names at run time", () => {
    expect(() => queueKey(widen("a}b"), "pending")).toThrow(KeyspaceError);
    expect(() => jobKey(widen("a{b"), widen("JOB0Nb1VTbfnu4"))).toThrow(KeyspaceError);
    expect(() => keyspace(widen("a\0b"))).toThrow(KeyspaceError);
    expect(() => queueKey("orders", widen("pendin") as QueueType)).toThrow(
      'queue key type "pendin" must be one of pending, active, schedule, dead, meta',
    );
  });

  test("the empty name is legal on the host", () => {
    expect(queueKey("", "pending")).toBe("emq:{}:pending");
    expect(Keyspace.fromKey("emq:{}:pending", "pending")).toBeNull();
  });

  // Mutation `this.slot = slot(`{${name}}`)` (hash `{}` for the empty name) gives 15257.
  test('keyspace("").slot is the slot of emq:{}:pending (7387, no hashtag), not of {} (15257)', () => {
    expect(slot("emq:{}:pending")).toBe(7387);
    expect(slot("{}")).toBe(15257);
    expect(keyspace("").slot).toBe(7387);
  });
});

describe("client queue names", () => {
  test("assertClientQueue refuses the empty name: the server refuses an empty hashtag", () => {
    const e = thrown(() => assertClientQueue(""));
    expect(e.rule).toBe("queue-empty");
    expect(e.message).toBe("queue name must not be empty: the server refuses an empty hashtag");
  });

  refusesEach("assertClientQueue(%j) applies every name rule too (%s)", assertClientQueue, [
    ["a}b", "queue-close-brace"],
    ["a{b", "queue-open-brace"],
    ["a\0b", "queue-nul"],
    ["a\ud800", "queue-not-well-formed"],
  ]);

  test("assertClientQueue refuses a non-string and accepts a legal non-empty name", () => {
    expect(thrown(() => assertClientQueue(7)).rule).toBe("queue-not-string");
    expect(thrown(() => assertClientQueue(undefined)).rule).toBe("queue-not-string");
    for (const name of ["orders", " ", "a:b", "\ufffd"]) expect(() => assertClientQueue(name)).not.toThrow();
  });
});

describe("job ids", () => {
  test.each([
    ["JOB0Nb1VTbfnu", "id-length", 'branded id "JOB0Nb1VTbfnu" must be 14 characters: a namespace of 3 capital letters [A-Z] and 11 Base62 characters'],
    ["USR0Nb1VTbfnu45", "id-length", 'branded id "USR0Nb1VTbfnu45" must be 14 characters: a namespace of 3 capital letters [A-Z] and 11 Base62 characters'],
    ["job0Nb1VTbfnu4", "id-namespace", 'branded id "job0Nb1VTbfnu4" namespace must be 3 capital letters [A-Z]'],
    ["US10Nb1VTbfnu4", "id-namespace", 'branded id "US10Nb1VTbfnu4" namespace must be 3 capital letters [A-Z]'],
    ["ÜSR0Nb1VTbfnu4", "id-namespace", 'branded id "ÜSR0Nb1VTbfnu4" namespace must be 3 capital letters [A-Z]'],
    ["JOB0Nb1VTbfn_4", "id-payload", 'branded id "JOB0Nb1VTbfn_4" payload must be 11 Base62 characters [0-9A-Za-z]'],
    ["USR0Nb1VTbfnu\u00e9", "id-payload", 'branded id "USR0Nb1VTbfnué" payload must be 11 Base62 characters [0-9A-Za-z]'],
  ])("jobKey refuses %j", (id, rule, message) => {
    for (const build of [() => jobKey("orders", widen(id)), () => keyspace("orders").job(widen(id)), () => assertBrandedId(id)]) {
      const e = thrown(build);
      expect(e.rule).toBe(rule as KeyspaceError["rule"]);
      expect(e.message).toBe(message);
    }
  });

  test("jobKey and Keyspace.job take a branded id of any namespace (JOB is gated in transitions)", () => {
    expect(jobKey("orders", "USR0Nb1VTbfnu4")).toBe("emq:{orders}:job:USR0Nb1VTbfnu4");
    expect(keyspace("orders").job("ABCzzzzzzzzzzz")).toBe("emq:{orders}:job:ABCzzzzzzzzzzz");
    expect(jobKey("a:b", widen("ZZZ00000000000"))).toBe("emq:{a:b}:job:ZZZ00000000000");
    expect(() => assertBrandedId("USR0Nb1VTbfnu4")).not.toThrow();
  });

  test("assertBrandedId refuses a non-string with its type", () => {
    const e = thrown(() => assertBrandedId(12345678901234));
    expect(e.rule).toBe("id-not-string");
    expect(e.message).toBe("branded id must be a string, got number");
  });

  test.each([
    ["JOB0Nb1VTbfnu", "id-length", 'job id "JOB0Nb1VTbfnu" must be 14 characters: the namespace JOB and 11 Base62 characters'],
    ["USR0Nb1VTbfnu4", "id-namespace", 'job id "USR0Nb1VTbfnu4" must start with the namespace JOB'],
    ["JOA0Nb1VTbfnu4", "id-namespace", 'job id "JOA0Nb1VTbfnu4" must start with the namespace JOB'], // all three letters count
    ["job0Nb1VTbfnu4", "id-namespace", 'job id "job0Nb1VTbfnu4" must start with the namespace JOB'],
    ["JOB0Nb1VTbfn_4", "id-payload", 'job id "JOB0Nb1VTbfn_4" payload must be 11 Base62 characters [0-9A-Za-z]'],
  ])("assertJobId (the client's transitions) still wants JOB: %j", (id, rule, message) => {
    const e = thrown(() => assertJobId(id));
    expect(e.rule).toBe(rule as KeyspaceError["rule"]);
    expect(e.message).toBe(message);
  });

  test("assertJobId refuses a non-string and accepts a JOB id", () => {
    expect(thrown(() => assertJobId(null)).message).toBe("job id must be a string, got object");
    expect(() => assertJobId("JOB0Nb1VTbfnu4")).not.toThrow();
  });

  test("newJobId is a JOB branded id, strictly increasing within the process", () => {
    let prev = "";
    for (let i = 0; i < 20000; i++) {
      const id = newJobId();
      expect(isJobId(id)).toBe(true);
      expect(id > prev).toBe(true);
      prev = id;
    }
  });

  test("newJobId leads with the millisecond clock", () => {
    const before = Date.now();
    const id = newJobId();
    const ms = [...id.slice(3, 10)].reduce(
      (n, c) => n * 62 + "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".indexOf(c),
      0,
    );
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1000); // may borrow ahead under a burst
  });

  test("isBrandedId accepts other namespaces, isJobId only JOB", () => {
    expect(isBrandedId("ABC0Nb1VTbfnu4")).toBe(true);
    expect(isJobId("ABC0Nb1VTbfnu4")).toBe(false);
    expect(isBrandedId(12345678901234)).toBe(false);
  });
});

describe("keyspace", () => {
  test("builds every key once with the shared slot", () => {
    const ks = keyspace("orders");
    expect([ks.name, ks.base, ks.pending, ks.active, ks.schedule, ks.dead, ks.meta]).toEqual([
      "orders",
      "emq:{orders}:",
      "emq:{orders}:pending",
      "emq:{orders}:active",
      "emq:{orders}:schedule",
      "emq:{orders}:dead",
      "emq:{orders}:meta",
    ]);
    expect(ks.job("JOB0Nb1VTbfnu4")).toBe("emq:{orders}:job:JOB0Nb1VTbfnu4");
    for (const k of [ks.pending, ks.dead, ks.job("JOB0Nb1VTbfnu4")]) expect(slot(k)).toBe(ks.slot);
  });

  test("fromKey needs the exact type and a non-empty name", () => {
    expect(Keyspace.fromKey("emq:{orders}:active", "active")?.pending).toBe("emq:{orders}:pending");
    expect(Keyspace.fromKey("emq:{orders}:active", "pending")).toBeNull();
    expect(Keyspace.fromKey("emq:{a}b}:pending", "pending")).toBeNull();
  });
});
