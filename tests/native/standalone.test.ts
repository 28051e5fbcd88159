/**
 * The native module on one standalone server: every verb's happy path (batches of several
 * groups, lease tokens, EXTEND, CLAIM's upkeep, count and next_ms, the wake markers, a paused
 * queue), every refusal class with its exact text (rendered from the spec) and an unchanged DEBUG
 * DIGEST, the order of the steps, the `{emq}:version` and `emq.wire` fences, the registration
 * (flags, key specs, GETKEYS), the blocking CLAIM, and the verbs under `maxmemory`.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Batch, type GlideClient } from "@valkey/valkey-glide";
import { SCRIPTS } from "../../lib/lua/mod.ts";
import {
  type ArgName,
  ARGS,
  type Gate,
  gateDigits,
  MAX_BATCH,
  MAX_ERROR_BYTES,
  MAX_LOG_LINE_BYTES,
  MAX_PAYLOAD_BYTES,
  MAX_REASON_BYTES,
  TOKENS_PER_MS,
  VERBS as SPEC,
  type VerbSpec,
  WIRE,
} from "../../lib/wire/mod.ts";
import {
  argv,
  call,
  claimed,
  type ClaimedJob,
  digest,
  expectOk,
  expectRefused,
  held,
  jobId,
  queue,
  type QueueKeys,
  refusal,
  registeredVerbs,
  row,
  sleep,
  standalone,
  useVerbSite,
  type Values,
  type VerbName,
  VERBS,
  wellFormed,
} from "./_native.ts";
import { command } from "../../tools/embedded/mod.ts";

const { site, run, ok, refuses } = useVerbSite();

/** The spec's verbs the module registers: the per-verb checks of steps 1–4 run on each. */
const LIVE: VerbName[] = await registeredVerbs();
/** The verbs whose domain (steps 5–6) this suite covers, each with its own cases below. */
const COVERED = [
  "ENQUEUE",
  "SCHEDULE",
  "CLAIM",
  "ACK",
  "RETRY",
  "BURY",
  "RELEASE",
  "EXTEND",
  "PROMOTE",
  "REAP",
  "LIMIT",
  "PENALIZE",
] as const satisfies readonly VerbName[];

async function zscore(key: string, member: string): Promise<number | null> {
  const out = await ok(["ZSCORE", key, member]);
  return out === null ? null : Number(out);
}

/** A sorted set as `{ member: score }`. */
async function zset(key: string): Promise<Record<string, number>> {
  const out = (await ok(["ZRANGE", key, "0", "-1", "WITHSCORES"])) as unknown[];
  const rec: Record<string, number> = {};
  for (const e of out) {
    if (e !== null && typeof e === "object" && "key" in e && "value" in e) rec[String(e.key)] = Number(e.value);
    else throw new Error(`ZRANGE WITHSCORES: unexpected entry ${JSON.stringify(e)}`);
  }
  return rec;
}

async function lrange(key: string): Promise<string[]> {
  return ((await ok(["LRANGE", key, "0", "-1"])) as unknown[]).map(String);
}

async function exists(...keys: string[]): Promise<number> {
  return Number(await ok(["EXISTS", ...keys]));
}

/** ENQUEUE of `ids` in one call (payload `p-<id>` unless given). */
async function enqueue(q: QueueKeys, ids: string[], payload?: string): Promise<void> {
  await ok(argv("ENQUEUE", q, {}, ids.map((id) => ({ id, payload: payload ?? `p-${id}` }))), ids.length);
}

/** SCHEDULE of `[id, due_ms]` pairs in one call. */
async function schedule(q: QueueKeys, jobs: Array<[string, number | string]>): Promise<void> {
  await ok(argv("SCHEDULE", q, {}, jobs.map(([id, due_ms]) => ({ id, due_ms, payload: `p-${id}` }))), jobs.length);
}

/** CLAIM without waiting; the parsed reply. */
async function claim(q: QueueKeys, count = 1, lease_ms = 60_000): Promise<{ nextMs: number; jobs: ClaimedJob[] }> {
  return claimed(await ok(argv("CLAIM", q, { lease_ms, count, block_ms: 0 })));
}

/**
 * Tokens of one CLAIM: consecutive (old+1 … old+k), the first above the server's now × 1000 at
 * `t0` (client clock, same machine: 5 s of slack) — never a token of an earlier life of the queue.
 */
function expectTokenRun(tokens: number[], t0: number): void {
  expect(tokens[0]!).toBeGreaterThan((t0 - 5000) * TOKENS_PER_MS);
  expect(tokens).toEqual(tokens.map((_, i) => tokens[0]! + i));
}

describe("happy paths", () => {
  const q = queue("orders");
  const [a, b, c, d] = [jobId(1), jobId(2), jobId(3), jobId(4)];

  test("ENQUEUE: a batch writes rows, pushes on the head in argument order, makes meta, marks wake ready", async () => {
    const t0 = Date.now();
    await enqueue(q, [a, b]);
    const r = await row(site.db, q.row(a));
    expect(Object.keys(r).sort()).toEqual(["attempts", "created_ms", "payload", "state"]);
    expect(r).toMatchObject({ state: "pending", payload: `p-${a}`, attempts: "0" });
    expect(Math.abs(Number(r.created_ms) - t0)).toBeLessThan(5000);
    expect((await row(site.db, q.row(b))).payload).toBe(`p-${b}`);
    expect(await lrange(q.pending)).toEqual([b, a]);
    const meta = await row(site.db, q.meta);
    expect(Object.keys(meta).sort()).toEqual(["created_ms", "enqueued", "wire"]);
    expect(meta).toMatchObject({ wire: String(WIRE), enqueued: "2", created_ms: r.created_ms });
    expect(await zset(q.wake)).toEqual({ ready: 0 });
    await sleep(2);
    await enqueue(q, [c]);
    expect(await lrange(q.pending)).toEqual([c, b, a]);
    expect(await row(site.db, q.meta)).toEqual({ ...meta, enqueued: "3" }); // created_ms kept
    expect(await zset(q.wake)).toEqual({ ready: 0 });
  });

  test("SCHEDULE: a batch of scheduled rows, numbers canonical, the earliest due on wake (ZADD LT)", async () => {
    await ok(argv("SCHEDULE", q, {}, [{ id: a, due_ms: "007", payload: "pa" }, { id: b, due_ms: "5", payload: "pb" }]), 2);
    const r = await row(site.db, q.row(a));
    expect(Object.keys(r).sort()).toEqual(["attempts", "created_ms", "due_ms", "payload", "state"]);
    expect(r).toMatchObject({ state: "scheduled", payload: "pa", attempts: "0", due_ms: "7" });
    expect(await zset(q.schedule)).toEqual({ [a]: 7, [b]: 5 });
    expect(await zset(q.wake)).toEqual({ due: 5 });
    expect((await row(site.db, q.meta)).enqueued).toBe("2");
    await schedule(q, [[c, Date.now() + 3_600_000]]);
    expect(await zset(q.wake)).toEqual({ due: 5 });
    await schedule(q, [[d, 3]]);
    expect(await zset(q.wake)).toEqual({ due: 3 });
    expect(await exists(q.pending, q.active)).toBe(0);
  });

  test("CLAIM: pops the tail into active with attempts, deadline and a token from meta; count; next_ms", async () => {
    await enqueue(q, [a, b, c]);
    const t0 = Date.now();
    const first = await claim(q, 2);
    const t1 = first.jobs[0]!.token;
    expectTokenRun([t1, first.jobs[1]!.token], t0);
    expect(first.jobs).toEqual([
      { id: a, payload: `p-${a}`, attempts: 1, token: t1, opts: "" },
      { id: b, payload: `p-${b}`, attempts: 1, token: t1 + 1, opts: "" },
    ]);
    const r = await row(site.db, q.row(a));
    expect(Object.keys(r).sort()).toEqual(["attempts", "created_ms", "deadline_ms", "payload", "state", "token"]);
    expect(r).toMatchObject({ state: "active", attempts: "1", token: String(t1) });
    const deadline = (await zscore(q.active, a))!;
    expect(Number(r.deadline_ms)).toBe(deadline);
    expect(Math.abs(deadline - (t0 + 60_000))).toBeLessThan(5000);
    expect(first.nextMs).toBe(deadline);
    expect((await row(site.db, q.meta)).tokens).toBe(String(t1 + 1));
    expect(await lrange(q.pending)).toEqual([c]);
    // count above what is there: what is there
    const second = await claim(q, 5);
    expect(second.jobs).toEqual([{ id: c, payload: `p-${c}`, attempts: 1, token: expect.any(Number), opts: "" }]);
    expect(second.jobs[0]!.token).toBeGreaterThan(t1 + 1);
    expect(second.nextMs).toBe(deadline);
    expect(await exists(q.pending)).toBe(0);
    // nothing left: next_ms alone
    expect(await ok(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 }))).toEqual([deadline]);
    // an empty queue: [0]
    expect(await ok(argv("CLAIM", queue("empty"), { lease_ms: 60_000, count: 1, block_ms: 0 }))).toEqual([0]);
    expect(await exists(queue("empty").meta)).toBe(0);
  });

  test("CLAIM makes a new active a skiplist (a listpack scans every member per add), holding only the ids claimed; made again, again", async () => {
    const e = queue("encoding");
    const ids = [jobId(901), jobId(902), jobId(903), jobId(904)];
    await enqueue(e, ids);
    const encoding = async (): Promise<string> => String(await ok(["OBJECT", "ENCODING", e.active]));
    const first = await claim(e, 2);
    expect(await encoding()).toBe("skiplist");
    expect(Object.keys(await zset(e.active))).toEqual([ids[0], ids[1]]);
    // an existing active is added to as it is
    const second = await claim(e, 1);
    expect(await encoding()).toBe("skiplist");
    expect(Object.keys(await zset(e.active)).sort()).toEqual(ids.slice(0, 3));
    // emptied, it is deleted; the next claim makes it a skiplist again
    await ok(argv("ACK", e, {}, held([...first.jobs, ...second.jobs])), 3);
    expect(await exists(e.active)).toBe(0);
    await claim(e, 1);
    expect(await encoding()).toBe("skiplist");
    expect(await zset(e.active)).toEqual({ [ids[3]!]: expect.any(Number) });
  });

  test(`CLAIM count ${MAX_BATCH}: one call claims that many, tokens old+1 … old+k in claim order`, async () => {
    const ids = Array.from({ length: MAX_BATCH }, (_, i) => jobId(100 + i));
    await enqueue(q, ids, "x");
    await enqueue(q, [a], "x");
    const t0 = Date.now();
    const got = await claim(q, MAX_BATCH);
    expect(got.jobs.length).toBe(MAX_BATCH);
    expect(got.jobs.map((j) => j.id)).toEqual(ids);
    const tokens = got.jobs.map((j) => j.token);
    expectTokenRun(tokens, t0);
    expect((await row(site.db, q.meta)).tokens).toBe(String(tokens.at(-1)));
    expect(await lrange(q.pending)).toEqual([a]);
    // 10000 tokens in one ms run ahead of the clock: the next claim continues above them
    await ok(["HSET", q.meta, "tokens", String(Date.now() * TOKENS_PER_MS + 10_000_000)]);
    const ahead = Number((await row(site.db, q.meta)).tokens);
    expect((await claim(q, 1)).jobs[0]!.token).toBe(ahead + 1);
  });

  test("tokens: strictly increasing per queue across reap, retry, claim again and an id enqueued again", async () => {
    const seen: number[] = [];
    const take = async (): Promise<ClaimedJob> => {
      const j = (await claim(q, 1, 1)).jobs[0]!;
      seen.push(j.token);
      return j;
    };
    await enqueue(q, [a]);
    const j1 = await take();
    await sleep(10);
    await ok(wellFormed("REAP", q, a, { limit: 10 }), 1);
    const j2 = await take(); // the reaped job again
    expect([j2.id, j2.attempts]).toEqual([a, 2]);
    await ok(argv("RETRY", q, {}, held([j2], { delay_ms: 1, reason: "again" })), 1);
    await sleep(10);
    const j3 = await take(); // CLAIM promotes the retried job itself
    expect([j3.id, j3.attempts]).toEqual([a, 3]);
    await sleep(10); // its lease ran out; the next claim reaps it inside
    const j4 = await take();
    expect([j4.id, j4.attempts]).toEqual([a, 4]);
    await ok(argv("ACK", q, {}, held([j4])), 1);
    await ok(argv("REMOVE", q, { cleaned: 0 }, [{ id: a }]), 1); // its completed row
    await enqueue(q, [a]);
    const j5 = await take();
    expect([j5.id, j5.attempts]).toEqual([a, 1]);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThan(seen[i - 1]!);
    expect(j1.token).toBeGreaterThan(1e15);
    // every older token is stale
    for (const old of [j1, j2, j3, j4]) {
      await refuses(argv("ACK", q, {}, held([old])), refusal("lease-lost", "ACK", { ids: a }));
    }
    // another queue counts its own, from the same floor
    await enqueue(queue("other"), [a]);
    expect((await claim(queue("other"))).jobs[0]!.token).toBeGreaterThan(j1.token);
  });

  test("CLAIM's upkeep: due schedule promoted and expired leases reaped inside the claim, in RPOP order", async () => {
    const [e, p1, p2, due, far] = [jobId(10), jobId(11), jobId(12), jobId(13), jobId(14)];
    await enqueue(q, [e]);
    expect((await claim(q, 1, 1)).jobs[0]!.id).toBe(e);
    await enqueue(q, [p1, p2]);
    await schedule(q, [[due, 1], [far, Date.now() + 3_600_000]]);
    await sleep(10);
    const got = await claim(q, 10);
    // expired ids first (RPUSHed to the tail), then pending from its tail, then the due ids
    expect(got.jobs.map((j) => [j.id, j.attempts])).toEqual([[e, 2], [p1, 1], [p2, 1], [due, 1]]);
    expectTokenRun(got.jobs.map((j) => j.token), Date.now());
    expect(await zset(q.schedule)).toEqual({ [far]: expect.any(Number) });
    expect(Object.keys(await zset(q.active)).sort()).toEqual([e, p1, p2, due].sort());
    for (const id of [e, p1, p2, due]) expect((await row(site.db, q.row(id))).state).toBe("active");
    expect(await exists(q.pending)).toBe(0);
  });

  test("CLAIM's upkeep moves at most 1000 due ids per call", async () => {
    const ids = Array.from({ length: 1001 }, (_, i) => jobId(1000 + i));
    await schedule(q, ids.map((id, i): [string, number] => [id, i + 1]));
    const got = await claim(q, 1);
    expect(got.jobs.map((j) => j.id)).toEqual([ids[0]]); // the earliest due is claimed first
    expect(Object.keys(await zset(q.schedule))).toEqual([ids[1000]]);
    expect((await lrange(q.pending)).length).toBe(999);
    expect(got.nextMs).toBe(1001); // the one left in schedule
  });

  test("paused: CLAIM hands out nothing (its upkeep still runs) until paused is no longer 1", async () => {
    await enqueue(q, [a]);
    await schedule(q, [[d, 1]]);
    await ok(["HSET", q.meta, "paused", "1"]);
    await sleep(5);
    expect(await ok(argv("CLAIM", q, { lease_ms: 60_000, count: 10, block_ms: 0 }))).toEqual([0]);
    expect(await lrange(q.pending)).toEqual([d, a]); // promoted, not claimed
    expect((await row(site.db, q.row(d))).state).toBe("pending");
    expect(await exists(q.active)).toBe(0);
    await ok(["HSET", q.meta, "paused", "0"]);
    expect((await claim(q, 10)).jobs.map((j) => j.id)).toEqual([a, d]);
  });

  test("CLAIM drops tail ids whose row is missing; only orphans → [0], pending deleted, ready removed", async () => {
    await enqueue(q, [a]);
    await ok(["RPUSH", q.pending, jobId(90), jobId(91)]);
    expect((await claim(q, 1)).jobs.map((j) => j.id)).toEqual([a]);
    expect(await exists(q.pending)).toBe(0);
    expect(await zset(q.wake)).toEqual({});
    await ok(["RPUSH", q.pending, jobId(92), jobId(93)]);
    await ok(["ZADD", q.wake, "0", "ready"]);
    const before = await row(site.db, q.meta);
    expect(await ok(argv("CLAIM", q, { lease_ms: 60_000, count: 5, block_ms: 0 }))).toEqual([expect.any(Number)]);
    expect(await exists(q.pending, q.row(jobId(92)), q.row(jobId(93)))).toBe(0);
    expect(await zset(q.wake)).toEqual({});
    expect(await row(site.db, q.meta)).toEqual(before); // no token taken
  });

  test("ACK on a queue that keeps no completed jobs (completed_max 0): a batch leaves active, its rows are deleted, acked counted", async () => {
    await ok(["HSET", q.meta, "completed_max", "0"]);
    await enqueue(q, [a, b, c]);
    const { jobs } = await claim(q, 3);
    await ok(argv("ACK", q, {}, held(jobs.slice(0, 2))), 2);
    expect(Object.keys(await zset(q.active))).toEqual([c]);
    expect(await exists(q.row(a), q.row(b))).toBe(0);
    expect((await row(site.db, q.meta)).acked).toBe("2");
    await ok(argv("ACK", q, {}, held(jobs.slice(2)).map((g) => ({ ...g, result: "dropped" }))), 1);
    expect(await exists(q.active, q.row(c), q.completed)).toBe(0);
    expect((await row(site.db, q.meta)).acked).toBe("3");
  });

  test("RETRY: a batch goes to schedule at now+delay with its reason; retried counted; the earliest due on wake", async () => {
    await enqueue(q, [a, b]);
    const { jobs } = await claim(q, 2);
    const t0 = Date.now();
    await ok(
      argv("RETRY", q, {}, [
        { id: a, token: jobs[0]!.token, delay_ms: 60_000, reason: "boom" },
        { id: b, token: jobs[1]!.token, delay_ms: 30_000, reason: "bang" },
      ]),
      2,
    );
    const ra = await row(site.db, q.row(a));
    expect(ra).toMatchObject({ state: "scheduled", reason: "boom", attempts: "1", token: String(jobs[0]!.token) });
    expect(Number(ra.due_ms)).toBe((await zscore(q.schedule, a))!);
    expect(Math.abs(Number(ra.due_ms) - (t0 + 60_000))).toBeLessThan(5000);
    const rb = await row(site.db, q.row(b));
    expect(rb).toMatchObject({ state: "scheduled", reason: "bang" });
    expect(await exists(q.active)).toBe(0);
    expect((await row(site.db, q.meta)).retried).toBe("2");
    expect(await zset(q.wake)).toEqual({ due: Number(rb.due_ms) });
  });

  test("RETRY with delay_ms 0: straight to the head of pending (state pending, reason kept), ready on wake", async () => {
    await enqueue(q, [a, b]);
    const { jobs } = await claim(q, 2);
    await ok(
      argv("RETRY", q, {}, [
        { id: a, token: jobs[0]!.token, delay_ms: 0, reason: "now" },
        { id: b, token: jobs[1]!.token, delay_ms: 60_000, reason: "later" },
      ]),
      2,
    );
    expect(await row(site.db, q.row(a))).toMatchObject({ state: "pending", reason: "now", attempts: "1" });
    expect(await lrange(q.pending)).toEqual([a]);
    expect(await zset(q.wake)).toMatchObject({ ready: 0 });
    expect(Object.keys(await zset(q.schedule))).toEqual([b]);
    expect((await row(site.db, q.meta)).retried).toBe("2");
  });

  test("RELEASE: a batch goes back to the tail of pending, attempts given back, no reason, nothing counted", async () => {
    await enqueue(q, [a, b, c]);
    const { jobs } = await claim(q, 2);
    await ok(argv("RELEASE", q, {}, jobs.map((j) => ({ id: j.id, token: j.token }))), 2);
    expect(await lrange(q.pending)).toEqual([c, a, b]);
    const ra = await row(site.db, q.row(a));
    expect(ra).toMatchObject({ state: "pending", attempts: "0", token: String(jobs[0]!.token) });
    expect(ra.reason).toBeUndefined();
    expect(await exists(q.active)).toBe(0);
    expect((await row(site.db, q.meta)).retried).toBeUndefined();
    expect(claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs[0]).toMatchObject({
      id: b,
      attempts: 1,
    });
  });

  test("BURY: a batch goes to dead at now with reason and buried_ms; buried counted", async () => {
    await enqueue(q, [a, b]);
    const { jobs } = await claim(q, 2);
    await ok(argv("BURY", q, {}, held(jobs, { reason: "gave up" })), 2);
    for (const id of [a, b]) {
      const r = await row(site.db, q.row(id));
      expect(r).toMatchObject({ state: "dead", reason: "gave up" });
      expect(Number(r.buried_ms)).toBe((await zscore(q.dead, id))!);
    }
    expect(await exists(q.active)).toBe(0);
    expect((await row(site.db, q.meta)).buried).toBe("2");
  });

  test("failures: RETRY, BURY and SETTLE keep each non-empty failure among the row's newest 10; an empty one writes nothing", async () => {
    await enqueue(q, [a]);
    let token = 0;
    const next = async (): Promise<void> => {
      const { jobs } = await claim(q, 1);
      token = jobs[0]!.token;
    };
    for (let k = 1; k <= 12; k++) {
      await next();
      if (k % 3 === 0) await ok(argv("SETTLE", q, { lease_ms: 1000, want: 0 }, [{ op: 1, id: a, token, delay_ms: 0, reason: "s", failure: `f${k}` }]));
      else await ok(argv("RETRY", q, {}, [{ id: a, token, delay_ms: 0, reason: "r", failure: k === 5 ? "" : `f${k}` }]), 1);
    }
    await next();
    await ok(argv("BURY", q, {}, [{ id: a, token, reason: "b", failure: "f13" }]), 1);
    // 12 failures sent (the 5th empty): f13 is the 12th, in failure:1; f1 and f2 were overwritten
    const r = await row(site.db, q.row(a));
    expect(r.failures).toBe("12");
    const kept = Object.fromEntries(Object.entries(r).filter(([k]) => k.startsWith("failure:")));
    expect(kept).toEqual({
      "failure:0": "f12",
      "failure:1": "f13",
      "failure:2": "f3",
      "failure:3": "f4",
      "failure:4": "f6",
      "failure:5": "f7",
      "failure:6": "f8",
      "failure:7": "f9",
      "failure:8": "f10",
      "failure:9": "f11",
    });
    // a hand-edited count that is not a number counts as 0
    await ok(["HSET", q.row(a), "failures", "x"]);
    await ok(argv("REQUEUE", q, { limit: 1, keep_attempts: 0 }, [{ id: a }]), 1);
    await next();
    await ok(argv("RETRY", q, {}, [{ id: a, token, delay_ms: 0, reason: "r", failure: "again" }]), 1);
    expect(await row(site.db, q.row(a))).toMatchObject({ failures: "1", "failure:0": "again" });
  });

  test("LOG: each held job's line among the row's newest 1000 (an empty one keeps nothing); lease-lost and a long line refused, nothing written", async () => {
    await enqueue(q, [a, b]);
    const { jobs } = await claim(q, 2);
    await ok(argv("LOG", q, {}, held(jobs, { line: "one" })), 2);
    await ok(argv("LOG", q, {}, [{ id: a, token: jobs[0]!.token, line: "" }]), 1);
    await ok(argv("LOG", q, {}, [{ id: a, token: jobs[0]!.token, line: "two" }]), 1);
    expect(await row(site.db, q.row(a))).toMatchObject({ logs: "2", "log:0": "one", "log:1": "two" });
    expect(await row(site.db, q.row(b))).toMatchObject({ logs: "1", "log:0": "one" });
    const d0 = await digest(site.db);
    await refuses(argv("LOG", q, {}, [{ id: a, token: jobs[0]!.token + 7, line: "x" }]), refusal("lease-lost", "LOG", { ids: a }));
    await refuses(
      argv("LOG", q, {}, [{ id: a, token: jobs[0]!.token, line: "l".repeat(MAX_LOG_LINE_BYTES + 1) }]),
      refusal("log", "LOG", { limit: String(MAX_LOG_LINE_BYTES) }),
    );
    await refuses(argv("LOG", q, {}, [{ id: a, token: jobs[0]!.token }, { id: a, token: jobs[0]!.token }]), refusal("repeated", "LOG", { id: a }));
    expect(await digest(site.db)).toBe(d0);
    // the 1001st line is written over the first; the row's end is the log's
    await ok(["HSET", q.row(a), "logs", "1000"]);
    await ok(argv("LOG", q, {}, [{ id: a, token: jobs[0]!.token, line: "1001st" }]), 1);
    expect(await row(site.db, q.row(a))).toMatchObject({ logs: "1001", "log:0": "1001st" });
    await ok(argv("ACK", q, {}, held(jobs)), 2);
    await ok(argv("REMOVE", q, { cleaned: 0 }, [{ id: a }, { id: b }]), 2);
    expect(await exists(q.row(a), q.row(b))).toBe(0);
  });

  test("EXTEND: a batch's leases run until now+lease_ms; a lease run out but not reaped is still held", async () => {
    await enqueue(q, [a, b]);
    const { jobs } = await claim(q, 2, 1);
    await sleep(10); // both ran out; nobody reaped them
    const t0 = Date.now();
    await ok(argv("EXTEND", q, { lease_ms: 60_000 }, held(jobs)), 2);
    for (const id of [a, b]) {
      const deadline = (await zscore(q.active, id))!;
      expect(Math.abs(deadline - (t0 + 60_000))).toBeLessThan(5000);
      expect(Number((await row(site.db, q.row(id))).deadline_ms)).toBe(deadline);
    }
    await ok(wellFormed("REAP", q, a), 0);
    expect((await claim(q, 1)).jobs).toEqual([]);
    await ok(argv("ACK", q, {}, held(jobs)), 2);
  });

  test("PROMOTE: due ids ascending, at most limit, future ones stay; ready marked when any moved", async () => {
    const far = Date.now() + 3_600_000;
    await schedule(q, [[a, 2], [b, 1], [c, far]]);
    await ok(["DEL", q.wake]);
    await ok(wellFormed("PROMOTE", q, a, { limit: 1 }), 1);
    expect(await lrange(q.pending)).toEqual([b]);
    expect(await zset(q.wake)).toEqual({ ready: 0 });
    await ok(wellFormed("PROMOTE", q, a, { limit: 10 }), 1);
    expect(await lrange(q.pending)).toEqual([a, b]);
    expect((await row(site.db, q.row(a))).state).toBe("pending");
    expect(await zset(q.schedule)).toEqual({ [c]: far });
    await ok(["DEL", q.wake]);
    await ok(wellFormed("PROMOTE", q, a, { limit: 10 }), 0);
    expect(await exists(q.wake)).toBe(0);
  });

  test("REAP: expired leases go back to the tail of pending (claimed next), rows pending, ready marked", async () => {
    await enqueue(q, [a, b]);
    expect((await claim(q, 1, 1)).jobs.map((j) => j.id)).toEqual([a]);
    await ok(["DEL", q.wake]);
    await sleep(10);
    await ok(wellFormed("REAP", q, a, { limit: 10 }), 1);
    expect(await lrange(q.pending)).toEqual([b, a]);
    expect((await row(site.db, q.row(a))).state).toBe("pending");
    expect(await zset(q.wake)).toEqual({ ready: 0 });
    expect((await claim(q, 1)).jobs).toEqual([{ id: a, payload: `p-${a}`, attempts: 2, token: expect.any(Number), opts: "" }]);
    await ok(wellFormed("REAP", q, a, { limit: 10 }), 0);
  });

  test("RUN: named scheduled jobs to the head of pending in argument order, due now, attempts and reason kept; ready when pending was empty", async () => {
    const far = Date.now() + 3_600_000;
    await schedule(q, [[a, far], [b, far + 1], [c, far + 2]]);
    await ok(["HSET", q.row(b), "attempts", "2", "reason", "boom"]);
    await ok(["DEL", q.wake]);
    const t0 = Date.now();
    await ok(argv("RUN", q, {}, [{ id: b }, { id: a }]), 2);
    expect(await lrange(q.pending)).toEqual([a, b]);
    expect(await zset(q.schedule)).toEqual({ [c]: far + 2 });
    expect(await zset(q.wake)).toEqual({ ready: 0 });
    const rb = await row(site.db, q.row(b));
    expect(rb).toMatchObject({ state: "pending", attempts: "2", reason: "boom", payload: `p-${b}` });
    expect(Number(rb.due_ms)).toBeGreaterThanOrEqual(t0 - 5000);
    expect(Number(rb.due_ms)).toBeLessThan(far);
    // pending not empty: no ready marker is written
    await ok(["DEL", q.wake]);
    await ok(argv("RUN", q, {}, [{ id: c }]), 1);
    expect(await exists(q.wake)).toBe(0);
    expect(await lrange(q.pending)).toEqual([c, a, b]);
    expect((await claim(q, 3)).jobs.map((j) => j.id)).toEqual([b, a, c]);
    // an id in schedule without a row moves all the same (a claim drops it)
    await ok(["ZADD", q.schedule, String(far), jobId(52)]);
    await ok(argv("RUN", q, {}, [{ id: jobId(52) }]), 1);
    expect(await lrange(q.pending)).toEqual([jobId(52)]);
    expect(await exists(q.row(jobId(52)))).toBe(0);
  });

  test("PROMOTE/REAP move ids whose row is missing", async () => {
    await ok(["ZADD", q.schedule, "1", jobId(50)]);
    await ok(["ZADD", q.active, "1", jobId(51)]);
    await ok(wellFormed("PROMOTE", q, a), 1);
    await ok(wellFormed("REAP", q, a), 1);
    expect(await lrange(q.pending)).toEqual([jobId(50), jobId(51)]);
    expect(await exists(q.row(jobId(50)), q.row(jobId(51)))).toBe(0);
  });

  test("wake: ready and due markers as docs/WIRE.md says", async () => {
    // ENQUEUE into an empty pending writes ready; CLAIM leaving pending non-empty keeps (or writes) it
    await enqueue(q, [a, b]);
    expect(await zset(q.wake)).toEqual({ ready: 0 });
    await ok(["ZREM", q.wake, "ready"]);
    const held0 = (await claim(q, 1)).jobs;
    expect(await zset(q.wake)).toEqual({ ready: 0 });
    // CLAIM emptying pending removes it
    await claim(q, 1);
    expect(await zset(q.wake)).toEqual({});
    // SCHEDULE: due at the earliest time written; a claim keeps a due marker whose time has not come
    const soon = Date.now() + 150;
    await schedule(q, [[c, Date.now() + 3_600_000], [d, soon]]);
    expect(await zset(q.wake)).toEqual({ due: soon });
    await claim(q, 1);
    expect(await zset(q.wake)).toEqual({ due: soon });
    // once its time has come, CLAIM spends it (and claims the job it promoted)
    await sleep(200);
    const jobs = (await claim(q, 1)).jobs;
    expect(jobs.map((j) => j.id)).toEqual([d]);
    expect(await zset(q.wake)).toEqual({});
    // RETRY: due at the earliest time, ZADD LT (a later one does not replace an earlier one)
    await ok(["ZADD", q.wake, String(Date.now() + 120_000), "due"]);
    await ok(argv("RETRY", q, {}, held(jobs, { delay_ms: 60_000, reason: "r" })), 1);
    const due = Number((await row(site.db, q.row(d))).due_ms);
    expect(await zset(q.wake)).toEqual({ due });
    await ok(["ZADD", q.wake, "1", "due"]);
    await ok(argv("RETRY", q, {}, held(held0, { delay_ms: 60_000, reason: "r" })), 1);
    expect(await zset(q.wake)).toEqual({ due: 1 });
    // a claim spends a due whose time has come, with nothing to claim
    expect((await claim(q, 1)).jobs).toEqual([]);
    expect(await zset(q.wake)).toEqual({});
  });

  test("next_ms: the lowest score of schedule and active after the call, 0 when both are empty", async () => {
    const far = Date.now() + 3_600_000;
    await schedule(q, [[c, far]]);
    expect((await claim(q)).nextMs).toBe(far);
    await enqueue(q, [a]);
    const got = await claim(q, 1, 60_000);
    expect(got.nextMs).toBe((await zscore(q.active, a))!);
    expect(got.nextMs).toBeLessThan(far);
    await ok(argv("ACK", q, {}, held(got.jobs)), 1);
    expect((await claim(q)).nextMs).toBe(far);
  });
});

describe("refusals write nothing", () => {
  const q = queue("orders");
  const other = queue("other");
  const [a, b, s] = [jobId(1), jobId(2), jobId(3)];
  const WT = refusal("wrongtype", "ENQUEUE", {});
  /** A tokens counter above now × 1000 (until 2255), and the token `a` gets after it. */
  const T = 9_000_000_000_000_000;
  const TA = T + 1;

  /**
   * A populated keyspace: an active job `a` (token TA), a pending job `b`, a scheduled `s`. meta's
   * `tokens` is set above the clock's floor first, so the tokens of this block are known.
   */
  async function populate(): Promise<void> {
    await enqueue(q, [a]);
    await ok(["HSET", q.meta, "tokens", String(T)]);
    expect((await claim(q, 1)).jobs[0]!.token).toBe(TA);
    await enqueue(q, [b]);
    await schedule(q, [[s, Date.now() + 3_600_000]]);
  }

  /** A call of `verb` that succeeds on the populated keyspace. */
  const good = (verb: VerbName): string[] => wellFormed(verb, q, verb === "ENQUEUE" || verb === "SCHEDULE" ? jobId(40) : a, { token: TA });

  test("the exact case: empty queue name on ENQUEUE", async () => {
    await populate();
    await refuses(wellFormed("ENQUEUE", queue(""), "JOB0Nb1VTbfnu4"), refusal("layout", "ENQUEUE", {}));
    expect(await exists(queue("").meta, queue("").pending, queue("").row("JOB0Nb1VTbfnu4"))).toBe(0);
  });

  test("the populated keyspace accepts each good call", async () => {
    for (const verb of COVERED) {
      expectOk(await run(["FLUSHALL"]));
      await populate();
      expectOk(await run(good(verb)));
    }
  });

  for (const verb of LIVE) {
    const spec: VerbSpec = SPEC[verb];
    const minGroups = (spec as { minGroups?: number }).minGroups ?? 1;
    const arity = refusal("arity", verb, {});

    /** Whether an argv of `argc` entries has the verb's shape: the fixed arguments and k whole groups. */
    const shaped = (argc: number): boolean => {
      const rest = argc - 3 - spec.args.length;
      const G = spec.group.length;
      return rest >= 0 && (G === 0 ? rest === 0 : rest >= G * minGroups && rest % G === 0);
    };

    test(`${verb}: shape`, async () => {
      await populate();
      const g = good(verb);
      for (const nk of ["2", "0", "01", "x", "-1", " 1", "", "1 "]) await refuses([g[0]!, nk, ...g.slice(2)], arity);
      await refuses(g.slice(0, 2), arity);
      // one argument less or more, no argument after the key, the fixed ones alone, a group and a
      // part of another: refused wherever that is not the verb's shape
      const variants = [
        g.slice(0, -1),
        [...g, "extra"],
        g.slice(0, 3),
        g.slice(0, 3 + spec.args.length),
        [...g, ...g.slice(3 + spec.args.length, -1)],
      ];
      let refused = 0;
      for (const v of variants.filter((v) => !shaped(v.length))) {
        await refuses(v, arity);
        refused++;
      }
      expect(refused).toBeGreaterThan(0);
      // no argument at all: the server's own arity check (lower case)
      expectRefused(await run([g[0]!]), refusal("arity", verb, {}).replace(`EMQ.${verb}`, `emq.${verb.toLowerCase()}`));
    });

    if (spec.group.length > 0) {
      test(`${verb}: batch — at most ${MAX_BATCH} groups, checked before the layout`, async () => {
        await populate();
        const groups = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({ id: jobId(5000 + i), token: 1 }));
        const text = refusal("batch", verb, { max: String(MAX_BATCH) });
        await refuses(argv(verb, q, { lease_ms: 1000 }, groups), text);
        await refuses(argv(verb, queue(""), { lease_ms: 1000 }, groups), text);
      });
    }

    test(`${verb}: layout`, async () => {
      await populate();
      const layout = refusal("layout", verb, {});
      const g = good(verb);
      const withKey = (key: string): string[] => [g[0]!, "1", key, ...g.slice(3)];
      for (
        const key of [
          q.pending,
          q.active,
          q.schedule,
          q.dead,
          q.wake,
          q.row(a),
          q.base,
          `${q.meta}x`,
          `x${q.meta}`,
          q.meta.toUpperCase(),
          "emq:{orders}meta",
          "emq:orders:meta",
          "bull:orders:wait",
          "",
          "{orders}:meta",
        ]
      ) await refuses(withKey(key), layout);
      for (const bad of ["", "a}b", "a{b", "a\u0000b"]) await refuses(withKey(queue(bad).meta), layout);
      // another queue's meta is a valid call (on that queue, where `a` is not held)
      const out = await run(withKey(other.meta));
      if ("err" in out && (COVERED as readonly string[]).includes(verb)) {
        expect(out.err).toBe(refusal("lease-lost", verb, { ids: a }));
      }
    });

    const gated = [...spec.args, ...spec.group] as ArgName[];
    for (const name of gated) {
      const gate: Gate = ARGS[name].gate;
      if (gate.kind === "number") {
        test(`${verb}: ${name} gate`, async () => {
          await populate();
          const text = refusal(gate.min === 0 ? "non-negative" : "positive", verb, { arg: name });
          const most = gateDigits(gate);
          const bad = ["-1", "+1", " 1", "1 ", "1.5", "1e3", "abc", "", "1".padEnd(most + 1, "0"), "0x1", "\u0661"];
          if (gate.min === 1) bad.push("0", "000");
          for (const value of bad) await refuses(wellFormed(verb, q, a, { token: TA, [name]: value }), text);
          if (gate.max !== undefined) {
            const tooLarge = refusal("too-large", verb, { arg: name, max: String(gate.max) });
            for (const value of [String(gate.max + 1), "9".repeat(most)]) {
              await refuses(wellFormed(verb, q, a, { token: TA, [name]: value }), tooLarge);
            }
          } else {
            // 15 digits pass the gate (the call may still meet a domain refusal)
            const out = await run(wellFormed(verb, q, jobId(41), { token: TA, [name]: "999999999999999" }));
            if ("err" in out) expect(out.err).not.toBe(text);
          }
        });
      }
      if (gate.kind === "bytes") {
        test(`${verb}: ${name} gate (at most ${gate.limit} bytes)`, async () => {
          await populate();
          const text = refusal(gate.refusal, verb, { limit: String(gate.limit) });
          await refuses(wellFormed(verb, q, a, { token: TA, [name]: "x".repeat(gate.limit + 1) }), text);
          const out = await run(wellFormed(verb, q, jobId(42), { token: TA, [name]: "x".repeat(gate.limit) }));
          if ("err" in out) expect(out.err).not.toBe(text);
        });
      }
      if (gate.kind === "job-id") {
        test(`${verb}: id gate`, async () => {
          await populate();
          for (const id of ["ABC0Nb1VTbfnu4", "job0Nb1VTbfnu4", "JO", "", " JOB1", "\u0000JOB"]) {
            await refuses(wellFormed(verb, q, id, { token: TA }), refusal("job-id", verb, {}));
          }
          // any bytes after JOB pass the gate
          expect(await run(wellFormed(verb, q, "JOB", { token: TA }))).not.toEqual({ err: refusal("job-id", verb, {}) });
        });
      }
    }
  }

  test("payload and ACK's result over emq.max-payload (default and configured)", async () => {
    await populate();
    const big = "x".repeat(MAX_PAYLOAD_BYTES + 1);
    const limit = String(MAX_PAYLOAD_BYTES);
    await refuses(wellFormed("ENQUEUE", q, jobId(9), { payload: big }), refusal("payload", "ENQUEUE", { limit }));
    await refuses(wellFormed("SCHEDULE", q, jobId(9), { payload: big }), refusal("payload", "SCHEDULE", { limit }));
    await ok(wellFormed("ENQUEUE", q, jobId(10), { payload: "x".repeat(MAX_PAYLOAD_BYTES) }), 1);
    await refuses(wellFormed("ACK", q, jobId(9), { token: 1, result: big }), refusal("result", "ACK", { limit }));
    await ok(["CONFIG", "SET", "emq.max-payload", "10"]);
    try {
      await refuses(wellFormed("ENQUEUE", q, jobId(11), { payload: "x".repeat(11) }), refusal("payload", "ENQUEUE", { limit: "10" }));
      // the second group's payload is gated too
      await refuses(
        argv("ENQUEUE", q, {}, [{ id: jobId(12), payload: "ok" }, { id: jobId(13), payload: "x".repeat(11) }]),
        refusal("payload", "ENQUEUE", { limit: "10" }),
      );
      await ok(wellFormed("ENQUEUE", q, jobId(11), { payload: "x".repeat(10) }), 1);
      // ACK's result has the payload's limit (wire 10)
      await refuses(wellFormed("ACK", q, jobId(12), { token: 1, result: "x".repeat(11) }), refusal("result", "ACK", { limit: "10" }));
    } finally {
      await ok(["CONFIG", "SET", "emq.max-payload", limit]);
    }
  });

  test(`reason over ${MAX_REASON_BYTES} bytes`, async () => {
    await populate();
    const long = "r".repeat(MAX_REASON_BYTES + 1);
    const limit = String(MAX_REASON_BYTES);
    await refuses(wellFormed("RETRY", q, a, { token: TA, reason: long }), refusal("reason", "RETRY", { limit }));
    await refuses(wellFormed("BURY", q, a, { token: TA, reason: long }), refusal("reason", "BURY", { limit }));
    await ok(wellFormed("BURY", q, a, { token: TA, reason: "r".repeat(MAX_REASON_BYTES) }), 1);
  });

  test(`failure over ${MAX_ERROR_BYTES} bytes`, async () => {
    await populate();
    const long = "f".repeat(MAX_ERROR_BYTES + 1);
    const limit = String(MAX_ERROR_BYTES);
    await refuses(wellFormed("RETRY", q, a, { token: TA, failure: long }), refusal("failure", "RETRY", { limit }));
    await refuses(wellFormed("BURY", q, a, { token: TA, failure: long }), refusal("failure", "BURY", { limit }));
    await refuses(wellFormed("SETTLE", q, a, { token: TA, op: 2, failure: long }), refusal("failure", "SETTLE", { limit }));
    await ok(wellFormed("BURY", q, a, { token: TA, failure: "f".repeat(MAX_ERROR_BYTES) }), 1);
  });

  test("repeated: one call names a job twice (checked before duplicate and lease-lost)", async () => {
    await populate();
    const fresh = jobId(60);
    for (const verb of COVERED.filter((v) => SPEC[v].group.length > 0)) {
      const admits = SPEC[verb].admits;
      // a fresh id twice (admissions) or the held job twice (settles)
      const id = admits ? fresh : a;
      await refuses(argv(verb, q, {}, [{ id, token: 1 }, { id: jobId(61), token: 1 }, { id, token: 1 }]), refusal("repeated", verb, { id }));
      // an existing row twice: repeated, not duplicate; a stale job twice: repeated, not lease-lost
      await refuses(argv(verb, q, {}, [{ id: b, token: 9 }, { id: b, token: 9 }]), refusal("repeated", verb, { id: b }));
    }
  });

  test("duplicate id: the first existing row of the batch is named", async () => {
    await populate();
    for (const verb of ["ENQUEUE", "SCHEDULE"] as const) {
      await refuses(wellFormed(verb, q, b), refusal("duplicate", verb, { id: b }));
      await refuses(wellFormed(verb, q, a), refusal("duplicate", verb, { id: a }));
      await refuses(wellFormed(verb, q, s), refusal("duplicate", verb, { id: s }));
      await refuses(argv(verb, q, {}, [{ id: jobId(70) }, { id: s }, { id: a }]), refusal("duplicate", verb, { id: s }));
      // a row of any type is there: duplicate
      await ok(["SET", q.row(jobId(71)), "x"]);
      await refuses(wellFormed(verb, q, jobId(71)), refusal("duplicate", verb, { id: jobId(71) }));
      await ok(["DEL", q.row(jobId(71))]);
    }
  });

  test("lease-lost: a stale token for ACK/RETRY/BURY/RELEASE/EXTEND names every stale id, nothing written", async () => {
    await populate();
    const [x, y, z] = [jobId(80), jobId(81), jobId(82)];
    await enqueue(q, [x, y, z]);
    await ok(["LREM", q.pending, "0", b]); // so that the next claim takes x, y, z
    const { jobs } = await claim(q, 3);
    expect(jobs.map((j) => [j.id, j.token])).toEqual([[x, TA + 1], [y, TA + 2], [z, TA + 3]]);
    for (const verb of ["ACK", "RETRY", "BURY", "RELEASE", "EXTEND"] as const) {
      const lost = (...ids: string[]) => refusal("lease-lost", verb, { ids: ids.join(" ") });
      // one stale token
      await refuses(argv(verb, q, {}, [{ id: x, token: 3 }]), lost(x));
      // a batch: one held, two stale — every stale id in argument order, the held one untouched
      await refuses(argv(verb, q, {}, [{ id: z, token: 1 }, { id: x, token: TA + 1 }, { id: y, token: 2 }]), lost(z, y));
      // a job never claimed (pending), an unknown id, the active job under another's token
      await refuses(argv(verb, q, {}, [{ id: b, token: 1 }, { id: jobId(99), token: 1 }, { id: a, token: 2 }]), lost(b, jobId(99), a));
      // in active, but its row is gone
      await ok(["ZADD", q.active, "1", jobId(98)]);
      await refuses(argv(verb, q, {}, [{ id: jobId(98), token: 1 }]), lost(jobId(98)));
      await ok(["ZREM", q.active, jobId(98)]);
      // a row holding the token, but not in active
      await ok(["HSET", q.row(s), "token", "1"]);
      await refuses(argv(verb, q, {}, [{ id: s, token: 1 }]), lost(s));
    }
    // tokens compare as canonical decimals; a real token has 16 digits, so a leading zero is past the gate
    await refuses(argv("EXTEND", q, { lease_ms: 60_000 }, [{ id: x, token: `0${TA + 1}` }]), refusal("positive", "EXTEND", { arg: "token" }));
    await ok(argv("EXTEND", q, { lease_ms: 60_000 }, [{ id: x, token: String(TA + 1) }]), 1);
    // settled: the same token again is stale
    await ok(argv("ACK", q, {}, [{ id: x, token: TA + 1 }]), 1);
    for (const verb of ["ACK", "RETRY", "BURY", "RELEASE", "EXTEND"] as const) {
      await refuses(argv(verb, q, {}, [{ id: x, token: TA + 1 }]), refusal("lease-lost", verb, { ids: x }));
    }
  });

  test("RUN: not-scheduled names every id not in schedule (active, pending, dead, unknown), after repeated and wrongtype", async () => {
    await populate();
    const dead = jobId(45);
    await enqueue(q, [dead]);
    await ok(["LREM", q.pending, "0", dead]);
    await ok(["ZADD", q.dead, "1", dead]);
    await ok(["HSET", q.row(dead), "state", "dead"]);
    const unknown = jobId(46);
    await refuses(
      argv("RUN", q, {}, [{ id: s }, { id: a }, { id: b }, { id: dead }, { id: unknown }]),
      refusal("not-scheduled", "RUN", { ids: [a, b, dead, unknown].join(" ") }),
    );
    await refuses(argv("RUN", q, {}, [{ id: a }, { id: s }, { id: a }]), refusal("repeated", "RUN", { id: a }));
    await refuses(argv("RUN", other, {}, [{ id: s }]), refusal("not-scheduled", "RUN", { ids: s }));
    // wrong Valkey types: meta, each derived key, the row of a named job (before not-scheduled)
    for (const key of [q.meta, q.schedule, q.pending, q.wake, q.row(s)]) {
      expectOk(await run(["FLUSHALL"]));
      await populate();
      await ok(["DEL", key]);
      await ok(["SET", key, "not-mine"]);
      await refuses(argv("RUN", q, {}, [{ id: s }, { id: a }]), WT);
    }
    expectOk(await run(["FLUSHALL"]));
    await populate();
    await ok(argv("RUN", q, {}, [{ id: s }]), 1);
  });

  test("wrong Valkey type of meta and of every key each verb derives", async () => {
    for (const verb of COVERED) {
      // the deduplication keys are opened only when a job of the call carries (or a settled one held)
      // a key, or, for CLAIM's dedup, when a window ended: tests/client/dedup.test.ts types them
      // a queue's pending and wake, by ACK and BURY only with a concurrency limit (typed below)
      const lazy = ["dedup", "dedup_ttl", ...(verb === "ACK" || verb === "BURY" ? ["pending", "wake"] : [])];
      const derived = (SPEC[verb].touches as readonly string[]).filter((t) => t !== "rows" && !lazy.includes(t));
      for (const key of [q.meta, ...derived.map((t) => `${q.base}${t}`)]) {
        expectOk(await run(["FLUSHALL"]));
        await populate();
        await ok(["DEL", key]);
        await ok(["SET", key, "not-mine"]);
        await refuses(good(verb), WT);
      }
    }
    // on a queue that took a deduplication key (meta's dedup), CLAIM types dedup_ttl
    expectOk(await run(["FLUSHALL"]));
    await populate();
    await ok(["HSET", q.meta, "dedup", "1"]);
    await ok(["SET", q.dedup_ttl, "not-mine"]);
    await refuses(good("CLAIM"), WT);
    // with a concurrency limit, a settle frees a slot: it types pending and wake, which it may wake
    for (const verb of ["ACK", "RETRY", "BURY", "RELEASE"] as const) {
      for (const key of [q.pending, q.wake]) {
        expectOk(await run(["FLUSHALL"]));
        await populate();
        await ok(["HSET", q.meta, "concurrency", "5"]);
        await ok(["DEL", key]);
        await ok(["SET", key, "not-mine"]);
        await refuses(good(verb), WT);
      }
    }
    // the rows of the jobs a settle names
    for (const verb of ["ACK", "RETRY", "BURY", "EXTEND"] as const) {
      expectOk(await run(["FLUSHALL"]));
      await populate();
      await ok(["DEL", q.row(a)]);
      await ok(["SET", q.row(a), "x"]);
      await refuses(good(verb), WT);
    }
    // CLAIM: the first existing row from the tail is not a hash (the orphans before it stay)
    expectOk(await run(["FLUSHALL"]));
    await ok(["RPUSH", q.pending, jobId(5), jobId(6)]);
    await ok(["SET", q.row(jobId(5)), "x"]);
    await refuses(good("CLAIM"), WT);
    // CLAIM, PROMOTE, REAP: a due id whose row is not a hash
    expectOk(await run(["FLUSHALL"]));
    await ok(["ZADD", q.schedule, "1", jobId(5), "2", jobId(6)]);
    await ok(["ZADD", q.active, "1", jobId(7), "2", jobId(8)]);
    await ok(["SET", q.row(jobId(6)), "x"]);
    await ok(["SET", q.row(jobId(8)), "x"]);
    await refuses(good("PROMOTE"), WT);
    await refuses(good("REAP"), WT);
    await refuses(good("CLAIM"), WT);
    // an existing row with a pending of the wrong type: duplicate (the row is checked first)
    expectOk(await run(["FLUSHALL"]));
    await populate();
    await ok(["DEL", q.pending]);
    await ok(["SADD", q.pending, "x"]);
    await refuses(wellFormed("ENQUEUE", q, b), refusal("duplicate", "ENQUEUE", { id: b }));
    await refuses(wellFormed("ENQUEUE", q, jobId(44)), WT);
  });

  test("counters: attempts, tokens, enqueued, acked, retried, buried — not integers or > 18 digits", async () => {
    const COUNTER = refusal("counter", "CLAIM", {});
    const bad = ["many", "1.5", "", " 1", "1 ", "0x1", "1234567890123456789", "-1234567890123456789", "01", "-0"];
    // CLAIM: the claimed row's attempts
    for (const v of bad) {
      expectOk(await run(["FLUSHALL"]));
      await enqueue(q, [a]);
      await ok(["HSET", q.row(a), "attempts", v]);
      await refuses(good("CLAIM"), COUNTER);
    }
    // CLAIM: meta's tokens and claimed — only when something is claimed
    for (const field of ["tokens", "claimed"]) {
      for (const v of bad) {
        expectOk(await run(["FLUSHALL"]));
        await ok(["HSET", q.meta, field, v]);
        expect(await ok(good("CLAIM"))).toEqual([0]);
        await enqueue(q, [a]);
        await refuses(good("CLAIM"), COUNTER);
      }
    }
    // ENQUEUE, SCHEDULE: meta's enqueued
    for (const v of bad) {
      expectOk(await run(["FLUSHALL"]));
      await ok(["HSET", q.meta, "enqueued", v]);
      await refuses(good("ENQUEUE"), COUNTER);
      await refuses(good("SCHEDULE"), COUNTER);
    }
    // ACK, RETRY, BURY: their meta total (checked before lease-lost); EXTEND has none
    for (const [verb, field] of [["ACK", "acked"], ["RETRY", "retried"], ["BURY", "buried"]] as const) {
      for (const v of bad) {
        expectOk(await run(["FLUSHALL"]));
        await populate();
        await ok(["HSET", q.meta, field, v]);
        await refuses(good(verb), COUNTER);
        await refuses(wellFormed(verb, q, a, { token: 7 }), COUNTER);
      }
    }
    expectOk(await run(["FLUSHALL"]));
    await populate();
    await ok(["HSET", q.meta, "acked", "x", "retried", "x", "buried", "x"]);
    await ok(good("EXTEND"), 1);
    // 18 digits are an integer HINCRBY reads
    expectOk(await run(["FLUSHALL"]));
    await enqueue(q, [a]);
    await ok(["HSET", q.row(a), "attempts", "100000000000000000"]);
    await ok(["HSET", q.meta, "tokens", String(T)]);
    expect((await claim(q)).jobs.map((j) => [j.id, j.token])).toEqual([[a, TA]]);
    expect((await row(site.db, q.row(a))).attempts).toBe("100000000000000001");
  });

  test("steps run in order: shape, batch, layout, fence, gates (fixed, then each group), domain", async () => {
    await populate();
    // shape before layout
    await refuses(["EMQ.ACK", "2", "nope", a, "1", ""], refusal("arity", "ACK", {}));
    // layout before gates
    await refuses(["EMQ.ACK", "1", "nope", "bad", "x", ""], refusal("layout", "ACK", {}));
    // gates before domain: a stale job whose token also fails its gate
    await refuses(argv("ACK", q, {}, [{ id: b, token: "0" }]), refusal("positive", "ACK", { arg: "token" }));
    // fixed before groups
    await refuses(argv("EXTEND", q, { lease_ms: "0" }, [{ id: "bad", token: "0" }]), refusal("positive", "EXTEND", { arg: "lease_ms" }));
    // group by group; in a group, argument order
    await refuses(argv("ACK", q, {}, [{ id: a, token: "x" }, { id: "bad", token: "1" }]), refusal("positive", "ACK", { arg: "token" }));
    await refuses(argv("ACK", q, {}, [{ id: a, token: "1" }, { id: "bad", token: "x" }]), refusal("job-id", "ACK", {}));
    await refuses(
      argv("RETRY", q, {}, [{ id: a, token: 1, delay_ms: 1, reason: "r".repeat(5000) }, { id: "bad", token: 1, delay_ms: 1, reason: "" }]),
      refusal("reason", "RETRY", { limit: String(MAX_REASON_BYTES) }),
    );
    await ok(["SET", "{emq}:version", "4"]);
    try {
      // layout before fence
      await refuses(["EMQ.ACK", "1", "nope", a, "1", ""], refusal("layout", "ACK", {}));
      // fence before gates
      await refuses(argv("ACK", q, {}, [{ id: "bad", token: "1" }]), refusal("fenced", "ACK", { found: "4" }));
      // batch before the fence
      const groups = Array.from({ length: MAX_BATCH + 1 }, (_, i) => ({ id: jobId(i), token: 1 }));
      await refuses(argv("ACK", q, {}, groups), refusal("batch", "ACK", { max: String(MAX_BATCH) }));
    } finally {
      await ok(["DEL", "{emq}:version"]);
    }
  });
});

describe("fence", () => {
  const q = queue("fenced");
  const id = jobId(1);

  /** A call of `verb` that would succeed unfenced (given the state set up below). */
  const callOf = (verb: VerbName): string[] => wellFormed(verb, q, verb === "ENQUEUE" || verb === "SCHEDULE" ? jobId(2) : id, { token: HELD });
  /** The held job's token: meta's `tokens` is set above the clock's floor before its claim. */
  const HELD = 9_000_000_000_000_001;

  async function setup(): Promise<void> {
    await enqueue(q, [id]);
    await ok(["HSET", q.meta, "tokens", String(HELD - 1)]);
    await claim(q);
  }

  async function everyVerbFenced(found: string): Promise<void> {
    for (const verb of LIVE) {
      const before = await digest(site.db);
      expectRefused(await run(callOf(verb)), refusal("fenced", verb, { found }));
      expect(await digest(site.db)).toBe(before);
    }
  }

  test("{emq}:version = 4 refuses every verb and writes nothing", async () => {
    await setup();
    await ok(["SET", "{emq}:version", "4"]);
    await everyVerbFenced("4");
  });

  test("a value that is not a number (1-15 digits) is `unknown`, never its bytes", async () => {
    await setup();
    for (const v of ["5-beta", "wire 4", "4\r\nINJECTED", " 5", "5 ", "", "1234567890123456", "\u00ff", "-4"]) {
      await ok(["SET", "{emq}:version", v]);
      await everyVerbFenced("unknown");
    }
    await ok(["SET", "{emq}:version", "0004"]);
    await everyVerbFenced("0004");
  });

  test("CONFIG SET emq.wire 4 (or the next wire) refuses every verb and writes nothing", async () => {
    await setup();
    for (const w of ["4", String(WIRE + 1)]) {
      await ok(["CONFIG", "SET", "emq.wire", w]);
      try {
        await everyVerbFenced(w);
      } finally {
        await ok(["CONFIG", "SET", "emq.wire", String(WIRE)]);
      }
    }
  });

  test("{emq}:version = the wire, absent, or not a string: unfenced", async () => {
    await setup();
    await ok(["SET", "{emq}:version", String(WIRE)]);
    await ok(callOf("ENQUEUE"), 1);
    await ok(["DEL", "{emq}:version"]);
    await ok(callOf("PROMOTE"), 0);
    await ok(["HSET", "{emq}:version", "wire", "4"]);
    await ok(callOf("ACK"), 1);
  });
});

describe("registration", () => {
  test("the module registers every verb of the spec (lib/wire)", () => {
    expect(LIVE).toEqual([...VERBS]);
  });

  test("configs, flags (deny-oom for admissions only), key specs and ACL categories", async () => {
    const cfg = JSON.stringify(await ok(["CONFIG", "GET", "emq.*"]));
    expect(cfg).toContain("emq.wire");
    expect(cfg).toContain("emq.max-payload");
    expect(JSON.stringify(await ok(["CONFIG", "GET", "emq.wire"]))).toContain(`"${WIRE}"`);
    for (const verb of LIVE) {
      const info = (await ok(["COMMAND", "INFO", `emq.${verb.toLowerCase()}`])) as unknown[][];
      const [name, arity, flags, , , , categories] = info[0]!;
      expect(name).toBe(`emq.${verb.toLowerCase()}`);
      expect(arity).toBe(-2);
      expect((flags as string[]).includes("denyoom")).toBe(SPEC[verb].admits);
      expect(flags).toEqual(expect.arrayContaining(["write", "movablekeys"]));
      expect(categories).toEqual(expect.arrayContaining(["@emq", "@write"]));
      const flat = JSON.stringify(info);
      expect(flat).toContain("keynum");
      expect(flat).toContain('"keynumidx","value":0');
    }
  });

  test("COMMAND GETKEYS: only meta, for one group and for a batch", async () => {
    const q = queue("orders");
    for (const verb of LIVE) {
      const one = wellFormed(verb, q, jobId(1));
      const batch = argv(verb, q, {}, [{ id: jobId(1) }, { id: jobId(2) }, { id: jobId(3) }]);
      for (const args of [one, batch]) expect(await ok(["COMMAND", "GETKEYS", ...args])).toEqual([q.meta]);
    }
  });
});

describe("the blocking CLAIM", () => {
  const q = queue("waits");
  let waiter: GlideClient;

  beforeAll(async () => {
    waiter = await standalone(site.server.port, undefined, 60_000);
  });
  afterAll(() => waiter?.close());

  /** Waits until `n` clients are blocked on the server. */
  async function blocked(n: number): Promise<void> {
    const until = Date.now() + 10_000;
    for (;;) {
      const info = String(await ok(["INFO", "clients"]));
      if (Number(/blocked_clients:(\d+)/.exec(info)?.[1]) >= n) return;
      if (Date.now() > until) throw new Error(`no blocked client after 10 s: ${info}`);
      await sleep(10);
    }
  }

  const waiting = (block_ms: number, count = 1): string[] => argv("CLAIM", q, { lease_ms: 60_000, count, block_ms });

  test("waits with nothing ready and is woken by an ENQUEUE from another client", async () => {
    const t0 = Date.now();
    const reply = call(waiter, waiting(30_000, 5));
    await blocked(1);
    await enqueue(q, [jobId(1), jobId(2)]);
    const got = claimed(expectOk(await reply));
    expect(got.jobs.map((j) => j.id)).toEqual([jobId(1), jobId(2)]);
    expectTokenRun(got.jobs.map((j) => j.token), t0);
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(await exists(q.pending)).toBe(0);
    expect((await row(site.db, q.row(jobId(1)))).state).toBe("active");
  });

  test("times out with [0] when nothing comes", async () => {
    const t0 = Date.now();
    expect(expectOk(await call(waiter, waiting(300)))).toEqual([0]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(await exists(q.meta, q.pending, q.active)).toBe(0);
  });

  test("answers at once inside MULTI/EXEC", async () => {
    const t0 = Date.now();
    const tx = new Batch(true).customCommand(waiting(60_000)).customCommand(["PING"]);
    expect(await site.db.exec(tx, true)).toEqual([[0], "PONG"]);
    expect(Date.now() - t0).toBeLessThan(9_000);
  });

  test("answers at once inside EVAL (scripts deny blocking)", async () => {
    const t0 = Date.now();
    const lua = "return redis.call('EMQ.CLAIM', '1', KEYS[1], ARGV[1], ARGV[2], ARGV[3])";
    const [, , , ...args] = waiting(60_000);
    expect(await ok(["EVAL", lua, "1", q.meta, ...args])).toEqual([0]);
    expect(Date.now() - t0).toBeLessThan(9_000);
  });

  test("a SCHEDULE due soon wakes a waiting claim early (next_ms or the job)", async () => {
    const t0 = Date.now();
    const reply = call(waiter, waiting(12_000));
    await blocked(1);
    const due = Date.now() + 500;
    await schedule(q, [[jobId(3), due]]);
    const got = claimed(expectOk(await reply));
    if (got.jobs.length === 0) expect(got.nextMs).toBe(due);
    else expect(got.jobs.map((j) => j.id)).toEqual([jobId(3)]);
    expect(Date.now() - t0).toBeLessThan(8_000);
  });

  test("a RETRY due soon wakes a waiting claim early (next_ms or the job)", async () => {
    await enqueue(q, [jobId(4)]);
    const { jobs } = await claim(q, 1, 3_600_000);
    const t0 = Date.now();
    const reply = call(waiter, waiting(12_000));
    await blocked(1);
    await ok(argv("RETRY", q, {}, held(jobs, { delay_ms: 500, reason: "soon" })), 1);
    const due = Number((await row(site.db, q.row(jobId(4)))).due_ms);
    const got = claimed(expectOk(await reply));
    if (got.jobs.length === 0) expect(got.nextMs).toBe(due);
    else expect(got.jobs.map((j) => j.id)).toEqual([jobId(4)]);
    expect(Date.now() - t0).toBeLessThan(8_000);
  });

  test("a RUN of a job scheduled in an hour hands it to a waiting claim at once", async () => {
    await schedule(q, [[jobId(5), Date.now() + 3_600_000]]);
    const t0 = Date.now();
    const reply = call(waiter, waiting(12_000));
    await blocked(1);
    await ok(argv("RUN", q, {}, [{ id: jobId(5) }]), 1);
    expect(claimed(expectOk(await reply)).jobs.map((j) => j.id)).toEqual([jobId(5)]);
    expect(Date.now() - t0).toBeLessThan(8_000);
  });
});

describe("memory: under maxmemory with noeviction", () => {
  const q = queue("full");
  const lua = queue("full-lua");
  const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

  test("ENQUEUE/SCHEDULE/PROGRESS are refused, nothing written; CLAIM, ACK, RETRY, BURY, RELEASE, EXTEND, PROMOTE, REAP still work (module and scripts)", async () => {
    const sha: Record<string, string> = {};
    for (const verb of [...COVERED, "PROGRESS" as const]) sha[verb] = String(await ok(["SCRIPT", "LOAD", SCRIPTS[verb]]));
    const evalsha = (args: string[]): string[] => ["EVALSHA", sha[args[0]!.slice(4)]!, ...args.slice(1)];
    // state for every verb, on a queue per backend
    const prepared: Record<string, ClaimedJob[]> = {};
    for (const k of [q, lua]) {
      await enqueue(k, Array.from({ length: 6 }, (_, i) => jobId(i + 1)));
      prepared[k.name] = (await claim(k, 4)).jobs;
      await claim(k, 1, 1); // runs out: something to reap
      await schedule(k, [[jobId(20), 1]]);
    }
    await sleep(10);
    await ok(["CONFIG", "SET", "maxmemory-policy", "noeviction"]);
    const used = Number(/used_memory:(\d+)/.exec(String(await ok(["INFO", "memory"])))![1]);
    await ok(["CONFIG", "SET", "maxmemory", String(Math.max(1, Math.floor(used / 2)))]);
    try {
      for (const [k, send] of [[q, (a: string[]) => a], [lua, evalsha]] as const) {
        await refuses(send(wellFormed("ENQUEUE", k, jobId(30))), OOM);
        await refuses(send(wellFormed("SCHEDULE", k, jobId(30))), OOM);
        await refuses(send(argv("ENQUEUE", k, {}, [{ id: jobId(31) }, { id: jobId(32) }])), OOM);
        const [j1, j2, j3, j4] = prepared[k.name]!;
        const before = String(await ok(["DEBUG", "DIGEST"]));
        await refuses(send(argv("PROGRESS", k, {}, held([j4!], { value: "{}" }))), OOM);
        expect(String(await ok(["DEBUG", "DIGEST"]))).toBe(before);
        expect(claimed(expectOk(await run(send(argv("CLAIM", k, { lease_ms: 60_000, count: 1, block_ms: 0 }))))).jobs.length).toBe(1);
        expectOk(await run(send(argv("EXTEND", k, { lease_ms: 60_000 }, held([j4!])))), 1);
        expectOk(await run(send(argv("ACK", k, {}, held([j1!])))), 1);
        expectOk(await run(send(argv("RETRY", k, {}, held([j2!], { delay_ms: 60_000, reason: "r" })))), 1);
        expectOk(await run(send(argv("BURY", k, {}, held([j3!], { reason: "r" })))), 1);
        expectOk(await run(send(argv("RELEASE", k, {}, held([j4!])))), 1);
        expectOk(await run(send(wellFormed("PROMOTE", k, jobId(1)))));
        expectOk(await run(send(wellFormed("REAP", k, jobId(1)))));
      }
    } finally {
      await ok(["CONFIG", "SET", "maxmemory", "0"]);
    }
    await ok(wellFormed("ENQUEUE", q, jobId(30)), 1);
  });
});

describe("a scheduler's job options", () => {
  const q = queue("tenants");
  const sched = `${q.base}scheduler:nightly`;
  const upsert = (opts: string, next_ms = 1000): string[] =>
    argv("SCHEDULER", q, { name: "nightly", spec: "every 100", next_ms, max_missed: 5, opts, payload: "pay" });

  test("SCHEDULER refuses a bad opts text as ENQUEUE does, writing nothing; an empty one deletes the field", async () => {
    await ok(upsert("lane=t1"), 1000);
    const cases: Array<[string, string]> = [
      ["group=x", refusal("option-unknown", "SCHEDULER", { option: "group" })],
      ["lane", refusal("option-form", "SCHEDULER", {})],
      ["lane=a}b", refusal("name", "SCHEDULER", { arg: "lane", max: "1024" })],
      ["priority=2097152", refusal("too-large", "SCHEDULER", { arg: "priority", max: "2097151" })],
      ["debounce=1", refusal("option-needs", "SCHEDULER", { option: "debounce", needs: "dedup" })],
      ["x".repeat(4097), refusal("options", "SCHEDULER", { limit: "4096" })],
    ];
    for (const [opts, text] of cases) {
      await refuses(upsert(opts), text);
      // a new scheduler is refused as well: no hash, no index entry
      await refuses(argv("SCHEDULER", q, { name: "fresh", opts }), text);
    }
    expect(await row(site.db, sched)).toMatchObject({ opts: "lane=t1" });
    await ok(upsert(""), 1000);
    expect(await row(site.db, sched)).not.toHaveProperty("opts");
  });

  test("TICK admits with the stored options: row fields, the lane's ready list, the laned transition", async () => {
    await ok(upsert("lane=t1\0priority=2\0timeout_ms=500"), 1000);
    await ok(argv("TICK", q, { name: "nightly", expected_ms: 1000, next_ms: 1100 }, [{ id: jobId(1), tick_ms: 1000 }]), 1);
    expect(await row(site.db, q.row(jobId(1)))).toMatchObject({
      state: "pending",
      lane: "t1",
      priority: "2",
      opts: "lane=t1\0priority=2\0timeout_ms=500",
      payload: "pay",
      scheduler: "nightly",
      tick_ms: "1000",
    });
    expect(await lrange(`${q.base}ready:2:t1`)).toEqual([jobId(1)]);
    expect(await row(site.db, q.meta)).toHaveProperty("laned");
    const { jobs } = await claim(q);
    expect(jobs.map((j) => [j.id, j.opts])).toEqual([[jobId(1), "lane=t1\0priority=2\0timeout_ms=500"]]);
    // a hand-edited text the gate refuses is ignored: the job carries no option
    await ok(["HSET", sched, "opts", "lane=a{b"]);
    await ok(argv("TICK", q, { name: "nightly", expected_ms: 1100, next_ms: 1200 }, [{ id: jobId(2), tick_ms: 1100 }]), 1);
    const r = await row(site.db, q.row(jobId(2)));
    for (const f of ["lane", "priority", "opts"]) expect(r).not.toHaveProperty(f);
    // dedup: the run whose key is held admits nothing; runs and last_ms count the admitted
    await ok(upsert("dedup=nightly"), 1200);
    await ok(argv("TICK", q, { name: "nightly", expected_ms: 1200, next_ms: 1300 }, [{ id: jobId(3), tick_ms: 1200 }]), 1);
    await ok(argv("TICK", q, { name: "nightly", expected_ms: 1300, next_ms: 1400 }, [{ id: jobId(4), tick_ms: 1300 }]), 0);
    expect(await exists(q.row(jobId(4)))).toBe(0);
    expect(await row(site.db, sched)).toMatchObject({ runs: "3", last_ms: "1200", next_ms: "1400" });
  });
});

describe("SETTLE", () => {
  const q = queue("orders");
  const twin = queue("twin");
  const WT = refusal("wrongtype", "SETTLE", {});

  /** One settlement: op (0 ack, 1 retry, 2 bury, 3 release) of job `j` held (or `token` given). */
  const settlement = (op: number, j: ClaimedJob, extra: Values = {}): Values => ({
    op,
    id: j.id,
    token: j.token,
    delay_ms: 0,
    reason: "",
    result: "",
    ...extra,
  });

  /** SETTLE's reply: `[next_ms, [status…], job…]`, checked for its shape. */
  async function settle(
    on: QueueKeys,
    groups: Values[],
    want = 0,
    lease_ms = 60_000,
  ): Promise<{ nextMs: number; statuses: number[]; jobs: ClaimedJob[] }> {
    const reply = expectOk(await run(argv("SETTLE", on, { lease_ms, want }, groups))) as unknown[];
    expect(Array.isArray(reply) && Array.isArray(reply[1])).toBe(true);
    const { nextMs, jobs } = claimed([reply[0], ...reply.slice(2)]);
    return { nextMs, statuses: (reply[1] as unknown[]).map(Number), jobs };
  }

  /** CLAIM of `count` on queue `on`, no wait. */
  const claimOn = async (on: QueueKeys, count: number): Promise<ClaimedJob[]> =>
    claimed(expectOk(await run(argv("CLAIM", on, { lease_ms: 60_000, count, block_ms: 0 })))).jobs;

  /** Fields that hold a time or a token: equal in shape only between two queues. */
  const TIMED = new Set(["created_ms", "finished_ms", "due_ms", "buried_ms", "deadline_ms", "token", "tokens"]);
  const untimed = (r: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, TIMED.has(k) ? "t" : v]));

  /** A queue's state with times and tokens blanked: rows of `ids`, its sets (members in order), lists, meta, event types. */
  async function state(on: QueueKeys, ids: string[]): Promise<unknown> {
    const rows: Record<string, Record<string, string>> = {};
    for (const id of ids) rows[id] = untimed(await row(site.db, on.row(id)));
    const sets: Record<string, string[]> = {};
    for (const k of ["active", "schedule", "dead", "completed", "wake", "dedup_ttl"] as const) {
      sets[k] = ((await ok(["ZRANGE", on[k], "0", "-1"])) as unknown[]).map(String);
    }
    const xrange = await command(site.server.port, ["XRANGE", on.events, "-", "+"]);
    const types = (Array.isArray(xrange) ? xrange : []).map((e) => {
      const fields = (e as [unknown, unknown[]])[1].map(String);
      const pairs: string[] = [];
      for (let i = 0; i + 1 < fields.length; i += 2) {
        pairs.push(`${fields[i]}=${fields[i] === "until" || fields[i]!.endsWith("_ms") ? "t" : fields[i + 1]}`);
      }
      return pairs.join(" ");
    });
    return {
      rows,
      sets,
      pending: await lrange(on.pending),
      meta: untimed(await row(site.db, on.meta)),
      dedup: await row(site.db, `${on.base}dedup`),
      events: types,
    };
  }

  test("statuses: 1 held, 0 not held (stale token, not active, missing row, row of another type), 2 named before", async () => {
    const [a, b, c, x, y] = [jobId(1), jobId(2), jobId(3), jobId(4), jobId(5)];
    await enqueue(q, [a, b, c]);
    const jobs = await claim(q, 2).then((r) => r.jobs);
    expect(jobs.map((j) => j.id)).toEqual([a, b]);
    await ok(["SET", q.row(y), "not a row"]);
    const cJob: ClaimedJob = { id: c, payload: "", attempts: 0, token: jobs[1]!.token, opts: "" };
    const out = await settle(q, [
      settlement(0, jobs[0]!, { result: "done" }),
      settlement(1, jobs[0]!), // repeated, whatever the op
      settlement(0, { ...jobs[1]!, token: jobs[1]!.token + 1000 }), // stale token
      settlement(0, cJob), // pending, not active
      settlement(2, { ...jobs[1]!, id: x }), // no row
      settlement(3, { ...jobs[1]!, id: y }), // a string, no refusal
      settlement(3, { ...jobs[1]!, token: jobs[1]!.token + 1000 }), // b again: 2
    ]);
    expect(out).toEqual({ nextMs: 0, statuses: [1, 2, 0, 0, 0, 0, 2], jobs: [] });
    expect(await row(site.db, q.row(a))).toMatchObject({ state: "completed", result: "done" });
    expect(await row(site.db, q.row(b))).toMatchObject({ state: "active", attempts: "1" });
    expect(await lrange(q.pending)).toEqual([c]);
    expect(Object.keys(await zset(q.active))).toEqual([b]);
    expect((await row(site.db, q.meta)).acked).toBe("1");
    expect(await ok(["GET", q.row(y)])).toBe("not a row");
    // nothing held: nothing written (want 0)
    const before = await digest(site.db);
    expect(await settle(q, [settlement(0, { ...jobs[1]!, token: 1 })])).toEqual({ nextMs: 0, statuses: [0], jobs: [] });
    expect(await digest(site.db)).toBe(before);
  });

  test("every op as its verb: mixed settlements in one call equal ACK, RETRY, BURY, RELEASE called in that order", async () => {
    const ids = Array.from({ length: 10 }, (_, i) => jobId(100 + i));
    const opts = (i: number) => (i === 0 || i === 2 ? `dedup=k${i}` : "");
    for (const on of [q, twin]) {
      await ok(argv("ENQUEUE", on, {}, ids.map((id, i) => ({ id, payload: `p-${id}`, opts: opts(i) }))), [ids.length]);
      await ok(["HSET", on.meta, "concurrency", "20"]);
    }
    const mine = await claimOn(q, 8);
    const theirs = await claimOn(twin, 8);
    expect(mine.map((j) => j.id)).toEqual(theirs.map((j) => j.id));
    // op per claimed job, in argument order: ack, retry (later), bury, release, ack, retry (now), release, bury
    const plan: Array<[number, Values]> = [
      [0, { result: "r0" }],
      [1, { delay_ms: 60_000, reason: "later" }],
      [2, { reason: "dead0" }],
      [3, {}],
      [0, { result: "" }],
      [1, { delay_ms: 0, reason: "now" }],
      [3, {}],
      [2, { reason: "dead1" }],
    ];
    const out = await settle(q, plan.map(([op, extra], i) => settlement(op, mine[i]!, extra)));
    expect(out).toEqual({ nextMs: 0, statuses: plan.map(() => 1), jobs: [] });
    const of = (op: number) => plan.flatMap(([o, extra], i) => (o === op ? [{ ...extra, id: theirs[i]!.id, token: theirs[i]!.token }] : []));
    await ok(argv("ACK", twin, {}, of(0)), 2);
    await ok(argv("RETRY", twin, {}, of(1)), 2);
    await ok(argv("BURY", twin, {}, of(2)), 2);
    await ok(argv("RELEASE", twin, {}, of(3)), 2);
    const mineState = await state(q, ids);
    expect(mineState).toEqual(await state(twin, ids));
    // and what that is: the rows' states, the lists and sets, meta's counters, the events
    const m = mineState as { rows: Record<string, Record<string, string>>; pending: string[]; meta: Record<string, string>; events: string[] };
    expect(ids.slice(0, 8).map((id) => m.rows[id]!.state)).toEqual([
      "completed",
      "scheduled",
      "dead",
      "pending",
      "completed",
      "pending",
      "pending",
      "dead",
    ]);
    expect(m.pending).toEqual([mine[5]!.id, ids[9], ids[8], mine[3]!.id, mine[6]!.id]);
    expect(m.meta).toMatchObject({ acked: "2", retried: "2", buried: "2", claimed: "8" });
    expect(m.events.map((e) => e.split(" ")[0])).toEqual([
      "type=enqueued",
      "type=claimed",
      "type=completed",
      "type=retried",
      "type=retried",
      "type=dead",
      "type=dead",
      "type=released",
    ]);
  });

  test("want 0 claims nothing (no upkeep); want > 0 claims after the settlements: a retried-now and a released job come back", async () => {
    const [a, b, c, d] = [jobId(1), jobId(2), jobId(3), jobId(4)];
    await enqueue(q, [a, b, c]);
    const [ja, jb] = await claimOn(q, 2);
    await schedule(q, [[d, 1]]); // due: only a claim's upkeep promotes it
    const t0 = Date.now();
    const none = await settle(q, [settlement(0, { ...jb!, token: 1 })], 0);
    expect(none).toEqual({ nextMs: 0, statuses: [0], jobs: [] });
    expect(await lrange(q.pending)).toEqual([c]);
    expect(Object.keys(await zset(q.schedule))).toEqual([d]);
    const out = await settle(q, [settlement(1, ja!, { delay_ms: 0, reason: "again" }), settlement(3, jb!)], 10, 30_000);
    expect(out.statuses).toEqual([1, 1]);
    // after the settlements pending is [a, c, b] (retry: head; release: tail), then the upkeep puts d
    // at the head; the claim pops the tail: b, c, a, d
    expect(out.jobs.map((j) => [j.id, j.payload, j.attempts, j.opts])).toEqual([
      [b, `p-${b}`, 1, ""],
      [c, `p-${c}`, 1, ""],
      [a, `p-${a}`, 2, ""],
      [d, `p-${d}`, 1, ""],
    ]);
    expect(out.jobs.map((j) => j.token)).toEqual(out.jobs.map((_, i) => out.jobs[0]!.token + i));
    expect(out.jobs[0]!.token).toBeGreaterThan(jb!.token);
    expect(Math.abs(out.nextMs - (t0 + 30_000))).toBeLessThan(5000);
    expect(Object.keys(await zset(q.active)).sort()).toEqual([a, b, c, d].sort());
    expect(await exists(q.pending, q.schedule)).toBe(0);
    expect(await row(site.db, q.meta)).toMatchObject({ retried: "1", claimed: "6" });
    // the tokens the reply names hold the jobs: a SETTLE of them all applies
    const again = await settle(q, out.jobs.map((j) => settlement(0, j)), 1);
    expect(again).toEqual({ nextMs: 0, statuses: [1, 1, 1, 1], jobs: [] });
    expect(await exists(q.active)).toBe(0);
  });

  test("a refusal of any part comes before any write: nothing written, DEBUG DIGEST unchanged", async () => {
    const ids = [jobId(1), jobId(2), jobId(3)];
    await enqueue(q, ids);
    const jobs = await claimOn(q, 3);
    // RETRY's part meets `schedule` a string (the ACK part before it passed its checks)
    await ok(["SET", q.schedule, "x"]);
    await refuses(
      argv("SETTLE", q, { lease_ms: 1000, want: 3 }, [
        settlement(0, jobs[0]!),
        settlement(1, jobs[1]!, { delay_ms: 5000, reason: "r" }),
        settlement(3, jobs[2]!),
      ]),
      WT,
    );
    // no retry: the same call without it is applied
    await ok(["DEL", q.schedule]);
    // ACK's part meets `completed` a string, after a release part would have passed
    await ok(["SET", q.completed, "x"]);
    await refuses(argv("SETTLE", q, { lease_ms: 1000, want: 0 }, [settlement(3, jobs[2]!), settlement(0, jobs[0]!)]), WT);
    await ok(["DEL", q.completed]);
    // meta, then active, are checked first (even with nothing held)
    await ok(["SET", q.active, "x"]);
    await refuses(argv("SETTLE", q, { lease_ms: 1000, want: 0 }, [settlement(0, { ...jobs[0]!, token: 1 })]), WT);
    await ok(["DEL", q.active]);
    // a counter of a part: BURY's `buried`
    await ok(["ZADD", q.active, "1", ids[0]!, "1", ids[1]!, "1", ids[2]!]);
    await ok(["HSET", q.meta, "buried", "x"]);
    await refuses(
      argv("SETTLE", q, { lease_ms: 1000, want: 1 }, [settlement(0, jobs[0]!), settlement(2, jobs[1]!, { reason: "r" })]),
      refusal("counter", "SETTLE", {}),
    );
  });

  test("a refused claim part: the settlements stand, no job, next_ms 0; the next CLAIM meets the refusal", async () => {
    const [a, b] = [jobId(1), jobId(2)];
    await enqueue(q, [a, b]);
    const [ja] = await claimOn(q, 1);
    // ACK touches active, completed, rows, meta, events: `dead` is CLAIM's alone
    await ok(["SET", q.dead, "x"]);
    const out = await settle(q, [settlement(0, ja!, { result: "ok" })], 5);
    expect(out).toEqual({ nextMs: 0, statuses: [1], jobs: [] });
    expect(await row(site.db, q.row(a))).toMatchObject({ state: "completed", result: "ok" });
    expect(await exists(q.active)).toBe(0);
    expect(await lrange(q.pending)).toEqual([b]);
    expect((await row(site.db, q.meta)).acked).toBe("1");
    expect(await ok(["GET", q.dead])).toBe("x");
    expectRefused(await run(argv("CLAIM", q, { lease_ms: 1000, count: 1, block_ms: 0 })), refusal("wrongtype", "CLAIM", {}));
  });

  test("a laned queue: settle and claim keep every lane's active count", async () => {
    let n = 200;
    const enqueueLane = async (lane: string, k: number) => {
      const groups = Array.from({ length: k }, (_, i) => ({ id: jobId(n++), opts: lane ? `lane=${lane}` : "", payload: `${lane}:${i}` }));
      await ok(argv("ENQUEUE", q, {}, groups), k);
    };
    await enqueueLane("a", 4);
    await enqueueLane("b", 4);
    await enqueueLane("", 2);
    const laneKey = (l: string) => `${q.base}lane:${l}`;
    /** Each lane's `active` equals its jobs in active. */
    const consistent = async () => {
      const active = Object.keys(await zset(q.active));
      for (const l of ["a", "b", ""]) {
        const mine = [];
        for (const id of active) if ((await row(site.db, q.row(id))).payload!.split(":")[0] === l) mine.push(id);
        const stored = await ok(["HGET", laneKey(l), "active"]);
        expect({ l, active: stored === null ? 0 : Number(stored) }).toEqual({ l, active: mine.length });
      }
    };
    let jobs = await claimOn(q, 4);
    await consistent();
    for (let round = 0; round < 4 && jobs.length > 0; round++) {
      const ops = jobs.map((j, i) => settlement((i + round) % 4, j, { delay_ms: 0, reason: "r" }));
      const out = await settle(q, ops, 3);
      expect(out.statuses).toEqual(jobs.map(() => 1));
      await consistent();
      jobs = out.jobs;
    }
    await ok(argv("LIMIT", q, { scope: 1, lane: "a", concurrency: 1, rate_max: 0 }), 1);
    const out = await settle(q, jobs.map((j) => settlement(3, j)), 10);
    await consistent();
    expect(out.jobs.filter((j) => j.payload.startsWith("a:")).length).toBeLessThanOrEqual(1);
  });
});
