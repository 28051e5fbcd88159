/**
 * Tenants: a user limited by ACL to `~emq:{t1}:*` cannot read or change queue t2 through
 * any client call — enqueue, enqueueMany, schedule, claim, claimMany, ack, retry, bury, extend,
 * settleMany, promote, reap, counts, work: each is refused with NOPERM and the server's digest (so
 * every t2 key) is unchanged — while the same calls on t1 succeed (claimed jobs carry their lease
 * token; ack, retry, bury and extend take the claimed job). Checked for a `+@all` user on both
 * backends, and for a user granted only the module's `@emq` category plus what connecting and
 * `counts` need.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { EchoMQ, type Job } from "../../client.ts";
import { serverText } from "../../lib/client/errors.ts";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { call, digest, expectOk, refusal, requireModule, sleep, standalone } from "../native/_native.ts";

const NOPERM = refusal("noperm", "CLAIM", {});

let server: ServerHandle;
let admin: GlideClient;
let owner: EchoMQ<{ n: number }>; // the default user: prepares t2

beforeAll(async () => {
  server = await startServer({ module: requireModule() });
  admin = await standalone(server.port);
  expectOk(await call(admin, ["ACL", "SETUSER", "t1-all", "on", ">pw", "resetkeys", "~emq:{t1}:*", "+@all"]));
  // connecting needs INFO, CLIENT, PING and COMMAND INFO (backend detection); counts needs
  // MULTI/EXEC, LLEN, ZCARD and HGET (meta's prioritized: the ready jobs of priorities ≥ 1); every
  // verb comes from @emq alone
  expectOk(
    await call(admin, [
      "ACL",
      "SETUSER",
      "t1-emq",
      "on",
      ">pw",
      "resetkeys",
      "~emq:{t1}:*",
      "+@emq",
      "+info",
      "+client",
      "+ping",
      "+command|info",
      "+multi",
      "+exec",
      "+llen",
      "+zcard",
      "+hget",
    ]),
  );
  owner = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: "127.0.0.1", port: server.port }], backend: "module" });
}, 60_000);

afterAll(async () => {
  await owner?.close();
  admin?.close();
  await server?.stop();
});

/** Puts jobs on `q` in every state a call could act on; returns jobs that are active (with their tokens). */
async function prepare(q: string): Promise<Array<Job<{ n: number }>>> {
  await owner.enqueueMany(q, Array.from({ length: 8 }, (_, n) => ({ n })));
  const active: Array<Job<{ n: number }>> = [];
  for (let i = 0; i < 3; i++) active.push((await owner.claim(q, { leaseMs: 600_000 }))!);
  await owner.claim(q, { leaseMs: 1 }); // an expired lease: something to reap
  await owner.schedule(q, { n: 99 }, { at: Date.now() - 1000 }); // due: something to promote
  await sleep(5);
  return active;
}

/** The text of an error: the server's, as it was on the wire, when it is a server reply glide raised. */
const textOf = (e: unknown): unknown => (e instanceof Error ? serverText(e) ?? e.message : e);

/** The text of what `run` rejected with (or the value it resolved to). */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  return await run().then((ok) => ({ resolved: ok }), textOf);
}

const combos = [
  { user: "t1-all", backend: "module" },
  { user: "t1-all", backend: "scripts" },
  { user: "t1-emq", backend: "module" },
] as const;

for (const { user, backend } of combos) {
  describe(`user ${user} (~emq:{t1}:*), ${backend} backend`, () => {
    let mq: EchoMQ<{ n: number }>;
    const t1 = `t1`;
    const t2 = `t2-${user}-${backend}`;

    beforeAll(async () => {
      mq = await EchoMQ.connect<{ n: number }>({
        addresses: [{ host: "127.0.0.1", port: server.port }],
        credentials: { username: user, password: "pw" },
        backend,
        requestTimeout: 10_000,
      });
    }, 30_000);
    afterAll(() => mq?.close());

    test("every call on t2 is refused with NOPERM; nothing changes", async () => {
      const [a, b, c] = await prepare(t2);
      const before = await digest(admin);
      const calls: Record<string, () => Promise<unknown>> = {
        enqueue: () => mq.enqueue(t2, { n: 1 }),
        "enqueue durable": () => mq.enqueue(t2, { n: 1 }, { durable: { timeoutMs: 50 } }),
        enqueueMany: () => mq.enqueueMany(t2, [{ n: 1 }, { n: 2 }]),
        schedule: () => mq.schedule(t2, { n: 1 }, { delayMs: 1 }),
        claim: () => mq.claim(t2, { leaseMs: 1000 }),
        claimMany: () => mq.claimMany(t2, 5, { leaseMs: 1000 }),
        ack: () => mq.ack(a!),
        retry: () => mq.retry(b!, { delayMs: 1 }),
        bury: () => mq.bury(c!, "no"),
        extend: () => mq.extend([a!, b!], 60_000),
        promote: () => mq.promote(t2),
        reap: () => mq.reap(t2),
        counts: () => mq.counts(t2),
      };
      for (const [name, run] of Object.entries(calls)) {
        expect({ name, error: await outcome(run) }).toEqual({ name, error: expect.stringContaining(NOPERM) });
      }
      // settleMany resolves with one refusal per settlement
      const settled = await mq.settleMany([{ kind: "ack", job: a! }, { kind: "bury", job: c!, reason: "no" }]);
      expect(settled.map(textOf)).toEqual([
        expect.stringContaining(NOPERM),
        expect.stringContaining(NOPERM),
      ]);
      // a worker gets NOPERM on every claim (and wait), and never runs its handler
      const errors: unknown[] = [];
      let ran = 0;
      // (schedulers: false — this user may not read schedulers either: docs/PACKAGE.md's grants)
      const w = mq.work(t2, () => void ran++, { blockMs: 20, maintenanceMs: 1000, schedulers: false, onError: (e) => errors.push(e) });
      const until = Date.now() + 10_000;
      while (errors.length < 5 && Date.now() < until) await sleep(20);
      await w.stop();
      expect(ran).toBe(0);
      expect(errors.length).toBeGreaterThanOrEqual(5);
      for (const e of errors) expect(String(textOf(e))).toContain(NOPERM);
      expect(await digest(admin)).toBe(before);
      // the owner still sees t2 as prepared, and its tokens still hold
      expect(await owner.counts(t2)).toEqual({ pending: 4, active: 4, schedule: 1, dead: 0, completed: 0, waitingChildren: 0 });
      await owner.extend([a!, b!, c!], 600_000);
    }, 60_000);

    test("the same calls on t1 succeed", async () => {
      const first = await mq.enqueue(t1, { n: 1 });
      expect(first).toMatch(/^JOB/);
      expect((await mq.enqueueMany(t1, [{ n: 2 }, { n: 3 }, { n: 4 }])).length).toBe(3);
      await mq.schedule(t1, { n: 5 }, { at: Date.now() - 1000 });
      expect(await mq.promote(t1)).toBe(1);
      const got: Array<Job<{ n: number }>> = [];
      for (let i = 0; i < 4; i++) got.push((await mq.claim(t1, { leaseMs: 600_000 }))!);
      expect(got.map((j) => j.payload.n)).toEqual([1, 2, 3, 4]);
      // tokens: strictly increasing per queue
      for (let i = 1; i < got.length; i++) expect(got[i]!.token).toBeGreaterThan(got[i - 1]!.token);
      await mq.ack(got[0]!);
      await mq.retry(got[1]!, { delayMs: 1, reason: "again" });
      await mq.bury(got[2]!, "done with it");
      await mq.extend(got[3]!, 600_000);
      await sleep(5); // the retried job falls due: the next claim promotes it (after job 5, at the tail)
      const five = (await mq.claim(t1, { leaseMs: 1 }))!; // its lease runs out at once
      expect(five.payload.n).toBe(5);
      await sleep(5);
      expect(await mq.reap(t1)).toBe(1);
      expect(await mq.promote(t1)).toBe(0);
      // a settled job's token is stale
      await expect(mq.ack(got[0]!)).rejects.toThrow(/lease lost/);
      const handled: number[] = [];
      const w = mq.work(t1, (job) => void handled.push(job.payload.n), { blockMs: 50, maintenanceMs: 1000, schedulers: false });
      const until = Date.now() + 20_000;
      while (handled.length < 2 && Date.now() < until) await sleep(20);
      await w.stop();
      expect(handled.sort()).toEqual([2, 5]);
      await mq.ack(got[3]!);
      expect(await mq.counts(t1)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 1, completed: 4, waitingChildren: 0 });
      // t1 is shared by the combos: leave it empty — the dead job, and the four completed ones the
      // default retention kept (with the events their calls wrote)
      expectOk(await call(admin, ["DEL", "emq:{t1}:dead"]));
      expectOk(await call(admin, ["DEL", `emq:{t1}:job:${got[2]!.id}`]));
      const kept = (expectOk(await call(admin, ["ZRANGE", "emq:{t1}:completed", "0", "-1"])) as unknown[]).map(String);
      expect(kept).toHaveLength(4);
      expectOk(await call(admin, ["DEL", "emq:{t1}:completed", "emq:{t1}:events", ...kept.map((id) => `emq:{t1}:job:${id}`)]), 6);
    }, 60_000);
  });
}
