/**
 * Effects replication: a mixed workload on a primary (every verb, time-reading ones included,
 * orphans, refusals) leaves its replica with the same DEBUG DIGEST — time fields included, since
 * the module replicates the values it wrote, not the commands it ran.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { command, type ReplicatedHandle, startReplicated, startServer, waitForSync } from "../../tools/embedded/mod.ts";
import { call, digest, expectOk, jobId, queue, requireModule, sleep, standalone } from "./_native.ts";

let pair: ReplicatedHandle;
let primary: GlideClient;

beforeAll(async () => {
  pair = await startReplicated({ module: requireModule() });
  primary = await standalone(pair.primary.port);
}, 60_000);

afterAll(async () => {
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

test("a mixed workload leaves primary and replica with equal digests", async () => {
  const queues = ["alpha", "beta", "gamma:high"].map(queue);
  let n = 0;
  const run = async (args: string[]) => await call(primary, args);
  for (let round = 0; round < 3; round++) {
    for (const q of queues) {
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) {
        const id = jobId(++n);
        ids.push(id);
        if (i % 3 === 0) {
          expectOk(await run(["EMQ.SCHEDULE", "2", q.row(id), q.schedule, id, String(i % 2 ? 1 : Date.now() + 60_000), `s${i}`]), 1);
        } else {
          expectOk(await run(["EMQ.ENQUEUE", "2", q.row(id), q.pending, id, JSON.stringify({ i, round })]), 1);
        }
      }
      // orphans on the tail: CLAIM drops them
      expectOk(await run(["RPUSH", q.pending, jobId(900_000 + n)]));
      expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "7"]));
      const claimed: string[] = [];
      for (let i = 0; i < 12; i++) {
        const out = expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, i % 4 === 0 ? "1" : "60000"]));
        if (Array.isArray(out)) claimed.push(String(out[0]));
      }
      for (const [i, id] of claimed.entries()) {
        if (i % 4 === 1) await run(["EMQ.ACK", "2", q.row(id), q.active, id]);
        if (i % 4 === 2) await run(["EMQ.RETRY", "3", q.row(id), q.active, q.schedule, id, "1", `retry ${i}`]);
        if (i % 4 === 3) await run(["EMQ.BURY", "3", q.row(id), q.active, q.dead, id, `bury ${i}`]);
      }
      // refusals in the mix: they must not replicate anything
      await run(["EMQ.ENQUEUE", "2", q.row(ids[1]!), q.pending, ids[1]!, "dup"]);
      await run(["EMQ.ACK", "2", q.row(jobId(999_999)), q.active, jobId(999_999)]);
      await sleep(5);
      expectOk(await run(["EMQ.REAP", "3", q.active, q.pending, q.base, "100"]));
      expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "100"]));
    }
  }
  expectOk(await call(primary, ["WAIT", "1", "5000"]));
  await waitForSync(pair.primary.port, pair.replica.port);
  const [dp, dr] = [await digest(primary), String(await onReplica(["DEBUG", "DIGEST"]))];
  if (dp !== dr) {
    const onPrimary = async (args: string[]) => expectOk(await call(primary, args));
    expect(await keyDigests(onReplica)).toEqual(await keyDigests(onPrimary));
  }
  expect(dr).toBe(dp);
  expect(dp).not.toBe("0".repeat(40));
  // time fields made it across verbatim
  const someRow = ((await onReplica(["KEYS", "emq:{alpha}:job:*"])) as unknown[]).map(String)[0]!;
  const p = expectOk(await call(primary, ["HGET", someRow, "created_ms"]));
  expect(await onReplica(["HGET", someRow, "created_ms"])).toEqual(p);
  expect(Number(p)).toBeGreaterThan(1_600_000_000_000);
}, 60_000);

test("an AOF replay rebuilds the same keyspace (effects, not commands, are logged)", async () => {
  const server = await startServer({ module: requireModule(), args: ["--appendonly", "yes", "--appendfsync", "always"] });
  const db = await standalone(server.port);
  try {
    const q = queue("aof");
    for (let i = 1; i <= 20; i++) {
      expectOk(await call(db, ["EMQ.ENQUEUE", "2", q.row(jobId(i)), q.pending, jobId(i), `p${i}`]), 1);
    }
    expectOk(await call(db, ["EMQ.SCHEDULE", "2", q.row(jobId(21)), q.schedule, jobId(21), "1", "s"]), 1);
    for (let i = 0; i < 10; i++) expectOk(await call(db, ["EMQ.CLAIM", "3", q.pending, q.active, q.base, i < 3 ? "1" : "60000"]));
    expectOk(await call(db, ["EMQ.ACK", "2", q.row(jobId(4)), q.active, jobId(4)]), 1);
    expectOk(await call(db, ["EMQ.RETRY", "3", q.row(jobId(5)), q.active, q.schedule, jobId(5), "60000", "r"]), 1);
    expectOk(await call(db, ["EMQ.BURY", "3", q.row(jobId(6)), q.active, q.dead, jobId(6), "r"]), 1);
    await sleep(10);
    expectOk(await call(db, ["EMQ.REAP", "3", q.active, q.pending, q.base, "10"]), 3);
    expectOk(await call(db, ["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]), 1);
    const before = await digest(db);
    await sleep(20); // replayed time fields must not move
    expectOk(await call(db, ["DEBUG", "LOADAOF"]));
    expect(await digest(db)).toBe(before);
  } finally {
    db.close();
    await server.stop();
  }
}, 60_000);
