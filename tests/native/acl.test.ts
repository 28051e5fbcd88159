/**
 * ACL: every verb declares one key (the queue's meta), which the server checks against the
 * caller's key patterns; every other key the module derives (pending, active, schedule, dead, wake,
 * rows) it checks itself before opening it. So a user limited to `~emq:{t1}:*` runs every verb on
 * t1 and gets NOPERM on t2 with nothing written (for a `+@all` user and a user granted only the
 * module's `@emq` category); a user allowed only t1's meta, pending and active gets NOPERM from
 * verbs that derive rows or other keys, on both backends (the Lua twin maps the server's refusal of
 * its inner command to the same text); and the `{emq}:version` fence applies only to a user who may
 * read that key: one who may not is not fenced and learns nothing of its value, on both backends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { SCRIPTS } from "../../lib/lua/mod.ts";
import { VERBS as SPEC } from "../../lib/wire/mod.ts";
import {
  argv,
  call,
  claimed,
  digest,
  expectOk,
  expectRefused,
  jobId,
  type Outcome,
  queue,
  type QueueKeys,
  refusal,
  registeredVerbs,
  sleep,
  standalone,
  useModuleServer,
  type VerbName,
  wellFormed,
} from "./_native.ts";

const site = useModuleServer(); // site.db: the default user

/** The spec's verbs the module registers (the standalone suite asserts that is all of them). */
const VERBS: VerbName[] = await registeredVerbs();
/** The verbs whose Lua twin and sequence this suite runs. */
const COVERED = ["ENQUEUE", "SCHEDULE", "CLAIM", "ACK", "RETRY", "BURY", "EXTEND", "PROMOTE", "REAP"] as const satisfies readonly VerbName[];
const NOPERM = refusal("noperm", "CLAIM", {});

/** The key patterns of the issue's user: t1's meta, pending and active only. */
const narrowQueue = queue("n1");

beforeAll(async () => {
  const setUser = async (name: string, ...rules: string[]) => expectOk(await call(site.db, ["ACL", "SETUSER", name, "reset", "on", ">pw", ...rules]));
  await setUser("all-t1", "~emq:{t1}:*", "+@all");
  // glide's handshake needs INFO, CLIENT and PING; the verbs come from @emq alone
  await setUser("emq-t1", "~emq:{t1}:*", "+@emq", "+info", "+client", "+ping");
  await setUser("narrow", `~${narrowQueue.meta}`, `~${narrowQueue.pending}`, `~${narrowQueue.active}`, "+@all");
  // may read the fence key (read-only), or only write it
  await setUser("reads-version", "~emq:{t1}:*", "%R~{emq}:version", "+@all");
  await setUser("writes-version", "~emq:{t1}:*", "%W~{emq}:version", "+@all");
}, 60_000);

const t1 = queue("t1");

/** One Lua script's EVAL (the scripts backend sends EVALSHA of the same source). */
const evalOf = (args: string[]): string[] => ["EVAL", SCRIPTS[args[0]!.slice(4) as VerbName], ...args.slice(1)];

/** A user's client. */
const as = (name: string): Promise<GlideClient> => standalone(site.server.port, { username: name, password: "pw" });

/** Deletes every key of queue `q` (the suites share t1: each sequence starts on an empty queue). */
async function clear(q: QueueKeys): Promise<void> {
  const keys = (expectOk(await call(site.db, ["KEYS", `${q.base}*`])) as unknown[]).map(String);
  if (keys.length > 0) expectOk(await call(site.db, ["DEL", ...keys]));
}

/**
 * Runs every verb in a sequence that makes each one succeed on `q` (emptied first); their replies
 * (claims as ids and attempts).
 */
async function everyVerb(
  send: (args: string[]) => Promise<Outcome>,
  q: QueueKeys,
  base: number,
): Promise<Record<string, unknown>> {
  const [a, b, c] = [jobId(base + 1), jobId(base + 2), jobId(base + 3)];
  const out: Record<string, unknown> = {};
  await clear(q);
  const run = async (label: string, args: string[]) => {
    const reply = expectOk(await send(args));
    out[label] = args[0] === "EMQ.CLAIM" || label.startsWith("CLAIM") ? claimed(reply).jobs.map((j) => [j.id, j.attempts]) : reply;
    return reply;
  };
  await run("ENQUEUE", argv("ENQUEUE", q, {}, [{ id: a }, { id: b }]));
  await run("SCHEDULE", argv("SCHEDULE", q, {}, [{ id: c, due_ms: 1 }]));
  await run("PROMOTE", wellFormed("PROMOTE", q, a, { limit: 10 }));
  await run("CLAIM", argv("CLAIM", q, { lease_ms: 1, count: 1, block_ms: 0 }));
  await sleep(5);
  await run("REAP", wellFormed("REAP", q, a, { limit: 10 }));
  const jobs = claimed(await run("CLAIM again", argv("CLAIM", q, { lease_ms: 60_000, count: 3, block_ms: 0 }))).jobs;
  const [ja, jb, jc] = jobs;
  await run("EXTEND", argv("EXTEND", q, { lease_ms: 60_000 }, [{ id: ja!.id, token: ja!.token }]));
  await run("ACK", argv("ACK", q, {}, [{ id: ja!.id, token: ja!.token }]));
  await run("RETRY", argv("RETRY", q, {}, [{ id: jb!.id, token: jb!.token, delay_ms: 1, reason: "r" }]));
  await run("BURY", argv("BURY", q, {}, [{ id: jc!.id, token: jc!.token, reason: "r" }]));
  return out;
}

const expectedReplies = (base: number) => ({
  ENQUEUE: 2,
  SCHEDULE: 1,
  PROMOTE: 1,
  CLAIM: [[jobId(base + 1), 1]],
  REAP: 1,
  "CLAIM again": [[jobId(base + 1), 2], [jobId(base + 2), 1], [jobId(base + 3), 1]],
  EXTEND: 1,
  ACK: 1,
  RETRY: 1,
  BURY: 1,
});

for (const name of ["all-t1", "emq-t1"]) {
  describe(`user ${name} (~emq:{t1}:*)`, () => {
    let user: GlideClient;
    const t2 = queue(`t2-${name}`);
    const base = name === "all-t1" ? 100 : 200;
    beforeAll(async () => {
      user = await as(name);
    });
    afterAll(() => user?.close());

    test("runs every verb on t1", async () => {
      expect(await everyVerb((args) => call(user, args), t1, base)).toEqual(expectedReplies(base));
    });

    test("the module's other verbs pass its ACL checks on t1", async () => {
      await everyVerb((args) => call(site.db, args), t1, base + 20);
      const held = claimed(expectOk(await call(site.db, argv("CLAIM", t1, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs;
      const others = VERBS.filter((v) => !(COVERED as readonly string[]).includes(v));
      for (const verb of others) {
        const out = await call(user, wellFormed(verb, t1, held[0]?.id ?? jobId(base + 29), { token: held[0]?.token ?? 1 }));
        expect({ verb, out }).not.toEqual({ verb, out: { err: NOPERM } });
      }
    });

    test("gets NOPERM for every verb on t2, nothing written", async () => {
      // give t2 some state, so that each verb would otherwise succeed
      await everyVerb((args) => call(site.db, args), t2, base + 50);
      expectOk(await call(site.db, argv("ENQUEUE", t2, {}, [{ id: jobId(999) }])), 1);
      const held = claimed(expectOk(await call(site.db, argv("CLAIM", t2, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs[0]!;
      const callOf = (verb: VerbName): string[] =>
        wellFormed(verb, t2, verb === "ENQUEUE" || verb === "SCHEDULE" ? jobId(998) : held.id, { token: held.token });
      const before = await digest(site.db);
      for (const verb of VERBS) expect({ verb, out: await call(user, callOf(verb)) }).toEqual({ verb, out: { err: NOPERM } });
      expect(await digest(site.db)).toBe(before);
      // the same calls by the default user run
      expectOk(await call(site.db, callOf("EXTEND")), 1);
      expectOk(await call(site.db, callOf("ENQUEUE")), 1);
    });
  });
}

describe("user all-t1, the Lua twin (EVAL of lib/lua)", () => {
  let user: GlideClient;
  const t2 = queue("t2-lua");
  beforeAll(async () => {
    user = await as("all-t1");
  });
  afterAll(() => user?.close());

  test("runs every verb on t1", async () => {
    expect(await everyVerb((args) => call(user, evalOf(args)), t1, 300)).toEqual(expectedReplies(300));
  });

  test("gets NOPERM for every verb on t2, nothing written", async () => {
    await everyVerb((args) => call(site.db, args), t2, 350);
    expectOk(await call(site.db, argv("ENQUEUE", t2, {}, [{ id: jobId(399) }])), 1);
    const job = claimed(expectOk(await call(site.db, argv("CLAIM", t2, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs[0]!;
    const before = await digest(site.db);
    for (const verb of COVERED) {
      const args = wellFormed(verb, t2, verb === "ENQUEUE" || verb === "SCHEDULE" ? jobId(398) : job.id, { token: job.token });
      expect({ verb, out: await call(user, evalOf(args)) }).toEqual({ verb, out: { err: NOPERM } });
    }
    expect(await digest(site.db)).toBe(before);
  });
});

describe("the issue's user: only t1's meta, pending and active (+@all)", () => {
  let user: GlideClient;
  const q = narrowQueue;
  beforeAll(async () => {
    user = await as("narrow");
  });
  afterAll(() => user?.close());

  /** A call of `verb` that its owner could run on the prepared queue. */
  let callOf: (verb: VerbName) => string[];

  beforeAll(async () => {
    await everyVerb((args) => call(site.db, args), q, 500);
    expectOk(await call(site.db, argv("ENQUEUE", q, {}, [{ id: jobId(590) }, { id: jobId(591) }])), 2);
    const job = claimed(expectOk(await call(site.db, argv("CLAIM", q, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs[0]!;
    callOf = (verb) => wellFormed(verb, q, verb === "ENQUEUE" || verb === "SCHEDULE" ? jobId(598) : job.id, { token: job.token });
  });

  test("EMQ.CLAIM and EMQ.ENQUEUE are refused NOPERM (rows and keys it may not access), digest unchanged", async () => {
    const before = await digest(site.db);
    expectRefused(await call(user, callOf("CLAIM")), NOPERM);
    expectRefused(await call(user, callOf("ENQUEUE")), NOPERM);
    expectRefused(await call(user, argv("CLAIM", q, { lease_ms: 60_000, count: 10, block_ms: 0 })), NOPERM);
    expect(await digest(site.db)).toBe(before);
  });

  test("every verb that derives a key beyond meta, pending and active is refused NOPERM, digest unchanged", async () => {
    const allowed: readonly string[] = ["pending", "active"];
    const beyond = VERBS.filter((v) => (SPEC[v].touches as readonly string[]).some((t) => !allowed.includes(t)));
    expect(beyond).toEqual(expect.arrayContaining([...COVERED]));
    const before = await digest(site.db);
    for (const verb of beyond) expect({ verb, out: await call(user, callOf(verb)) }).toEqual({ verb, out: { err: NOPERM } });
    expect(await digest(site.db)).toBe(before);
    // a verb that touches only keys the user may access runs
    for (const verb of VERBS.filter((v) => !beyond.includes(v))) {
      expect({ verb, out: await call(user, callOf(verb)) }).toEqual({ verb, out: { ok: expect.anything() } });
    }
  });

  test("the Lua twin refuses the same user with the same text, digest unchanged", async () => {
    const before = await digest(site.db);
    for (const verb of COVERED) {
      expect({ verb, out: await call(user, evalOf(callOf(verb))) }).toEqual({ verb, out: { err: NOPERM } });
    }
    expect(await digest(site.db)).toBe(before);
  });

  test("the keys it may access it may still use directly", async () => {
    expectOk(await call(user, ["LLEN", q.pending]));
    expectOk(await call(user, ["HGETALL", q.meta]));
    expectRefused(await call(user, ["HGETALL", q.row(jobId(590))]), NOPERM);
  });
});

describe("the fence and ACL", () => {
  let hidden: GlideClient;
  let reads: GlideClient;
  let writes: GlideClient;
  beforeAll(async () => {
    [hidden, reads, writes] = await Promise.all([as("all-t1"), as("reads-version"), as("writes-version")]);
  });
  afterAll(() => {
    for (const c of [hidden, reads, writes]) c?.close();
  });

  /** ENQUEUE and CLAIM of a fresh job on t1 through `send`: their outcomes. */
  async function enqueueAndClaim(send: (args: string[]) => Promise<Outcome>, n: number): Promise<Outcome[]> {
    await clear(t1);
    return [
      await send(wellFormed("ENQUEUE", t1, jobId(n))),
      await send(argv("CLAIM", t1, { lease_ms: 60_000, count: 1, block_ms: 0 })),
    ];
  }

  test("a user who may not read {emq}:version is not fenced by it and learns nothing of its value (both backends)", async () => {
    expectOk(await call(site.db, ["SET", "{emq}:version", "4"]));
    try {
      // the default user, who may read it, is fenced
      expectRefused(await call(site.db, wellFormed("ENQUEUE", t1, jobId(700))), refusal("fenced", "ENQUEUE", { found: "4" }));
      expectRefused(await call(site.db, evalOf(wellFormed("ENQUEUE", t1, jobId(700)))), refusal("fenced", "ENQUEUE", { found: "4" }));
      for (const [who, client] of [["all-t1", hidden], ["writes-version", writes]] as const) {
        const n = who === "all-t1" ? 710 : 720;
        const viaModule = await enqueueAndClaim((args) => call(client, args), n);
        const viaScripts = await enqueueAndClaim((args) => call(client, evalOf(args)), n + 1);
        for (const out of [...viaModule, ...viaScripts]) {
          expect({ who, out }).toEqual({ who, out: { ok: expect.anything() } });
          expect(JSON.stringify(out)).not.toContain("wire 4");
        }
        expect(claimed((viaModule[1] as { ok: unknown }).ok).jobs.map((j) => j.id)).toEqual([jobId(n)]);
        expect(claimed((viaScripts[1] as { ok: unknown }).ok).jobs.map((j) => j.id)).toEqual([jobId(n + 1)]);
        expectRefused(await call(client, ["GET", "{emq}:version"]), NOPERM);
      }
    } finally {
      expectOk(await call(site.db, ["DEL", "{emq}:version"]));
    }
  });

  test("a user who may only read {emq}:version is fenced by it (both backends)", async () => {
    expectOk(await call(site.db, ["SET", "{emq}:version", "4"]));
    try {
      const before = await digest(site.db);
      for (const verb of COVERED) {
        const args = wellFormed(verb, t1, jobId(730), { token: 1 });
        const text = refusal("fenced", verb, { found: "4" });
        expect({ verb, module: await call(reads, args), scripts: await call(reads, evalOf(args)) }).toEqual({
          verb,
          module: { err: text },
          scripts: { err: text },
        });
      }
      expect(await digest(site.db)).toBe(before);
    } finally {
      expectOk(await call(site.db, ["DEL", "{emq}:version"]));
    }
  });
});
