/**
 * ACL key patterns are globs, and queue names may hold glob characters: users granted
 * `~emq:{t*}:*`, `~emq:{t?}:*` or `~emq:{t[12]}:*` each claim a job of queue `t2` and read its
 * payload. `aclKeyPattern(queue)` builds the exact pattern of one queue (`*`, `?`, `[`, `]`, `\`
 * escaped): a user granted `aclKeyPattern("t*")` works queue `t*` and is refused (NOPERM) on `t2`,
 * on both backends. And the grants docs/PACKAGE.md gives a worker and an operator, tested as
 * written: a worker's user runs a worker on its queue, an operator's user runs every operation.
 * On call (issue 37): a worker limited to its queue writes its history (`emq:{q}:metrics`, by its
 * settles, on both backends), and an operator limited to it reads that history (with `+time`, as
 * documented), its failures' stacks and its logs, and is refused another queue's (NOPERM).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ, WireError } from "../../client.ts";
import { aclKeyPattern, type JobId } from "../../mod.ts";
import { command, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { BACKENDS, eventually } from "./_harness.ts";

let server: ServerHandle;
let owner: EchoMQ<string>;

/** A user's rules: its password, its key patterns, its commands. */
async function user(name: string, ...rules: string[]): Promise<void> {
  expect(await command(server.port, ["ACL", "SETUSER", name, "reset", "on", ">pw", ...rules])).toBe("OK");
}

/** What connecting needs (docs/PACKAGE.md): glide's handshake, backend detection, the eviction check. */
const CONNECT = ["+ping", "+info", "+client|setinfo", "+client|setname", "+client|id", "+client|unblock", "+command|info", "+config|get"];
/** The verbs, per backend: the module's category, or EVALSHA with every command the scripts run (and a worker's wait). */
const VERBS = {
  module: ["+@emq"],
  scripts: [
    "+evalsha",
    "+script|load",
    "+bzpopmin",
    "+time",
    "+get",
    "+exists",
    "+type",
    "+del",
    "+pexpire",
    "+hget",
    "+hmget",
    "+hset",
    "+hdel",
    "+hincrby",
    "+lpush",
    "+rpush",
    "+lpop",
    "+rpop",
    "+lrem",
    "+lrange",
    "+lindex",
    "+llen",
    "+zadd",
    "+zrem",
    "+zscore",
    "+zrange",
    "+zrangebyscore",
    "+zcount",
    "+zcard",
    "+xadd",
    "+xtrim",
  ],
};
/** The fence key, read-only: a user who may read it is fenced (docs/WIRE.md). */
const FENCE = "%R~{emq}:version";
/** What firing schedulers adds to a worker's user: the reads of `schedulers` and a scheduler, the server's clock. */
const FIRE = ["+zrange", "+hgetall", "+time"];
/** What an operator's reads add: stats, counts, jobs, getJob, isPaused, queues, workers, retain's and retention's read of meta. */
const READS = ["+multi", "+exec", "+llen", "+zcard", "+hgetall", "+hget", "+hmget", "+lrange", "+zrange", "+scan", "+client|list"];

beforeAll(async () => {
  server = await startServer({ module: moduleIfBuilt() });
  owner = await EchoMQ.connect<string>({ addresses: [{ host: server.host, port: server.port }], backend: "scripts" });
  await user("star", "~emq:{t*}:*", "+@all");
  await user("question", "~emq:{t?}:*", "+@all");
  await user("class", "~emq:{t[12]}:*", "+@all");
  await user("exact", aclKeyPattern("t*"), "+@all");
  for (const backend of ["module", "scripts"] as const) {
    await user(`worker-${backend}`, aclKeyPattern("w[1]"), FENCE, ...CONNECT, ...VERBS[backend], ...FIRE);
    await user(`operator-${backend}`, aclKeyPattern("w[1]"), FENCE, ...CONNECT, ...VERBS[backend], ...FIRE, ...READS);
  }
}, 60_000);

afterAll(async () => {
  await owner?.close();
  await server?.stop();
});

test("aclKeyPattern escapes every glob character of the name, for each access", () => {
  expect(aclKeyPattern("orders")).toBe("~emq:{orders}:*");
  expect(aclKeyPattern("t*")).toBe("~emq:{t\\*}:*");
  expect(aclKeyPattern("a?b[c]d\\e")).toBe("~emq:{a\\?b\\[c\\]d\\\\e}:*");
  expect(aclKeyPattern("t*", "R")).toBe("%R~emq:{t\\*}:*");
  expect(aclKeyPattern("t*", "W")).toBe("%W~emq:{t\\*}:*");
  expect(aclKeyPattern("t*", "RW")).toBe("~emq:{t\\*}:*");
  expect(() => aclKeyPattern("a}b")).toThrow('queue name "a}b" must not contain "}"');
  expect(() => aclKeyPattern("q", "X" as never)).toThrow('ACL access must be "R", "W" or "RW", got "X"');
});

for (const backend of BACKENDS) {
  describe(`${backend} backend`, () => {
    const as = (name: string): Promise<EchoMQ<string>> =>
      EchoMQ.connect<string>({
        addresses: [{ host: server.host, port: server.port }],
        credentials: { username: name, password: "pw" },
        backend,
      });

    test("glob characters alias: t*, t? and t[12] each claim a job of t2 and read its payload", async () => {
      for (const name of ["star", "question", "class"]) {
        await owner.enqueue("t2", `secret of t2 for ${name}`);
        const mq = await as(name);
        try {
          const job = await mq.claim("t2", { leaseMs: 60_000 });
          expect(job?.payload).toBe(`secret of t2 for ${name}`);
          await mq.ack(job!);
        } finally {
          await mq.close();
        }
      }
    });

    test('aclKeyPattern("t*"): works queue t*, refused on t2', async () => {
      await owner.enqueue("t2", "not yours");
      const mq = await as("exact");
      try {
        // (the queue is the other backend's too: its completed job, kept, counts)
        const kept = (await mq.counts("t*")).completed;
        await mq.enqueue("t*", "mine");
        const job = await mq.claim("t*", { leaseMs: 60_000 });
        expect(job?.payload).toBe("mine");
        await mq.ack(job!);
        expect(await mq.counts("t*")).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: kept + 1, waitingChildren: 0 });
        for (const run of [() => mq.claim("t2", { leaseMs: 60_000 }), () => mq.enqueue("t2", "x"), () => mq.counts("t2")]) {
          const e = await run().catch((x: unknown) => x);
          expect(e).toBeInstanceOf(WireError);
          expect((e as WireError).rule).toBe("noperm");
        }
        expect((await owner.counts("t2")).pending).toBe(1);
      } finally {
        await mq.close();
        await owner.drop("t2");
      }
    });

    test("the documented grants: a worker's user runs a worker, an operator's user every operation", async () => {
      const q = "w[1]";
      await owner.drop(q);
      await owner.enqueueMany(q, ["a", "b", "c"]);
      const worker = await as(`worker-${backend}`);
      const operator = await as(`operator-${backend}`);
      try {
        const done: string[] = [];
        const errors: unknown[] = [];
        const w = worker.work(q, (job) => void done.push(job.payload), { blockMs: 100, onError: (e) => errors.push(e) });
        await eventually(() => done.length >= 3).catch((e) => {
          throw new Error(`${e}: ${errors.map(String).join("; ")}`);
        });
        await operator.enqueue(q, "d");
        await eventually(() => done.length >= 4);
        // the worker's claim connection is named after it (its user's +client|setname), the operator
        // lists it (the other backend's worker on this queue may still be closing: glide is lazy)
        expect((await operator.workers(q)).map((x) => [x.id, x.queue])).toContainEqual([w.id, q]);
        await w.stop();
        expect(errors).toEqual([]);
        expect(done.sort()).toEqual(["a", "b", "c", "d"]);
        // an operator reads and operates
        expect(await operator.pause(q)).toBe(true);
        expect(await operator.isPaused(q)).toBe(true);
        const id = await operator.enqueue(q, "e");
        expect((await operator.getJob(q, id))?.payload).toBe("e");
        expect((await operator.jobs(q, "pending")).map((j) => j.id)).toEqual([id]);
        expect((await operator.stats(q)).pending).toBe(1);
        await owner.enqueue("other-tenant", "x");
        // SCAN is not ACL-filtered: a restricted user lists every tenant's queue names
        expect(await operator.queues()).toEqual(expect.arrayContaining([q, "other-tenant"]));
        await owner.drop("other-tenant");
        expect(await operator.resume(q)).toBe(true);
        expect(await operator.remove(q, id)).toBe(true);
        expect(await operator.requeueDead(q)).toBe(0);
        await operator.retain(q, { deadMax: 10 });
        expect(await operator.retention(q)).toMatchObject({ deadMax: 10, completedMax: 1000 });
        // the four jobs the worker completed are kept (the default retention): the drop deletes them
        expect((await operator.counts(q)).completed).toBe(4);
        expect(await operator.drop(q)).toBe(4);
        expect(await owner.queues()).not.toContain(q);
        const e = await operator.counts("t2").catch((x: unknown) => x);
        expect((e as WireError).rule).toBe("noperm");
      } finally {
        await worker.close();
        await operator.close();
      }
    });
  });
}

/** What following a queue's events and waiting for results adds (docs/PACKAGE.md). */
const EVENTS = ["+xread", "+xrange", "+xrevrange", "+xinfo|stream", "+multi", "+exec", "+hgetall", "+hget"];

describe("the documented grants of events and result()", () => {
  test("a user with them follows the events and waits for a result", async () => {
    const q = "watched";
    await user("watcher", aclKeyPattern(q), FENCE, ...CONNECT, ...VERBS.module, ...VERBS.scripts, ...EVENTS);
    const K = { meta: `emq:{${q}}:meta`, events: `emq:{${q}}:events`, row: (id: string) => `emq:{${q}}:job:${id}` };
    await command(server.port, ["DEL", K.events, K.row("JOB00000000001")]);
    const first = String(await command(server.port, ["XADD", K.events, "*", "type", "enqueued", "jobs", "JOB00000000001"]));
    await command(server.port, ["HSET", K.row("JOB00000000001"), "state", "pending"]);
    const watcher = await EchoMQ.connect<string>({
      addresses: [{ host: server.host, port: server.port }],
      credentials: { username: "watcher", password: "pw" },
      backend: "scripts",
    });
    try {
      const it = watcher.events(q, { from: "start" })[Symbol.asyncIterator]();
      expect((await it.next()).value).toEqual({ id: `${first}:0`, type: "enqueued", jobId: "JOB00000000001" });
      const waiting = watcher.result(q, "JOB00000000001", { timeoutMs: 10_000 });
      await Bun.sleep(300);
      await command(server.port, ["HSET", K.row("JOB00000000001"), "state", "completed", "result", '"ok"']);
      await command(server.port, ["XADD", K.events, "*", "type", "completed", "jobs", "JOB00000000001"]);
      expect(await waiting).toBe("ok");
      expect((await it.next()).value).toMatchObject({ type: "completed", jobId: "JOB00000000001" });
      await it.return!();
    } finally {
      await watcher.close();
    }
  }, 30_000);
});

describe("on call under ACL (issue 37)", () => {
  test("a user limited to one queue reads its jobs' failures and logs, and is refused another queue's", async () => {
    await user("oncall", aclKeyPattern("mine"), FENCE, ...CONNECT, ...VERBS.module, ...VERBS.scripts, ...READS);
    for (const q of ["mine", "theirs"]) {
      const id = await owner.enqueue(q, "p", { name: "n", id: (q === "mine" ? "JOB0000000000m" : "JOB0000000000t") as JobId });
      const job = (await owner.claim(q, { leaseMs: 60_000 }))!;
      await owner.log(job, `log of ${q}`);
      await owner.bury(job, "r", { error: new Error(`failed in ${q}`) });
      expect(id).toBe(job.id);
    }
    const oncall = await EchoMQ.connect<string>({
      addresses: [{ host: server.host, port: server.port }],
      credentials: { username: "oncall", password: "pw" },
      backend: "scripts",
    });
    try {
      const mine = (await oncall.getJob("mine", "JOB0000000000m"))!;
      expect([mine.name, mine.failures?.[0]?.message]).toEqual(["n", "failed in mine"]);
      expect((await oncall.jobLogs("mine", "JOB0000000000m")).lines).toEqual(["log of mine"]);
      expect((await oncall.findJobs("mine", "n")).jobs.map((j) => String(j.id))).toEqual(["JOB0000000000m"]);
      for (const read of [() => oncall.getJob("theirs", "JOB0000000000t"), () => oncall.jobLogs("theirs", "JOB0000000000t")]) {
        expect(String(await read().then(() => "read", (e: unknown) => e))).toContain("NOPERM");
      }
    } finally {
      await oncall.close();
    }
  });
});

/** What `metrics` adds to an operator's reads (docs/PACKAGE.md): the server's clock; its HMGET and HGET are among the reads. */
const HISTORY_READS = ["+time"];

for (const backend of BACKENDS) {
  describe(`the history key emq:{q}:metrics under ACL (issue 37, ${backend} backend)`, () => {
    test(
      "a worker limited to its queue writes its history; an operator limited to it reads its history, traces and logs, and is refused another queue's",
      async () => {
        const [mine, theirs] = [`hist-mine-${backend}`, `hist-theirs-${backend}`];
        await user(`hist-worker-${backend}`, aclKeyPattern(mine), FENCE, ...CONNECT, ...VERBS[backend], ...FIRE);
        await user(`hist-operator-${backend}`, aclKeyPattern(mine), FENCE, ...CONNECT, ...VERBS[backend], ...READS, ...HISTORY_READS);
        const connectAs = (name: string): Promise<EchoMQ<string>> =>
          EchoMQ.connect<string>({ addresses: [{ host: server.host, port: server.port }], credentials: { username: name, password: "pw" }, backend });
        // the other tenant's queue has a history of its own (written by the owner)
        await owner.enqueue(theirs, "t");
        await owner.ack((await owner.claim(theirs, { leaseMs: 60_000 }))!);
        expect((await owner.metrics(theirs, { minutes: 5 })).latency.run.count).toBe(1);

        const worker = await connectAs(`hist-worker-${backend}`);
        const operator = await connectAs(`hist-operator-${backend}`);
        try {
          const ids = await worker.enqueueMany(mine, ["ok-1", "ok-2", "bad"]);
          const errors: unknown[] = [];
          const w = worker.work(mine, async (job) => {
            await job.log(`ran ${job.payload}`);
            if (job.payload === "bad") throw new Error("card declined");
          }, { blockMs: 100, maxAttempts: 1, onError: (e) => errors.push(e) });
          await eventually(async () => (await owner.counts(mine)).completed === 2 && (await owner.counts(mine)).dead === 1);
          await w.stop();
          expect(errors.filter((e) => String(e).includes("NOPERM"))).toEqual([]);
          // the settles wrote the history in the queue's metrics hash, under the worker's grant
          expect(Number(await command(server.port, ["EXISTS", `emq:{${mine}}:metrics`]))).toBe(1);

          const m = await operator.metrics(mine, { minutes: 5 });
          const sum = (k: "processed" | "failed") => m.minutes.reduce((n, x) => n + x[k], 0);
          expect([sum("processed"), sum("failed")]).toEqual([2, 1]);
          expect([m.latency.wait.count, m.latency.run.count]).toEqual([3, 3]);
          const bad = (await operator.getJob(mine, ids[2]!))!;
          expect(bad.failures?.map((f) => f.message)).toEqual(["card declined"]);
          expect(bad.failures?.[0]?.stack).toContain("Error: card declined\n");
          expect((await operator.jobLogs(mine, ids[2]!)).lines).toEqual(["ran bad"]);

          // another queue's history, and its job's trace and log: NOPERM, on the reads as on the verbs
          const theirId = (await owner.jobs(theirs, "completed"))[0]!.id;
          for (const read of [() => operator.metrics(theirs), () => operator.getJob(theirs, theirId), () => operator.jobLogs(theirs, theirId)]) {
            expect(String(await read().then(() => "read", (e: unknown) => e))).toContain("NOPERM");
          }
          const e = await operator.retain(theirs, { historyMinutes: 0 }).catch((x: unknown) => x);
          expect((e as WireError).rule).toBe("noperm");
          expect((await owner.metrics(theirs, { minutes: 5 })).latency.run.count).toBe(1);
        } finally {
          await worker.close();
          await operator.close();
          await owner.drop(mine);
          await owner.drop(theirs);
        }
      },
      60_000,
    );
  });
}
