/**
 * Effects replication: a mixed workload on a primary (every verb, batches, EXTEND, time-
 * reading verbs, orphans, refusals), a blocked CLAIM woken by an ENQUEUE (its writes happen in the
 * module's blocked-client callback), and CLAIMs that meet only orphan ids (ids in pending whose
 * row is gone: popped) leave the replica with the primary's DEBUG DIGEST — time fields included,
 * since the module replicates the values it wrote, not the commands it ran. An AOF replay rebuilds
 * the same keyspace.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { command, commandCalls, type ReplicatedHandle, startReplicated, startServer, waitForSync } from "../../tools/embedded/mod.ts";
import {
  argv,
  call,
  claimed,
  type ClaimedJob,
  digest,
  expectOk,
  held,
  jobId,
  type Outcome,
  queue,
  type QueueKeys,
  refusal,
  requireModule,
  sleep,
  standalone,
  type Values,
  wellFormed,
} from "./_native.ts";

let pair: ReplicatedHandle;
let primary: GlideClient;
let waiter: GlideClient; // a connection of its own for blocking CLAIMs

beforeAll(async () => {
  pair = await startReplicated({ module: requireModule() });
  primary = await standalone(pair.primary.port);
  waiter = await standalone(pair.primary.port, undefined, 60_000);
}, 60_000);

afterAll(async () => {
  waiter?.close();
  primary?.close();
  await pair?.stop();
});

/** The replica is read over a plain RESP connection (glide's standalone client wants a primary). */
async function onReplica(args: string[]): Promise<unknown> {
  return await command(pair.replica.port, args);
}

/** Per-key digests of one server, for a readable diff when the whole digests differ. */
async function keyDigests(read: (args: string[]) => Promise<unknown>): Promise<Record<string, string>> {
  const keys = ((await read(["KEYS", "*"])) as unknown[]).map(String).sort();
  const out: Record<string, string> = {};
  for (const k of keys) out[k] = String(await read(["DEBUG", "DIGEST-VALUE", k]));
  return out;
}

/** Waits for the replica, then asserts its digest is the primary's (and not an empty keyspace's). */
async function sameDigest(): Promise<void> {
  expectOk(await call(primary, ["WAIT", "1", "5000"]));
  await waitForSync(pair.primary.port, pair.replica.port);
  const [dp, dr] = [await digest(primary), String(await onReplica(["DEBUG", "DIGEST"]))];
  if (dp !== dr) {
    const onPrimary = async (args: string[]) => expectOk(await call(primary, args));
    expect(await keyDigests(onReplica)).toEqual(await keyDigests(onPrimary));
  }
  expect(dr).toBe(dp);
  expect(dp).not.toBe("0".repeat(40));
}

/** Waits until `n` clients are blocked on the primary. */
async function blocked(n: number): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const info = String(expectOk(await call(primary, ["INFO", "clients"])));
    if (Number(/blocked_clients:(\d+)/.exec(info)?.[1]) >= n) return;
    if (Date.now() > until) throw new Error(`no blocked client after 10 s: ${info}`);
    await sleep(10);
  }
}

const run = (args: string[]): Promise<Outcome> => call(primary, args);

test("a mixed workload (batches, EXTEND, orphans, refusals) leaves primary and replica with equal digests", async () => {
  const queues = ["alpha", "beta", "gamma:high"].map(queue);
  let n = 0;
  for (let round = 0; round < 3; round++) {
    for (const q of queues) {
      const ids = Array.from({ length: 30 }, () => jobId(++n));
      // a batch of enqueues and one of schedules (due now, and in a minute)
      const now = ids.filter((_, i) => i % 3 !== 0);
      const later = ids.filter((_, i) => i % 3 === 0);
      expectOk(await run(argv("ENQUEUE", q, {}, now.map((id, i) => ({ id, payload: JSON.stringify({ i, round }) })))), now.length);
      expectOk(
        await run(argv("SCHEDULE", q, {}, later.map((id, i) => ({ id, due_ms: i % 2 ? 1 : Date.now() + 60_000, payload: `s${i}` })))),
        later.length,
      );
      // the ones due in a minute run now (RUN: schedule → pending, due_ms now), one refused whole first
      const far = later.filter((_, i) => i % 2 === 0);
      expect(await run(argv("RUN", q, {}, [{ id: far[0]! }, { id: now[0]! }]))).toEqual({
        err: refusal("not-scheduled", "RUN", { ids: now[0]! }),
      });
      expectOk(await run(argv("RUN", q, {}, far.map((id) => ({ id })))), far.length);
      // orphans on the tail: CLAIM drops them
      expectOk(await run(["RPUSH", q.pending, jobId(900_000 + n), jobId(900_500 + n)]));
      expectOk(await run(wellFormed("PROMOTE", q, ids[0]!, { limit: 3 })));
      const claimedJobs: ClaimedJob[] = [];
      for (let i = 0; i < 5; i++) {
        claimedJobs.push(...claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 3, block_ms: 0 })))).jobs);
      }
      const short = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 1, count: 3, block_ms: 0 })))).jobs;
      const pick = (k: number) => claimedJobs.filter((_, i) => i % 5 === k);
      expectOk(await run(argv("ACK", q, {}, held(pick(1)))), pick(1).length);
      expectOk(
        await run(argv("RETRY", q, {}, held(pick(2), { delay_ms: 1, reason: `retry ${round}`, failure: `{"message":"retry ${round}"}` }))),
        pick(2).length,
      );
      expectOk(await run(argv("BURY", q, {}, held(pick(3), { reason: `bury ${round}`, failure: `{"message":"bury ${round}"}` }))), pick(3).length);
      expectOk(await run(argv("EXTEND", q, { lease_ms: 120_000 }, held(pick(0)))), pick(0).length);
      expectOk(await run(argv("LOG", q, {}, held(pick(0), { line: `log ${round}` }))), pick(0).length);
      // a hand-back, a retry ready now, a retention applied by RETAIN itself (wire 6)
      const [ready, ...handed] = pick(4);
      expectOk(await run(argv("RELEASE", q, {}, held(handed))), handed.length);
      expectOk(await run(argv("RETRY", q, {}, held([ready!], { delay_ms: 0, reason: "now" }))), 1);
      expectOk(await run(argv("RETAIN", q, { dead_max: 2, dead_age_ms: 0 })));
      // wire 7: deduplication (keys taken, folded, debounced into a waiting and a scheduled holder,
      // let go at ACK and REMOVE, a window kept past its job's settle and dropped by a later CLAIM)
      const d = Array.from({ length: 6 }, () => jobId(++n));
      expectOk(
        await run(argv("ENQUEUE", q, {}, [
          { id: d[0]!, opts: "dedup=k\0dedup_ms=3", payload: "d0" },
          { id: d[1]!, opts: "dedup=k\0debounce=1", payload: "d1" },
          { id: d[2]!, opts: "dedup=j\0timeout_ms=50", payload: "d2" },
        ])),
      );
      expectOk(
        await run(argv("SCHEDULE", q, {}, [
          { id: d[3]!, due_ms: Date.now() + 60_000, opts: "dedup=s", payload: "d3" },
          { id: d[4]!, due_ms: Date.now() + 90_000, opts: "dedup=s\0debounce=1", payload: "d4" },
        ])),
      );
      expectOk(await run(argv("REMOVE", q, { cleaned: 0 }, [{ id: d[3]! }])), 1);
      const dj = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 100, block_ms: 0 })))).jobs;
      const withKey = dj.filter((j) => j.opts.startsWith("dedup="));
      expectOk(await run(argv("ACK", q, {}, held(withKey))), withKey.length);
      await sleep(5);
      expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 })));
      // wire 8: priorities (levels made, walked, emptied; a release and a retry back to their level)
      const pr = Array.from({ length: 4 }, () => jobId(++n));
      expectOk(await run(argv("ENQUEUE", q, {}, pr.map((id, i) => ({ id, opts: `priority=${1 + (i % 2)}`, payload: "pr" })))), 4);
      const prj = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 200, block_ms: 0 })))).jobs;
      const mine = prj.filter((j) => pr.includes(j.id));
      expect(mine.length).toBe(4);
      expectOk(await run(argv("RELEASE", q, {}, held(mine.slice(0, 1)))), 1);
      expectOk(await run(argv("RETRY", q, {}, held(mine.slice(1, 2), { delay_ms: 0, reason: "p" }))), 1);
      expectOk(await run(argv("REMOVE", q, { cleaned: 0 }, [{ id: mine[0]!.id }])), 1);
      // wire 8: limits (a rate whose state CLAIM writes, a concurrency a settle frees, a park)
      const lim = Array.from({ length: 6 }, () => jobId(++n));
      expectOk(await run(argv("ENQUEUE", q, {}, lim.map((id) => ({ id, payload: "l" })))), lim.length);
      expectOk(await run(argv("LIMIT", q, { concurrency: 1000, rate_max: 5, rate_per_ms: 60_000, rate_burst: 3 })), 1);
      const limited = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 10, block_ms: 0 })))).jobs;
      expect(limited.length).toBe(3); // the burst
      expectOk(await run(argv("RELEASE", q, {}, held(limited))), limited.length);
      expectOk(await run(argv("PENALIZE", q, { penalty_ms: 2 })));
      expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 })));
      expectOk(await run(argv("LIMIT", q, { concurrency: 0, rate_max: 0, rate_per_ms: 1, rate_burst: 1 })), 1);
      await sleep(3);
      // refusals in the mix: they must not replicate anything
      expect(await run(wellFormed("ENQUEUE", q, ids[1]!))).toEqual({ err: refusal("duplicate", "ENQUEUE", { id: ids[1]! }) });
      const stale = pick(1)[0]!;
      expect(await run(argv("ACK", q, {}, held([stale])))).toEqual({ err: refusal("lease-lost", "ACK", { ids: stale.id }) });
      expect(await run(argv("EXTEND", q, { lease_ms: 5 }, held([pick(0)[0]!, pick(0)[0]!])))).toEqual({
        err: refusal("repeated", "EXTEND", { id: pick(0)[0]!.id }),
      });
      await sleep(5);
      // the short leases ran out: half reaped by REAP, the rest by CLAIM's upkeep
      expectOk(await run(wellFormed("REAP", q, ids[0]!, { limit: 1 })));
      expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 2, block_ms: 0 })));
      expectOk(await run(wellFormed("PROMOTE", q, ids[0]!, { limit: 100 })));
      expect(short.length).toBe(3);
    }
  }
  await sameDigest();
  // time fields made it across verbatim
  const someRow = ((await onReplica(["KEYS", "emq:{alpha}:job:*"])) as unknown[]).map(String)[0]!;
  for (const field of ["created_ms", "deadline_ms", "due_ms"]) {
    expect(await onReplica(["HGET", someRow, field])).toEqual(expectOk(await call(primary, ["HGET", someRow, field])));
  }
  expect(Number(await onReplica(["HGET", someRow, "created_ms"]))).toBeGreaterThan(1_600_000_000_000);
  for (const field of ["tokens", "claimed", "dead_max"]) {
    expect(await onReplica(["HGET", queue("alpha").meta, field])).toEqual(expectOk(await call(primary, ["HGET", queue("alpha").meta, field])));
  }
}, 120_000);

test("a blocked CLAIM woken by an ENQUEUE writes in the blocked-client callback: digests equal", async () => {
  const q = queue("woken");
  // an active job: the claim waits its whole block (next_ms is a minute away)
  expectOk(await run(wellFormed("ENQUEUE", q, jobId(1))), 1);
  expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 })));
  const reply = call(waiter, argv("CLAIM", q, { lease_ms: 60_000, count: 3, block_ms: 20_000 }));
  await blocked(1);
  expectOk(await run(argv("ENQUEUE", q, {}, [{ id: jobId(2) }, { id: jobId(3) }])), 2);
  const got = claimed(expectOk(await reply));
  expect(got.jobs.map((j) => j.id)).toEqual([jobId(2), jobId(3)]);
  expect(got.jobs[1]!.token).toBe(got.jobs[0]!.token + 1);
  await sameDigest();
  // and once more with a batch larger than the claim's count: pending is left non-empty (ready)
  const again = call(waiter, argv("CLAIM", q, { lease_ms: 60_000, count: 2, block_ms: 20_000 }));
  await blocked(1);
  expectOk(await run(argv("ENQUEUE", q, {}, [4, 5, 6].map((i) => ({ id: jobId(i) })))), 3);
  expect(claimed(expectOk(await again)).jobs.map((j) => j.id)).toEqual([jobId(4), jobId(5)]);
  await sameDigest();
}, 60_000);

test("CLAIMs that meet only orphan ids pop them: the replica ends with the same digest", async () => {
  const q = queue("orphans");
  expectOk(await run(wellFormed("ENQUEUE", q, jobId(1))), 1);
  expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 })));
  // a plain CLAIM: the orphans are popped, nothing is claimed
  expectOk(await run(["RPUSH", q.pending, jobId(50), jobId(51), jobId(52)]));
  expect(claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 5, block_ms: 0 })))).jobs).toEqual([]);
  expect(expectOk(await run(["EXISTS", q.pending]))).toBe(0);
  await sameDigest();
  // a CLAIM that meets only orphans and then waits: they are popped before it blocks
  expectOk(await run(["RPUSH", q.pending, jobId(53), jobId(54)]));
  const first = call(waiter, argv("CLAIM", q, { lease_ms: 60_000, count: 5, block_ms: 1_500 }));
  await blocked(1);
  expect(expectOk(await run(["EXISTS", q.pending]))).toBe(0);
  // orphans pushed while it waits wake it: the callback pops them and it keeps waiting
  expectOk(await run(["RPUSH", q.pending, jobId(55), jobId(56)]));
  await sleep(50);
  expect(expectOk(await run(["EXISTS", q.pending]))).toBe(0);
  expect(expectOk(await first)).toEqual([expect.any(Number)]);
  await sameDigest();
  // and a woken claim that pops orphans and claims the job behind them
  const second = call(waiter, argv("CLAIM", q, { lease_ms: 60_000, count: 5, block_ms: 20_000 }));
  await blocked(1);
  expectOk(await run(["RPUSH", q.pending, jobId(57)]));
  await sleep(50);
  expect(expectOk(await run(["EXISTS", q.pending]))).toBe(0);
  expectOk(await run(wellFormed("ENQUEUE", q, jobId(2))), 1);
  expect(claimed(expectOk(await second)).jobs.map((j) => j.id)).toEqual([jobId(2)]);
  expect(expectOk(await run(["EXISTS", q.pending]))).toBe(0);
  await sameDigest();
}, 60_000);

test("schedulers: SCHEDULER upserts, TICKs (fired, stale, skipped), UNSCHEDULE and refusals replicate as effects", async () => {
  const q = queue("sched");
  const t0 = Date.now();
  expectOk(await run(argv("SCHEDULER", q, { name: "a", spec: "every 100", next_ms: t0, max_missed: 3, payload: "pa" })), t0);
  expectOk(await run(argv("SCHEDULER", q, { name: "a", spec: "every 100", next_ms: t0 + 5, max_missed: 1, payload: "pb" })), t0);
  expectOk(await run(argv("SCHEDULER", q, { name: "b", spec: "cron * * * * *", next_ms: t0 + 60_000, max_missed: 1, payload: "x" })));
  expectOk(
    await run(argv("TICK", q, { name: "a", expected_ms: t0, next_ms: t0 + 300 }, [{ id: jobId(1), tick_ms: t0 + 100 }, { id: jobId(2), tick_ms: t0 + 200 }])),
    2,
  );
  expectOk(await run(argv("TICK", q, { name: "a", expected_ms: t0, next_ms: t0 + 300 }, [{ id: jobId(3), tick_ms: t0 }])), -1);
  expectOk(await run(argv("TICK", q, { name: "a", expected_ms: t0 + 300, next_ms: t0 + 400 })), 0);
  expect(await run(argv("TICK", q, { name: "a{", expected_ms: 1, next_ms: 2 }))).toEqual({
    err: refusal("name", "TICK", { arg: "name", max: "1024" }),
  });
  expectOk(await run(argv("UNSCHEDULE", q, { name: "b" })), 1);
  await sameDigest();
  expect(await onReplica(["HGET", `emq:{sched}:scheduler:a`, "last_ms"])).toBe(String(t0 + 200));
}, 60_000);

test("lanes: the transition, ring rotations and evictions, lane limits, parks and settles replicate as effects", async () => {
  const q = queue("laned");
  const enqueue = async (lane: string, n: number, from: number) => {
    const opts = lane === "" ? "" : `lane=${lane}`;
    const groups = Array.from({ length: n }, (_, i) => ({ id: jobId(from + i), opts, payload: `${lane}:${i}` }));
    expectOk(await run(argv("ENQUEUE", q, {}, groups)), n);
  };
  const claim = async (count: number, lease_ms = 60_000) => claimed(expectOk(await run(argv("CLAIM", q, { lease_ms, count, block_ms: 0 })))).jobs;
  await enqueue("", 2, 1);
  await enqueue("a", 3, 10);
  await enqueue("b", 3, 20);
  expectOk(await run(argv("LIMIT", q, { scope: 1, lane: "a", concurrency: 1, rate_max: 0 })), 1);
  expectOk(await run(argv("LIMIT", q, { scope: 1, lane: "b", concurrency: 0, rate_max: 1, rate_per_ms: 60_000, rate_burst: 1 })), 1);
  expectOk(await run(argv("LIMIT", q, { scope: 2, lane: "", concurrency: 5, rate_max: 0 })), 1);
  const first = await claim(6);
  expect(first.length).toBeGreaterThan(2);
  const expiring = await claim(1, 1);
  expectOk(await run(argv("PAUSE", q, { lane: "" })), 1);
  expectOk(await run(argv("PENALIZE", q, { lane: "c", penalty_ms: 60_000 })));
  await sleep(5);
  expectOk(await run(argv("ACK", q, {}, held(first.slice(0, 1)))), 1);
  expectOk(await run(argv("RETRY", q, {}, held(first.slice(1, 2), { delay_ms: 0, reason: "r" }))), 1);
  expectOk(await run(argv("RELEASE", q, {}, held(first.slice(2, 3)))), 1);
  expectOk(await run(argv("RESUME", q, { lane: "" })), 1);
  expectOk(await run(argv("REAP", q, { limit: 10 })), expiring.length);
  await claim(10);
  await sameDigest();
  expect(await onReplica(["LRANGE", q.ring, "0", "-1"])).toEqual(expectOk(await run(["LRANGE", q.ring, "0", "-1"])));
}, 60_000);

test("lanes: REMOVE of a lane's last jobs and a changed per-lane default replicate as effects", async () => {
  const q = queue("lane-fixes");
  const enqueue = async (lane: string, from: number) => {
    const groups = [0, 1].map((i) => ({ id: jobId(from + i), opts: `lane=${lane}`, payload: `${lane}:${i}` }));
    expectOk(await run(argv("ENQUEUE", q, {}, groups)), 2);
  };
  const claim = async () => claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 3, block_ms: 0 })))).jobs;
  // a lane's last jobs removed: it leaves the ring (LREM ring) and goes idle, the wake marker with it
  await enqueue("r", 1);
  expectOk(await run(argv("REMOVE", q, { cleaned: 0 }, [{ id: jobId(1) }, { id: jobId(2) }])), 2);
  // lanes parked at the per-lane default rate, then let go when it changes (ZREM parked, HDEL tat
  // parked, LPUSH ring); then evicted at the default concurrency, put back when it is raised
  expectOk(await run(argv("LIMIT", q, { scope: 2, lane: "", concurrency: 0, rate_max: 1, rate_per_ms: 60_000, rate_burst: 1 })), 1);
  await enqueue("a", 10);
  await enqueue("b", 20);
  await enqueue("c", 30);
  expect((await claim()).length).toBe(3);
  expect(expectOk(await run(["ZCARD", q.parked]))).toBe(3);
  expectOk(await run(argv("LIMIT", q, { scope: 2, lane: "", concurrency: 1, rate_max: 100, rate_per_ms: 1000, rate_burst: 1 })), 1);
  expect(expectOk(await run(["ZCARD", q.parked]))).toBe(0);
  expect(expectOk(await run(["LLEN", q.ring]))).toBe(0); // each lane at the new concurrency
  expectOk(await run(argv("LIMIT", q, { scope: 2, lane: "", concurrency: 5, rate_max: 100, rate_per_ms: 1000, rate_burst: 1 })), 1);
  expect((await claim()).length).toBe(3);
  await sameDigest();
  expect(await onReplica(["LRANGE", q.ring, "0", "-1"])).toEqual(expectOk(await run(["LRANGE", q.ring, "0", "-1"])));
}, 60_000);

test("lanes: a rate change ends the lanes' rate parks (scope 1 and 2) and keeps a penalty's: digests equal", async () => {
  const q = queue("repark");
  const hour = { rate_max: 1, rate_per_ms: 3_600_000, rate_burst: 1 };
  const groups = ["a", "a", "b", "b", "c", "c"].map((lane, i) => ({ id: jobId(700 + i), opts: `lane=${lane}`, payload: `${i}` }));
  expectOk(await run(argv("ENQUEUE", q, {}, groups)), 6);
  expectOk(await run(argv("LIMIT", q, { scope: 1, lane: "a", concurrency: 0, ...hour })), 1);
  expectOk(await run(argv("LIMIT", q, { scope: 2, lane: "", concurrency: 0, ...hour })), 1);
  // one job of each lane, then each is parked until its next token, an hour away (c's penalty: a day)
  expect(claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 6, block_ms: 0 })))).jobs.length).toBe(3);
  expect(await run(["ZCARD", q.parked])).toEqual({ ok: 3 });
  expectOk(await run(argv("PENALIZE", q, { lane: "c", penalty_ms: 86_400_000 })));
  expectOk(await run(argv("LIMIT", q, { scope: 1, lane: "a", concurrency: 0, rate_max: 0 })), 1);
  expectOk(await run(argv("LIMIT", q, { scope: 2, lane: "", concurrency: 0, rate_max: 5, rate_per_ms: 1000, rate_burst: 5 })), 1);
  // a and b are back in the ring; c's penalty holds
  expect(await run(["ZRANGE", q.parked, "0", "-1"])).toEqual({ ok: ["c"] });
  expect(claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 6, block_ms: 0 })))).jobs.length).toBe(2);
  await sameDigest();
});

test("lanes: a claim's rotations in a row reach the replica as their net effect, two commands at most", async () => {
  const q = queue("turns");
  for (const [lane, from] of [["a", 100], ["b", 200], ["c", 300]] as const) {
    const groups = Array.from({ length: 20 }, (_, i) => ({ id: jobId(from + i), opts: `lane=${lane}`, payload: `${lane}:${i}` }));
    expectOk(await run(argv("ENQUEUE", q, {}, groups)), 20);
  }
  await sameDigest();
  const stats = async (): Promise<Map<string, number>> => commandCalls(await command(pair.replica.port, ["INFO", "commandstats"]));
  const before = await stats();
  // picks on a ring of 3 lanes: 7 is one turn net (RPOPLPUSH), 9 none, 11 two (RPOP ring 2, LPUSH)
  const lanes: string[] = [];
  for (const count of [7, 9, 11]) {
    const { jobs } = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count, block_ms: 0 }))));
    expect(jobs.length).toBe(count);
    lanes.push(...jobs.map((j) => j.payload.split(":")[0]!));
    await sameDigest();
    expect(await onReplica(["LRANGE", q.ring, "0", "-1"])).toEqual(expectOk(await run(["LRANGE", q.ring, "0", "-1"])));
  }
  // still round-robin across the claims: every 3 picks in a row serve 3 lanes
  for (let i = 0; i + 3 <= lanes.length; i++) expect(new Set(lanes.slice(i, i + 3)).size).toBe(3);
  const after = await stats();
  const delta = (c: string): number => (after.get(c) ?? 0) - (before.get(c) ?? 0);
  expect([delta("rpoplpush"), delta("lpush")]).toEqual([1, 1]);
}, 60_000);

test("wire 10: completed jobs with results, their retention, and the events stream (trims by nodes, entry ids) replicate", async () => {
  const q = queue("tenth");
  // nodes of 2 entries on the primary (the replica keeps 100): its trims by whole nodes reach the
  // replica as the exact length left, whatever the replica's nodes
  expectOk(await call(primary, ["CONFIG", "SET", "stream-node-max-entries", "2"]));
  const retain = (v: Values) =>
    argv("RETAIN", q, { dead_max: 10_000, dead_age_ms: 0, completed_max: 1000, completed_age_ms: 0, events_max: 10_000, history_minutes: 1440, ...v });
  expectOk(await run(retain({ completed_max: 3, events_max: 7 })), 0);
  const ids = Array.from({ length: 12 }, (_, i) => jobId(i + 1));
  expectOk(await run(argv("ENQUEUE", q, {}, ids.map((id) => ({ id, payload: id })))), 12);
  expectOk(await run(argv("SCHEDULE", q, {}, [{ id: jobId(20), due_ms: 1 }, { id: jobId(21), due_ms: Date.now() + 60_000 }])), 2);
  const jobs = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 10, block_ms: 0 })))).jobs;
  for (let i = 0; i < 5; i++) {
    expectOk(await run(argv("ACK", q, {}, held(jobs.slice(i, i + 1), { result: `{"i":${i}}` }))), 1);
    await sleep(1);
  }
  expectOk(await run(argv("PROGRESS", q, {}, held(jobs.slice(5, 6), { value: "half" }))), 1);
  expectOk(await run(argv("RETRY", q, {}, held(jobs.slice(5, 7), { delay_ms: 30_000, reason: "again" }))), 2);
  expectOk(await run(argv("BURY", q, {}, held(jobs.slice(7, 9), { reason: "dead" }))), 2);
  expectOk(await run(argv("RELEASE", q, {}, held(jobs.slice(9)))), 1);
  expectOk(await run(argv("RUN", q, {}, [{ id: jobId(21) }])), 1);
  expectOk(await run(argv("PAUSE", q, { lane: "" })), 1);
  expectOk(await run(argv("RESUME", q, { lane: "" })), 1);
  expectOk(await run(argv("PENALIZE", q, { lane: "x", penalty_ms: 1 })));
  expectOk(await run(argv("REMOVE", q, { cleaned: 0 }, [{ id: jobs[4]!.id }])), 1);
  expectOk(await run(argv("REQUEUE", q, { limit: 1, keep_attempts: 0 })), 1);
  // a refused call between: nothing replicated
  expect(await run(argv("ACK", q, {}, held(jobs.slice(0, 1))))).toEqual({ err: refusal("lease-lost", "ACK", { ids: jobs[0]!.id }) });
  await sameDigest();
  const xrange = ["XRANGE", q.events, "-", "+"];
  const onPrimary = expectOk(await call(primary, xrange));
  expect(await command(pair.replica.port, xrange)).toEqual(await command(pair.primary.port, xrange));
  // at least events_max (7), at most a node (2) more
  expect(Array.isArray(onPrimary) && [7, 8].includes(onPrimary.length)).toBe(true);
  const info = async (port: number) => {
    const out = (await command(port, ["XINFO", "STREAM", q.events])) as unknown[];
    const rec: Record<string, unknown> = {};
    for (let i = 0; i + 1 < out.length; i += 2) rec[String(out[i])] = out[i + 1];
    return [rec["length"], rec["last-generated-id"], rec["max-deleted-entry-id"], rec["entries-added"], rec["first-entry"]];
  };
  expect(await info(pair.replica.port)).toEqual(await info(pair.primary.port));
  expect(await command(pair.replica.port, ["ZRANGE", q.completed, "0", "-1"])).toEqual(
    await command(pair.primary.port, ["ZRANGE", q.completed, "0", "-1"]),
  );
  // RETAIN's trims: XTRIM, then DEL of the stream, and the completed set emptied
  expectOk(await run(retain({ completed_max: 1, events_max: 2 })));
  await sameDigest();
  expect(await command(pair.replica.port, ["XLEN", q.events])).toBe(2);
  expectOk(await run(retain({ completed_max: 0, events_max: 0 })));
  expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 })));
  await sameDigest();
  expect(await command(pair.replica.port, ["EXISTS", q.events, q.completed])).toBe(0);
  expectOk(await call(primary, ["CONFIG", "SET", "stream-node-max-entries", "100"]));
}, 60_000);

test("flows: FLOW, OUTBOX, APPLY (twice), UNBOX, and settles recording children's outcomes replicate as effects", async () => {
  const [p, a] = [queue("flowp"), queue("flowa")];
  const [parent, here, there, failing] = [jobId(1), jobId(2), jobId(3), jobId(4)];
  const flow = (id: string, children: Values[]) => argv("FLOW", p, { parent: id, parent_opts: "", payload: "parent", open: 0, within_ms: 0 }, children);
  expectOk(
    await run(flow(parent, [{ id: here, queue: p.name, policy: 0, opts: "", body: "h" }, { id: there, queue: a.name, policy: 1, opts: "", body: "t" }])),
    1,
  );
  expectOk(await run(flow(jobId(5), [{ id: failing, queue: a.name, policy: 0, opts: "", body: "f" }])), 0);
  const leased = expectOk(await run(argv("OUTBOX", p, { lease_ms: 60_000, count: 10 }))) as Array<number | string>;
  const entries = leased.filter((_, i) => i % 2 === 1).map(String);
  expectOk(await run(argv("APPLY", a, {}, entries.map((entry) => ({ entry })))), 2);
  expectOk(await run(argv("APPLY", a, {}, entries.map((entry) => ({ entry })))), 0);
  expectOk(await run(argv("UNBOX", p, {}, entries.map((entry) => ({ deadline: leased[0]!, entry })))), 2);
  const mine = claimed(expectOk(await run(argv("CLAIM", p, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs;
  expectOk(await run(argv("ACK", p, {}, held(mine, { result: "r" }))), 1);
  const theirs = claimed(expectOk(await run(argv("CLAIM", a, { lease_ms: 60_000, count: 2, block_ms: 0 })))).jobs;
  expectOk(await run(argv("ACK", a, {}, held(theirs.filter((j) => j.id === there), { result: "" }))), 1);
  expectOk(await run(argv("BURY", a, {}, held(theirs.filter((j) => j.id === failing), { reason: "no" }))), 1);
  const done = expectOk(await run(argv("OUTBOX", a, { lease_ms: 60_000, count: 10 }))) as Array<number | string>;
  const dones = done.filter((_, i) => i % 2 === 1).map(String);
  expectOk(await run(argv("APPLY", p, {}, dones.map((entry) => ({ entry })))), 2);
  expect(await command(pair.primary.port, ["HGET", p.row(parent), "state"])).toBe("pending");
  expect(await command(pair.primary.port, ["HGET", p.row(jobId(5)), "state"])).toBe("dead");
  await sameDigest();
}, 60_000);

test("flows: ADOPT, SEAL, cancels, tombstones (PEXPIRE) and deadlines (OUTBOX) replicate as effects", async () => {
  const [p, a] = [queue("flowq"), queue("flowb")];
  const flow = (id: string, open: number, within_ms: number, children: Values[]) =>
    argv("FLOW", p, { parent: id, parent_opts: "", payload: "parent", open, within_ms }, children);
  // an open parent adopts a child here and one elsewhere, then is sealed
  expectOk(await run(flow(jobId(1), 1, 0, [{ id: jobId(2), queue: p.name, policy: 0, opts: "", body: "a" }])), 1);
  expectOk(
    await run(
      argv("ADOPT", p, { parent: jobId(1), from: 1 }, [{ id: jobId(3), queue: a.name, policy: 0, opts: "", body: "b" }, {
        id: jobId(4),
        queue: p.name,
        policy: 1,
        opts: "",
        body: "c",
      }]),
    ),
    1,
  );
  expectOk(await run(argv("SEAL", p, { parent: jobId(1) })), 1);
  // a child here fails it: the sibling here cancelled at once, the one elsewhere by a cancel entry
  const mine = claimed(expectOk(await run(argv("CLAIM", p, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs;
  expectOk(await run(argv("BURY", p, {}, held(mine, { reason: "no" }))), 1);
  const leased = expectOk(await run(argv("OUTBOX", p, { lease_ms: 60_000, count: 10 }))) as Array<number | string>;
  const entries = leased.filter((_, i) => i % 2 === 1).map(String);
  // the cancel first: a tombstone with its TTL, then the late creation makes nothing
  const ordered = [...entries.filter((e) => e.startsWith("cancel")), ...entries.filter((e) => e.startsWith("child"))];
  expectOk(await run(argv("APPLY", a, {}, ordered.map((entry) => ({ entry })))), 1);
  // a deadline that passes: OUTBOX buries the parent
  expectOk(await run(flow(jobId(6), 0, 1, [{ id: jobId(7), queue: p.name, policy: 0, opts: "", body: "d" }])), 1);
  // (its deadline is 1 ms away: OUTBOX until it has passed)
  while ((await command(pair.primary.port, ["HGET", p.row(jobId(6)), "state"])) !== "dead") {
    expectOk(await run(argv("OUTBOX", p, { lease_ms: 60_000, count: 10 })));
  }
  expect(Number(await command(pair.replica.port, ["PTTL", a.row(jobId(3))]))).toBeGreaterThan(0);
  await sameDigest();
}, 60_000);

test("nested flows: APPLY of a node, a buried child parent telling its own, a cancelled waiting child parent replicate as effects", async () => {
  const [p, a] = [queue("nestp"), queue("nesta")];
  /** A subtree: n children, the payload, then each child's id, queue, policy, options (none) and body. */
  const subtree = (payload: string, kids: Array<[string, string, number, string]>) =>
    [`${kids.length}\0${payload.length}\0${payload}`, ...kids.map(([id, q, pol, body]) => `${id}\0${q}\0${pol}\x000\0${body.length}\0${body}`)]
      .join("");
  const flow = (id: string, children: Values[]) => argv("FLOW", p, { parent: id, parent_opts: "", payload: "root", open: 0, within_ms: 0 }, children);
  // root 1 → middle 2 (in a, policy fail) → 3 here in a, 4 in p; root 5 → middle 6 (in a) → 7 in a, and 8 in p that fails it
  const mid = (id: number, kids: Array<[string, string, number, string]>) => ({ id: jobId(id), queue: a.name, policy: 4, opts: "", body: subtree("m", kids) });
  expectOk(await run(flow(jobId(1), [mid(2, [[jobId(3), a.name, 0, "g"], [jobId(4), p.name, 0, "h"]])])), 0);
  expectOk(await run(flow(jobId(5), [{ id: jobId(8), queue: p.name, policy: 0, opts: "", body: "f" }, mid(6, [[jobId(7), a.name, 0, "k"]])])), 1);
  const leased = expectOk(await run(argv("OUTBOX", p, { lease_ms: 60_000, count: 10 }))) as Array<number | string>;
  const entries = leased.filter((_, i) => i % 2 === 1).map(String);
  expectOk(await run(argv("APPLY", a, {}, entries.map((entry) => ({ entry })))), 2);
  expectOk(await run(argv("APPLY", a, {}, entries.map((entry) => ({ entry })))), 0);
  await sameDigest();
  // grandchild 3 fails: middle 2 is buried and tells root 1 through a's outbox
  const g = claimed(expectOk(await run(argv("CLAIM", a, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs;
  expectOk(await run(argv("BURY", a, {}, held(g.filter((j) => j.id === jobId(3)), { reason: "no" }))), 1);
  expect(await command(pair.primary.port, ["HGET", a.row(jobId(2)), "state"])).toBe("dead");
  const up = expectOk(await run(argv("OUTBOX", a, { lease_ms: 60_000, count: 10 }))) as Array<number | string>;
  const ups = up.filter((_, i) => i % 2 === 1).map(String).filter((e) => e.startsWith("done"));
  expectOk(await run(argv("APPLY", p, {}, ups.map((entry) => ({ entry })))), 1);
  expect(await command(pair.primary.port, ["HGET", p.row(jobId(1)), "state"])).toBe("dead");
  // child 8 fails root 5: the cancel reaches middle 6 still waiting, which goes with its child 7
  const f = claimed(expectOk(await run(argv("CLAIM", p, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs;
  expectOk(await run(argv("BURY", p, {}, held(f.filter((j) => j.id === jobId(8)), { reason: "no" }))), 1);
  const cancels = (expectOk(await run(argv("OUTBOX", p, { lease_ms: 60_000, count: 10 }))) as Array<number | string>)
    .filter((_, i) => i % 2 === 1).map(String).filter((e) => e.startsWith("cancel"));
  expectOk(await run(argv("APPLY", a, {}, cancels.map((entry) => ({ entry })))), 1);
  expect(await command(pair.primary.port, ["EXISTS", a.row(jobId(6)), a.row(jobId(7))])).toBe(0);
  await sameDigest();
}, 60_000);

test("an AOF replay rebuilds the same keyspace (effects, not commands, are logged)", async () => {
  const server = await startServer({ module: requireModule(), args: ["--appendonly", "yes", "--appendfsync", "always"] });
  const db = await standalone(server.port);
  const waits = await standalone(server.port, undefined, 60_000);
  try {
    const q: QueueKeys = queue("aof");
    const ok = async (args: string[], value?: unknown) => expectOk(await call(db, args), value);
    await ok(argv("ENQUEUE", q, {}, Array.from({ length: 20 }, (_, i) => ({ id: jobId(i + 1), payload: `p${i + 1}` }))), 20);
    await ok(argv("SCHEDULE", q, {}, [{ id: jobId(21), due_ms: 1 }, { id: jobId(22), due_ms: Date.now() + 60_000 }]), 2);
    const long = claimed(await ok(argv("CLAIM", q, { lease_ms: 60_000, count: 7, block_ms: 0 }))).jobs;
    const short = claimed(await ok(argv("CLAIM", q, { lease_ms: 1, count: 3, block_ms: 0 }))).jobs;
    expect([short.length, long.length]).toEqual([3, 7]);
    await ok(argv("ACK", q, {}, held(long.slice(0, 2))), 2);
    await ok(argv("RETRY", q, {}, held(long.slice(2, 4), { delay_ms: 60_000, reason: "r" })), 2);
    await ok(argv("BURY", q, {}, held(long.slice(4, 5), { reason: "r" })), 1);
    await ok(argv("EXTEND", q, { lease_ms: 90_000 }, held(long.slice(5))), 2);
    await sleep(10);
    await ok(wellFormed("REAP", q, jobId(1), { limit: 2 }), 2);
    await ok(argv("CLAIM", q, { lease_ms: 60_000, count: 4, block_ms: 0 })); // reaps the third, claims
    await ok(wellFormed("PROMOTE", q, jobId(1), { limit: 10 }));
    // a claim woken from its wait, writing in the callback
    const woken = call(waits, argv("CLAIM", queue("aof-wait"), { lease_ms: 60_000, count: 1, block_ms: 20_000 }));
    for (const until = Date.now() + 10_000; Date.now() < until;) {
      if (/blocked_clients:1/.test(String(await ok(["INFO", "clients"])))) break;
      await sleep(10);
    }
    await ok(wellFormed("ENQUEUE", queue("aof-wait"), jobId(1)), 1);
    expect(claimed(expectOk(await woken)).jobs.length).toBe(1);
    const before = await digest(db);
    await sleep(20); // replayed time fields must not move
    await ok(["DEBUG", "LOADAOF"]);
    expect(await digest(db)).toBe(before);
  } finally {
    waits.close();
    db.close();
    await server.stop();
  }
}, 60_000);

test("SETTLE: every op (ack, retry later and now, bury, release), repeated and stale settlements, then its claim, replicate as effects", async () => {
  const q = queue("settle");
  const ids = Array.from({ length: 8 }, (_, i) => jobId(500 + i));
  expectOk(await run(argv("ENQUEUE", q, {}, ids.map((id, i) => ({ id, opts: i === 0 ? "dedup=k" : "", payload: `p${i}` })))));
  expectOk(await run(["HSET", q.meta, "concurrency", "10", "completed_max", "2"]));
  const jobs = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 6, block_ms: 0 })))).jobs;
  expect(jobs.length).toBe(6);
  const g = (op: number, j: ClaimedJob, extra: Values = {}): Values => ({
    op,
    id: j.id,
    token: j.token,
    delay_ms: 0,
    reason: "why",
    result: "",
    ...extra,
  });
  const reply = expectOk(
    await run(argv("SETTLE", q, { lease_ms: 30_000, want: 4 }, [
      g(0, jobs[0]!, { result: "r0" }),
      g(1, jobs[1]!, { delay_ms: 60_000, failure: "f1" }),
      g(2, jobs[2]!, { failure: "f2" }),
      g(3, jobs[3]!),
      g(1, jobs[4]!),
      g(0, jobs[5]!),
      g(0, jobs[5]!),
      g(2, { ...jobs[0]!, id: jobId(599) }),
    ])),
  ) as unknown[];
  expect(reply[1]).toEqual([1, 1, 1, 1, 1, 1, 2, 0]);
  expect(reply.length).toBe(2 + 4);
  await sameDigest();
}, 60_000);
