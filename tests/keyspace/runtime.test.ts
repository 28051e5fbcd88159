// The runtime mirror: refusals name the rule and quote the value; ids are well formed and ordered.
import { describe, expect, test } from "bun:test";
import {
  assertValidQueue,
  isBrandedId,
  isJobId,
  jobKey,
  Keyspace,
  keyspace,
  KeyspaceError,
  newJobId,
  queueKey,
  type QueueType,
  slot,
  validQueue,
} from "../../mod.ts";

const widen = (s: string): string => s;

describe("queue names", () => {
  test("validQueue is false for non-strings", () => {
    for (const x of [undefined, null, 1, {}, ["q"], Symbol("q")]) expect(validQueue(x)).toBe(false);
  });

  test.each([
    ["a}b", "queue-close-brace", 'queue name "a}b" must not contain "}": a brace would move the cluster hashtag'],
    ["a{b", "queue-open-brace", 'queue name "a{b" must not contain "{": a brace would move the cluster hashtag'],
    ["a\0b", "queue-nul", 'queue name "a\\u0000b" must not contain NUL: it would corrupt NUL-joined entries'],
  ])("assertValidQueue(%j) names the rule", (name, rule, message) => {
    let caught: unknown;
    try {
      assertValidQueue(name);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(KeyspaceError);
    expect(caught).toBeInstanceOf(TypeError);
    expect((caught as KeyspaceError).rule).toBe(rule as KeyspaceError["rule"]);
    expect((caught as Error).message).toBe(message);
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
});

describe("job ids", () => {
  test.each([
    ["JOB0Nb1VTbfnu", "id-length", 'job id "JOB0Nb1VTbfnu" must be 14 characters: the namespace JOB and 11 Base62 characters'],
    ["job0Nb1VTbfnu4", "id-namespace", 'job id "job0Nb1VTbfnu4" must start with the namespace JOB'],
    ["JOB0Nb1VTbfn_4", "id-payload", 'job id "JOB0Nb1VTbfn_4" payload must be 11 Base62 characters [0-9A-Za-z]'],
  ])("jobKey refuses %j", (id, rule, message) => {
    try {
      jobKey("orders", widen(id));
      throw new Error("accepted");
    } catch (e) {
      expect((e as KeyspaceError).rule).toBe(rule as KeyspaceError["rule"]);
      expect((e as Error).message).toBe(message);
    }
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
