/**
 * The behavioural suite: every verb, happy paths and every refusal, for each backend (scripts, and
 * the native module when libemq.so is built) on each topology (standalone, 3-primary cluster).
 * Replies and resulting keyspaces must be identical across backends; refusals must leave
 * DEBUG DIGEST unchanged and carry the spec's exact text.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type JobId, keyspace, KeyspaceError } from "../../mod.ts";
import { BatchError, EchoMQError, type Job, LeaseLostError } from "../../client.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { type FixedArgs, type GroupArgs, MAX_BATCH, type Refusal, type RefusalParams, renderRefusal, type Verb, WIRE, wireCall } from "../../lib/wire/mod.ts";
import {
  type BackendKind,
  BACKENDS,
  comboName,
  COMBOS,
  counterIds,
  digest,
  dump,
  type Outcome,
  sleep,
  TOPOLOGIES,
  useClient,
  useSites,
  wire,
} from "./_harness.ts";

const servers = useSites();
const transcripts = new Map<string, Array<[string, unknown]>>();
const dumps = new Map<string, unknown>();

function summary(job: Job<unknown> | null): unknown {
  return job === null ? null : { id: job.id, payload: job.payload, attempts: job.attempts, token: job.token };
}

/** A reply with times derived from now (≥ 2001) replaced, so that backends compare. */
function timeless(x: unknown): unknown {
  if (typeof x === "number" && x >= 1e12) return "<now>";
  // a raw claimed job (wire 12: `<attempts> <token> …` then a newline): its token is a time too
  if (typeof x === "string") return x.replace(/^(\d+) (\d{13,}) (?=\d+ \d+ -?\d+\n)/, "$1 <now> ");
  if (Array.isArray(x)) return x.map(timeless);
  if (x && typeof x === "object" && "ok" in x) return { ok: timeless((x as { ok: unknown }).ok) };
  // a claimed job's token starts above now × 1000: a time too
  if (x && typeof x === "object" && "token" in x) return { ...x, token: timeless((x as { token: unknown }).token) };
  return x;
}

/** A queue name as a plain `string`: skips the compile-time check so the run-time one is tested. */
const widen = (name: string): string => name;

const N = "JOB99999999999" as JobId;
const BIG = "x".repeat(1048577);
const LONG_REASON = "r".repeat(4097);

/** A raw call of `verb` on queue `q` built from the spec: fixed arguments and groups. */
function call<V extends Verb>(
  conn: Connection,
  backend: BackendKind,
  verb: V,
  q: string,
  fixed: FixedArgs<V>,
  groups: ReadonlyArray<GroupArgs<V>> = [],
): Promise<Outcome> {
  const c = wireCall(verb, keyspace(q), fixed, groups);
  return wire(conn, backend, verb, c.keys, c.args.map(String));
}

for (const combo of COMBOS) {
  const { backend, topology } = combo;
  describe(combo.name, () => {
    const ctx = useClient<unknown>(servers, combo, { newId: counterIds(1), requestTimeout: 10_000 });
    beforeAll(() => {
      expect(ctx.mq.backend).toBe(backend);
    });
    const log: Array<[string, unknown]> = [];
    transcripts.set(combo.name, log);
    const note = (label: string, value: unknown): void => void log.push([label, timeless(value)]);

    test("every verb, happy paths", async () => {
      const q = `hp-${backend}`;
      const K = keyspace(q);
      const before = Date.now();
      const a = await ctx.mq.enqueue(q, { n: "a" });
      const b = await ctx.mq.enqueue(q, { n: "b" });
      const c = await ctx.mq.enqueue(q, { n: "c" });
      note("enqueue", [a, b, c]);
      note("counts after enqueue", await ctx.mq.counts(q));
      const created = Number(await ctx.raw.command(["HGET", K.job(a), "created_ms"], K.meta));
      expect(created).toBeGreaterThanOrEqual(before - 1000);
      expect(created).toBeLessThanOrEqual(Date.now() + 1000);
      note("meta after enqueue", await ctx.raw.command(["HMGET", K.meta, "wire", "enqueued", "tokens"], K.meta));

      const ja = await ctx.mq.claim(q, { leaseMs: 60_000 });
      note("claim a", summary(ja));
      expect(ja?.id).toBe(a);
      await ctx.mq.ack(ja!);
      const jb = await ctx.mq.claim(q, { leaseMs: 60_000 });
      note("claim b", summary(jb));
      // due in 500 ms: the next claims (whose upkeep promotes due jobs) come well before that
      await ctx.mq.retry(jb!, { delayMs: 500, reason: "boom" });
      const jc = await ctx.mq.claim(q, { leaseMs: 60_000 });
      note("claim c", summary(jc));
      await ctx.mq.bury(jc!, "bad input");
      note("counts after settle", await ctx.mq.counts(q));
      // a settle of a job already settled: its token is not the current claim's
      await expect(ctx.mq.ack(ja!)).rejects.toBeInstanceOf(LeaseLostError);

      await sleep(550);
      const jb2 = await ctx.mq.claim(q, { leaseMs: 1 }); // promotes b (due) and claims it
      note("claim b again (short lease)", summary(jb2));
      await sleep(15);
      const jb3 = await ctx.mq.claim(q, { leaseMs: 60_000 }); // reaps b (lease ran out) and claims it
      note("claim b after its lease ran out", summary(jb3));
      expect(jb3?.attempts).toBe(3);
      expect(jb3!.token).toBeGreaterThan(jb2!.token);
      await expect(ctx.mq.ack(jb2!)).rejects.toMatchObject({ name: "LeaseLostError", ids: [b] });
      note("extend b", await ctx.mq.extend(jb3!, 120_000).then(() => "ok"));
      await expect(ctx.mq.extend(jb2!, 1000)).rejects.toBeInstanceOf(LeaseLostError);
      note("claim empty", await ctx.mq.claim(q, { leaseMs: 1000 }));
      note("reap none", await ctx.mq.reap(q, 5));

      const d = await ctx.mq.schedule(q, { n: "d" }, { at: 1000 });
      const e = await ctx.mq.schedule(q, { n: "e" }, { at: 900_000_000_000_000 });
      const f = await ctx.mq.schedule(q, { n: "f" }, { at: new Date(2000) });
      note("schedule", [d, e, f]);
      note("promote limit 1", await ctx.mq.promote(q, 1));
      note("promote rest", await ctx.mq.promote(q));
      note("claim d", summary(await ctx.mq.claim(q, { leaseMs: 60_000 })));

      // Raw replies: CLAIM's array with next_ms first; numbers written canonically (007 → 7).
      note("raw schedule 007", await call(ctx.raw, backend, "SCHEDULE", q, {}, [{ id: N, due_ms: "007", opts: "", payload: '"p7"' }]));
      note("raw claim", await call(ctx.raw, backend, "CLAIM", q, { lease_ms: 60_000, count: 2, block_ms: 0 }));
      // Ids without rows: PROMOTE and REAP move them, CLAIM drops them.
      await ctx.raw.command(["ZADD", K.schedule, "5", "JOBghost00001"], K.meta);
      await ctx.raw.command(["ZADD", K.active, "6", "JOBghost00002"], K.meta);
      await ctx.raw.command(["RPUSH", K.pending, "JOBghost00003"], K.meta);
      note("promote ghosts", await ctx.mq.promote(q));
      note("reap ghosts", await ctx.mq.reap(q));
      note("claim past ghosts", summary(await ctx.mq.claim(q, { leaseMs: 60_000 })));
      await ctx.raw.command(["RPUSH", K.pending, "JOBghost00004", "JOBghost00005"], K.meta);
      note("claim only ghosts", await call(ctx.raw, backend, "CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 }));

      // Batches: many jobs in one command each.
      const many = await ctx.mq.enqueueMany(q, [1, 2, 3, 4, 5].map((n) => ({ n })));
      note("enqueueMany", many);
      const claimed = await ctx.mq.claimMany(q, 10, { leaseMs: 60_000 });
      note("claimMany", claimed.map((j) => summary(j as Job<unknown>)));
      const [j1, j2, j3, j4, j5] = claimed as Array<Job<unknown>>;
      note(
        "settleMany",
        (await ctx.mq.settleMany([
          { kind: "ack", job: j1! },
          { kind: "retry", job: j2!, delayMs: 60_000, reason: "later" },
          { kind: "bury", job: j3!, reason: "no" },
          { kind: "ack", job: { ...j4!, token: j4!.token + 100 } }, // a stale token: refused alone
          { kind: "ack", job: j5! },
        ])).map((r) => r === null ? null : r.name),
      );
      note("extend many", await ctx.mq.extend([j4!], 60_000).then(() => "ok"));

      // Paused: claims hand out nothing, the queue still admits.
      await ctx.raw.command(["HSET", K.meta, "paused", "1"], K.meta);
      const p = await ctx.mq.enqueue(q, { n: "while paused" });
      note("claim while paused", await ctx.mq.claim(q, { leaseMs: 60_000 }));
      await ctx.raw.command(["HDEL", K.meta, "paused"], K.meta);
      const jp = await ctx.mq.claim(q, { leaseMs: 60_000 });
      expect(jp?.id).toBe(p);
      note("claim after resume", summary(jp));

      note("counts final", await ctx.mq.counts(q));
      note("meta final", await ctx.raw.command(["HMGET", K.meta, "enqueued", "acked", "retried", "buried", "claimed"], K.meta));
      const snapshot = await dump(ctx.raw, q);
      dumps.set(combo.name, snapshot);
      expect(Object.keys(snapshot).length).toBeGreaterThan(3);
    });

    test("refusals: the spec's exact texts, nothing written", async () => {
      const q = `rf-${backend}`;
      const K = keyspace(q);
      const J = await ctx.mq.enqueue(q, { n: "active" });
      const held = (await ctx.mq.claim(q, { leaseMs: 600_000 }))!;
      const T = held.token;
      const W = (i: number): string => `wt${i}-${backend}`;
      const Wk = (i: number) => keyspace(W(i));
      const setup: string[][] = [
        ["SET", Wk(1).pending, "x"],
        ["SET", Wk(2).job(N), "x"],
        ["SET", Wk(3).schedule, "x"],
        ["SET", Wk(4).active, "x"],
        ["SET", Wk(5).dead, "x"],
        ["SET", Wk(6).meta, "x"],
        ["SET", Wk(7).wake, "x"],
        ["ZADD", Wk(8).active, "1", N],
        ["SET", Wk(8).job(N), "x"],
        ["RPUSH", Wk(9).pending, N],
        ["HSET", Wk(9).job(N), "payload", "p", "attempts", "01"],
        ["RPUSH", Wk(10).pending, N],
        ["HSET", Wk(10).job(N), "payload", "p", "attempts", "1000000000000000000"],
        ["HSET", Wk(11).meta, "enqueued", "x"],
        ["HSET", Wk(12).job(N), "state", "pending"],
        ["SET", Wk(12).pending, "x"],
        ["RPUSH", Wk(13).pending, N],
        ["HSET", Wk(13).job(N), "payload", "p"],
        ["HSET", Wk(13).meta, "tokens", "-0"],
        ["SET", Wk(14).dedup, "x"],
        ["SET", Wk(15).dedup_ttl, "x"],
        ["HSET", Wk(16).meta, "dedup", "1"],
        ["SET", Wk(16).dedup_ttl, "x"],
      ];
      for (const cmd of setup) await ctx.raw.command(cmd, cmd[1]!);

      const id = (x: string) => ({ id: x });
      type Case = [label: string, verb: Verb, queue: string, args: string[], want: [Refusal, Record<string, string>]];
      const cases: Case[] = [
        // shape
        ["enqueue no group", "ENQUEUE", q, [], ["arity", {}]],
        ["enqueue half a group", "ENQUEUE", q, [N, ""], ["arity", {}]],
        ["claim argc", "CLAIM", q, ["1", "1"], ["arity", {}]],
        ["ack one and a third groups", "ACK", q, [J, String(T), "", N], ["arity", {}]],
        ["promote argc", "PROMOTE", q, [], ["arity", {}]],
        ["ack 10001 jobs", "ACK", q, Array.from({ length: MAX_BATCH + 1 }, () => [J, "1", ""]).flat(), ["batch", { max: String(MAX_BATCH) }]],
        // gates
        ["enqueue id not JOB", "ENQUEUE", q, ["XOB00000000001", "", "p"], ["job-id", {}]],
        ["enqueue second id not JOB", "ENQUEUE", q, [N, "", "p", "XOB00000000001", "", "p"], ["job-id", {}]],
        ["enqueue payload too big", "ENQUEUE", q, [N, "", BIG], ["payload", { limit: "1048576" }]],
        ["enqueue options too long", "ENQUEUE", q, [N, "x".repeat(4097), "p"], ["options", { limit: "4096" }]],
        ["enqueue option without =", "ENQUEUE", q, [N, "dedup", "p"], ["option-form", {}]],
        ["enqueue option trailing NUL", "ENQUEUE", q, [N, "dedup=k\0", "p"], ["option-form", {}]],
        ["enqueue option unknown", "ENQUEUE", q, [N, "group=x", "p"], ["option-unknown", { option: "group" }]],
        ["enqueue option twice", "ENQUEUE", q, [N, "dedup=a\0dedup=b", "p"], ["option-repeated", { option: "dedup" }]],
        ["enqueue option gate", "ENQUEUE", q, [N, "timeout_ms=0", "p"], ["positive", { arg: "timeout_ms" }]],
        ["enqueue option name gate", "ENQUEUE", q, [N, "dedup=a}b", "p"], ["name", { arg: "dedup", max: "1024" }]],
        ["enqueue option bound", "ENQUEUE", q, [N, "dedup=a\0debounce=2", "p"], ["too-large", { arg: "debounce", max: "1" }]],
        ["enqueue option needs", "ENQUEUE", q, [N, "dedup_ms=10", "p"], ["option-needs", { option: "dedup_ms", needs: "dedup" }]],
        ["schedule options before payload", "SCHEDULE", q, [N, "5", "group=x", BIG], ["option-unknown", { option: "group" }]],
        ["scheduler options before payload", "SCHEDULER", q, ["s", "every 1", "1", "1", "group=x", BIG], ["option-unknown", { option: "group" }]],
        ["scheduler option name gate", "SCHEDULER", q, ["s", "every 1", "1", "1", "lane=a}b", "p"], ["name", { arg: "lane", max: "1024" }]],
        ["schedule due empty", "SCHEDULE", q, [N, "", "", "p"], ["non-negative", { arg: "due_ms" }]],
        ["schedule due negative", "SCHEDULE", q, [N, "-1", "", "p"], ["non-negative", { arg: "due_ms" }]],
        ["schedule due 16 digits", "SCHEDULE", q, [N, "1000000000000000", "", "p"], ["non-negative", { arg: "due_ms" }]],
        ["schedule due before payload", "SCHEDULE", q, [N, "x", "", BIG], ["non-negative", { arg: "due_ms" }]],
        ["claim lease 0", "CLAIM", q, ["0", "1", "0"], ["positive", { arg: "lease_ms" }]],
        ["claim count 0", "CLAIM", q, ["10", "0", "0"], ["positive", { arg: "count" }]],
        ["claim count 10001", "CLAIM", q, ["10", "10001", "0"], ["too-large", { arg: "count", max: "10000" }]],
        ["claim block word", "CLAIM", q, ["10", "1", "soon"], ["non-negative", { arg: "block_ms" }]],
        ["ack token 0", "ACK", q, [J, "0", ""], ["positive", { arg: "token" }]],
        ["ack token word", "ACK", q, [J, "one", ""], ["positive", { arg: "token" }]],
        ["ack result too long", "ACK", q, [J, String(T), BIG], ["result", { limit: "1048576" }]],
        ["retry delay -1", "RETRY", q, [J, String(T), "-1", "r", ""], ["non-negative", { arg: "delay_ms" }]],
        ["retry reason too long", "RETRY", q, [J, String(T), "1", LONG_REASON, ""], ["reason", { limit: "4096" }]],
        ["bury reason too long", "BURY", q, [J, String(T), LONG_REASON, ""], ["reason", { limit: "4096" }]],
        ["bury failure too long", "BURY", q, [J, String(T), "r", "f".repeat(8193)], ["failure", { limit: "8192" }]],
        ["extend lease 0", "EXTEND", q, ["0", J, String(T)], ["positive", { arg: "lease_ms" }]],
        ["reap limit 16 digits", "REAP", q, ["1234567890123456"], ["positive", { arg: "limit" }]],
        // domain
        ["enqueue id twice", "ENQUEUE", q, [N, "", "p", N, "", "p"], ["repeated", id(N)]],
        ["ack id twice", "ACK", q, [J, String(T), "", J, String(T), ""], ["repeated", id(J)]],
        ["enqueue duplicate", "ENQUEUE", q, [N, "", "p", J, "", "p"], ["duplicate", id(J)]],
        ["schedule duplicate", "SCHEDULE", q, [J, "5", "", "p"], ["duplicate", id(J)]],
        ["enqueue duplicate before wrongtype", "ENQUEUE", W(12), [N, "", "p"], ["duplicate", id(N)]],
        ["enqueue wrongtype pending", "ENQUEUE", W(1), [N, "", "p"], ["wrongtype", {}]],
        ["enqueue wrongtype row", "ENQUEUE", W(2), [N, "", "p"], ["duplicate", id(N)]],
        ["enqueue wrongtype meta", "ENQUEUE", W(6), [N, "", "p"], ["wrongtype", {}]],
        ["enqueue wrongtype wake", "ENQUEUE", W(7), [N, "", "p"], ["wrongtype", {}]],
        ["enqueue counter", "ENQUEUE", W(11), [N, "", "p"], ["counter", {}]],
        ["schedule wrongtype", "SCHEDULE", W(3), [N, "5", "", "p"], ["wrongtype", {}]],
        // the deduplication keys are typed when a job carries a key (and dedup_ttl by CLAIM once the
        // queue took a key: meta's dedup; W(15) has none, so its CLAIM opens no dedup key)
        ["enqueue wrongtype dedup", "ENQUEUE", W(14), [N, "dedup=k", "p"], ["wrongtype", {}]],
        ["enqueue wrongtype dedup_ttl", "ENQUEUE", W(15), [N, "dedup=k", "p"], ["wrongtype", {}]],
        ["schedule wrongtype dedup", "SCHEDULE", W(14), [N, "5", "dedup=k", "p"], ["wrongtype", {}]],
        ["claim wrongtype dedup_ttl", "CLAIM", W(16), ["10", "1", "0"], ["wrongtype", {}]],
        ["claim wrongtype pending", "CLAIM", W(1), ["10", "1", "0"], ["wrongtype", {}]],
        ["claim wrongtype active", "CLAIM", W(4), ["10", "1", "0"], ["wrongtype", {}]],
        ["claim wrongtype schedule", "CLAIM", W(3), ["10", "1", "0"], ["wrongtype", {}]],
        ["claim wrongtype expired row", "CLAIM", W(8), ["10", "1", "0"], ["wrongtype", {}]],
        ["claim attempts not an integer", "CLAIM", W(9), ["10", "1", "0"], ["counter", {}]],
        ["claim attempts 19 digits", "CLAIM", W(10), ["10", "1", "0"], ["counter", {}]],
        ["claim tokens not an integer", "CLAIM", W(13), ["10", "1", "0"], ["counter", {}]],
        ["ack wrongtype active", "ACK", W(4), [N, "1", ""], ["wrongtype", {}]],
        ["ack wrongtype row", "ACK", W(2), [N, "1", ""], ["wrongtype", {}]],
        ["ack unknown job", "ACK", q, [N, "1", ""], ["lease-lost", { ids: N }]],
        ["ack stale token", "ACK", q, [J, String(T + 1), "r"], ["lease-lost", { ids: J }]],
        ["ack every stale id named", "ACK", q, [N, "1", "", J, String(T), "", "JOB99999999998", "3", ""], ["lease-lost", { ids: `${N} JOB99999999998` }]],
        ["retry stale token", "RETRY", q, [J, String(T + 1), "1", "r", ""], ["lease-lost", { ids: J }]],
        ["retry wrongtype schedule", "RETRY", W(3), [N, "1", "1", "r", ""], ["wrongtype", {}]],
        ["bury stale token", "BURY", q, [J, String(T + 1), "r", ""], ["lease-lost", { ids: J }]],
        ["bury wrongtype dead", "BURY", W(5), [N, "1", "r", ""], ["wrongtype", {}]],
        ["extend stale token", "EXTEND", q, ["1000", J, String(T + 1)], ["lease-lost", { ids: J }]],
        ["promote wrongtype schedule", "PROMOTE", W(3), ["1"], ["wrongtype", {}]],
        ["reap wrongtype active", "REAP", W(4), ["1"], ["wrongtype", {}]],
      ];
      for (const [label, verb, queue, args, [refusal, params]] of cases) {
        const key = keyspace(queue).meta;
        const d0 = await digest(ctx.raw, key);
        const out: Outcome = await wire(ctx.raw, backend, verb, [key], args);
        const d1 = await digest(ctx.raw, key);
        const text = renderRefusal(refusal, `EMQ.${verb}`, params as RefusalParams<typeof refusal>);
        expect({ label, out, same: d1 === d0 }).toEqual({ label, out: { err: text }, same: true });
        note(label, out);
      }
      // layout: the declared key must be a queue's meta
      for (
        const [label, key] of [
          ["layout pending", K.pending],
          ["layout row", K.job(J)],
          ["layout not emq", `emx:{${q}}:meta`],
          ["layout brace in name", "emq:{a{b}:meta"],
          // issue 13, survivor 5: a Lua split that took a NUL in the name ran the verb
          ["layout NUL in name", "emq:{a\u0000b}:meta"],
          ["layout no colon", `emq:{${q}}meta`],
        ] as const
      ) {
        const d0 = await digest(ctx.raw, key);
        const out = await wire(ctx.raw, backend, "PROMOTE", [key], ["1"]);
        expect({ label, out, same: (await digest(ctx.raw, key)) === d0 }).toEqual({
          label,
          out: { err: renderRefusal("layout", "EMQ.PROMOTE", {}) },
          same: true,
        });
        note(label, out);
      }
      // numkeys other than 1: the module's shape refusal (EVALSHA parses numkeys itself)
      if (backend === "module") {
        expect(await wire(ctx.raw, backend, "ACK", [K.meta, K.pending], [J, String(T), ""])).toEqual({
          err: renderRefusal("arity", "EMQ.ACK", {}),
        });
      }
      // The job is still active and intact after all of that.
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 1, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
      await ctx.mq.ack(held);
    });

    // Each fence test is registered only in the topology it is for: a skipped test that can never
    // run is noise in every report.
    if (topology === "standalone") {
      test("fence: an {emq}:version of another wire refuses every verb", async () => {
        const q = `fe-${backend}`;
        await ctx.raw.command(["SET", "{emq}:version", "4"], "{emq}:version");
        try {
          const calls: Array<[Verb, string[]]> = [
            ["ENQUEUE", [N, "", "p"]],
            ["SCHEDULE", [N, "1", "", "p"]],
            ["CLAIM", ["1", "1", "0"]],
            ["ACK", [N, "1", ""]],
            ["RETRY", [N, "1", "1", "r", ""]],
            ["BURY", [N, "1", "r", ""]],
            ["EXTEND", ["1", N, "1"]],
            ["PROMOTE", ["1"]],
            ["REAP", ["1"]],
            ["CLAIM", ["0", "1", "0"]], // fence comes before the gates
          ];
          for (const [verb, args] of calls) {
            const key = keyspace(q).meta;
            const d0 = await digest(ctx.raw, key);
            const out = await wire(ctx.raw, backend, verb, [key], args);
            expect(await digest(ctx.raw, key)).toBe(d0);
            expect(out).toEqual({ err: renderRefusal("fenced", `EMQ.${verb}`, { found: "4" }) });
            note(`fenced ${verb}`, out);
          }
          await expect(ctx.mq.enqueue(q, 1)).rejects.toMatchObject({ name: "FencedError", rule: "fence" });
          // a fence value that is not a number is not echoed
          await ctx.raw.command(["SET", "{emq}:version", "x\r\nsecret"], "{emq}:version");
          expect(await wire(ctx.raw, backend, "PROMOTE", [keyspace(q).meta], ["1"])).toEqual({
            err: renderRefusal("fenced", "EMQ.PROMOTE", { found: "unknown" }),
          });
          await ctx.raw.command(["SET", "{emq}:version", String(WIRE)], "{emq}:version");
          note("this wire unfenced", await wire(ctx.raw, backend, "PROMOTE", [keyspace(q).meta], ["1"]));
          await ctx.raw.command(["DEL", "{emq}:version"], "{emq}:version");
          await ctx.raw.command(["HSET", "{emq}:version", "v", "3"], "{emq}:version");
          note("non-string identity unfenced", await wire(ctx.raw, backend, "PROMOTE", [keyspace(q).meta], ["1"]));
        } finally {
          await ctx.raw.command(["DEL", "{emq}:version"], "{emq}:version");
        }
      });
    }

    if (topology === "cluster") {
      test("fence in cluster mode: module config emq.wire; scripts unfenced", async () => {
        const q = `fc-${backend}`;
        const go = (): Promise<Outcome> => wire(ctx.raw, backend, "PROMOTE", [keyspace(q).meta], ["1"]);
        if (backend === "module") {
          await ctx.raw.everyPrimary(["CONFIG", "SET", "emq.wire", "4"]);
          try {
            expect(await go()).toEqual({ err: renderRefusal("fenced", "EMQ.PROMOTE", { found: "4" }) });
          } finally {
            await ctx.raw.everyPrimary(["CONFIG", "SET", "emq.wire", String(WIRE)]);
          }
          expect(await go()).toEqual({ ok: 0 });
        } else {
          // `{emq}:version` lives in another slot: the script's read fails there and counts as unfenced.
          await ctx.raw.command(["SET", "{emq}:version", "4"], "{emq}:version");
          try {
            expect(await go()).toEqual({ ok: 0 });
          } finally {
            await ctx.raw.command(["DEL", "{emq}:version"], "{emq}:version");
          }
        }
      });
    }

    test("the empty queue name: the client refuses it before any wire; raw, the scripts take it on standalone", async () => {
      const empty = { name: "KeyspaceError", rule: "queue-empty" };
      await expect(ctx.mq.enqueue(widen(""), 1)).rejects.toMatchObject(empty);
      await expect(ctx.mq.claim(widen(""), { leaseMs: 10 })).rejects.toMatchObject(empty);
      await expect(ctx.mq.ack({ id: N, queue: "", token: 1 })).rejects.toMatchObject(empty);
      expect(() => ctx.mq.work(widen(""), () => {})).toThrow("queue name must not be empty: the server refuses an empty hashtag");
      if (topology === "standalone") {
        const out = await call(ctx.raw, backend, "ENQUEUE", "", {}, [{ id: N, opts: "", payload: "p" }]);
        // the module refuses an empty hashtag; the scripts, like the host grammar, accept it
        expect(out).toEqual(backend === "scripts" ? { ok: 1 } : { err: renderRefusal("layout", "EMQ.ENQUEUE", {}) });
        await ctx.raw.command(["DEL", keyspace("").meta, keyspace("").pending, keyspace("").wake, keyspace("").job(N)], "x");
      }
    });

    test("a failed enqueueMany says which jobs landed: a 2 MB job at index 1500 of 3000", async () => {
      const q = `bm-${backend}`;
      const items = Array.from({ length: 3000 }, (_, i) => (i === 1500 ? "x".repeat(2 * 1024 * 1024) : i));
      const e = await ctx.mq.enqueueMany(q, items).catch((x) => x);
      expect(e).toBeInstanceOf(BatchError);
      const b = e as BatchError;
      expect(b.message).toMatch(/^enqueueMany: \d+ job\(s\) landed, \d+ not written, 0 unconfirmed \(first failure: .*payload/);
      expect(b.landed.length + b.unsent.length).toBe(3000);
      expect(b.unconfirmed).toEqual([]);
      // the command holding the big job (jobs 1000–1999) wrote nothing; the one before it landed
      expect(b.landed.length).toBeGreaterThanOrEqual(1000);
      expect(b.unsent.length).toBeGreaterThanOrEqual(1000);
      expect((await ctx.mq.counts(q)).pending).toBe(b.landed.length);
      for (const id of [b.landed[0]!, b.landed.at(-1)!]) expect(await ctx.mq.getJob(q, id)).not.toBeNull();
      for (const id of [b.unsent[0]!, b.unsent.at(-1)!]) expect(await ctx.mq.getJob(q, id)).toBeNull();
      await ctx.mq.drop(q);
    });

    test("client-side checks raise before any wire", async () => {
      const key = keyspace("cs").meta;
      const d0 = await digest(ctx.raw, key);
      const job = { id: N, queue: "cs", token: 1 };
      await expect(ctx.mq.enqueue(widen("a}b"), 1)).rejects.toBeInstanceOf(KeyspaceError);
      await expect(ctx.mq.enqueue(widen("a{b"), 1)).rejects.toBeInstanceOf(KeyspaceError);
      await expect(ctx.mq.enqueue(widen("a\0b"), 1)).rejects.toBeInstanceOf(KeyspaceError);
      await expect(ctx.mq.enqueueMany(widen("a\0b"), [1])).rejects.toBeInstanceOf(KeyspaceError);
      await expect(ctx.mq.schedule(widen("a}b"), 1, { delayMs: 1 })).rejects.toBeInstanceOf(KeyspaceError);
      expect(() => ctx.mq.work(widen("a}b"), () => {})).toThrow(KeyspaceError);
      await expect(ctx.mq.claim("cs", { leaseMs: 0 })).rejects.toBeInstanceOf(EchoMQError);
      await expect(ctx.mq.claimMany("cs", 10_001, { leaseMs: 10 })).rejects.toMatchObject({ rule: "count" });
      await expect(ctx.mq.claim(widen("a}b"), { leaseMs: 10 })).rejects.toBeInstanceOf(KeyspaceError);
      await expect(ctx.mq.promote("cs", 0)).rejects.toMatchObject({ rule: "limit" });
      await expect(ctx.mq.reap("cs", 1.5)).rejects.toMatchObject({ rule: "limit" });
      await expect(ctx.mq.ack({ ...job, id: "JOBnope" as JobId })).rejects.toBeInstanceOf(KeyspaceError);
      await expect(ctx.mq.ack({ ...job, token: 0 })).rejects.toMatchObject({ rule: "job" });
      await expect(ctx.mq.retry(job, { delayMs: -1 })).rejects.toMatchObject({ rule: "delay-ms" });
      await expect(ctx.mq.bury(job, "r".repeat(4097))).rejects.toMatchObject({ rule: "reason" });
      // the reason gate counts UTF-8 bytes, not UTF-16 units (3000 × "é" = 6000 bytes)
      await expect(ctx.mq.bury(job, "é".repeat(3000))).rejects.toMatchObject({ name: "EchoMQError", rule: "reason" });
      await expect(ctx.mq.extend(job, 0)).rejects.toMatchObject({ rule: "lease-ms" });
      await expect(ctx.mq.schedule("cs", 1, { at: -5 })).rejects.toBeInstanceOf(EchoMQError);
      expect(await digest(ctx.raw, key)).toBe(d0);
      // Refusals that pass the client's checks surface as typed wire errors.
      await expect(ctx.mq.ack(job)).rejects.toMatchObject({ name: "LeaseLostError", ids: [N] });
      const id = await ctx.mq.enqueue("cs-dup", 1);
      await expect(ctx.mq.enqueue("cs-dup", 2, { id })).rejects.toMatchObject({ name: "DuplicateIdError", id });
      // Refused while the row exists in any state (active, dead, completed: an ack keeps the row while the
      // queue keeps completed jobs, the default); once the row is gone (removed, or trimmed) the id is free.
      const held = (await ctx.mq.claim("cs-dup", { leaseMs: 60_000 }))!;
      expect(held.id).toBe(id);
      await expect(ctx.mq.enqueue("cs-dup", 3, { id })).rejects.toMatchObject({ name: "DuplicateIdError", id });
      await ctx.mq.ack(held);
      await expect(ctx.mq.enqueue("cs-dup", 4, { id })).rejects.toMatchObject({ name: "DuplicateIdError", id });
      expect(await ctx.mq.remove("cs-dup", id)).toBe(true);
      expect(await ctx.mq.enqueue("cs-dup", 4, { id })).toBe(id);
      expect((await ctx.mq.claim("cs-dup", { leaseMs: 60_000 }))!.payload).toBe(4);
    });
  });
}

describe("identical across backends", () => {
  afterAll(async () => {
    // EMQ_TRANSCRIPT=<file> writes every combo's transcript and dump for inspection.
    const out = process.env["EMQ_TRANSCRIPT"];
    if (out) {
      const { writeFileSync } = await import("node:fs");
      const trim = (v: unknown): unknown => (typeof v === "string" && v.length > 200 ? `${v.slice(0, 40)}…(${v.length})` : v);
      const json = JSON.stringify({ transcripts: Object.fromEntries(transcripts), dumps: Object.fromEntries(dumps) }, (_k, v) => trim(v), 1);
      writeFileSync(out, json);
    }
  });
  for (const topology of TOPOLOGIES) {
    test.skipIf(BACKENDS.length < 2)(`${topology}: replies and keyspaces`, () => {
      const [first, ...rest] = BACKENDS as [BackendKind, ...BackendKind[]];
      const base = comboName(first, topology);
      for (const other of rest) {
        const combo = comboName(other, topology);
        const a = transcripts.get(base)!;
        const b = transcripts.get(combo)!;
        expect(b.map(([l]) => l)).toEqual(a.map(([l]) => l));
        for (let i = 0; i < a.length; i++) expect({ step: b[i]![0], value: b[i]![1] }).toEqual({ step: a[i]![0], value: a[i]![1] });
        expect(dumps.get(combo)).toEqual(dumps.get(base));
      }
    });
  }
});
