/**
 * The native module, wire 10: completed jobs kept with their result (ACK), the completed set's
 * retention (by count and by age, in ACK, CLAIM and RETAIN), RETAIN's five settings and its reply,
 * REMOVE and DROP of completed jobs, and the events stream — every verb's entries exactly as
 * lib/wire/events.ts and docs/WIRE.md "Events" say (types, fields in the table's order, one entry
 * per kind per call, `retried`/`dead`/`progress` per job, CLAIM's promoted → stalled → claimed,
 * an admission's then deduplicated), its exact bound (`events_max`), no events with `events_max`
 * 0, none from a refused call (DEBUG DIGEST unchanged), a blocked XREAD woken by a module write,
 * and the derived keys `events` and `completed` under ACL.
 */
import { describe, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { command } from "../../tools/embedded/mod.ts";
import { MAX_PAYLOAD_BYTES, VERBS as SPEC } from "../../lib/wire/mod.ts";
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
  row,
  sleep,
  standalone,
  useVerbSite,
  type Values,
  type VerbName,
  wellFormed,
} from "./_native.ts";

const { site, ok, refuses } = useVerbSite();

/** One entry of the events stream: its id and its fields, in order (`type`, its type, …). */
interface Entry {
  readonly id: string;
  readonly fields: string[];
}

/** XRANGE of the queue's events (raw RESP: fields in the stream's order). */
async function entries(q: QueueKeys): Promise<Entry[]> {
  const out = await command(site.server.port, ["XRANGE", q.events, "-", "+"]);
  if (!Array.isArray(out)) throw new Error(`XRANGE: ${JSON.stringify(out)}`);
  return out.map((e) => {
    if (!Array.isArray(e) || !Array.isArray(e[1])) throw new Error(`XRANGE entry: ${JSON.stringify(e)}`);
    return { id: String(e[0]), fields: e[1].map(String) };
  });
}

/** The fields of the entries written since the stream held `seen` entries. */
async function since(q: QueueKeys, seen: number): Promise<string[][]> {
  return (await entries(q)).slice(seen).map((e) => e.fields);
}

async function exists(...keys: string[]): Promise<number> {
  return Number(await ok(["EXISTS", ...keys]));
}

async function xlen(q: QueueKeys): Promise<number> {
  return Number(await ok(["XLEN", q.events]));
}

async function zrange(key: string): Promise<string[]> {
  return ((await ok(["ZRANGE", key, "0", "-1"])) as unknown[]).map(String);
}

/** ENQUEUE of `ids` (payload `p-<id>`). */
async function enqueue(q: QueueKeys, ids: string[], opts = ""): Promise<void> {
  await ok(argv("ENQUEUE", q, {}, ids.map((id) => ({ id, opts, payload: `p-${id}` }))), ids.length);
}

/** CLAIM without waiting: the jobs. */
async function claim(q: QueueKeys, count = 1, lease_ms = 60_000): Promise<ClaimedJob[]> {
  return claimed(await ok(argv("CLAIM", q, { lease_ms, count, block_ms: 0 }))).jobs;
}

/** RETAIN with every setting (the defaults where not given). */
function retain(q: QueueKeys, v: Values = {}): string[] {
  return argv("RETAIN", q, {
    dead_max: 10_000,
    dead_age_ms: 2_592_000_000,
    completed_max: 1000,
    completed_age_ms: 86_400_000,
    events_max: 10_000,
    history_minutes: 1440,
    ...v,
  });
}

describe("completed jobs (ACK)", () => {
  const q = queue("done");
  const [a, b, c] = [jobId(1), jobId(2), jobId(3)];

  test("ACK keeps the row: state completed, finished_ms, the result (none when empty), the token (wire 17), no lease; in completed at finished_ms", async () => {
    await enqueue(q, [a, b]);
    const jobs = await claim(q, 2);
    const t0 = Date.now();
    await ok(
      argv("ACK", q, {}, [
        { id: jobs[0]!.id, token: jobs[0]!.token, result: '{"n":1}' },
        { id: jobs[1]!.id, token: jobs[1]!.token, result: "" },
      ]),
      2,
    );
    const ra = await row(site.db, q.row(jobs[0]!.id));
    // the token stays (wire 17): the claim's time after the settle
    expect(Object.keys(ra).sort()).toEqual(["attempts", "created_ms", "finished_ms", "payload", "result", "state", "token"]);
    expect(ra).toMatchObject({ state: "completed", result: '{"n":1}', attempts: "1", payload: `p-${jobs[0]!.id}` });
    expect(Math.abs(Number(ra.finished_ms) - t0)).toBeLessThan(5000);
    const rb = await row(site.db, q.row(jobs[1]!.id));
    expect(Object.keys(rb).sort()).toEqual(["attempts", "created_ms", "finished_ms", "payload", "state", "token"]);
    expect(rb.state).toBe("completed");
    const scores = (await ok(["ZRANGE", q.completed, "0", "-1", "WITHSCORES"])) as Array<{ key: string; value: number }>;
    expect(scores.map((e) => [String(e.key), Number(e.value)]).sort()).toEqual(
      [[jobs[0]!.id, Number(ra.finished_ms)], [jobs[1]!.id, Number(rb.finished_ms)]].sort(),
    );
    expect(await exists(q.active)).toBe(0);
    expect((await row(site.db, q.meta)).acked).toBe("2");
    // a completed job is not requeued, nor acked again
    await refuses(argv("REQUEUE", q, { limit: 10, keep_attempts: 0 }, [{ id: a }]), refusal("not-dead", "REQUEUE", { ids: a }));
    await refuses(argv("ACK", q, {}, held(jobs.slice(0, 1))), refusal("lease-lost", "ACK", { ids: jobs[0]!.id }));
  });

  test("the completed entry carries results up to 1024 bytes (netstrings, parallel to jobs), flags a longer one, and none when all are empty", async () => {
    await enqueue(q, [a, b, c]);
    const jobs = await claim(q, 3);
    const before = (await since(q, 0)).length;
    const [at, over] = ["é".repeat(512), `${"x".repeat(1024)}y`]; // 1024 bytes; 1025
    await ok(
      argv("ACK", q, {}, [
        { id: jobs[0]!.id, token: jobs[0]!.token, result: at },
        { id: jobs[1]!.id, token: jobs[1]!.token, result: "" },
        { id: jobs[2]!.id, token: jobs[2]!.token, result: over },
      ]),
      3,
    );
    const entries = await since(q, 0);
    expect(entries.slice(before)).toEqual([["type", "completed", "jobs", `${jobs[0]!.id} ${jobs[1]!.id} ${jobs[2]!.id}`, "results", `1024:${at}0:-1:`]]);
    expect((await row(site.db, q.row(jobs[2]!.id))).result).toBe(over);
    await enqueue(q, [jobId(4)]);
    const [d] = await claim(q, 1);
    await ok(argv("ACK", q, {}, [{ id: d!.id, token: d!.token, result: "" }]), 1);
    expect((await since(q, 0)).at(-1)).toEqual(["type", "completed", "jobs", d!.id]);
  });

  test("completed_max 0 keeps none: the row is deleted, the result dropped, completed untouched", async () => {
    await ok(retain(q, { completed_max: 0 }), 0);
    await enqueue(q, [a]);
    const jobs = await claim(q);
    await ok(argv("ACK", q, {}, held(jobs, { result: "lost" })), 1);
    expect(await exists(q.row(a), q.completed, q.active)).toBe(0);
    // the event still carries the result (the row does not)
    expect(await since(q, 0)).toEqual([["type", "enqueued", "jobs", a], ["type", "claimed", "jobs", a, "attempts", "1"], [
      "type",
      "completed",
      "jobs",
      a,
      "results",
      "4:lost",
    ]]);
  });

  test("retention by count: ACK trims the oldest past completed_max (counting the jobs it adds), rows deleted; CLAIM trims too", async () => {
    await ok(retain(q, { completed_max: 2 }), 0);
    const ids = [1, 2, 3, 4].map(jobId);
    await enqueue(q, ids);
    for (const job of await claim(q, 4)) {
      await ok(argv("ACK", q, {}, held([job])), 1);
      await sleep(2); // distinct finish times
    }
    // claimed from the tail in admission order: 1, 2, 3, 4 acked in that order
    expect(await zrange(q.completed)).toEqual([ids[2], ids[3]]);
    expect(await exists(q.row(ids[0]!), q.row(ids[1]!))).toBe(0);
    expect(await exists(q.row(ids[2]!), q.row(ids[3]!))).toBe(2);
    // a batch past the limit on its own: the set as it was is trimmed (all of it), the batch kept…
    const more = [5, 6, 7].map(jobId);
    await enqueue(q, more);
    await ok(argv("ACK", q, {}, held(await claim(q, 3))), 3);
    expect((await zrange(q.completed)).sort()).toEqual([...more].sort());
    // …and the next CLAIM applies the retention
    await claim(q, 1);
    expect((await zrange(q.completed)).length).toBe(2);
    expect((await ok(["KEYS", `${q.base}job:*`]) as unknown[]).length).toBe(2);
  });

  test("retention by age: completed_age_ms deletes jobs finished longer ago (ACK, CLAIM); 0 is no age limit", async () => {
    const old = jobId(50);
    const plant = async () => {
      await ok(["HSET", q.row(old), "state", "completed", "payload", "x", "attempts", "1", "created_ms", "1", "finished_ms", "1000"]);
      await ok(["ZADD", q.completed, "1000", old]);
    };
    await plant();
    await ok(retain(q, { completed_age_ms: 0 }), 0); // no age limit: kept
    expect(await exists(q.row(old))).toBe(1);
    await ok(retain(q, { completed_age_ms: 60_000 }), 1); // applied at once
    expect(await exists(q.row(old), q.completed)).toBe(0);
    await plant();
    await enqueue(q, [a]);
    await ok(argv("ACK", q, {}, held(await claim(q))), 1);
    expect(await zrange(q.completed)).toEqual([a]);
    expect(await exists(q.row(old))).toBe(0);
    await plant();
    await claim(q);
    expect(await zrange(q.completed)).toEqual([a]);
    // the default (absent from meta): one day
    await ok(["HDEL", q.meta, "completed_age_ms"]);
    await plant();
    await claim(q);
    expect(await exists(q.row(old))).toBe(0);
  });

  test("RETAIN: the five settings in meta; reply = dead + completed rows deleted (≤ 1000 of each); the stream trimmed exactly", async () => {
    const ids = Array.from({ length: 7 }, (_, i) => jobId(i + 1));
    await enqueue(q, ids);
    const jobs = await claim(q, 7);
    await ok(argv("BURY", q, {}, held(jobs.slice(0, 3), { reason: "x" })), 3);
    await ok(argv("ACK", q, {}, held(jobs.slice(3))), 4);
    const before = await xlen(q);
    expect(before).toBe(2 + 3 + 1); // enqueued, claimed, 3 dead, completed
    await ok(argv("RETAIN", q, { dead_max: 1, dead_age_ms: 0, completed_max: 2, completed_age_ms: 0, events_max: 4, history_minutes: 1440 }), 2 + 2);
    const meta = await row(site.db, q.meta);
    expect(meta).toMatchObject({ dead_max: "1", dead_age_ms: "0", completed_max: "2", completed_age_ms: "0", events_max: "4" });
    expect((await zrange(q.dead)).length).toBe(1);
    expect(await zrange(q.completed)).toEqual(jobs.slice(5).map((j) => j.id).sort());
    // RETAIN writes no event; the newest 4 are kept
    const left = await entries(q);
    expect(left.map((e) => e.fields[1])).toEqual(["dead", "dead", "dead", "completed"]);
    // completed_max 0: every completed job goes; events_max 0: the stream is deleted
    await ok(argv("RETAIN", q, { dead_max: 1, dead_age_ms: 0, completed_max: 0, completed_age_ms: 0, events_max: 0, history_minutes: 1440 }), 2);
    expect(await exists(q.completed, q.events)).toBe(0);
    // a refused RETAIN (events is not a stream) writes nothing
    await ok(["SET", q.events, "x"]);
    await refuses(retain(q), refusal("wrongtype", "RETAIN", {}));
  });

  test("REMOVE deletes completed jobs (ZREM completed, DEL row, a removed event); DROP deletes them after the dead, then completed and events", async () => {
    await enqueue(q, [a, b, c]);
    const jobs = await claim(q, 3);
    await ok(argv("ACK", q, {}, held(jobs)), 3);
    const seen = await xlen(q);
    await ok(argv("REMOVE", q, { cleaned: 0 }, [{ id: a }, { id: jobId(99) }]), 1);
    expect(await exists(q.row(a))).toBe(0);
    expect((await zrange(q.completed)).sort()).toEqual([b, c]);
    expect(await since(q, seen)).toEqual([["type", "removed", "jobs", a]]);
    // DROP: a dead job, then the completed ones, one per call
    const d = jobId(4);
    await enqueue(q, [d]);
    await ok(argv("BURY", q, {}, held(await claim(q), { reason: "r" })), 1);
    await ok(argv("DROP", q, { limit: 2 }), 2);
    expect(await exists(q.row(d))).toBe(0);
    expect((await zrange(q.completed)).length).toBe(1);
    expect(await exists(q.events, q.meta)).toBe(2);
    await ok(argv("DROP", q, { limit: 2 }), 1);
    expect(Number(await ok(["DBSIZE"]))).toBe(0);
  });
});

describe("the events stream", () => {
  const q = queue("ev");

  test("every verb's entries, exactly: types, fields in the table's order, one per kind per call, per job for retried/dead/progress", async () => {
    const [a, b, c, d, e, f] = [1, 2, 3, 4, 5, 6].map(jobId);
    let seen = 0;
    /** The entries written since the last call of `next`. */
    const next = async (): Promise<string[][]> => {
      const all = await entries(q);
      const out = all.slice(seen).map((x) => x.fields);
      seen = all.length;
      return out;
    };
    await enqueue(q, [a, b]);
    expect(await next()).toEqual([["type", "enqueued", "jobs", `${a} ${b}`]]);
    // CLAIM from the tail: a, with a lease that runs out at once
    const first = await claim(q, 1, 1);
    expect(first.map((j) => j.id)).toEqual([a]);
    expect(await next()).toEqual([["type", "claimed", "jobs", a, "attempts", "1"]]);
    await ok(argv("SCHEDULE", q, {}, [{ id: c, due_ms: 1 }, { id: d, due_ms: Date.now() + 3_600_000 }]), 2);
    expect(await next()).toEqual([["type", "scheduled", "jobs", `${c} ${d}`]]);
    await sleep(5);
    // one CLAIM: c promoted (head), a stalled (tail), then a, b, c claimed from the tail
    const second = await claim(q, 3);
    expect(second.map((j) => [j.id, j.attempts])).toEqual([[a, 2], [b, 1], [c, 1]]);
    expect(await next()).toEqual([
      ["type", "promoted", "jobs", c],
      ["type", "stalled", "jobs", a],
      ["type", "claimed", "jobs", `${a} ${b} ${c}`, "attempts", "2 1 1"],
    ]);
    const [ja, jb, jc] = second;
    await ok(argv("ACK", q, {}, [{ id: a, token: ja!.token, result: "ok" }]), 1);
    expect(await next()).toEqual([["type", "completed", "jobs", a, "results", "2:ok"]]);
    // RETRY: one entry per job, its reason and its due time (delay 0: now)
    await ok(argv("RETRY", q, {}, [{ id: b, token: jb!.token, delay_ms: 0, reason: "boom" }]), 1);
    const dueB = (await row(site.db, q.row(b))).due_ms!;
    expect(await next()).toEqual([["type", "retried", "jobs", b, "reason", "boom", "until", dueB]]);
    await ok(argv("BURY", q, {}, [{ id: c, token: jc!.token, reason: "bad" }]), 1);
    expect(await next()).toEqual([["type", "dead", "jobs", c, "reason", "bad"]]);
    const [jb2] = await claim(q, 1);
    expect(await next()).toEqual([["type", "claimed", "jobs", b, "attempts", "2"]]);
    await ok(argv("PROGRESS", q, {}, [{ id: b, token: jb2!.token, value: "50%" }]), 1);
    expect(await next()).toEqual([["type", "progress", "jobs", b, "progress", "50%"]]);
    await ok(argv("RELEASE", q, {}, held([jb2!])), 1);
    expect(await next()).toEqual([["type", "released", "jobs", b]]);
    // EXTEND writes no event
    const [jb3] = await claim(q, 1);
    await next();
    await ok(argv("EXTEND", q, { lease_ms: 60_000 }, held([jb3!])), 1);
    expect(await next()).toEqual([]);
    await ok(argv("RELEASE", q, {}, held([jb3!])), 1);
    await next();
    await ok(argv("REMOVE", q, { cleaned: 0 }, [{ id: b }, { id: jobId(90) }]), 1);
    expect(await next()).toEqual([["type", "removed", "jobs", b]]);
    await ok(argv("REMOVE", q, { cleaned: 0 }, [{ id: jobId(91) }]), 0);
    expect(await next()).toEqual([]);
    await ok(argv("REQUEUE", q, { limit: 10, keep_attempts: 0 }, [{ id: c }]), 1);
    expect(await next()).toEqual([["type", "requeued", "jobs", c]]);
    await ok(argv("RUN", q, {}, [{ id: d }]), 1);
    expect(await next()).toEqual([["type", "promoted", "jobs", d]]);
    await ok(argv("SCHEDULE", q, {}, [{ id: e, due_ms: 1 }, { id: f, due_ms: 2 }]), 2);
    await next();
    await ok(argv("PROMOTE", q, { limit: 10 }), 2);
    expect(await next()).toEqual([["type", "promoted", "jobs", `${e} ${f}`]]);
    await ok(argv("PROMOTE", q, { limit: 10 }), 0);
    expect(await next()).toEqual([]);
    // REAP: the leases that ran out
    const short = await claim(q, 2, 1);
    await next();
    await sleep(5);
    await ok(argv("REAP", q, { limit: 10 }), 2);
    expect(await next()).toEqual([["type", "stalled", "jobs", short.map((j) => j.id).join(" ")]]);
    // PAUSE / RESUME: only when the state changed; the lane only for a lane
    await ok(argv("PAUSE", q, { lane: "" }), 1);
    await ok(argv("PAUSE", q, { lane: "" }), 0);
    await ok(argv("RESUME", q, { lane: "" }), 1);
    await ok(argv("RESUME", q, { lane: "" }), 0);
    await ok(argv("PAUSE", q, { lane: "t1" }), 1);
    await ok(argv("PAUSE", q, { lane: "t1" }), 0);
    await ok(argv("RESUME", q, { lane: "t1" }), 1);
    await ok(argv("RESUME", q, { lane: "t1" }), 0);
    expect(await next()).toEqual([["type", "paused"], ["type", "resumed"], ["type", "paused", "lane", "t1"], [
      "type",
      "resumed",
      "lane",
      "t1",
    ]]);
    // PENALIZE: until is the park in force after the call (a longer one is kept)
    const until = Number(await ok(argv("PENALIZE", q, { lane: "", penalty_ms: 60_000 })));
    expect(Number(await ok(argv("PENALIZE", q, { lane: "", penalty_ms: 1 })))).toBe(until);
    const laneUntil = Number(await ok(argv("PENALIZE", q, { lane: "t2", penalty_ms: 30_000 })));
    expect(await next()).toEqual([
      ["type", "penalized", "until", String(until)],
      ["type", "penalized", "until", String(until)],
      ["type", "penalized", "lane", "t2", "until", String(laneUntil)],
    ]);
    // a batch of RETRY and BURY: one entry per job, in argument order
    await ok(argv("RESUME", q, { lane: "" }), 0);
    await ok(["HDEL", q.meta, "parked"]);
    const four = await claim(q, 4);
    expect(four.length).toBe(4);
    await next();
    const t0 = Date.now();
    await ok(
      argv("RETRY", q, {}, [
        { id: four[0]!.id, token: four[0]!.token, delay_ms: 60_000, reason: "r0" },
        { id: four[1]!.id, token: four[1]!.token, delay_ms: 0, reason: "" },
      ]),
      2,
    );
    const dues = [Number((await row(site.db, q.row(four[0]!.id))).due_ms), Number((await row(site.db, q.row(four[1]!.id))).due_ms)];
    expect(Math.abs(dues[0]! - 60_000 - t0)).toBeLessThan(5000);
    await ok(
      argv("BURY", q, {}, [
        { id: four[2]!.id, token: four[2]!.token, reason: "b2" },
        { id: four[3]!.id, token: four[3]!.token, reason: "b3" },
      ]),
      2,
    );
    expect(await next()).toEqual([
      ["type", "retried", "jobs", four[0]!.id, "reason", "r0", "until", String(dues[0])],
      ["type", "retried", "jobs", four[1]!.id, "reason", "", "until", String(dues[1])],
      ["type", "dead", "jobs", four[2]!.id, "reason", "b2"],
      ["type", "dead", "jobs", four[3]!.id, "reason", "b3"],
    ]);
    // ids strictly increasing
    const ids = (await entries(q)).map((x) => x.id.split("-").map(Number) as [number, number]);
    for (let i = 1; i < ids.length; i++) {
      const [p, n] = [ids[i - 1]!, ids[i]!];
      expect(n[0] > p[0] || (n[0] === p[0] && n[1] > p[1])).toBe(true);
    }
  });

  test("admissions: enqueued (or scheduled) then deduplicated, with into; a call folding every id writes only deduplicated", async () => {
    const [h, i, j, k, l] = [1, 2, 3, 4, 5].map(jobId);
    await ok(argv("ENQUEUE", q, {}, [{ id: h, opts: "dedup=key", payload: "v" }]), [1]);
    const seen = await xlen(q);
    const reply = await ok(argv("ENQUEUE", q, {}, [
      { id: i, opts: "dedup=key", payload: "x" },
      { id: j, payload: "y" },
      { id: k, opts: "dedup=key", payload: "z" },
    ]));
    expect(reply).toEqual([1, 0, h, "deduplicated", 2, h, "deduplicated"]);
    expect(await since(q, seen)).toEqual([
      ["type", "enqueued", "jobs", j],
      ["type", "deduplicated", "jobs", `${i} ${k}`, "into", `${h} ${h}`],
    ]);
    const seen2 = await xlen(q);
    await ok(argv("SCHEDULE", q, {}, [{ id: l, due_ms: Date.now() + 60_000, opts: "dedup=key", payload: "w" }]));
    expect(await since(q, seen2)).toEqual([["type", "deduplicated", "jobs", l, "into", h]]);
  });

  test("TICK: scheduler (name, jobs) only when it admitted jobs, then deduplicated; nothing when it does not fire", async () => {
    const t0 = Date.now();
    await ok(argv("SCHEDULER", q, { name: "n", spec: "every 100", next_ms: t0, max_missed: 3, payload: "pa", opts: "" }));
    await ok(argv("TICK", q, { name: "n", expected_ms: t0, next_ms: t0 + 100 }, [{ id: jobId(1), tick_ms: t0 }, { id: jobId(2), tick_ms: t0 + 50 }]), 2);
    expect(await since(q, 0)).toEqual([["type", "scheduler", "name", "n", "jobs", `${jobId(1)} ${jobId(2)}`]]);
    // not firing (a stale expected_ms), and firing with no id: no entry
    await ok(argv("TICK", q, { name: "n", expected_ms: t0, next_ms: t0 + 200 }, [{ id: jobId(3), tick_ms: t0 }]), -1);
    await ok(argv("TICK", q, { name: "n", expected_ms: t0 + 100, next_ms: t0 + 200 }), 0);
    expect(await xlen(q)).toBe(1);
    // a scheduler whose jobs carry a dedup key: the second of the tick folds into the first
    await ok(argv("SCHEDULER", q, { name: "m", spec: "every 100", next_ms: t0, max_missed: 3, payload: "pm", opts: "dedup=tick" }));
    await ok(argv("TICK", q, { name: "m", expected_ms: t0, next_ms: t0 + 100 }, [{ id: jobId(4), tick_ms: t0 }, { id: jobId(5), tick_ms: t0 + 50 }]), 1);
    expect(await since(q, 1)).toEqual([
      ["type", "scheduler", "name", "m", "jobs", jobId(4)],
      ["type", "deduplicated", "jobs", jobId(5), "into", jobId(4)],
    ]);
  });

  test("events_max bounds the stream by whole nodes (at least the newest n, at most a node more); 0 writes none", async () => {
    // nodes of 4 entries: the trim drops the oldest node once the rest still holds events_max
    await ok(["CONFIG", "SET", "stream-node-max-entries", "4"]);
    await ok(retain(q, { events_max: 3 }), 0);
    const ids = Array.from({ length: 10 }, (_, i) => jobId(i + 1));
    const lengths: number[] = [];
    for (const id of ids) {
      await enqueue(q, [id]);
      lengths.push(await xlen(q));
    }
    // the 7th entry drops entries 1–4 (3 left); 8–10 fill the next node (6: entries 5–10)
    expect(lengths).toEqual([1, 2, 3, 4, 5, 6, 3, 4, 5, 6]);
    expect(await since(q, 0)).toEqual(ids.slice(4).map((id) => ["type", "enqueued", "jobs", id]));
    // a call writing more entries than the bound keeps its last ones
    const jobs = await claim(q, 4);
    await ok(argv("BURY", q, {}, held(jobs, { reason: "r" })), 4);
    expect((await since(q, 0)).map((x) => x[3])).toEqual(jobs.slice(1).map((j) => j.id));
    // absent from meta: 10000
    await ok(["HDEL", q.meta, "events_max"]);
    await enqueue(q, [jobId(50)]);
    expect(await xlen(q)).toBe(4);
    // 0: none written (RETAIN deletes the stream)
    await ok(retain(q, { events_max: 0, dead_max: 0, dead_age_ms: 0 }), 0);
    expect(await exists(q.events)).toBe(0);
    await enqueue(q, [jobId(51)]);
    const more = await claim(q, 2);
    await ok(argv("ACK", q, {}, held(more)), 2);
    await ok(argv("PAUSE", q, { lane: "" }), 1);
    await ok(argv("PENALIZE", q, { lane: "", penalty_ms: 10 }));
    expect(await exists(q.events)).toBe(0);
    await ok(["CONFIG", "SET", "stream-node-max-entries", "100"]);
  });

  test("a refused call writes no event: DEBUG DIGEST and the stream unchanged", async () => {
    const [a, b] = [jobId(1), jobId(2)];
    await enqueue(q, [a, b]);
    const jobs = await claim(q, 2);
    const n = await xlen(q);
    const last = (await entries(q)).at(-1)!.id;
    // a wrong token (lease lost), after a job whose lease holds
    await refuses(
      argv("ACK", q, {}, [{ id: a, token: jobs[0]!.token, result: "r" }, { id: b, token: jobs[1]!.token + 7, result: "r" }]),
      refusal("lease-lost", "ACK", { ids: b }),
    );
    // a result past the payload limit
    const big = "x".repeat(MAX_PAYLOAD_BYTES + 1);
    await refuses(argv("ACK", q, {}, [{ id: a, token: jobs[0]!.token, result: big }]), `ERR EMQ.ACK result exceeds ${MAX_PAYLOAD_BYTES} bytes`);
    await refuses(argv("ENQUEUE", q, {}, [{ id: a }]), refusal("duplicate", "ENQUEUE", { id: a }));
    await refuses(argv("RUN", q, {}, [{ id: a }]), refusal("not-scheduled", "RUN", { ids: a }));
    await refuses(argv("REMOVE", q, { cleaned: 0 }, [{ id: a }]), refusal("active", "REMOVE", { ids: a }));
    expect(await xlen(q)).toBe(n);
    expect((await entries(q)).at(-1)!.id).toBe(last);
    // a result at the limit is kept whole
    const most = "y".repeat(MAX_PAYLOAD_BYTES);
    await ok(argv("ACK", q, {}, [{ id: a, token: jobs[0]!.token, result: most }]), 1);
    expect(((await ok(["HGET", q.row(a), "result"])) as string).length).toBe(MAX_PAYLOAD_BYTES);
    // events of another type: every transition verb refuses WRONGTYPE, writing nothing
    await ok(["DEL", q.events]);
    await ok(["SET", q.events, "x"]);
    await refuses(argv("ACK", q, {}, held(jobs.slice(1))), refusal("wrongtype", "ACK", {}));
    await refuses(argv("PAUSE", q, { lane: "" }), refusal("wrongtype", "PAUSE", {}));
    // EXTEND writes no event: it does not look at events
    await ok(argv("EXTEND", q, { lease_ms: 1000 }, held(jobs.slice(1))), 1);
  });

  test("every verb that touches events or completed refuses WRONGTYPE when the key is of another type, writing nothing", async () => {
    const verbs = Object.keys(SPEC) as VerbName[];
    for (const type of ["events", "completed"] as const) {
      const touching = verbs.filter((v) => (SPEC[v].touches as readonly string[]).includes(type));
      expect(touching.length).toBeGreaterThan(type === "events" ? 15 : 4);
      for (const verb of touching) {
        await ok(["FLUSHALL"]);
        if (verb === "SETTLE") {
          // SETTLE checks a key for the settlements it applies (a job held, acked here); its claim
          // part, refused, claims nothing rather than refuse the call (docs/WIRE.md)
          await enqueue(q, [jobId(1)]);
          const [job] = await claim(q);
          await ok(["DEL", q[type]]);
          await ok(["SET", q[type], "not-mine"]);
          await refuses(argv("SETTLE", q, { want: 1 }, [{ op: 0, id: job!.id, token: job!.token }]), refusal("wrongtype", verb, {}));
          continue;
        }
        if (verb === "ADOPT") {
          // ADOPT checks its parent first (open and waiting): one made by FLOW before the key goes bad
          await ok(argv("FLOW", q, { parent: jobId(2), payload: "p", open: 1, within_ms: 0 }, [{ id: jobId(1), queue: q.name, policy: 0, body: "c" }]));
          await ok(["DEL", q[type]]);
          await ok(["SET", q[type], "not-mine"]);
          await refuses(
            argv("ADOPT", q, { parent: jobId(2), from: 1 }, [{ id: jobId(3), queue: q.name, policy: 0, body: "c" }]),
            refusal("wrongtype", verb, {}),
          );
          continue;
        }
        await ok(["SET", q[type], "not-mine"]);
        // FLOW: a parent and a child of two ids (wellFormed gives both one id, refused `repeated` first)
        const call = verb === "FLOW"
          ? argv("FLOW", q, { parent: jobId(2), payload: "p", open: 0, within_ms: 0 }, [{ id: jobId(1), queue: q.name, policy: 0, body: "c" }])
          : wellFormed(verb, q, jobId(1));
        await refuses(call, refusal("wrongtype", verb, {}));
      }
    }
    // EXTEND does not touch events
    await ok(["FLUSHALL"]);
    await ok(["SET", q.events, "not-mine"]);
    await refuses(wellFormed("EXTEND", q, jobId(1)), refusal("lease-lost", "EXTEND", { ids: jobId(1) }));
  });

  test("a blocked XREAD on events wakes when the module appends (a new stream, and an existing one)", async () => {
    const reader: GlideClient = await standalone(site.server.port, undefined, 30_000);
    const blockedClients = async () => {
      const info = String(await ok(["INFO", "clients"]));
      return Number(/blocked_clients:(\d+)/.exec(info)?.[1]);
    };
    const waitBlocked = async () => {
      for (const until = Date.now() + 10_000; Date.now() < until;) {
        if ((await blockedClients()) >= 1) return;
        await sleep(10);
      }
      throw new Error("the XREAD did not block");
    };
    try {
      for (const [id, fresh] of [[jobId(1), true], [jobId(2), false]] as const) {
        expect(await exists(q.events)).toBe(fresh ? 0 : 1);
        const got = call(reader, ["XREAD", "BLOCK", "20000", "STREAMS", q.events, "$"]);
        await waitBlocked();
        const t0 = Date.now();
        await enqueue(q, [id]);
        const out = await got;
        expect(Date.now() - t0).toBeLessThan(5000);
        expect(JSON.stringify(expectOk(out))).toContain(id);
        expect(JSON.stringify(expectOk(out))).toContain("enqueued");
      }
    } finally {
      reader.close();
    }
  });

  test("ACL: the derived keys events and completed are checked like the others (NOPERM, nothing written)", async () => {
    const k = queue("acl");
    const rules = [`~${k.meta}`, `~${k.pending}`, `~${k.active}`, `~${k.wake}`, `~${k.metrics}`, `~${k.base}job:*`];
    const setUser = async (name: string, ...patterns: string[]) =>
      expectOk(await call(site.db, ["ACL", "SETUSER", name, "reset", "on", ">pw", "+@all", ...patterns]));
    await setUser("no-events", ...rules);
    await setUser("no-completed", ...rules, `~${k.events}`);
    const user = async (name: string) => standalone(site.server.port, { username: name, password: "pw" });
    const noEvents = await user("no-events");
    const noCompleted = await user("no-completed");
    try {
      const before = await digest(site.db);
      expectRefused(await call(noEvents, argv("ENQUEUE", k, {}, [{ id: jobId(1) }])), refusal("noperm", "ENQUEUE", {}));
      expect(await digest(site.db)).toBe(before);
      expectOk(await call(noCompleted, argv("ENQUEUE", k, {}, [{ id: jobId(1) }])), 1);
      const jobs = await claim(k, 1);
      const mid = await digest(site.db);
      expectRefused(await call(noCompleted, argv("ACK", k, {}, held(jobs))), refusal("noperm", "ACK", {}));
      expect(await digest(site.db)).toBe(mid);
      await setUser("no-completed", ...rules, `~${k.events}`, `~${k.completed}`);
      expectOk(await call(noCompleted, argv("ACK", k, {}, held(jobs))), 1);
    } finally {
      noEvents.close();
      noCompleted.close();
      await call(site.db, ["ACL", "DELUSER", "no-events", "no-completed"]);
    }
  });
});
