/**
 * Durable enqueue: `durable` sends the verb and `WAIT 1 <timeoutMs>` to the queue's primary in one
 * ordered batch. With a replica the call resolves and the replica already has the row; without
 * one it rejects with DurabilityError (rule `durable`) once the timeout has passed. In a cluster the
 * WAIT runs on the queue's own primary.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BatchError, childId, DurabilityError, EchoMQ, EchoMQError } from "../../client.ts";
import { jobKey, keyspace, slot } from "../../mod.ts";
import {
  command,
  modulePath,
  replicasOf,
  type ReplicatedHandle,
  type ServerHandle,
  startCluster,
  startReplicated,
  startServer,
} from "../../tools/embedded/mod.ts";
import { requireModule } from "../native/_native.ts";

let pair: ReplicatedHandle;
let lone: ServerHandle;

beforeAll(async () => {
  requireModule();
  [pair, lone] = await Promise.all([startReplicated({ module: modulePath() }), startServer({ module: modulePath() })]);
}, 120_000);

afterAll(async () => {
  await Promise.all([pair?.stop(), lone?.stop()]);
});

function connect(port: number, backend: "module" | "scripts"): Promise<EchoMQ<{ n: number }>> {
  return EchoMQ.connect<{ n: number }>({ addresses: [{ host: "127.0.0.1", port }], backend, requestTimeout: 10_000 });
}

for (const backend of ["module", "scripts"] as const) {
  describe(`durable (${backend})`, () => {
    test("with a replica: enqueue, schedule and enqueueMany resolve, and the replica has every row", async () => {
      const mq = await connect(pair.primary.port, backend);
      try {
        const q = `durable-${backend}`;
        const one = await mq.enqueue(q, { n: 1 }, { durable: true });
        // read at once, on a fresh connection to the replica: WAIT already proved it applied the write
        expect(await command(pair.replica.port, ["HGET", jobKey(q, one), "state"])).toBe("pending");
        const later = await mq.schedule(q, { n: 2 }, { delayMs: 60_000 }, { durable: { timeoutMs: 5_000 } });
        expect(await command(pair.replica.port, ["HGET", jobKey(q, later), "state"])).toBe("scheduled");
        const many = await mq.enqueueMany(q, Array.from({ length: 1500 }, (_, n) => ({ n })), { durable: true });
        expect(many.length).toBe(1500);
        let present = 0;
        for (let i = 0; i < many.length; i += 500) {
          const keys = many.slice(i, i + 500).map((id) => jobKey(q, id));
          present += Number(await command(pair.replica.port, ["EXISTS", ...keys]));
        }
        expect(present).toBe(1500);
        expect(await command(pair.replica.port, ["LLEN", `emq:{${q}}:pending`])).toBe(1501);
      } finally {
        await mq.close();
      }
    }, 60_000);

    test("a stalled replica holds a durable enqueue back until it has the write", async () => {
      const mq = await connect(pair.primary.port, backend);
      try {
        const q = `stalled-${backend}`;
        await mq.enqueue(q, { n: 0 }, { durable: true }); // scripts loaded, connection warm
        if (backend === "scripts") {
          // the libraries flushed: the batch's FCALL finds no function and is resent, WAIT after it
          expect(await command(pair.primary.port, ["FUNCTION", "FLUSH"])).toBe("OK");
        }
        const sleeping = command(pair.replica.port, ["DEBUG", "SLEEP", "0.8"], 10_000);
        await new Promise((r) => setTimeout(r, 100));
        const t0 = Date.now();
        const id = await mq.enqueue(q, { n: 1 }, { durable: { timeoutMs: 20_000 } });
        const waited = Date.now() - t0;
        expect(await command(pair.replica.port, ["HGET", jobKey(q, id), "state"])).toBe("pending");
        expect(await sleeping).toBe("OK");
        // a lower bound only: the replica slept ≥ 0.7 s more after the call began
        expect(waited).toBeGreaterThanOrEqual(500);
      } finally {
        await mq.close();
      }
    }, 60_000);

    test("without a replica: rejects with DurabilityError after the timeout; the row is on the primary", async () => {
      const mq = await connect(lone.port, backend);
      try {
        const q = `lonely-${backend}`;
        const t0 = Date.now();
        const err = await mq.enqueue(q, { n: 1 }, { durable: { timeoutMs: 300 } }).catch((e: unknown) => e);
        const elapsed = Date.now() - t0;
        expect(err).toBeInstanceOf(DurabilityError);
        const d = err as DurabilityError;
        expect(d.rule).toBe("durable");
        expect(d.acknowledged).toBe(0);
        expect(d.replicas).toBe(1);
        expect(d.timeoutMs).toBe(300);
        expect(d.queue).toBe(q);
        expect(d.ids.length).toBe(1);
        expect(d.message).toContain("0 of 1 replica(s) acknowledged it within 300 ms");
        expect(d.message).toContain("durable rule");
        // WAIT blocked for the timeout (less a scheduler tick), and not much longer
        expect(elapsed).toBeGreaterThanOrEqual(250);
        expect(elapsed).toBeLessThan(10_000);
        expect(await command(lone.port, ["HGET", jobKey(q, d.ids[0]!), "state"])).toBe("pending");

        const s = await mq.schedule(q, { n: 2 }, { delayMs: 1 }, { durable: { timeoutMs: 100 } }).catch((e) => e);
        expect(s).toBeInstanceOf(DurabilityError);
        // enqueueMany wraps a command's failure in a BatchError; its cause is the DurabilityError
        const m = await mq.enqueueMany(q, [{ n: 3 }, { n: 4 }], { durable: { timeoutMs: 100 } }).catch((e) => e);
        expect(m).toBeInstanceOf(BatchError);
        const cause = (m as BatchError).cause;
        expect(cause).toBeInstanceOf(DurabilityError);
        expect((cause as DurabilityError).ids.length).toBe(2);
        for (const id of (cause as DurabilityError).ids) {
          expect(await command(lone.port, ["HGET", jobKey(q, id), "state"])).toBe("pending");
        }
        // asking for 2 replicas of a pair with one also falls short (WAIT blocks the whole timeout:
        // long enough for the one replica's ack on a busy machine — 100 ms saw 0 of 1 under load)
        const two = await connect(pair.primary.port, backend);
        try {
          const e2 = await two.enqueue(q, { n: 5 }, { durable: { replicas: 2, timeoutMs: 2000 } }).catch((e) => e);
          expect(e2).toBeInstanceOf(DurabilityError);
          expect((e2 as DurabilityError).acknowledged).toBe(1);
        } finally {
          await two.close();
        }
        // a plain enqueue is unaffected
        expect(typeof (await mq.enqueue(q, { n: 6 }))).toBe("string");
      } finally {
        await mq.close();
      }
    }, 60_000);
  });
}

// Flows (issue 36's failover gap): `flow` and `addChildren` with `durable` wait for a replica of
// the parent's primary; a relay with `durable` acknowledges an entry only once a replica of its
// destination has what it applied, so an entry whose effect a failover could lose stays leased.
for (const backend of ["module", "scripts"] as const) {
  test(`flows durable (${backend}): flow, addChildren and a relay wait for a replica; without one they fall short and keep the entries`, async () => {
    const withReplica = await connect(pair.primary.port, backend);
    const alone = await connect(lone.port, backend);
    const outbox = (port: number, q: string): Promise<unknown> => command(port, ["ZCARD", keyspace(q).outbox]);
    try {
      const [p, c] = [`fd-p-${backend}`, `fd-c-${backend}`];
      const tree = await withReplica.flow({ queue: p, payload: { n: 0 }, open: true, children: [{ queue: c, payload: { n: 1 } }], durable: true });
      // read at once on the replica: WAIT proved it has the parent and its outbox entry
      expect(await command(pair.replica.port, ["HGET", jobKey(p, tree.id), "state"])).toBe("waiting");
      expect(await outbox(pair.replica.port, p)).toBe(1);
      const [more] = await withReplica.addChildren(tree, [{ queue: c, payload: { n: 2 } }], { durable: { timeoutMs: 5_000 } });
      expect(await outbox(pair.replica.port, p)).toBe(2);
      expect(await withReplica.relayOnce([p], { durable: true })).toBe(2);
      expect(await command(pair.replica.port, ["HGET", jobKey(c, more!.id), "state"])).toBe("pending");

      // no replica: the flow is on the primary, and the call says it may be lost
      const err = await alone.flow({ queue: p, payload: { n: 0 }, children: [{ queue: c, payload: { n: 1 } }], durable: { timeoutMs: 100 } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DurabilityError);
      const d = err as DurabilityError;
      expect([d.rule, d.queue, d.acknowledged, d.ids.length]).toEqual(["durable", p, 0, 1]);
      expect(d.message).toStartWith(`flow: ${d.ids[0]} on queue "${p}" was written on the primary, but 0 of 1 replica(s)`);
      expect(await command(lone.port, ["HGET", jobKey(p, d.ids[0]!), "state"])).toBe("waiting");
      // a durable relay applies (the child is made) but acknowledges nothing: the entry stays for a later round
      const relayed = await alone.relayOnce([p], { durable: { timeoutMs: 100 }, leaseMs: 1 }).catch((e: unknown) => e);
      expect(relayed).toBeInstanceOf(DurabilityError);
      expect((relayed as DurabilityError).message).toStartWith(`relay (APPLY): `);
      expect(await outbox(lone.port, p)).toBe(1);
      const child = childId(d.ids[0]!, 0);
      expect(await command(lone.port, ["HGET", jobKey(c, await child), "state"])).toBe("pending");
      // a relay without durable takes it once its lease ran out, applies it again (nothing changes), and acknowledges it
      expect(await alone.relayOnce([p])).toBe(1);
      expect(await outbox(lone.port, p)).toBe(0);
      expect(await command(lone.port, ["LLEN", keyspace(c).pending])).toBe(1);
    } finally {
      await Promise.all([withReplica.close(), alone.close()]);
    }
  }, 60_000);
}

// BatchError's contract: `landed` ids are on the server (skip them when retrying), `unsent` ids are
// not, `unconfirmed` ones may be. A durable shortfall leaves every job of the command on the
// primary, so none is unsent: all are unconfirmed.
for (const backend of ["module", "scripts"] as const) {
  test(`enqueueMany durable shortfall (${backend}): BatchError.unsent names no job the server has`, async () => {
    const mq = await connect(lone.port, backend);
    try {
      const q = `unsent-${backend}`;
      const m = await mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }], { durable: { timeoutMs: 100 } }).catch((e) => e);
      expect(m).toBeInstanceOf(BatchError);
      const b = m as BatchError;
      const onServer: string[] = [];
      for (const id of [...b.landed, ...b.unsent, ...b.unconfirmed]) {
        if (Number(await command(lone.port, ["EXISTS", jobKey(q, id)])) === 1) onServer.push(id);
      }
      console.log(
        `[durable ${backend}] enqueueMany without a replica: landed ${b.landed.length}, unsent ${b.unsent.length}, ` +
          `unconfirmed ${b.unconfirmed.length}, on the server ${onServer.length}`,
      );
      expect(onServer.length).toBe(3);
      expect([...b.unconfirmed].sort()).toEqual([...onServer].sort());
      expect(b.unsent.filter((id) => onServer.includes(id))).toEqual([]);
    } finally {
      await mq.close();
    }
  }, 30_000);
}

test("bad durable options are refused before any wire (rule durable)", async () => {
  const mq = await connect(lone.port, "module");
  try {
    for (const durable of [{ timeoutMs: 0 }, { timeoutMs: -1 }, { timeoutMs: 1.5 }, { replicas: 0 }, { timeoutMs: 4e6 }]) {
      const e = await mq.enqueue("opts", { n: 0 }, { durable }).catch((x) => x);
      expect(e).toBeInstanceOf(EchoMQError);
      expect((e as EchoMQError).rule).toBe("durable");
    }
    const bad = await mq.enqueue("opts", { n: 0 }, { durable: "yes" as unknown as boolean }).catch((x) => x);
    expect((bad as EchoMQError).rule).toBe("durable");
    expect(await command(lone.port, ["EXISTS", "emq:{opts}:pending"])).toBe(0);
  } finally {
    await mq.close();
  }
}, 30_000);

test("cluster: the WAIT goes to the queue's own primary (a stalled replica of one shard fails only that shard)", async () => {
  const c = await startCluster({ primaries: 3, replicasPerPrimary: 1, module: modulePath() });
  const mq = await EchoMQ.connect<{ n: number }>({ addresses: [...c.addresses], cluster: true, requestTimeout: 10_000 });
  try {
    // one queue per primary, and each primary's replica
    const queues = new Map<string, { queue: string; replicaPort: number }>();
    for (let i = 0; queues.size < 3 && i < 10_000; i++) {
      const q = `shard-${i}`;
      const p = c.primaryForSlot(slot(keyspace(q).pending));
      if (queues.has(p.id)) continue;
      queues.set(p.id, { queue: q, replicaPort: (await replicasOf(c, p)).at(-1)?.server.port ?? 0 });
    }
    const [stalled, ...others] = [...queues.values()];
    for (const { queue } of queues.values()) await mq.enqueue(queue, { n: 0 }, { durable: true }); // warm
    const sleeping = command(stalled!.replicaPort, ["DEBUG", "SLEEP", "1.5"], 10_000);
    await new Promise((r) => setTimeout(r, 100));
    const [bad, ...good] = await Promise.all([
      mq.enqueue(stalled!.queue, { n: 1 }, { durable: { timeoutMs: 200 } }).catch((e: unknown) => e),
      ...others.map((o) => mq.enqueue(o.queue, { n: 1 }, { durable: { timeoutMs: 5_000 } }).catch((e: unknown) => e)),
    ]);
    expect(bad).toBeInstanceOf(DurabilityError);
    expect((bad as DurabilityError).acknowledged).toBe(0);
    for (const g of good) expect(g).toMatch(/^JOB/);
    expect(await sleeping).toBe("OK");
  } finally {
    await mq.close();
    await c.stop();
  }
}, 120_000);
