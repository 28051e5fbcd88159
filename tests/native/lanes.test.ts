/**
 * Lanes on the native module (docs/design/lanes.md §10), driven verb by verb on one standalone
 * server: round-robin exactly in ring order, a lane's concurrency limit (held, and freed by ACK),
 * a lane's pause and resume, a lane's penalty (skipped, and its end in next_ms), a lane's rate (the
 * lane parked at its next token), the default lane served with the named ones after the queue
 * becomes laned, idle lanes leaving nothing behind, a queue without lanes writing no lane key, and
 * refused calls writing nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { argv, call, claimed, type ClaimedJob, expectOk, jobId, type Outcome, queue, refusal, sleep, standalone, useVerbSite } from "./_native.ts";

const { site, ok, refuses } = useVerbSite();

const q = queue("orders");
let next = 1;

/** ENQUEUE of `n` jobs into `lane` ("" = the default lane), each payload `<lane>:<i>`; their ids. */
async function enqueue(lane: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => jobId(next++));
  const opts = lane === "" ? "" : `lane=${lane}`;
  await ok(argv("ENQUEUE", q, {}, ids.map((id, i) => ({ id, opts, payload: `${lane}:${i}` }))), n);
  return ids;
}

async function claim(count = 1): Promise<{ nextMs: number; jobs: ClaimedJob[] }> {
  return claimed(await ok(argv("CLAIM", q, { lease_ms: 60_000, count, block_ms: 0 })));
}

/** The lanes of `count` claims of one job each (`-` when a claim got none). */
async function lanesOf(claims: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < claims; i++) {
    const { jobs } = await claim();
    out.push(jobs.length === 0 ? "-" : jobs[0]!.payload.split(":")[0]!);
  }
  return out;
}

async function ack(job: ClaimedJob): Promise<void> {
  await ok(argv("ACK", q, {}, [{ id: job.id, token: job.token }]), 1);
}

const lane = (name: string): string => `${q.base}lane:${name}`;
const list = async (key: string): Promise<string[]> => (await ok(["LRANGE", key, "0", "-1"])) as string[];

describe("lanes", () => {
  test("round-robin exactly, in ring order (the first lane admitted is the ring's tail)", async () => {
    for (const l of ["a", "b", "c"]) await enqueue(l, 5);
    expect(await list(q.ring)).toEqual(["c", "b", "a"]);
    expect(await ok(["HGET", q.meta, "laned"])).toBe("0");
    expect(Number(await ok(["ZSCORE", q.lanes, "a"]))).toBe(5);
    expect(await lanesOf(15)).toEqual("abcabcabcabcabc".split(""));
    // every lane emptied was evicted; each still holds 5 jobs
    expect(await list(q.ring)).toEqual([]);
    expect(await ok(["HGET", lane("b"), "active"])).toBe("5");
    expect((await claim()).jobs).toEqual([]);
  });

  test("one claim of count n takes one job of each of n lanes, in ring order", async () => {
    for (const l of ["a", "b", "c"]) await enqueue(l, 2);
    const { jobs } = await claim(4);
    expect(jobs.map((j) => j.payload)).toEqual(["a:0", "b:0", "c:0", "a:1"]);
    // a, emptied, was evicted
    expect(await list(q.ring)).toEqual(["c", "b"]);
  });

  test("acked lanes go idle: their hash and lanes member are deleted", async () => {
    await enqueue("a", 1);
    await enqueue("b", 1);
    const { jobs } = await claim(2);
    expect(jobs.length).toBe(2);
    for (const j of jobs) await ack(j);
    expect(await ok(["EXISTS", lane("a"), lane("b"), q.lanes, q.ring])).toBe(0);
  });

  test("a lane's concurrency limit is never exceeded and an ACK frees it", async () => {
    await ok(argv("LIMIT", q, { scope: 1, lane: "a", concurrency: 1, rate_max: 0 }), 1);
    await enqueue("a", 3);
    await enqueue("b", 3);
    const got: ClaimedJob[] = [];
    for (let i = 0; i < 5; i++) got.push(...(await claim()).jobs);
    expect(got.map((j) => j.payload)).toEqual(["a:0", "b:0", "b:1", "b:2"]);
    expect(await ok(["HGET", lane("a"), "active"])).toBe("1");
    await ack(got[0]!);
    expect(await list(q.ring)).toEqual(["a"]);
    const { jobs } = await claim(3);
    expect(jobs.map((j) => j.payload)).toEqual(["a:1"]);
    expect(await ok(["HGET", lane("a"), "active"])).toBe("1");
  });

  test("a paused lane is skipped until RESUME", async () => {
    await enqueue("a", 2);
    await enqueue("b", 2);
    await ok(argv("PAUSE", q, { lane: "a" }), 1);
    await ok(argv("PAUSE", q, { lane: "a" }), 0);
    expect(await lanesOf(3)).toEqual(["b", "b", "-"]);
    await ok(argv("RESUME", q, { lane: "a" }), 1);
    await ok(argv("RESUME", q, { lane: "a" }), 0);
    expect(await lanesOf(3)).toEqual(["a", "a", "-"]);
  });

  test("a penalized lane is skipped and its park's end is next_ms; once past, it is served", async () => {
    await enqueue("a", 1);
    const until = Number(await ok(argv("PENALIZE", q, { lane: "a", penalty_ms: 300 })));
    expect(Number(await ok(["ZSCORE", q.parked, "a"]))).toBe(until);
    const first = await claim();
    expect(first.jobs).toEqual([]);
    expect(first.nextMs).toBe(until);
    await sleep(until - Date.now() + 50);
    expect((await claim()).jobs.map((j) => j.payload)).toEqual(["a:0"]);
    expect(await ok(["EXISTS", q.parked])).toBe(0);
  });

  test("a lane out of rate tokens is parked until its next token; others are served", async () => {
    await ok(argv("LIMIT", q, { scope: 1, lane: "a", concurrency: 0, rate_max: 1, rate_per_ms: 60_000, rate_burst: 1 }), 1);
    await enqueue("a", 3);
    await enqueue("b", 2);
    expect(await lanesOf(4)).toEqual(["a", "b", "b", "-"]);
    const at = Number(await ok(["ZSCORE", q.parked, "a"]));
    expect(at).toBeGreaterThan(Date.now() + 50_000);
    expect(await ok(["HGET", lane("a"), "parked"])).toBe(String(at));
    expect((await claim()).nextMs).toBe(at);
  });

  test("the default lane joins the ring when the queue becomes laned, and is served round-robin", async () => {
    await enqueue("", 2);
    expect(await ok(["EXISTS", q.ring, q.lanes])).toBe(0);
    await enqueue("x", 2);
    expect(await list(q.ring)).toEqual(["x", ""]);
    expect(Number(await ok(["ZSCORE", q.lanes, ""]))).toBe(2);
    expect(await lanesOf(5)).toEqual(["", "x", "", "x", "-"]);
  });

  test("a queue without lanes writes no lane key", async () => {
    await enqueue("", 2);
    const { jobs } = await claim(2);
    for (const j of jobs) await ack(j);
    expect(await ok(["EXISTS", q.ring, q.lanes, q.parked, lane("")])).toBe(0);
    expect(await ok(["HEXISTS", q.meta, "laned"])).toBe(false);
  });

  test("jobs back in their lane: an expired lease, RETRY, RELEASE and a due SCHEDULE", async () => {
    await enqueue("a", 1);
    await enqueue("b", 1);
    // an expired lease: CLAIM moves it back to its lane (active lowered) and claims it again
    const [first] = claimed(await ok(argv("CLAIM", q, { lease_ms: 1, count: 1, block_ms: 0 }))).jobs;
    expect(first!.payload).toBe("a:0");
    await sleep(10);
    const again = await claim(2);
    expect(again.jobs.map((j) => [j.payload, j.attempts])).toEqual([["b:0", 1], ["a:0", 2]]);
    expect(await ok(["HGET", lane("a"), "active"])).toBe("1");
    const [b, a] = again.jobs;
    await ok(argv("RETRY", q, {}, [{ id: a!.id, token: a!.token, delay_ms: 0, reason: "r" }]), 1);
    await ok(argv("RELEASE", q, {}, [{ id: b!.id, token: b!.token }]), 1);
    expect(await ok(["HGET", lane("a"), "active"])).toBe("0");
    expect(await list(q.ring)).toEqual(["b", "a"]);
    const id = jobId(next++);
    await ok(argv("SCHEDULE", q, {}, [{ id, due_ms: Date.now() - 1, opts: "lane=c", payload: "c:0" }]), 1);
    expect((await claim(3)).jobs.map((j) => j.payload)).toEqual(["a:0", "b:0", "c:0"]);
    expect(await list(q.ring)).toEqual([]);
  });

  test("priorities order a lane's jobs; REMOVE of a ready job lowers its lane and may idle it", async () => {
    const [low, high] = [jobId(next++), jobId(next++)];
    await ok(argv("ENQUEUE", q, {}, [{ id: low, opts: "lane=a\0priority=3", payload: "a:low" }]), 1);
    await ok(argv("ENQUEUE", q, {}, [{ id: high, opts: "lane=a", payload: "a:high" }]), 1);
    await enqueue("b", 1);
    expect(await ok(["HGET", q.meta, "prioritized"])).toBe("3");
    expect((await claim(3)).jobs.map((j) => j.payload)).toEqual(["a:high", "b:0", "a:low"]);
    expect(await ok(["EXISTS", `${q.base}levels:a`, `${q.base}ready:3:a`, `${q.base}ready:0:a`])).toBe(0);
    expect(await ok(["HGET", q.meta, "prioritized"])).toBe("0");
    const [c] = await enqueue("c", 1);
    expect(Number(await ok(["ZSCORE", q.lanes, "c"]))).toBe(1);
    await ok(argv("REMOVE", q, { cleaned: 0 }, [{ id: c! }]), 1);
    // c is still in the ring (a claim evicts it), so its state stays until then
    expect(Number(await ok(["ZSCORE", q.lanes, "c"]))).toBe(0);
    expect((await claim()).jobs).toEqual([]);
    expect(await ok(["EXISTS", lane("c")])).toBe(0);
    expect(await ok(["ZSCORE", q.lanes, "c"])).toBe(null);
  });

  test("DROP deletes every lane's jobs and keys", async () => {
    await enqueue("", 1);
    await enqueue("a", 2);
    const id = jobId(next++);
    await ok(argv("ENQUEUE", q, {}, [{ id, opts: "lane=a\0priority=3", payload: "a:p3" }]), 1);
    await ok(argv("PAUSE", q, { lane: "b" }), 1);
    await ok(argv("PENALIZE", q, { lane: "c", penalty_ms: 60_000 }));
    expect(await ok(["EXISTS", `${q.base}ready:3:a`, `${q.base}levels:a`, lane("b"), q.parked])).toBe(4);
    // two calls: 3 jobs, then the rest and every key
    await ok(argv("DROP", q, { limit: 3 }), 3);
    await ok(argv("DROP", q, { limit: 3 }), 1);
    expect(await ok(["DBSIZE"])).toBe(0);
  });

  test("refused calls write nothing", async () => {
    await enqueue("a", 1);
    const bad = argv("ENQUEUE", q, {}, [{ id: jobId(900), opts: "lane=a{b", payload: "x" }]);
    await refuses(bad, refusal("name", "ENQUEUE", { arg: "lane", max: "1024" }));
    const wrongtype = refusal("wrongtype", "ENQUEUE", {});
    // a lane key of the wrong type refuses the admission, the claim and the settle that would write it
    await ok(["SET", lane("b"), "not-mine"]);
    await refuses(argv("ENQUEUE", q, {}, [{ id: jobId(901), opts: "lane=b", payload: "x" }]), wrongtype);
    await ok(["DEL", lane("b")]);
    await ok(["SET", lane("a"), "not-mine"]);
    await refuses(argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 }), wrongtype);
    await ok(["DEL", lane("a")]);
    const { jobs } = await claim();
    expect(jobs.length).toBe(1);
    await ok(["DEL", q.lanes]);
    await ok(["SET", q.lanes, "not-mine"]);
    await refuses(argv("ACK", q, {}, [{ id: jobs[0]!.id, token: jobs[0]!.token }]), wrongtype);
  });
});

describe("a waiting CLAIM on a laned queue", () => {
  let waiter: GlideClient;
  beforeAll(async () => {
    waiter = await standalone(site.server.port, undefined, 60_000);
  });
  afterAll(() => waiter?.close());

  async function blocked(): Promise<void> {
    const until = Date.now() + 10_000;
    while (!/blocked_clients:1/.test(String(await ok(["INFO", "clients"])))) {
      if (Date.now() > until) throw new Error("no blocked client after 10 s");
      await sleep(10);
    }
  }

  const waiting = (): Promise<Outcome> => call(waiter, argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 30_000 }));

  test("is woken by an ENQUEUE into a lane", async () => {
    await enqueue("a", 1);
    await claim();
    const reply = waiting();
    await blocked();
    await enqueue("b", 1);
    expect(claimed(expectOk(await reply)).jobs.map((j) => j.payload)).toEqual(["b:0"]);
  });

  test("is woken by the RESUME of a lane", async () => {
    await ok(argv("PAUSE", q, { lane: "a" }), 1);
    await enqueue("a", 1);
    const reply = waiting();
    await blocked();
    await ok(argv("RESUME", q, { lane: "a" }), 1);
    expect(claimed(expectOk(await reply)).jobs.map((j) => j.payload)).toEqual(["a:0"]);
  });
});
