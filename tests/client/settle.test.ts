/**
 * `EMQ.SETTLE` (wire 11, issue 19 §4) on the raw wire, for each backend × topology:
 * - statuses: 1 held, 0 not held (a stale token, an id not active, a missing row, a row of another
 *   type: never a refusal), 2 an id an earlier settlement of the call named; those change nothing;
 * - each op's effect, alone and mixed, is the separate verb's — the held settlements of each op as
 *   one call, ACK, RETRY, BURY, RELEASE in that order — and with want > 0 then a CLAIM: twin queues,
 *   one settled by SETTLE, the other by the separate verbs, end with identical keyspaces (rows, sets,
 *   lists, meta counters, events) and the same jobs claimed; on a plain queue, with priorities and a
 *   concurrency limit, with completed jobs not kept, and on a laned queue (lane `active` counts
 *   exact);
 * - want 0 claims nothing and runs no upkeep; want > 0 claims back in the same call a job retried
 *   with delay 0 and a released one (the tail: claimed first);
 * - a refusal of any part's checks is SETTLE's, before any write (DEBUG DIGEST unchanged); a refusal
 *   of the claim part leaves the settles applied, claims nothing, next_ms 0;
 * - on random queues (lanes, priorities, dedup keys, limits) and random settlements, SETTLE is the
 *   separate verbs then a CLAIM, its statuses as predicted from the state before it.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { keyspace } from "../../mod.ts";
import { renderRefusal, type Verb } from "../../lib/wire/mod.ts";
import { COMBOS, digest, dump, type Outcome, streamEntries, useClient, useSites, wire } from "./_harness.ts";
import { claimedTuple } from "../native/_native.ts";

const sites = useSites();

/** A settlement: its op (0 ack, 1 retry, 2 bury, 3 release), its job, and what the op reads. */
interface Item {
  op: 0 | 1 | 2 | 3;
  id: string;
  /** The token to send; absent: the one the job was claimed with. */
  token?: string;
  delay?: number;
  reason?: string;
  result?: string;
  /** The attempt's error (retry, bury). */
  failure?: string;
}

/** A claimed job as the wire hands it out. */
type Claimed = [string, string, number, number, string];

const ID = (k: number): string => `JOB${String(k).padStart(11, "0")}`;

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient(sites, combo);
    const call = (verb: Verb, q: string, args: Array<string | number>): Promise<Outcome> => wire(ctx.raw, backend, verb, [keyspace(q).meta], args.map(String));
    const ok = async (verb: Verb, q: string, args: Array<string | number>): Promise<unknown> => {
      const o = await call(verb, q, args);
      if (!("ok" in o)) throw new Error(`${verb}: ${o.err}`);
      return o.ok;
    };
    /** Admits jobs `[id, opts]` (payload: the id's last digits). */
    const enqueue = (q: string, jobs: Array<[string, string?]>) => ok("ENQUEUE", q, jobs.flatMap(([id, opts]) => [id, opts ?? "", `p${id.slice(-2)}`]));
    /** Claims up to count jobs: their tokens by id (and the reply's jobs). */
    const claim = async (q: string, count: number, tokens: Map<string, string>): Promise<Claimed[]> => {
      const reply = (await ok("CLAIM", q, [60_000, count, 0])) as unknown[];
      const jobs: Claimed[] = reply.slice(1).map(claimedTuple);
      for (const j of jobs) tokens.set(j[0], String(j[3]));
      return jobs;
    };
    const group = (it: Item, tokens: Map<string, string>): Array<string | number> => [
      it.op,
      it.id,
      it.token ?? tokens.get(it.id) ?? "1",
      it.delay ?? 0,
      it.reason ?? "",
      it.result ?? "",
      it.failure ?? "",
    ];
    const settle = (q: string, want: number, items: Item[], tokens: Map<string, string>, lease = 60_000) =>
      call("SETTLE", q, [lease, want, ...items.flatMap((it) => group(it, tokens))]);
    const row = (q: string, id: string, ...fields: string[]) => ctx.row(q, id, ...fields);
    const cmd = (q: string, args: string[]): Promise<unknown> => ctx.raw.command(args, keyspace(q).meta);

    /**
     * Twin queues set up alike by `setup` (which claims; its tokens by id): `<stem>-v` settled by
     * the separate verbs (the held settlements of each op as one call, in op order, then a CLAIM of
     * want), `<stem>-s` by one SETTLE; the same statuses' effect, keyspaces and jobs claimed.
     */
    async function twins(
      stem: string,
      setup: (q: string, tokens: Map<string, string>) => Promise<void>,
      items: Item[],
      statuses: number[],
      want: number,
    ): Promise<{ settled: unknown[]; q: string }> {
      const v = `${stem}-${backend}-v`;
      const s = `${stem}-${backend}-s`;
      const tv = new Map<string, string>();
      const ts = new Map<string, string>();
      await setup(v, tv);
      await setup(s, ts);
      expect(await dump(ctx.raw, s)).toEqual(await dump(ctx.raw, v));
      const verbs: Array<[Verb, (it: Item) => Array<string | number>]> = [
        ["ACK", (it) => [it.id, tv.get(it.id)!, it.result ?? ""]],
        ["RETRY", (it) => [it.id, tv.get(it.id)!, it.delay ?? 0, it.reason ?? "", it.failure ?? ""]],
        ["BURY", (it) => [it.id, tv.get(it.id)!, it.reason ?? "", it.failure ?? ""]],
        ["RELEASE", (it) => [it.id, tv.get(it.id)!]],
      ];
      for (const [op, [verb, args]] of verbs.entries()) {
        const held = items.filter((it, k) => it.op === op && statuses[k] === 1);
        if (held.length > 0) expect(await ok(verb, v, held.flatMap(args))).toBe(held.length);
      }
      const separate = want > 0 ? ((await ok("CLAIM", v, [60_000, want, 0])) as unknown[]) : [0];
      const settled = await settle(s, want, items, ts);
      if (!("ok" in settled)) throw new Error(`SETTLE: ${settled.err}`);
      const reply = settled.ok as unknown[];
      expect(reply[1]).toEqual(statuses);
      const jobs = (r: unknown[]) => r.map(claimedTuple).map(([id, payload, attempts, , opts]) => [id, payload, attempts, opts]);
      expect(jobs(reply.slice(2))).toEqual(jobs(separate.slice(1)));
      const when = (x: unknown) => (Number(x) >= 1e12 ? "<now>" : x);
      expect(when(reply[0])).toEqual(when(separate[0]));
      expect(await dump(ctx.raw, s)).toEqual(await dump(ctx.raw, v));
      return { settled: reply, q: s };
    }

    test("a claimed job is one bulk string (wire 12): opts and payload byte for byte, -1 for a row without its payload", async () => {
      const q = `st-entry-${backend}`;
      const K = keyspace(q);
      const opts = "dedup=k 1\nx;lane=é";
      await ok("ENQUEUE", q, [ID(1), "", "p\n01 é"]);
      await cmd(q, ["HSET", K.job(ID(1) as never), "opts", opts]);
      await enqueue(q, [[ID(2)]]);
      await cmd(q, ["HDEL", K.job(ID(2) as never), "payload"]);
      const reply = (await ok("CLAIM", q, [60_000, 2, 0])) as unknown[];
      const head = (e: unknown): string => String(e).split("\n")[0]!;
      const [, first, second] = reply;
      const bytes = (t: string): number => new TextEncoder().encode(t).length;
      expect(head(first)).toMatch(new RegExp(`^1 \\d+ 14 ${bytes(opts)} ${bytes("p\n01 é")}$`));
      expect(String(first).slice(head(first).length + 1)).toBe(`${ID(1)}${opts}p\n01 é`);
      expect(head(second)).toMatch(/^1 \d+ 14 0 -1$/);
      expect(String(second).slice(head(second).length + 1)).toBe(ID(2));
      const [a, b] = [first, second].map(claimedTuple);
      expect([a![0], a![1], a![4], b![0], b![1]]).toEqual([ID(1), "p\n01 é", opts, ID(2), ""]);
    });

    test("statuses: 1 held, 0 not held (stale token, not active, no row, a row of another type), 2 repeated; only the held settle", async () => {
      const q = `st-status-${backend}`;
      const K = keyspace(q);
      const tokens = new Map<string, string>();
      await enqueue(q, [[ID(1)], [ID(2)], [ID(3)], [ID(4)]]);
      await claim(q, 2, tokens); // 1 and 2 active, 3 and 4 pending
      // a row of another type: its id in active, its row a string
      await cmd(q, ["ZADD", K.active, "9999999999999", ID(5)]);
      const before = await dump(ctx.raw, q); // (a dump reads no string: DUMP's bytes)
      await cmd(q, ["SET", K.job(ID(5) as never), "x"]);
      const stale = String(Number(tokens.get(ID(2))) + 1000);
      const r = await settle(q, 0, [
        { op: 1, id: ID(2), token: stale, delay: 1000, reason: "stale" }, // 0: another token
        { op: 0, id: ID(3) }, // 0: pending, not active
        { op: 2, id: ID(9), reason: "gone" }, // 0: no row
        { op: 3, id: ID(5), token: "1" }, // 0: a row of another type (no refusal)
        { op: 0, id: ID(1), result: "r1" }, // 1
        { op: 2, id: ID(1), reason: "again" }, // 2: named before (held)
        { op: 0, id: ID(2) }, // 2: named before (not held)
        { op: 0, id: ID(9) }, // 2: named before (no row)
      ], tokens);
      expect(r).toEqual({ ok: [0, [0, 0, 0, 0, 1, 2, 2, 2]] });
      expect(await row(q, ID(1), "state", "result")).toEqual(["completed", "r1"]);
      expect(await row(q, ID(2), "state", "reason")).toEqual(["active", "null"]);
      expect(await row(q, ID(3), "state")).toEqual(["pending"]);
      expect(await cmd(q, ["GET", K.job(ID(5) as never)])).toBe("x");
      // a SETTLE of only settlements not held (or repeated) writes nothing
      const d0 = await digest(ctx.raw, K.meta);
      expect(await settle(q, 0, [{ op: 0, id: ID(1) }, { op: 3, id: ID(2), token: stale }, { op: 1, id: ID(1) }], tokens)).toEqual({
        ok: [0, [0, 0, 2]],
      });
      expect(await digest(ctx.raw, K.meta)).toBe(d0);
      // nothing but job 1's ack changed
      await cmd(q, ["DEL", K.job(ID(5) as never)]);
      const after = await dump(ctx.raw, q);
      expect(Object.keys(after).filter((k) => JSON.stringify(after[k]) !== JSON.stringify(before[k])).sort()).toEqual([
        "emq:{Q}:active",
        "emq:{Q}:completed",
        "emq:{Q}:events",
        "emq:{Q}:job:" + ID(1),
        "emq:{Q}:meta",
        "emq:{Q}:metrics",
      ]);
    });

    // one settlement of each op alone, then all mixed (argument order unlike op order), as the separate verbs
    const setup6 = async (q: string, tokens: Map<string, string>) => {
      await enqueue(q, [[ID(1)], [ID(2)], [ID(3)], [ID(4)], [ID(5)], [ID(6)], [ID(7)], [ID(8)]]);
      await claim(q, 6, tokens);
    };
    for (
      const [name, items] of [
        ["ack", [{ op: 0, id: ID(1), result: '{"n":1}' }, { op: 0, id: ID(2) }]],
        ["retry", [{ op: 1, id: ID(1), delay: 60_000, reason: "later", failure: '{"message":"later"}' }, { op: 1, id: ID(2), delay: 0, reason: "now" }]],
        ["bury", [{ op: 2, id: ID(1), reason: "dead", failure: "f1" }, { op: 2, id: ID(2), reason: "dead too" }]],
        ["release", [{ op: 3, id: ID(1) }, { op: 3, id: ID(2) }]],
      ] as Array<[string, Item[]]>
    ) {
      test(`${name} alone: as the separate verb`, async () => {
        await twins(`st-${name}`, setup6, items, [1, 1], 0);
      });
    }

    test("mixed ops, in an order unlike op order, with settlements not held: as ACK, RETRY, BURY, RELEASE in turn", async () => {
      const items: Item[] = [
        { op: 3, id: ID(6) },
        { op: 2, id: ID(5), reason: "bad", failure: "f5" },
        { op: 1, id: ID(4), delay: 0, reason: "again", failure: "f4" },
        { op: 0, id: ID(3), result: "three" },
        { op: 1, id: ID(2), delay: 30_000, reason: "later" },
        { op: 0, id: ID(1) },
        { op: 3, id: ID(7) }, // pending: not held
        { op: 0, id: ID(6) }, // repeated
        { op: 2, id: ID(1), token: "1", reason: "x" }, // repeated
      ];
      const { q } = await twins("st-mixed", setup6, items, [1, 1, 1, 1, 1, 1, 0, 2, 2], 0);
      expect(await ctx.row(q, ID(3), "state", "result")).toEqual(["completed", "three"]);
      const types = streamEntries(await cmd(q, ["XRANGE", keyspace(q).events, "-", "+"])).map((f) => f[1]);
      expect(types).toEqual(["enqueued", "claimed", "completed", "retried", "retried", "dead", "released"]);
    });

    test("mixed ops then a claim (want 3), with priorities and a concurrency limit: as the verbs then CLAIM", async () => {
      await twins(
        "st-prio",
        async (q, tokens) => {
          await ok("LIMIT", q, [0, "", 4, 0, 1000, 1]);
          await enqueue(q, [[ID(1)], [ID(2), "priority=2"], [ID(3), "priority=1"], [ID(4)], [ID(5), "priority=2"], [ID(6)], [ID(7)]]);
          await claim(q, 4, tokens); // the concurrency limit: 4 active
        },
        [
          { op: 1, id: ID(4), delay: 0, reason: "r" },
          { op: 3, id: ID(1) },
          { op: 0, id: ID(6), result: "x" },
          { op: 2, id: ID(7), reason: "b" },
        ],
        [1, 1, 1, 1],
        3,
      );
    });

    test("completed jobs not kept (completed_max 0): an ack deletes the row, as ACK", async () => {
      await twins(
        "st-nokeep",
        async (q, tokens) => {
          await ok("RETAIN", q, [10, 0, 0, 0, 100, 1440]);
          await enqueue(q, [[ID(1)], [ID(2)], [ID(3)]]);
          await claim(q, 3, tokens);
        },
        [{ op: 0, id: ID(1), result: "gone" }, { op: 2, id: ID(2), reason: "d" }, { op: 0, id: ID(3) }],
        [1, 1, 1],
        1,
      );
    });

    test("deduplication keys let go on ack and bury, as ACK and BURY", async () => {
      await twins(
        "st-dedup",
        async (q, tokens) => {
          await enqueue(q, [[ID(1), "dedup=a"], [ID(2), "dedup=b\0dedup_ms=999999"], [ID(3), "dedup=c"]]);
          await claim(q, 3, tokens);
        },
        [{ op: 2, id: ID(1), reason: "d" }, { op: 0, id: ID(2) }, { op: 1, id: ID(3), delay: 0, reason: "r" }],
        [1, 1, 1],
        2,
      );
    });

    test("a laned queue with lane limits: as the verbs then CLAIM, each lane's active count exact", async () => {
      const { q, settled } = await twins(
        "st-lanes",
        async (q, tokens) => {
          await ok("LIMIT", q, [2, "", 2, 0, 1000, 1]); // every lane: 2 at once
          await enqueue(q, [
            [ID(1), "lane=a"],
            [ID(2), "lane=a"],
            [ID(3), "lane=a"],
            [ID(4), "lane=b"],
            [ID(5), "lane=b\0priority=1"],
            [ID(6)],
            [ID(7)],
            [ID(8), "lane=b"],
          ]);
          await claim(q, 5, tokens);
        },
        [
          { op: 0, id: ID(1) },
          { op: 1, id: ID(4), delay: 0, reason: "r" },
          { op: 3, id: ID(6) },
          { op: 2, id: ID(2), reason: "d" },
          { op: 1, id: ID(8), delay: 60_000, reason: "later" },
        ],
        [1, 1, 1, 1, 1],
        4,
      );
      expect((settled as unknown[]).length).toBeGreaterThan(2);
      // each lane's active count is the number of its jobs active
      const K = keyspace(q);
      const active = ((await cmd(q, ["ZRANGE", K.active, "0", "-1"])) as unknown[]).map(String);
      const count = new Map<string, number>();
      for (const id of active) {
        const [lane] = await row(q, id, "lane");
        const L = lane === "null" ? "" : lane!;
        count.set(L, (count.get(L) ?? 0) + 1);
      }
      for (const L of ["a", "b", ""]) {
        const stored = await cmd(q, ["HGET", `${K.meta.slice(0, -"meta".length)}lane:${L}`, "active"]);
        expect([L, Number(stored ?? 0)]).toEqual([L, count.get(L) ?? 0]);
      }
    });

    test("random queues and settlements: the statuses predicted, the separate verbs then CLAIM", async () => {
      const OPTS = ["", "", "priority=1", "priority=2", "lane=a", "lane=b", "lane=a\0priority=1", "dedup=k", "dedup=j\0dedup_ms=999999"];
      const LIMITS: Array<Array<string | number> | null> = [null, [0, "", 3, 0, 1000, 1], [2, "", 1, 0, 1000, 1], [1, "a", 1, 0, 1000, 1]];
      const item = fc.record({
        op: fc.constantFrom(0, 1, 2, 3) as fc.Arbitrary<0 | 1 | 2 | 3>,
        k: fc.integer({ min: 1, max: 6 }),
        stale: fc.boolean(),
        delay: fc.constantFrom(0, 0, 60_000),
        reason: fc.constantFrom("", "r"),
        result: fc.constantFrom("", "x"),
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom(...OPTS), { minLength: 6, maxLength: 6 }),
          fc.constantFrom(...LIMITS),
          fc.integer({ min: 1, max: 6 }),
          fc.array(item, { minLength: 1, maxLength: 6 }),
          fc.integer({ min: 0, max: 4 }),
          async (opts, limit, claims, drawn, want) => {
            run++;
            const setup = async (q: string, tokens: Map<string, string>) => {
              if (limit) await ok("LIMIT", q, limit);
              await enqueue(q, opts.map((o, i) => [ID(i + 1), o] as [string, string]));
              await claim(q, claims, tokens);
            };
            // the statuses, predicted on a third twin: 2 named before, 1 held (in active, its token), else 0
            const p = `st-rand${run}-${backend}-p`;
            const tp = new Map<string, string>();
            await setup(p, tp);
            const items: Item[] = drawn.map((d) => ({
              op: d.op,
              id: ID(d.k),
              delay: d.delay,
              reason: d.reason,
              result: d.result,
              ...(d.stale ? { token: "1" } : {}),
            }));
            const seen = new Set<string>();
            const statuses: number[] = [];
            for (const it of items) {
              if (seen.has(it.id)) statuses.push(2);
              else {
                seen.add(it.id);
                const inActive = (await cmd(p, ["ZSCORE", keyspace(p).active, it.id])) !== null;
                statuses.push(inActive && it.token === undefined ? 1 : 0);
              }
            }
            await twins(`st-rand${run}`, setup, items, statuses, want);
          },
        ),
        { numRuns: 25 },
      );
    });

    test("want 0 claims nothing and runs no upkeep; want > 0 claims back a job retried with delay 0 and a released one (released first)", async () => {
      const q = `st-want-${backend}`;
      const K = keyspace(q);
      const tokens = new Map<string, string>();
      await enqueue(q, [[ID(1)], [ID(2)], [ID(3)], [ID(4)]]);
      await claim(q, 3, tokens); // 1, 2, 3 active; 4 pending
      await ok("SCHEDULE", q, [ID(9), 1000, "", "due long ago"]);
      // want 0: the settles only; the due job stays scheduled (no claim, no promotion)
      expect(await settle(q, 0, [{ op: 0, id: ID(3) }], tokens)).toEqual({ ok: [0, [1]] });
      expect(await cmd(q, ["ZRANGE", K.schedule, "0", "-1"])).toEqual([ID(9)]);
      expect(((await cmd(q, ["LRANGE", K.pending, "0", "-1"])) as unknown[]).map(String)).toEqual([ID(4)]);
      // want 3: 1 retried now (the head), 2 released (the tail), then the claim: 9 promoted (the
      // head), then from the tail 2 (its attempt given back), 4, 1 (its second attempt)
      const r = await settle(q, 3, [{ op: 1, id: ID(1), delay: 0, reason: "now" }, { op: 3, id: ID(2) }], tokens);
      if (!("ok" in r)) throw new Error(r.err);
      const [next, statuses, ...entries] = r.ok as [number, number[], ...unknown[]];
      const jobs: Claimed[] = entries.map(claimedTuple);
      expect(statuses).toEqual([1, 1]);
      expect(jobs.map((j) => [j[0], j[1], j[2]])).toEqual([[ID(2), "p02", 1], [ID(4), "p04", 1], [ID(1), "p01", 2]]);
      expect(next).toBeGreaterThan(1e12); // the earliest lease
      expect(((await cmd(q, ["LRANGE", K.pending, "0", "-1"])) as unknown[]).map(String)).toEqual([ID(9)]);
      expect(await row(q, ID(2), "state", "attempts", "token")).toEqual(["active", "1", String(jobs[0]![3])]);
      const types = streamEntries(await cmd(q, ["XRANGE", K.events, "-", "+"])).map((f) => f[1]);
      expect(types.slice(-5)).toEqual(["completed", "retried", "released", "promoted", "claimed"]);
    });

    test("a refusal of any part's checks is SETTLE's, before any write: DEBUG DIGEST unchanged", async () => {
      const q = `st-refused-${backend}`;
      const K = keyspace(q);
      const tokens = new Map<string, string>();
      await enqueue(q, [[ID(1)], [ID(2)]]);
      await claim(q, 2, tokens);
      await cmd(q, ["SET", K.schedule, "x"]);
      const d0 = await digest(ctx.raw, K.meta);
      const refused = { err: renderRefusal("wrongtype", "EMQ.SETTLE", {}) };
      // the ack part's checks pass, the retry part's refuse: the ack is not written either
      expect(await settle(q, 1, [{ op: 0, id: ID(1) }, { op: 1, id: ID(2), delay: 10, reason: "r" }], tokens)).toEqual(refused);
      expect(await digest(ctx.raw, K.meta)).toBe(d0);
      // a meta of another type: refused first
      const m = `st-refused-meta-${backend}`;
      await cmd(m, ["SET", keyspace(m).meta, "x"]);
      expect(await settle(m, 1, [{ op: 0, id: ID(1), token: "1" }], tokens)).toEqual(refused);
      // so is an active of another type
      const a = `st-refused-active-${backend}`;
      await cmd(a, ["SET", keyspace(a).active, "x"]);
      const d1 = await digest(ctx.raw, keyspace(a).meta);
      expect(await settle(a, 0, [{ op: 0, id: ID(1), token: "1" }], tokens)).toEqual(refused);
      expect(await digest(ctx.raw, keyspace(a).meta)).toBe(d1);
      // a counter the ack part increments, not a counter
      await cmd(q, ["DEL", K.schedule]);
      await cmd(q, ["HSET", K.meta, "acked", "x"]);
      const d2 = await digest(ctx.raw, K.meta);
      expect(await settle(q, 1, [{ op: 3, id: ID(2) }, { op: 0, id: ID(1) }], tokens)).toEqual({
        err: renderRefusal("counter", "EMQ.SETTLE", {}),
      });
      expect(await digest(ctx.raw, K.meta)).toBe(d2);
    });

    test("a refusal of the claim part: the settles stand, nothing claimed, next_ms 0", async () => {
      const q = `st-claim-refused-${backend}`;
      const K = keyspace(q);
      const tokens = new Map<string, string>();
      await enqueue(q, [[ID(1)], [ID(2)], [ID(3)]]);
      await claim(q, 2, tokens);
      await cmd(q, ["SET", K.schedule, "x"]); // only CLAIM (of the parts here) checks schedule
      const r = await settle(q, 3, [{ op: 0, id: ID(1), result: "r" }, { op: 2, id: ID(2), reason: "d" }], tokens);
      expect(r).toEqual({ ok: [0, [1, 1]] });
      expect(await row(q, ID(1), "state", "result")).toEqual(["completed", "r"]);
      expect(await row(q, ID(2), "state", "reason")).toEqual(["dead", "d"]);
      expect(await row(q, ID(3), "state")).toEqual(["pending"]); // not claimed
      expect(((await cmd(q, ["LRANGE", K.pending, "0", "-1"])) as unknown[]).map(String)).toEqual([ID(3)]);
      expect(await cmd(q, ["ZCARD", K.active])).toBe(0);
      // the worker's next CLAIM meets the refusal
      expect(await call("CLAIM", q, [60_000, 1, 0])).toEqual({ err: renderRefusal("wrongtype", "EMQ.CLAIM", {}) });
    });
  });
}
