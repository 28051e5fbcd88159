/**
 * ACL key patterns apply to EMQ.* because the module declares its keys: a user limited to
 * `~emq:{t1}:*` runs every verb on queue t1 and gets NOPERM for every verb on t2, with nothing
 * written. Checked for a `+@all` user and for a user granted only the module's `@emq` category
 * (plus what glide needs to connect).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { call, digest, expectOk, jobId, queue, requireModule, standalone, VERBS, type VerbName, wellFormed } from "./_native.ts";

let server: ServerHandle;
let admin: GlideClient;

beforeAll(async () => {
  server = await startServer({ module: requireModule() });
  admin = await standalone(server.port);
  expectOk(await call(admin, ["ACL", "SETUSER", "all-t1", "on", ">pw", "resetkeys", "~emq:{t1}:*", "+@all"]));
  // glide's handshake needs INFO and CLIENT; the verbs come from @emq alone
  expectOk(await call(admin, ["ACL", "SETUSER", "emq-t1", "on", ">pw", "resetkeys", "~emq:{t1}:*", "+@emq", "+info", "+client", "+ping"]));
}, 60_000);

afterAll(async () => {
  admin?.close();
  await server?.stop();
});

const t1 = queue("t1");

/** Runs every verb in a sequence that makes each one succeed on `q`. */
async function everyVerb(user: GlideClient, q: typeof t1, base: number): Promise<Record<VerbName, unknown>> {
  const [a, b] = [jobId(base + 1), jobId(base + 2)];
  const out = {} as Record<VerbName, unknown>;
  const run = async (verb: VerbName, args: string[]) => {
    out[verb] = expectOk(await call(user, args));
  };
  await run("ENQUEUE", ["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "p"]);
  await run("SCHEDULE", ["EMQ.SCHEDULE", "2", q.row(b), q.schedule, b, "1", "p"]);
  await run("PROMOTE", ["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]);
  await run("CLAIM", ["EMQ.CLAIM", "3", q.pending, q.active, q.base, "1"]);
  await new Promise((r) => setTimeout(r, 5));
  await run("REAP", ["EMQ.REAP", "3", q.active, q.pending, q.base, "10"]);
  expectOk(await call(user, ["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
  expectOk(await call(user, ["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
  await run("ACK", ["EMQ.ACK", "2", q.row(a), q.active, a]);
  await run("RETRY", ["EMQ.RETRY", "3", q.row(b), q.active, q.schedule, b, "1", "r"]);
  await new Promise((r) => setTimeout(r, 5));
  expectOk(await call(user, ["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]));
  expectOk(await call(user, ["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
  await run("BURY", ["EMQ.BURY", "3", q.row(b), q.active, q.dead, b, "r"]);
  return out;
}

for (const name of ["all-t1", "emq-t1"]) {
  describe(`user ${name} (~emq:{t1}:*)`, () => {
    let user: GlideClient;
    const t2 = queue(`t2-${name}`);
    beforeAll(async () => {
      user = await standalone(server.port, { username: name, password: "pw" });
    });
    afterAll(() => user?.close());

    test("runs every verb on t1", async () => {
      const replies = await everyVerb(user, t1, name === "all-t1" ? 100 : 200);
      expect(replies).toEqual({
        ENQUEUE: 1,
        SCHEDULE: 1,
        PROMOTE: 1,
        CLAIM: [jobId(name === "all-t1" ? 101 : 201), "p", 1],
        REAP: 1,
        ACK: 1,
        RETRY: 1,
        BURY: 1,
      });
    });

    test("gets NOPERM for every verb on t2, nothing written", async () => {
      // give t2 some state, so that each verb would otherwise succeed
      await everyVerb(admin, t2, name === "all-t1" ? 300 : 400);
      const id = jobId(name === "all-t1" ? 301 : 401);
      expectOk(await call(admin, ["EMQ.ENQUEUE", "2", t2.row(jobId(999)), t2.pending, jobId(999), "p"]));
      const before = await digest(admin);
      for (const verb of VERBS) {
        const out = await call(user, wellFormed(verb, t2, verb === "ENQUEUE" ? jobId(998) : id));
        expect(out).toHaveProperty("err");
        expect((out as { err: string }).err).toMatch(/NOPERM|No permissions to access a key/);
      }
      expect(await digest(admin)).toBe(before);
    });

    test("a call mixing t1 and t2 keys is refused by ACL before the module runs", async () => {
      const before = await digest(admin);
      const args = wellFormed("CLAIM", t1, jobId(1));
      args[3] = t2.active;
      const out = await call(user, args);
      expect((out as { err: string }).err).toMatch(/NOPERM|No permissions to access a key/);
      expect(await digest(admin)).toBe(before);
    });
  });
}
