/**
 * Failover: a 3-primary cluster with a replica per primary (the victim's shard gets a second one,
 * which follows the promoted replica afterwards, so durable writes can be acknowledged again), the
 * module backend, producers enqueueing with `durable` on queues of every primary, and workers on
 * every queue. One primary is SIGKILLed mid-run; its replica is promoted; the clients carry on
 * without a restart. At the end every acknowledged durable enqueue was handled (acked) or is in
 * `dead`: nothing lost. Jobs handled twice (a claim or ack lost with the dead primary, then reaped
 * after the lease) are counted and printed.
 */
import { expect, test } from "bun:test";
import { type GlideClusterClient } from "@valkey/valkey-glide";
import { DurabilityError, EchoMQ, LeaseLostError, type Worker } from "../../client.ts";
import { type JobId, keyspace, slot } from "../../mod.ts";
import {
  type ClusterHandle,
  command,
  infoFields,
  modulePath,
  replicasOf,
  type ServerHandle,
  startCluster,
  startServer,
  waitUntil,
} from "../../tools/embedded/mod.ts";
import { cluster as glideCluster, requireModule, sleep } from "../native/_native.ts";
import { useClosers } from "./_server.ts";

const NODE_TIMEOUT_MS = 2000;
const ARGS = ["--cluster-node-timeout", String(NODE_TIMEOUT_MS)];
const LEASE_MS = 3000;
const PRODUCERS = 4;
const RATE_PER_S = 1500; // producer calls per second, all loops together (paced, not a target)
const MAX_ENQUEUES = 150_000; // bound on producer calls, whatever happens
const BEFORE_KILL_MS = 3000;
const AFTER_RECOVERY_MS = 2000;
const RECOVERY_CAP_MS = 60_000;
const DRAIN_CAP_MS = 90_000;

let site: ClusterHandle | undefined;
let extra: ServerHandle | undefined;
const closers = useClosers(() => Promise.all([site?.stop(), extra?.stop()]));

/**
 * Runs an admin read, retrying while the idle admin client has not yet learnt the new topology
 * (glide answers ConnectionNotFoundForRoute for the dead primary's slots until it refreshes).
 */
async function settled<T>(read: () => Promise<T>, tries = 40): Promise<T> {
  for (let i = 1;; i++) {
    try {
      return await read();
    } catch (e) {
      if (i >= tries) throw e;
      await sleep(250);
    }
  }
}

async function replication(port: number): Promise<Record<string, string>> {
  return infoFields(await command(port, ["INFO", "replication"]));
}

test("SIGKILL of a primary mid-run: durable enqueues are never lost; duplicates are counted", async () => {
  requireModule();
  site = await startCluster({ primaries: 3, replicasPerPrimary: 1, module: modulePath(), args: ARGS });
  const c = site;
  const victim = c.primaries[0]!;

  // A second replica for the victim's shard: after the failover it follows the promoted replica.
  extra = await startServer({ module: modulePath(), cluster: true, args: ARGS });
  const x = extra;
  await command(x.port, ["CLUSTER", "MEET", "127.0.0.1", String(victim.server.port)]);
  await waitUntil("the new node to know the victim", async () => String(await command(x.port, ["CLUSTER", "NODES"])).includes(victim.id), 30_000, 100);
  await waitUntil("CLUSTER REPLICATE to be accepted", async () => (await command(x.port, ["CLUSTER", "REPLICATE", victim.id])) === "OK", 30_000, 200);
  await waitUntil(
    "the second replica to sync",
    async () => {
      const r = await replication(x.port);
      return r["master_link_status"] === "up" && r["master_sync_in_progress"] === "0";
    },
    60_000,
    100,
  );
  for (const n of [...c.nodes.map((n) => n.server), x]) {
    await waitUntil(
      `${n.address} to know 7 nodes`,
      async () => infoFields(await command(n.port, ["CLUSTER", "INFO"]))["cluster_known_nodes"] === "7",
      30_000,
      100,
    );
  }
  const victimReplicaPorts: number[] = [x.port, ...(await replicasOf(c, victim)).map((r) => r.server.port)];
  expect(victimReplicaPorts.length).toBe(2);

  // Two queues per primary.
  const queues: string[] = [];
  const perPrimary = new Map<string, number>();
  for (let i = 0; queues.length < 6 && i < 10_000; i++) {
    const q = `fo-${i}`;
    const owner = c.primaryForSlot(slot(keyspace(q).pending)).id;
    if ((perPrimary.get(owner) ?? 0) >= 2) continue;
    perPrimary.set(owner, (perPrimary.get(owner) ?? 0) + 1);
    queues.push(q);
  }
  const onVictim = new Set(queues.filter((q) => c.primaryForSlot(slot(keyspace(q).pending)).id === victim.id));
  expect(onVictim.size).toBe(2);

  const options = {
    addresses: [...c.addresses],
    cluster: true,
    backend: "module" as const,
    requestTimeout: 5000,
  };
  const producer = await EchoMQ.connect<{ seq: number }>(options);
  closers.push(() => producer.close());
  const consumer = await EchoMQ.connect<{ seq: number }>(options);
  closers.push(() => consumer.close());
  const admin: GlideClusterClient = await glideCluster(c.addresses);
  closers.push(() => admin.close());

  // Workers: every handling is recorded.
  const handled = new Map<string, number>();
  const attemptsSeen = new Map<string, number[]>(); // id → attempts of each handling
  let workerErrors = 0;
  let lateAcks = 0; // a settle or extension refused (LeaseLostError): the job had been reaped and handed out again
  const workers: Array<Worker<{ seq: number }>> = queues.map((q) =>
    consumer.work(q, async (job) => {
      handled.set(job.id, (handled.get(job.id) ?? 0) + 1);
      attemptsSeen.set(job.id, [...(attemptsSeen.get(job.id) ?? []), job.attempts]);
      if (job.payload.seq % 40 === 0) await sleep(15); // some jobs are mid-handler at the kill
    }, {
      concurrency: 2,
      leaseMs: LEASE_MS,
      maintenanceMs: 1000,
      blockMs: 1000,
      maxAttempts: 5,
      onError: (e) => {
        workerErrors++;
        if (e instanceof LeaseLostError) lateAcks++;
      },
    })
  );

  // Producers: durable enqueues; a failed call is counted and the loop goes on.
  const acknowledged = new Map<string, string>(); // id → queue
  const unconfirmed = new Set<string>(); // written on a primary, not confirmed by a replica
  const failures = new Map<string, number>();
  let calls = 0;
  let seq = 0;
  // a flag in an object: a closure-captured `let` flipped from outside was seen stale by the
  // loops under Bun 1.3.5 (JIT), so they ran on long after the stop
  const run = { producing: true };
  let killedAt = 0;
  let firstWriteAfterKill = 0; // the client reached the promoted primary (acknowledged or not)
  let firstAckAfterKill = 0; // a durable enqueue on the victim's shard acknowledged again
  let nextAt = Date.now(); // pacing: no catching up after a stall
  const producerLoop = async (): Promise<void> => {
    while (run.producing && calls < MAX_ENQUEUES) {
      const now = Date.now();
      const wait = nextAt - now;
      nextAt = Math.max(nextAt, now) + 1000 / RATE_PER_S;
      if (wait > 0) await sleep(wait);
      calls++;
      const n = seq++;
      const q = queues[n % queues.length]!;
      try {
        const id = await producer.enqueue(q, { seq: n }, { durable: { timeoutMs: 2000 } });
        acknowledged.set(id, q);
        if (killedAt > 0 && onVictim.has(q)) {
          firstWriteAfterKill ||= Date.now();
          firstAckAfterKill ||= Date.now();
        }
      } catch (e) {
        const kind = e instanceof Error ? e.name : typeof e;
        failures.set(kind, (failures.get(kind) ?? 0) + 1);
        if (e instanceof DurabilityError) {
          for (const id of e.ids) unconfirmed.add(id);
          if (killedAt > 0 && onVictim.has(q)) firstWriteAfterKill ||= Date.now();
        }
        await sleep(20);
      }
    }
  };
  const producers = Array.from({ length: PRODUCERS }, producerLoop);

  await sleep(BEFORE_KILL_MS);
  const beforeKill = acknowledged.size;
  process.kill(victim.server.pid, "SIGKILL");
  killedAt = Date.now();
  await waitUntil(
    "a replica of the victim to be promoted",
    async () => {
      for (const port of victimReplicaPorts) {
        if ((await replication(port))["role"] === "master") return true;
      }
      return false;
    },
    RECOVERY_CAP_MS,
    100,
  );
  const promotedAt = Date.now();
  await waitUntil("a durable enqueue on the victim's shard to be acknowledged", async () => firstAckAfterKill > 0, RECOVERY_CAP_MS, 50);
  await sleep(AFTER_RECOVERY_MS);
  run.producing = false;
  await Promise.all(producers);

  // Drain: nothing pending, active or scheduled on any queue.
  let left: Record<string, unknown> = {};
  await waitUntil(
    "the queues to drain",
    async () => {
      left = {};
      for (const q of queues) {
        const n = await consumer.counts(q);
        if (n.pending + n.active + n.schedule > 0) left[q] = { ...n, victim: onVictim.has(q) };
      }
      return Object.keys(left).length === 0;
    },
    DRAIN_CAP_MS,
    250,
  ).catch((e) => {
    const states = workers.map((w) => `${w.queue}: running ${w.running}, completed ${w.completed}, failed ${w.failed}, lost ${w.lost}`);
    throw new Error(`${(e as Error).message}; left ${JSON.stringify(left)}; workers ${states.join(" | ")}; errors ${workerErrors}`);
  });
  await Promise.all(workers.map((w) => w.stop()));

  // The keyspace after the drain: dead ids, completed ids (kept by the default retention of wire
  // 10), and rows left (only dead and kept completed jobs may keep a row).
  const dead = new Set<string>();
  const kept = new Set<string>();
  let rowsLeft = 0;
  for (const q of queues) {
    const ks = keyspace(q);
    const route = { type: "primarySlotKey" as const, key: ks.pending };
    for (const id of (await settled(() => admin.customCommand(["ZRANGE", ks.dead, "0", "-1"], { route }))) as string[]) {
      dead.add(String(id));
    }
    for (const id of (await settled(() => admin.customCommand(["ZRANGE", ks.completed, "0", "-1"], { route }))) as string[]) {
      kept.add(String(id));
    }
    let cursor = "0";
    let guard = 0;
    do {
      const [next, keys] = (await settled(() => admin.customCommand(["SCAN", cursor, "MATCH", `${ks.base}job:*`, "COUNT", "1000"], { route }))) as [
        string,
        string[],
      ];
      cursor = String(next);
      rowsLeft += keys.length;
    } while (cursor !== "0" && ++guard < 10_000);
  }

  let lost = 0;
  const lostIds: string[] = [];
  for (const id of acknowledged.keys()) {
    if ((handled.get(id) ?? 0) === 0 && !dead.has(id)) {
      lost++;
      if (lostIds.length < 10) lostIds.push(id);
    }
  }
  let duplicates = 0;
  let handledTotal = 0;
  let afterReap = 0; // handed out again with a higher attempt count: a lease ran out (ack lost or late)
  let claimLost = 0; // handed out again with the same count: the claim itself died with the primary
  let onOtherShards = 0;
  for (const [id, n] of handled) {
    handledTotal += n;
    duplicates += n - 1;
    if (n < 2) continue;
    const seen = attemptsSeen.get(id)!;
    for (let i = 1; i < seen.length; i++) {
      if (seen[i]! > seen[i - 1]!) afterReap++;
      else claimLost++;
    }
    if (!onVictim.has(acknowledged.get(id) ?? "")) onOtherShards += n - 1;
  }
  const unackedHandled = [...handled.keys()].filter((id) => !acknowledged.has(id)).length;
  const completed = workers.reduce((s, w) => s + w.completed, 0);
  const failed = [...failures.entries()].map(([k, v]) => `${k} ${v}`).join(", ") || "none";
  console.log(
    `[failover] recovery: promotion seen (polling) after ${promotedAt - killedAt} ms, client wrote to the promoted primary after ` +
      `${firstWriteAfterKill - killedAt} ms, durable acks again after ${firstAckAfterKill - killedAt} ms | ` +
      `enqueue calls ${calls}: acknowledged ${acknowledged.size} (${beforeKill} before the kill), ` +
      `not acknowledged ${calls - acknowledged.size} (${failed}; ${unconfirmed.size} written but unconfirmed) | ` +
      `handled ${handledTotal} (${handled.size} distinct, ${unackedHandled} of them never acknowledged), ` +
      `acks ${completed}, duplicates ${duplicates} (${afterReap} after a lease ran out, ${claimLost} claim lost with ` +
      `the primary; ${onOtherShards} on surviving shards; leases lost ${lateAcks}), dead ${dead.size}, ` +
      `rows left ${rowsLeft}, worker errors ${workerErrors} | lost ${lost}`,
  );
  expect(lostIds).toEqual([]);
  expect(lost).toBe(0);
  expect(firstAckAfterKill).toBeGreaterThan(0);
  expect(acknowledged.size).toBeGreaterThan(beforeKill);
  expect(rowsLeft).toBe(dead.size + kept.size); // every other row was acked and trimmed, or deleted
  expect([...kept].filter((id) => (handled.get(id) ?? 0) === 0)).toEqual([]); // kept completed only once handled
  for (const id of dead) expect(handled.has(id) || acknowledged.has(id as JobId) || unconfirmed.has(id)).toBe(true);
}, 240_000);
