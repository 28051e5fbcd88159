/**
 * Tenants: a user limited by ACL to `~emq:{t1}:*` cannot read or change queue t2 through any
 * client call — enqueue, enqueueMany, schedule, claim, ack, retry, bury, promote, reap, counts,
 * work: each is refused with NOPERM and the server's digest (so every t2 key) is unchanged — while
 * the same calls on t1 succeed. Checked for a `+@all` user on both backends, and for a user
 * granted only the module's `@emq` category plus what connecting and `counts` need.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { EchoMQ, type Job } from "../../client.ts";
import type { JobId } from "../../mod.ts";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { call, digest, expectOk, requireModule, sleep, standalone } from "../native/_native.ts";

const NOPERM = /NOPERM|No permissions to access a key/;

let server: ServerHandle;
let admin: GlideClient;
let owner: EchoMQ<{ n: number }>; // the default user: prepares t2

beforeAll(async () => {
  server = await startServer({ module: requireModule() });
  admin = await standalone(server.port);
  expectOk(await call(admin, ["ACL", "SETUSER", "t1-all", "on", ">pw", "resetkeys", "~emq:{t1}:*", "+@all"]));
  // connecting needs INFO, CLIENT, PING and COMMAND INFO (backend detection); counts needs
  // MULTI/EXEC, LLEN and ZCARD; every verb comes from @emq alone
  expectOk(
    await call(admin, [
      "ACL", "SETUSER", "t1-emq", "on", ">pw", "resetkeys", "~emq:{t1}:*",
      "+@emq", "+info", "+client", "+ping", "+command|info", "+multi", "+exec", "+llen", "+zcard",
    ]),
  );
  owner = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: "127.0.0.1", port: server.port }], backend: "module" });
}, 60_000);

afterAll(async () => {
  await owner?.close();
  admin?.close();
  await server?.stop();
});

/** Puts jobs on `q` in every state a call could act on; returns ids that are active. */
async function prepare(q: string): Promise<JobId[]> {
  await owner.enqueueMany(q, Array.from({ length: 8 }, (_, n) => ({ n })));
  const active: JobId[] = [];
  for (let i = 0; i < 3; i++) active.push((await owner.claim(q, { leaseMs: 600_000 }))!.id);
  await owner.claim(q, { leaseMs: 1 }); // an expired lease: something to reap
  await owner.schedule(q, { n: 99 }, { at: Date.now() - 1000 }); // due: something to promote
  await sleep(5);
  return active;
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
        ack: () => mq.ack({ id: a!, queue: t2 }),
        retry: () => mq.retry({ id: b!, queue: t2 }, { delayMs: 1 }),
        bury: () => mq.bury({ id: c!, queue: t2 }, "no"),
        promote: () => mq.promote(t2),
        reap: () => mq.reap(t2),
        counts: () => mq.counts(t2),
      };
      for (const [name, run] of Object.entries(calls)) {
        const e = await run().then((ok) => ({ resolved: ok }), (err: unknown) => err);
        expect({ name, error: e instanceof Error ? e.message : e }).toEqual({ name, error: expect.stringMatching(NOPERM) });
      }
      // a worker gets NOPERM on every claim and maintenance round, and never runs its handler
      const errors: unknown[] = [];
      let ran = 0;
      const w = mq.work(t2, () => void ran++, { pollMs: 20, maintenanceMs: 50, onError: (e) => errors.push(e) });
      const until = Date.now() + 10_000;
      while (errors.length < 5 && Date.now() < until) await sleep(20);
      await w.stop();
      expect(ran).toBe(0);
      expect(errors.length).toBeGreaterThanOrEqual(5);
      for (const e of errors) expect(e instanceof Error ? e.message : String(e)).toMatch(NOPERM);
      expect(await digest(admin)).toBe(before);
      // the owner still sees t2 as prepared
      expect(await owner.counts(t2)).toEqual({ pending: 4, active: 4, schedule: 1, dead: 0 });
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
      await mq.ack(got[0]!);
      await mq.retry(got[1]!, { delayMs: 1, reason: "again" });
      await mq.bury(got[2]!, "done with it");
      await mq.claim(t1, { leaseMs: 1 }); // job 5, lease runs out at once
      await sleep(5);
      expect(await mq.reap(t1)).toBe(1);
      await sleep(5);
      expect(await mq.promote(t1)).toBe(1); // the retried job
      const handled: number[] = [];
      const w = mq.work(t1, (job) => void handled.push(job.payload.n), { pollMs: 10, maintenanceMs: 50 });
      const until = Date.now() + 20_000;
      while (handled.length < 2 && Date.now() < until) await sleep(20);
      await w.stop();
      expect(handled.sort()).toEqual([2, 5]);
      await mq.ack(got[3]!);
      expect(await mq.counts(t1)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 1 });
      // t1 is shared by the combos: leave it empty but for the dead
      expectOk(await call(admin, ["DEL", "emq:{t1}:dead"]));
      expectOk(await call(admin, ["DEL", `emq:{t1}:job:${got[2]!.id}`]));
    }, 60_000);
  });
}
