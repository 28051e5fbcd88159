// The shared vectors: every row must agree with the host keyspace (the native module's unit tests
// read the same file).
import { describe, expect, test } from "bun:test";
import { hashtag, isBrandedId, isJobId, jobKey, Keyspace, keyspace, queueKey, type QueueType, slot, splitQueueKey, validName, validQueue } from "../../mod.ts";
import { readLaneVectors, readVectors, type VectorCase } from "../vectors/keys.ts";

const rows: VectorCase[] = readVectors();
const label = (r: VectorCase): string => `${r.note} ${JSON.stringify(r.key).slice(0, 40)}`;
/** What a string becomes on the wire: its UTF-8 bytes read back (a lone surrogate turns into U+FFFD). */
const wire = (s: string): string => new TextDecoder().decode(new TextEncoder().encode(s));
/** The slot of the empty name's keyspace: its `pending` key, a row of its own (no hashtag). */
const emptyPendingSlot = rows.find((r) => r.key === "emq:{}:pending")!.slot;

describe("shared vectors", () => {
  test("cover what the issue lists", () => {
    expect(rows.length).toBeGreaterThanOrEqual(60);
    const names = rows.map((r) => r.queue);
    for (const q of ["", "a}b", "a{b", "a\0b", "a:b", "q".repeat(1000), "a\ud800b", "a\ufffdb"]) {
      expect(names).toContain(q);
    }
    expect(rows.some((r) => r.id !== undefined && r.idValid)).toBe(true);
    expect(rows.some((r) => r.id !== undefined && !r.idValid)).toBe(true);
    expect(rows.some((r) => r.id !== undefined && r.idValid && !r.jobId)).toBe(true);
    expect(emptyPendingSlot).toBe(7387);
  });

  // The native test skips `hostOnly` rows (serde_json refuses a lone surrogate escape): the flag
  // must be set exactly on the keys that hold one, or a row would go unchecked there.
  test("hostOnly marks exactly the keys with a lone surrogate", () => {
    for (const r of rows) expect([r.note, r.hostOnly === true]).toEqual([r.note, wire(r.key) !== r.key]);
    expect(rows.filter((r) => r.hostOnly).length).toBeGreaterThanOrEqual(5);
  });

  test.each(rows.map((r) => [label(r), r] as const))("%s", (_, r) => {
    expect(splitQueueKey(r.key)).toEqual(r.split);
    expect(Keyspace.fromKey(r.key, r.fromKey.type)?.name ?? null).toBe(r.fromKey.queue);
    expect(hashtag(r.key)).toBe(r.hashtag);
    expect(hashtag(new TextEncoder().encode(r.key))).toBe(r.hashtag === null ? null : wire(r.hashtag));
    expect(slot(r.key)).toBe(r.slot);
    expect(slot(new TextEncoder().encode(r.key))).toBe(r.slot);
    if (r.queue === undefined) return;
    expect(validQueue(r.queue)).toBe(r.valid!);
    if (r.id !== undefined) {
      expect(isBrandedId(r.id)).toBe(r.idValid!);
      expect(isJobId(r.id)).toBe(r.jobId!);
      // A row key takes any branded id; the JOB namespace is gated only inside transitions.
      const build = (): string => jobKey(r.queue as string, r.id as string);
      if (r.valid && r.idValid) {
        expect(build()).toBe(r.key);
        expect<string>(keyspace(r.queue as string).job(r.id as string)).toBe(r.key);
      } else expect(build).toThrow(TypeError);
      return;
    }
    // a lane's keys (prefixed types) are built by the keyspace's methods: see the lane vectors below
    if (/^(ready|levels|lane):/.test(r.type!)) return;
    if (r.type!.startsWith("scheduler:")) {
      expect<string>(keyspace(r.queue as string).scheduler(r.type!.slice("scheduler:".length))).toBe(r.key);
      return;
    }
    const build = (): string => queueKey(r.queue as string, r.type as QueueType);
    if (!r.valid) {
      expect(build).toThrow(TypeError);
      return;
    }
    expect(build()).toBe(r.key);
    const ks = keyspace(r.queue as string);
    expect<string>(ks[r.type as QueueType]).toBe(r.key);
    // Every key of a non-empty queue shares the queue's slot; the empty name has no hashtag, and
    // its keyspace's slot is that of its pending key (mutation: hashing `{}` instead gives 15257).
    expect(ks.slot).toBe(r.queue === "" ? emptyPendingSlot : r.slot);
  });
});

describe("shared lane vectors", () => {
  const { names, laneKeys } = readLaneVectors();

  test("names inside a queue: validName agrees with the grammar's oracle", () => {
    expect(names.length).toBeGreaterThanOrEqual(12);
    for (const n of names) expect([n.note, validName(n.name)]).toEqual([n.note, n.valid]);
    expect(names.some((n) => n.valid) && names.some((n) => !n.valid)).toBe(true);
  });

  test("a lane's keys: ready (pending for the default lane at 0), levels, state", () => {
    for (const c of laneKeys) {
      const ks = keyspace(c.queue);
      expect<string[]>([ks.ready(c.lane, c.priority), ks.levels(c.lane), ks.lane(c.lane)]).toEqual([c.ready, c.levels, c.state]);
      expect(splitQueueKey(c.ready)?.queue).toBe(c.queue);
      expect(slot(c.ready)).toBe(ks.slot);
    }
    // widened (`as string`): a literal that breaks the name rule does not compile
    expect(() => keyspace("q").ready("a}b" as string, 0)).toThrow(/lane name "a}b" must not contain "}"/);
    expect(() => keyspace("q").ready("x", -1)).toThrow(/priority must be a non-negative integer/);
    expect(() => keyspace("q").lane("n".repeat(1025))).toThrow(/at most 1024 bytes/);
    expect(() => keyspace("q").scheduler("a{b" as string)).toThrow(/scheduler name "a\{b" must not contain "\{"/);
    expect(() => keyspace("q").scheduler("" as string)).toThrow(/scheduler name must not be empty/);
  });
});
