/** The Lua sources themselves: shebang, the shared Lua each script calls (once), verb names, step order. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type Keyspace, keyspace } from "../../mod.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { luaHead, luaScript, PRELUDE, SCRIPTS } from "../../lib/lua/mod.ts";
import { ADMIT_LUA } from "../../lib/lua/admit.ts";
import { LEASES_LUA } from "../../lib/lua/leases.ts";
import { MOVE_DUE_LUA } from "../../lib/lua/move_due.ts";
import {
  EVENT_TYPES,
  type FixedArgs,
  type GroupArgs,
  MAX_PAYLOAD_BYTES,
  REFUSALS,
  renderRefusal,
  TRIM_LIMIT,
  type Verb,
  VERB_NAMES,
  VERBS,
  wireCall,
} from "../../lib/wire/mod.ts";
import { digest, type Outcome, queueKeys, rawConnection, type Site, sleep, startSite, wire } from "./_harness.ts";
import { claimedTuple } from "../native/_native.ts";

const WRITES = ["'HSET'", "'HDEL'", "'PEXPIRE'", "'LPUSH'", "'RPUSH'", "'RPOP'", "'ZADD'", "'ZREM'", "'DEL'", "'HINCRBY'", "'XADD'", "'XTRIM'"]
  .map((w) => `redis.call(${w}`)
  .concat([
    "emq_each(",
    "emq_move_due_apply(",
    "emq_admitted(",
    "emq_pushed(",
    "emq_events_add(",
    "emq_retention_apply(",
    "emq_flow_child(",
    "emq_flow_record(",
    "emq_ring(",
    "emq_failure(",
  ]);
const CHECKS = ["emq_type(", "emq_types(", "emq_admit(", "emq_held(", "emq_held_for_good(", "emq_move_due_select(", "emq_probe(", "emq_counter("];

/**
 * The verbs whose steps 5–6 are one function (SETTLE calls them: every part's checks, then every
 * part's writes through the closures they return, then the claim part).
 */
const PARTS: Partial<Record<Verb, string>> = {
  ACK: "emq_ack_part",
  RETRY: "emq_retry_part",
  BURY: "emq_bury_part",
  RELEASE: "emq_release_part",
  CLAIM: "emq_claim_part",
};

/** Where the first write of `lua` is (-1: none). */
function firstWrite(lua: string): number {
  const at = WRITES.map((w) => lua.indexOf(w)).filter((i) => i >= 0);
  return at.length === 0 ? -1 : Math.min(...at);
}

/** The body of the Lua function `name` in `lua`. */
function fn(lua: string, name: string): string {
  const from = lua.indexOf(`local function ${name}(`);
  return lua.slice(from, lua.indexOf("\nend\n", from));
}

describe("lib/lua", () => {
  const entries = Object.entries(SCRIPTS) as Array<[Verb, string]>;

  test("one script per wire verb, in the spec's order", () => {
    expect(entries.map(([v]) => v)).toEqual([...VERB_NAMES]);
  });

  test("every refusal text of the prelude is the spec's", () => {
    for (const name of Object.keys(REFUSALS) as Array<keyof typeof REFUSALS>) {
      expect(PRELUDE).toContain(`emq_refuse['${name}'] = function(p)`);
    }
    expect(renderRefusal("positive", "EMQ.CLAIM", { arg: "lease_ms" })).toBe("ERR EMQ.CLAIM lease_ms must be a positive integer");
  });

  test("a script ships the shared Lua it calls, and no more", () => {
    expect(SCRIPTS.PAUSE).toContain("local function emq_events_add(");
    expect(SCRIPTS.PAUSE).toContain("emq_refuse['wrongtype'] = function(p)");
    for (const unused of ["local function emq_options(", "local function emq_limits_read(", "local function emq_lane(", "emq_refuse['lease-lost']"]) {
      expect(SCRIPTS.PAUSE).not.toContain(unused);
    }
    expect(SCRIPTS.CLAIM).toContain("local function emq_walk_simulate(");
    expect(SCRIPTS.CLAIM).not.toContain("local function emq_admit(");
  });

  test("a misspelt key type or shared function is an error when the script is built", () => {
    expect(() => luaScript("PAUSE", "return redis.call('LLEN', base .. 'pendng')")).toThrow("base .. 'pendng' is no key type");
    expect(() => luaScript("PAUSE", "return emq_lenght()")).toThrow("emq_lenght is used but never defined");
    expect(() => luaScript("PAUSE", "return emq_refuse['arty']({})")).toThrow("emq_refuse['arty'] is used but never defined");
    expect(() => luaScript("PAUSE", "return emq_a()", "local function emq_a() return emq_b() end\nlocal function emq_b() return 1 end"))
      .toThrow("emq_a uses emq_b, defined after it");
    expect(luaScript("PAUSE", "return redis.call('LLEN', base .. 'pending')")).toContain("local function emq_layout(");
  });

  test("the shared check helpers write nothing", () => {
    for (
      const [lua, name] of [[ADMIT_LUA, "emq_admit"], [LEASES_LUA, "emq_held"], [LEASES_LUA, "emq_held_for_good"], [
        MOVE_DUE_LUA,
        "emq_move_due_select",
      ]] as const
    ) {
      expect(fn(lua, name).length).toBeGreaterThan(50);
      expect(firstWrite(fn(lua, name))).toBe(-1);
    }
  });

  test("SETTLE: every settle part's checks before the first part's writes; the claim part after them", () => {
    const body = SCRIPTS.SETTLE.slice(SCRIPTS.SETTLE.indexOf(luaHead("SETTLE")) + luaHead("SETTLE").length);
    const checks = [...CHECKS, "emq_ack_part(", "emq_retry_part(", "emq_bury_part(", "emq_release_part("];
    const lastCheck = Math.max(...checks.map((c) => body.lastIndexOf(c)));
    const writes = body.indexOf("write()");
    expect(Math.min(...checks.map((c) => body.indexOf(c)).filter((i) => i >= 0))).toBeGreaterThanOrEqual(0);
    expect(writes).toBeGreaterThan(lastCheck);
    expect(firstWrite(body)).toBe(-1);
    expect(body.indexOf("emq_claim_part(")).toBeGreaterThan(writes);
    for (const part of Object.values(PARTS)) expect(SCRIPTS.SETTLE).toContain(`local function ${part}(`);
  });

  for (const [verb, source] of entries) {
    test(`${verb}: shebang, its own verb name, the shared functions it calls once, steps in order`, () => {
      // admissions are refused under maxmemory; everything else drains (allow-oom)
      expect(source.split("\n")[0]).toBe(VERBS[verb].admits ? "#!lua" : "#!lua flags=allow-oom");
      expect(source.split("\n")[1]).toBe(`local VERB = 'EMQ.${verb}'`);
      // steps 1–4 are the generated head, once, after the shared functions, writing nothing
      const head = luaHead(verb);
      expect(source.split(head).length).toBe(2);
      // each shared function once, and called: a script ships only what it runs
      const defined = [...source.matchAll(/^local function (\w+)\(/gm)].map((m) => m[1]!);
      expect(new Set(defined).size).toBe(defined.length);
      for (const name of defined) expect(source.split(new RegExp(`\\b${name}\\b`)).length).toBeGreaterThan(2);
      for (const name of ["emq_shape", "emq_layout", "emq_fence"]) {
        expect(source.indexOf(`local function ${name}(`)).toBeGreaterThan(0);
        expect(source.indexOf(`local function ${name}(`)).toBeLessThan(source.indexOf(head));
      }
      const order = ["emq_shape(", "emq_layout(", "emq_fence()"].map((h) => head.indexOf(h));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(firstWrite(head)).toBe(-1);
      // steps 5–6: in the verb's body (or the function of its steps, which SETTLE shares), the last
      // check comes before the first write (SETTLE's body writes through its parts: its own test)
      if (verb === "SETTLE") return;
      const body = source.slice(source.indexOf(head) + head.length);
      const part = PARTS[verb];
      if (part !== undefined) expect(body).toContain(`${part}(`);
      const steps = part === undefined ? body : fn(source, part);
      const lastCheck = Math.max(...CHECKS.map((c) => steps.lastIndexOf(c)));
      expect(lastCheck).toBeGreaterThanOrEqual(0);
      expect(firstWrite(steps)).toBeGreaterThan(lastCheck);
    });
  }
});

// ---------------------------------------------------------------------------------------------
// Wire 10 on the Lua twin, raw calls: completed jobs with results, their retention, RETAIN's five
// settings, REMOVE and DROP of completed jobs, and the events stream (lib/wire/events.ts).

const J = (i: number): string => `JOB${String(i).padStart(11, "0")}`;

/** One entry of the events stream: its fields after the id, as written (`type`, then the rest). */
type Entry = string[];

describe("the Lua twin, wire 10 (raw calls, standalone)", () => {
  let site: Site;
  let raw: Connection;
  let queues = 0;
  /** A fresh queue of this suite. */
  const fresh = (): Keyspace<string> => keyspace(`w10-${++queues}`);

  beforeAll(async () => {
    site = await startSite("standalone", false);
    raw = await rawConnection(site);
  }, 60_000);
  afterAll(async () => {
    raw?.close();
    await site?.stop();
  });

  /** Verb `verb` on queue `K` through the Lua twin. */
  function run<V extends Verb>(K: Keyspace<string>, verb: V, fixed: FixedArgs<V>, groups: ReadonlyArray<GroupArgs<V>> = []): Promise<Outcome> {
    const c = wireCall(verb, K, fixed, groups);
    return wire(raw, "scripts", verb, c.keys, c.args);
  }
  /** The reply of a call that must succeed. */
  async function ok<V extends Verb>(K: Keyspace<string>, verb: V, fixed: FixedArgs<V>, groups: ReadonlyArray<GroupArgs<V>> = []): Promise<unknown> {
    const o = await run(K, verb, fixed, groups);
    if (!("ok" in o)) throw new Error(`${verb}: ${o.err}`);
    return o.ok;
  }
  const cmd = async (args: string[], K: Keyspace<string>): Promise<unknown> => plainOf(await raw.command(args, K.meta));
  /** A CLAIM's jobs: [id, attempts, token]. */
  async function claim(K: Keyspace<string>, count = 10, lease_ms = 60_000): Promise<Array<[string, number, number]>> {
    const reply = (await ok(K, "CLAIM", { lease_ms, count, block_ms: 0 })) as unknown[];
    return reply.slice(1).map(claimedTuple).map((j) => [j[0], j[2], j[3]]);
  }
  /** Every entry of K's events stream, with its id. */
  async function stream(K: Keyspace<string>): Promise<Array<{ id: string; fields: Entry }>> {
    const reply = await cmd(["XRANGE", K.events, "-", "+"], K);
    return xrange(reply);
  }
  /** The entries appended since the last look (per queue). */
  const seen = new Map<string, number>();
  async function newEvents(K: Keyspace<string>): Promise<Entry[]> {
    const all = await stream(K);
    const from = seen.get(K.name) ?? 0;
    seen.set(K.name, all.length);
    return all.slice(from).map((e) => e.fields);
  }
  const row = async (K: Keyspace<string>, id: string): Promise<Record<string, string>> =>
    Object.fromEntries(pairs(await cmd(["HGETALL", K.job(id as never)], K)));
  const zset = async (K: Keyspace<string>, key: string): Promise<string[]> => (await cmd(["ZRANGE", key, "0", "-1"], K)) as string[];
  const retain = (K: Keyspace<string>, dead_max: number, dead_age_ms: number, completed_max: number, completed_age_ms: number, events_max: number) =>
    run(K, "RETAIN", { dead_max, dead_age_ms, completed_max, completed_age_ms, events_max, history_minutes: 1440 });
  const enqueue = (K: Keyspace<string>, ids: string[], opts = "") => ok(K, "ENQUEUE", {}, ids.map((id) => ({ id, opts, payload: "p" })));
  const ack = (K: Keyspace<string>, jobs: Array<[string, number]>, result = "") => run(K, "ACK", {}, jobs.map(([id, token]) => ({ id, token, result })));

  test("CLAIM makes a new active a skiplist, as the module's does, holding only the ids claimed; made again, again", async () => {
    const K = fresh();
    const ids = ["JOBs1", "JOBs2", "JOBs3"];
    await enqueue(K, ids);
    const encoding = async (): Promise<unknown> => await cmd(["OBJECT", "ENCODING", K.active], K);
    const first = await claim(K, 2);
    expect(await encoding()).toBe("skiplist");
    expect(await zset(K, K.active)).toEqual(["JOBs1", "JOBs2"]);
    expect(await ack(K, first.map(([id, , token]) => [id, token]))).toEqual({ ok: 2 });
    expect(await cmd(["EXISTS", K.active], K)).toBe(0);
    await claim(K, 1);
    expect(await encoding()).toBe("skiplist");
    expect(await zset(K, K.active)).toEqual(["JOBs3"]);
  });

  test("ACK keeps a completed job: state, finish time, result (when not empty), no lease; the completed set", async () => {
    const K = fresh();
    await enqueue(K, [J(1), J(2)]);
    const c = await claim(K);
    const before = Date.now();
    expect(
      await run(K, "ACK", {}, [{ id: J(1), token: c.find((j) => j[0] === J(1))![2], result: '{"n":1}' }, {
        id: J(2),
        token: c.find((j) => j[0] === J(2))![2],
        result: "",
      }]),
    ).toEqual({ ok: 2 });
    const r1 = await row(K, J(1));
    expect(r1.state).toBe("completed");
    expect(r1.result).toBe('{"n":1}');
    expect(Number(r1.finished_ms)).toBeGreaterThanOrEqual(before - 1000);
    expect(r1.token).toBe(String(c.find((j) => j[0] === J(1))![2])); // kept (wire 17): the claim's time
    expect(r1.deadline_ms).toBeUndefined();
    expect(r1.payload).toBe("p");
    const r2 = await row(K, J(2));
    expect(r2.state).toBe("completed");
    expect("result" in r2).toBe(false);
    expect((await zset(K, K.completed)).sort()).toEqual([J(1), J(2)]);
    expect(pairs(await cmd(["ZRANGE", K.completed, "0", "-1", "WITHSCORES"], K)).map(([, s]) => s)).toEqual([r1.finished_ms, r2.finished_ms].sort());
    expect(await zset(K, K.active)).toEqual([]);
    expect(await cmd(["HGET", K.meta, "acked"], K)).toBe("2");
  });

  test("completed_max 0: ACK deletes the rows (the result dropped), no completed set", async () => {
    const K = fresh();
    expect(await retain(K, 0, 0, 0, 0, 10)).toEqual({ ok: 0 });
    await enqueue(K, [J(1)]);
    const [[id, , token]] = await claim(K);
    expect(await ack(K, [[id!, token!]], "kept?")).toEqual({ ok: 1 });
    expect(await cmd(["EXISTS", K.job(J(1) as never), K.completed], K)).toBe(0);
    expect((await newEvents(K)).at(-1)).toEqual(["type", "completed", "jobs", J(1), "results", "5:kept?"]);
  });

  test("completed retention: the oldest past completed_max, then older than completed_age_ms; CLAIM applies it", async () => {
    const K = fresh();
    expect(await retain(K, 0, 0, 2, 0, 100)).toEqual({ ok: 0 });
    for (const i of [1, 2, 3]) {
      await enqueue(K, [J(i)]);
      const [[id, , token]] = await claim(K);
      expect(await ack(K, [[id!, token!]])).toEqual({ ok: 1 });
      await sleep(2);
    }
    // the third ACK trimmed the oldest (J1): its row too
    expect(await zset(K, K.completed)).toEqual([J(2), J(3)]);
    expect(await cmd(["EXISTS", K.job(J(1) as never)], K)).toBe(0);
    // an old completed job (finished an hour ago) goes at the next ACK when the age limit is an hour
    await cmd(["HSET", K.job(J(9) as never), "state", "completed", "finished_ms", "1000"], K);
    await cmd(["ZADD", K.completed, String(Date.now() - 3_600_001), J(9)], K);
    await cmd(["HSET", K.meta, "completed_max", "10", "completed_age_ms", "3600000"], K);
    await enqueue(K, [J(4)]);
    const [[id, , token]] = await claim(K);
    expect(await ack(K, [[id!, token!]])).toEqual({ ok: 1 });
    expect(await zset(K, K.completed)).toEqual([J(2), J(3), J(4)]);
    expect(await cmd(["EXISTS", K.job(J(9) as never)], K)).toBe(0);
    // CLAIM trims too: meta now keeps one
    await cmd(["HSET", K.meta, "completed_max", "1"], K);
    expect(await claim(K)).toEqual([]);
    expect(await zset(K, K.completed)).toEqual([J(4)]);
    expect(await cmd(["EXISTS", K.job(J(2) as never), K.job(J(3) as never)], K)).toBe(0);
    // completed_max absent: 1000 kept; age absent: a day
    await cmd(["HDEL", K.meta, "completed_max", "completed_age_ms"], K);
    await cmd(["ZADD", K.completed, String(Date.now() - 86_400_001), J(8)], K);
    expect(await claim(K)).toEqual([]);
    expect(await zset(K, K.completed)).toEqual([J(4)]);
  });

  test("RETAIN: five settings to meta, dead and completed retention at once (reply: both), the stream trimmed", async () => {
    const K = fresh();
    await enqueue(K, [J(1), J(2), J(3), J(4), J(5), J(6)]);
    const c = await claim(K);
    for (const [id, , token] of c.slice(0, 3)) expect(await run(K, "BURY", {}, [{ id, token, reason: "x", failure: "" }])).toEqual({ ok: 1 });
    for (const [id, , token] of c.slice(3)) expect(await ack(K, [[id, token]])).toEqual({ ok: 1 });
    expect((await stream(K)).length).toBe(8); // enqueued, claimed, 3 dead, 3 completed
    expect(await retain(K, 1, 0, 2, 0, 5)).toEqual({ ok: 3 });
    expect(await cmd(["HMGET", K.meta, "dead_max", "dead_age_ms", "completed_max", "completed_age_ms", "events_max"], K))
      .toEqual(["1", "0", "2", "0", "5"]);
    expect(await zset(K, K.dead)).toEqual([c[2]![0]]);
    expect(await zset(K, K.completed)).toEqual([c[4]![0], c[5]![0]]);
    const left = await stream(K);
    expect(left.length).toBe(5);
    expect(left.map((e) => e.fields[1])).toEqual(["dead", "dead", "completed", "completed", "completed"]);
    // completed_max 0 keeps none: every completed job goes; events_max 0 deletes the stream
    expect(await retain(K, 0, 0, 0, 0, 0)).toEqual({ ok: 2 });
    expect(await cmd(["EXISTS", K.completed, K.events, K.job(c[5]![0] as never)], K)).toBe(0);
    expect(await zset(K, K.dead)).toEqual([c[2]![0]]);
  });

  test(`RETAIN deletes at most ${TRIM_LIMIT} of each set per call: its reply is both counts`, async () => {
    const K = fresh();
    expect(await retain(K, 0, 0, 10_000, 0, 10)).toEqual({ ok: 0 });
    const ids = Array.from({ length: 3000 }, (_, i) => J(i + 1));
    await enqueue(K, ids);
    const c = await claim(K, 3000);
    expect(await ack(K, c.slice(0, 1500).map(([id, , token]) => [id, token]))).toEqual({ ok: 1500 });
    expect(await run(K, "BURY", {}, c.slice(1500).map(([id, , token]) => ({ id, token, reason: "r", failure: "" })))).toEqual({ ok: 1500 });
    expect(await retain(K, 1, 0, 1, 0, 10)).toEqual({ ok: 2 * TRIM_LIMIT });
    expect(await retain(K, 1, 0, 1, 0, 10)).toEqual({ ok: 998 });
    expect(await retain(K, 1, 0, 1, 0, 10)).toEqual({ ok: 0 });
    expect(await zset(K, K.completed)).toHaveLength(1);
    expect(await zset(K, K.dead)).toHaveLength(1);
  });

  test("REMOVE deletes completed jobs; DROP deletes them after the dead ones, then completed and events", async () => {
    const K = fresh();
    await enqueue(K, [J(1), J(2), J(3)]);
    const c = await claim(K);
    for (const [id, , token] of c) expect(await ack(K, [[id, token]], "r")).toEqual({ ok: 1 });
    expect(await run(K, "REMOVE", { cleaned: 0 }, [{ id: J(1) }])).toEqual({ ok: 1 });
    expect(await cmd(["EXISTS", K.job(J(1) as never)], K)).toBe(0);
    expect((await zset(K, K.completed)).sort()).toEqual([J(2), J(3)]);
    expect((await newEvents(K)).at(-1)).toEqual(["type", "removed", "jobs", J(1)]);
    // DROP: one job per call at limit 1, then the queue's keys
    expect(await run(K, "DROP", { limit: 1 })).toEqual({ ok: 1 });
    expect(await zset(K, K.completed)).toHaveLength(1);
    expect(await run(K, "DROP", { limit: 1 })).toEqual({ ok: 1 });
    expect(await run(K, "DROP", { limit: 1 })).toEqual({ ok: 0 });
    expect(await queueKeys(raw, K.name)).toEqual([]);
  });

  test("events: each verb's entries, exactly per lib/wire/events.ts", async () => {
    const K = fresh();
    const events = (): Promise<Entry[]> => newEvents(K);
    // an admission: enqueued, then deduplicated (J3 folds into J2, which holds key k)
    expect(
      await ok(K, "ENQUEUE", {}, [
        { id: J(1), opts: "", payload: "a" },
        { id: J(2), opts: "dedup=k", payload: "b" },
        { id: J(3), opts: "dedup=k", payload: "c" },
      ]),
    ).toEqual([2, 2, J(2), "deduplicated"]);
    expect(await events()).toEqual([["type", "enqueued", "jobs", `${J(1)} ${J(2)}`], ["type", "deduplicated", "jobs", J(3), "into", J(2)]]);
    // an admission that admits nothing writes no enqueued entry
    expect(await ok(K, "ENQUEUE", {}, [{ id: J(3), opts: "dedup=k", payload: "c" }])).toEqual([0, 0, J(2), "deduplicated"]);
    expect(await events()).toEqual([["type", "deduplicated", "jobs", J(3), "into", J(2)]]);
    // a claim of J1 on a 1 ms lease, to be stalled
    const [first] = await claim(K, 1, 1);
    expect(first![0]).toBe(J(1));
    expect(await events()).toEqual([["type", "claimed", "jobs", J(1), "attempts", "1"]]);
    expect(
      await ok(K, "SCHEDULE", {}, [
        { id: J(4), due_ms: 1000, opts: "", payload: "d" },
        { id: J(5), due_ms: Date.now() + 3_600_000, opts: "", payload: "e" },
      ]),
    ).toBe(2);
    expect(await events()).toEqual([["type", "scheduled", "jobs", `${J(4)} ${J(5)}`]]);
    await sleep(5);
    // CLAIM: promoted (J4 due), stalled (J1's lease ran out), then claimed (J1 from the tail, J2, J4)
    const c = await claim(K);
    expect(c.map(([id, attempts]) => [id, attempts])).toEqual([[J(1), 2], [J(2), 1], [J(4), 1]]);
    expect(await events()).toEqual([
      ["type", "promoted", "jobs", J(4)],
      ["type", "stalled", "jobs", J(1)],
      ["type", "claimed", "jobs", `${J(1)} ${J(2)} ${J(4)}`, "attempts", "2 1 1"],
    ]);
    const tok = (id: string): number => c.find((j) => j[0] === id)![2];
    expect(await ack(K, [[J(1), tok(J(1))]], "done")).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "completed", "jobs", J(1), "results", "4:done"]]);
    // RETRY: one entry per job, argument order; until = the due time (delay 0: now)
    expect(
      await run(K, "RETRY", {}, [
        { id: J(4), token: tok(J(4)), delay_ms: 3_600_000, reason: "later", failure: "" },
        { id: J(2), token: tok(J(2)), delay_ms: 0, reason: "boom", failure: "" },
      ]),
    ).toEqual({ ok: 2 });
    const [d4, d2] = [(await row(K, J(4))).due_ms!, (await row(K, J(2))).due_ms!];
    expect(await events()).toEqual([
      ["type", "retried", "jobs", J(4), "reason", "later", "until", d4],
      ["type", "retried", "jobs", J(2), "reason", "boom", "until", d2],
    ]);
    expect(Number(d4) - Number(d2)).toBeGreaterThanOrEqual(3_600_000);
    // BURY, REQUEUE, PROGRESS, RELEASE
    let [[id, attempts, token]] = await claim(K, 1);
    expect([id, attempts]).toEqual([J(2), 2]);
    expect(await events()).toEqual([["type", "claimed", "jobs", J(2), "attempts", "2"]]);
    expect(await run(K, "BURY", {}, [{ id: J(2), token: token!, reason: "bad", failure: "" }])).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "dead", "jobs", J(2), "reason", "bad"]]);
    expect(await run(K, "REQUEUE", { limit: 10, keep_attempts: 0 }, [{ id: J(2) }])).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "requeued", "jobs", J(2)]]);
    [[id, attempts, token]] = await claim(K, 1);
    expect([id, attempts]).toEqual([J(2), 1]);
    await events();
    expect(await run(K, "PROGRESS", {}, [{ id: J(2), token: token!, value: "50%" }])).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "progress", "jobs", J(2), "progress", "50%"]]);
    expect(await run(K, "RELEASE", {}, [{ id: J(2), token: token! }])).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "released", "jobs", J(2)]]);
    // RUN, PROMOTE (nothing due: no entry), REAP
    expect(await run(K, "RUN", {}, [{ id: J(5) }])).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "promoted", "jobs", J(5)]]);
    expect(await run(K, "PROMOTE", { limit: 10 })).toEqual({ ok: 0 });
    expect(await events()).toEqual([]);
    expect(await ok(K, "SCHEDULE", {}, [{ id: J(6), due_ms: 1000, opts: "", payload: "f" }])).toBe(1);
    expect(await run(K, "PROMOTE", { limit: 10 })).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "scheduled", "jobs", J(6)], ["type", "promoted", "jobs", J(6)]]);
    const short = await claim(K, 2, 1);
    await sleep(5);
    expect(await run(K, "REAP", { limit: 10 })).toEqual({ ok: 2 });
    expect(await events()).toEqual([
      ["type", "claimed", "jobs", short.map((j) => j[0]).join(" "), "attempts", short.map((j) => String(j[1])).join(" ")],
      ["type", "stalled", "jobs", short.map((j) => j[0]).join(" ")],
    ]);
    // REMOVE: the ids that had a row (J3 never did: no entry for it), a completed one included
    expect(await run(K, "REMOVE", { cleaned: 0 }, [{ id: J(3) }])).toEqual({ ok: 0 });
    expect(await events()).toEqual([]);
    expect(await run(K, "REMOVE", { cleaned: 0 }, [{ id: J(3) }, { id: J(1) }, { id: J(6) }])).toEqual({ ok: 2 });
    expect(await events()).toEqual([["type", "removed", "jobs", `${J(1)} ${J(6)}`]]);
    // REMOVE with cleaned 1 (a clean, wire 17): one `cleaned` entry in place of `removed`
    expect(await run(K, "ENQUEUE", {}, [{ id: J(21), opts: "", payload: "p" }, { id: J(22), opts: "", payload: "p" }])).toEqual({ ok: 2 });
    await events();
    expect(await run(K, "REMOVE", { cleaned: 1 }, [{ id: J(21) }, { id: J(3) }, { id: J(22) }])).toEqual({ ok: 2 });
    expect(await events()).toEqual([["type", "cleaned", "jobs", `${J(21)} ${J(22)}`]]);
    // CANCEL: the ids it buried (J3 has no row: none for it), with the reason
    expect(await run(K, "ENQUEUE", {}, [{ id: J(20), opts: "", payload: "p" }])).toEqual({ ok: 1 });
    expect(await run(K, "CANCEL", { reason: "cancelled: why" }, [{ id: J(20) }, { id: J(3) }])).toEqual({ ok: [1, 0] });
    expect(await events()).toEqual([["type", "enqueued", "jobs", J(20)], ["type", "cancelled", "jobs", J(20), "reason", "cancelled: why"]]);
    // a flow's parent made to wait by FLOW (waiting, its child enqueued), then ready by its last child's ACK in its own queue: its ready, then the child's completed
    expect(
      await ok(K, "FLOW", { parent: J(30), parent_opts: "", payload: "p", open: 0, within_ms: 0 }, [{
        id: J(31),
        queue: K.name,
        policy: 0,
        opts: "",
        body: "c",
      }]),
    ).toBe(1);
    // (wire 17: its child of this queue made pending, `enqueued`, after the parent's `waiting`)
    expect(await events()).toEqual([["type", "waiting", "jobs", J(30)], ["type", "enqueued", "jobs", J(31)]]);
    const kid = (await claim(K, 100)).find(([j]) => j === J(31))!;
    await events();
    expect(await ack(K, [[J(31), kid[2]]], "")).toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "ready", "jobs", J(30)], ["type", "completed", "jobs", J(31)]]);
    // PAUSE / RESUME, the queue (no lane field) and a lane; only when the state changed
    expect(await run(K, "PAUSE", { lane: "" })).toEqual({ ok: 1 });
    expect(await run(K, "PAUSE", { lane: "" })).toEqual({ ok: 0 });
    expect(await run(K, "RESUME", { lane: "" })).toEqual({ ok: 1 });
    expect(await run(K, "RESUME", { lane: "" })).toEqual({ ok: 0 });
    expect(await run(K, "PAUSE", { lane: "a" })).toEqual({ ok: 1 });
    expect(await run(K, "PAUSE", { lane: "a" })).toEqual({ ok: 0 });
    expect(await run(K, "RESUME", { lane: "a" })).toEqual({ ok: 1 });
    expect(await run(K, "RESUME", { lane: "b" })).toEqual({ ok: 0 });
    expect(await events()).toEqual([
      ["type", "paused"],
      ["type", "resumed"],
      ["type", "paused", "lane", "a"],
      ["type", "resumed", "lane", "a"],
    ]);
    // PENALIZE: until = the park in force after the call (a longer one kept)
    const park = (await ok(K, "PENALIZE", { lane: "", penalty_ms: 3_600_000 })) as number;
    expect(await ok(K, "PENALIZE", { lane: "", penalty_ms: 10 })).toBe(park);
    const lanePark = (await ok(K, "PENALIZE", { lane: "a", penalty_ms: 1000 })) as number;
    expect(await events()).toEqual([
      ["type", "penalized", "until", String(park)],
      ["type", "penalized", "until", String(park)],
      ["type", "penalized", "lane", "a", "until", String(lanePark)],
    ]);
    // TICK: scheduler (name, jobs) when it admitted jobs, then deduplicated; never enqueued
    expect(await ok(K, "SCHEDULER", { name: "s", spec: "every 1000", next_ms: 5000, max_missed: 1, opts: "dedup=t", payload: "x" }))
      .toBe(5000);
    expect(await run(K, "TICK", { name: "s", expected_ms: 1, next_ms: 6000 }, [{ id: J(7), tick_ms: 5000 }])).toEqual({ ok: -1 });
    expect(await events()).toEqual([]);
    expect(await run(K, "TICK", { name: "s", expected_ms: 5000, next_ms: 6000 }, [{ id: J(7), tick_ms: 5000 }, { id: J(8), tick_ms: 5000 }]))
      .toEqual({ ok: 1 });
    expect(await events()).toEqual([["type", "scheduler", "name", "s", "jobs", J(7)], ["type", "deduplicated", "jobs", J(8), "into", J(7)]]);
    // a TICK that admits nothing (its key held): no scheduler entry
    expect(await run(K, "TICK", { name: "s", expected_ms: 6000, next_ms: 7000 }, [{ id: J(9), tick_ms: 6000 }])).toEqual({ ok: 0 });
    expect(await events()).toEqual([["type", "deduplicated", "jobs", J(9), "into", J(7)]]);
    // EXTEND, LIMIT, SCHEDULER, UNSCHEDULE, RETAIN, DROP write none (checked through the whole stream's types)
    const types = new Set((await stream(K)).map((e) => e.fields[1]));
    expect([...types].sort()).toEqual([...EVENT_TYPES].sort());
  });

  test("events of a laned CLAIM: promoted, stalled, then claimed in the walk's order (the reply's)", async () => {
    const K = fresh();
    expect(
      await ok(K, "ENQUEUE", {}, [
        { id: J(1), opts: "lane=a", payload: "a" },
        { id: J(2), opts: "lane=b", payload: "b" },
        { id: J(3), opts: "lane=a\0priority=2", payload: "c" },
      ]),
    ).toBe(3);
    const [first] = await claim(K, 1, 1);
    expect(await ok(K, "SCHEDULE", {}, [{ id: J(4), due_ms: 1000, opts: "lane=b", payload: "d" }])).toBe(1);
    expect(await newEvents(K)).toEqual([
      ["type", "enqueued", "jobs", `${J(1)} ${J(2)} ${J(3)}`],
      ["type", "claimed", "jobs", first![0], "attempts", "1"],
      ["type", "scheduled", "jobs", J(4)],
    ]);
    await sleep(5);
    const c = await claim(K);
    expect(c.map((j) => j[0]).sort()).toEqual([J(1), J(2), J(3), J(4)]);
    expect(await newEvents(K)).toEqual([
      ["type", "promoted", "jobs", J(4)],
      ["type", "stalled", "jobs", first![0]],
      ["type", "claimed", "jobs", c.map((j) => j[0]).join(" "), "attempts", c.map((j) => String(j[1])).join(" ")],
    ]);
    expect(c.find((j) => j[0] === first![0])![1]).toBe(2);
  });

  test("events_max bounds the stream by whole nodes (at least the newest n, at most a node more); 0 writes none", async () => {
    const K = fresh();
    // nodes of 4 entries, as tests/native/events.test.ts: the same lengths, call by call
    await cmd(["CONFIG", "SET", "stream-node-max-entries", "4"], K);
    expect(await retain(K, 0, 0, 10, 0, 3)).toEqual({ ok: 0 });
    const lengths: number[] = [];
    for (let i = 1; i <= 10; i++) {
      await enqueue(K, [J(i)]);
      lengths.push(Number(await cmd(["XLEN", K.events], K)));
    }
    expect(lengths).toEqual([1, 2, 3, 4, 5, 6, 3, 4, 5, 6]);
    expect((await stream(K)).map((e) => e.fields)).toEqual([5, 6, 7, 8, 9, 10].map((i) => ["type", "enqueued", "jobs", J(i)]));
    const c = await claim(K);
    await cmd(["CONFIG", "SET", "stream-node-max-entries", "100"], K);
    expect((await stream(K)).map((e) => e.fields[1])).toEqual(["enqueued", "enqueued", "claimed"]);
    expect(await retain(K, 0, 0, 10, 0, 0)).toEqual({ ok: 0 });
    expect(await cmd(["EXISTS", K.events], K)).toBe(0);
    expect(await ack(K, c.map(([id, , token]) => [id, token]))).toEqual({ ok: 10 });
    await enqueue(K, [J(11)]);
    expect(await run(K, "PAUSE", { lane: "" })).toEqual({ ok: 1 });
    expect(await cmd(["EXISTS", K.events], K)).toBe(0);
    // absent: 10000, the default
    const D = fresh();
    await enqueue(D, [J(1)]);
    expect(await cmd(["XLEN", D.events], D)).toBe(1);
    await cmd(["HSET", D.meta, "events_max", "x"], D);
    await enqueue(D, [J(2)]);
    expect(await cmd(["XLEN", D.events], D)).toBe(2);
  });

  test("a refused call writes no event: DEBUG DIGEST and the stream unchanged", async () => {
    const K = fresh();
    await enqueue(K, [J(1), J(2)]);
    const c = await claim(K);
    const before = await digest(raw, K.meta);
    const entries = await stream(K);
    const bad = c[0]![2] + 1000;
    expect(await ack(K, [[c[0]![0], bad]])).toEqual({ err: renderRefusal("lease-lost", "EMQ.ACK", { ids: c[0]![0] }) });
    expect(await run(K, "ACK", {}, [{ id: c[0]![0], token: c[0]![2], result: "x".repeat(MAX_PAYLOAD_BYTES + 1) }]))
      .toEqual({ err: renderRefusal("result", "EMQ.ACK", { limit: String(MAX_PAYLOAD_BYTES) }) });
    expect(await run(K, "ACK", {}, [{ id: c[0]![0], token: c[0]![2], result: "x".repeat(MAX_PAYLOAD_BYTES + 1) }]))
      .toEqual({ err: `ERR EMQ.ACK result exceeds ${MAX_PAYLOAD_BYTES} bytes` });
    expect(await run(K, "RETRY", {}, [{ id: c[1]![0], token: bad, delay_ms: 0, reason: "r", failure: "" }])).toHaveProperty("err");
    expect(await run(K, "BURY", {}, [{ id: c[1]![0], token: bad, reason: "r", failure: "" }])).toHaveProperty("err");
    expect(await run(K, "PROGRESS", {}, [{ id: c[1]![0], token: bad, value: "v" }])).toHaveProperty("err");
    expect(await run(K, "RELEASE", {}, [{ id: c[1]![0], token: bad }])).toHaveProperty("err");
    expect(await run(K, "ENQUEUE", {}, [{ id: J(1), opts: "", payload: "dup" }])).toEqual({
      err: renderRefusal("duplicate", "EMQ.ENQUEUE", { id: J(1) }),
    });
    expect(await run(K, "REMOVE", { cleaned: 0 }, [{ id: J(1) }])).toHaveProperty("err");
    expect(await run(K, "REQUEUE", { limit: 1, keep_attempts: 0 }, [{ id: J(1) }])).toHaveProperty("err");
    expect(await run(K, "RUN", {}, [{ id: J(1) }])).toHaveProperty("err");
    expect(await digest(raw, K.meta)).toBe(before);
    expect(await stream(K)).toEqual(entries);
    // a stream key of another type: every verb that writes events refuses, writing nothing
    const W = fresh();
    await cmd(["SET", W.events, "not-mine"], W);
    const was = await digest(raw, W.meta);
    const refused: Array<[Verb, Outcome]> = [
      ["ENQUEUE", await run(W, "ENQUEUE", {}, [{ id: J(1), opts: "", payload: "p" }])],
      ["SCHEDULE", await run(W, "SCHEDULE", {}, [{ id: J(1), due_ms: 1, opts: "", payload: "p" }])],
      ["CLAIM", await run(W, "CLAIM", { lease_ms: 1000, count: 1, block_ms: 0 })],
      ["PAUSE", await run(W, "PAUSE", { lane: "" })],
      ["RESUME", await run(W, "RESUME", { lane: "" })],
      ["PENALIZE", await run(W, "PENALIZE", { lane: "", penalty_ms: 10 })],
      ["PROMOTE", await run(W, "PROMOTE", { limit: 1 })],
      ["REAP", await run(W, "REAP", { limit: 1 })],
      ["REMOVE", await run(W, "REMOVE", { cleaned: 0 }, [{ id: J(1) }])],
      ["REQUEUE", await run(W, "REQUEUE", { limit: 1, keep_attempts: 0 })],
      ["RETAIN", await run(W, "RETAIN", { dead_max: 0, dead_age_ms: 0, completed_max: 0, completed_age_ms: 0, events_max: 5, history_minutes: 1440 })],
      ["DROP", await run(W, "DROP", { limit: 1 })],
    ];
    for (const [verb, o] of refused) expect({ verb, o }).toEqual({ verb, o: { err: renderRefusal("wrongtype", `EMQ.${verb}`, {}) } });
    expect(await digest(raw, W.meta)).toBe(was);
  });
});

/** Pairs of a map reply as glide returns it: `{key, value}` items, pairs, or a flat list. */
function pairs(reply: unknown): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const list = Array.isArray(reply) ? reply : Object.entries((reply ?? {}) as Record<string, unknown>);
  for (let i = 0; i < list.length; i++) {
    const x = list[i] as unknown;
    if (Array.isArray(x)) out.push([String(x[0]), String(x[1])]);
    else if (x && typeof x === "object" && "key" in x) out.push([String((x as { key: unknown }).key), String((x as unknown as { value: unknown }).value)]);
    else out.push([String(x), String(list[++i])]);
  }
  return out;
}

/** Bytes as text, recursively. */
function plainOf(x: unknown): unknown {
  if (x instanceof Uint8Array) return new TextDecoder().decode(x);
  if (Array.isArray(x)) return x.map(plainOf);
  if (x && typeof x === "object") return Object.fromEntries(Object.entries(x as Record<string, unknown>).map(([k, v]) => [k, plainOf(v)]));
  return x;
}

/** An XRANGE reply as glide returns it (`[{key: id, value: [[field, value]…]}…]`): each entry's id and fields, in order. */
function xrange(reply: unknown): Array<{ id: string; fields: string[] }> {
  return pairsOf(reply).map(([id, fields]) => ({ id, fields: (fields as unknown[][]).flat().map(String) }));
}

/** `{key, value}` items (or pairs) with their values as they are. */
function pairsOf(reply: unknown): Array<[string, unknown]> {
  if (!Array.isArray(reply)) return Object.entries((reply ?? {}) as Record<string, unknown>);
  return reply.map((x) => (Array.isArray(x) ? [String(x[0]), x[1]] : [String((x as { key: unknown }).key), (x as { value: unknown }).value]));
}
