/**
 * The native module on a 3-primary cluster: every verb declares one key, the queue's meta,
 * so the server itself routes EMQ.* by it (COMMAND GETKEYS on every node, MOVED from a node that
 * does not own the slot, with nothing written); no node ever holds a key of a slot it does not own;
 * the per-node `emq.wire` configuration fences a node (the `{emq}:version` key does not, in cluster
 * mode); a CLAIM blocked on the queue's node is woken by an ENQUEUE. Each primary has one replica
 * (the module is loaded there too) whose digest must follow its primary's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GlideClusterClient, Routes } from "@valkey/valkey-glide";
import { WIRE } from "../../lib/wire/mod.ts";
import { type ClusterHandle, type ClusterNode, command, infoFields, RespError, startCluster, waitForSync } from "../../tools/embedded/mod.ts";
import {
  argv,
  call,
  claimed,
  cluster,
  expectOk,
  expectRefused,
  held,
  jobId,
  queue,
  type QueueKeys,
  refusal,
  registeredVerbs,
  requireModule,
  sleep,
  type VerbName,
  wellFormed,
} from "./_native.ts";

let c: ClusterHandle;
let client: GlideClusterClient;
/** The spec's verbs the module registers (the standalone suite asserts that is all of them). */
const VERBS: VerbName[] = await registeredVerbs();

beforeAll(async () => {
  c = await startCluster({ primaries: 3, replicasPerPrimary: 1, module: requireModule() });
  client = await cluster(c.addresses);
}, 90_000);

afterAll(async () => {
  client?.close();
  await c?.stop();
});

const routeTo = (key: string): Routes => ({ type: "primarySlotKey", key });

/** Runs a verb through glide, routed by its one declared key (meta). */
const run = (args: string[]) => call(client, args, routeTo(args[2]!));

/** Sends a command straight to one node (no redirection). */
const on = (node: ClusterNode, args: string[], timeoutMs?: number) => command(node.server.port, args, timeoutMs);

async function slotOf(key: string): Promise<number> {
  return Number(await on(c.primaries[0]!, ["CLUSTER", "KEYSLOT", key]));
}

async function ownerOf(key: string): Promise<ClusterNode> {
  return c.primaryForSlot(await slotOf(key));
}

/** Queue names whose slots land on pairwise different primaries. */
async function queuesOnDistinctNodes(prefix: string): Promise<QueueKeys[]> {
  const byNode = new Map<number, QueueKeys>();
  for (let i = 0; byNode.size < c.primaries.length && i < 1000; i++) {
    const q = queue(`${prefix}${i}`);
    const owner = await ownerOf(q.meta);
    if (!byNode.has(owner.server.port)) byNode.set(owner.server.port, q);
  }
  return [...byNode.values()];
}

function errorText(v: unknown): string {
  if (!(v instanceof RespError)) throw new Error(`expected an error reply, got ${JSON.stringify(v)}`);
  return v.message;
}

describe("routing by the one declared key", () => {
  test("COMMAND GETKEYS lists only meta on every node, for one group and for a batch", async () => {
    const q = queue("orders");
    for (const verb of VERBS) {
      const one = wellFormed(verb, q, jobId(1));
      const batch = argv(verb, q, {}, [{ id: jobId(1) }, { id: jobId(2) }, { id: jobId(3) }]);
      for (const node of c.nodes) {
        for (const args of [one, batch]) {
          const keys = (await on(node, ["COMMAND", "GETKEYS", ...args])) as unknown[];
          expect(keys.map(String)).toEqual([q.meta]);
        }
      }
    }
  });

  test("a node that does not own the slot answers MOVED and writes nothing", async () => {
    const q = queue("moved-here");
    const slot = await slotOf(q.meta);
    const owner = c.primaryForSlot(slot);
    for (const node of c.primaries.filter((n) => n !== owner)) {
      const before = String(await on(node, ["DEBUG", "DIGEST"]));
      const size = Number(await on(node, ["DBSIZE"]));
      for (const verb of VERBS) {
        const batch = argv(verb, q, {}, [{ id: jobId(1) }, { id: jobId(2) }]);
        for (const args of [wellFormed(verb, q, jobId(1)), batch]) {
          expect(errorText(await on(node, args))).toBe(`MOVED ${slot} 127.0.0.1:${owner.server.port}`);
        }
      }
      expect(String(await on(node, ["DEBUG", "DIGEST"]))).toBe(before);
      expect(Number(await on(node, ["DBSIZE"]))).toBe(size);
      expect(Number(await on(node, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)]))).toBe(0);
    }
    // the owner runs it
    expect(await on(owner, wellFormed("ENQUEUE", q, jobId(1)))).toBe(1);
    expect(await on(owner, ["HGET", q.meta, "enqueued"])).toBe("1");
  });

  test("the empty queue name is refused by the module in cluster mode, nothing written", async () => {
    const args = wellFormed("ENQUEUE", queue(""), "JOB0Nb1VTbfnu4");
    const owner = await ownerOf(args[2]!);
    const before = String(await on(owner, ["DEBUG", "DIGEST"]));
    expect(errorText(await on(owner, args))).toBe(refusal("layout", "ENQUEUE", {}));
    expect(String(await on(owner, ["DEBUG", "DIGEST"]))).toBe(before);
  });
});

describe("ownership", () => {
  test("a workload over many queues leaves every key on its slot's owner", async () => {
    const queues = Array.from({ length: 24 }, (_, i) => queue(`tenant-${i}`));
    let n = 1000;
    for (const q of queues) {
      const ids = Array.from({ length: 6 }, () => jobId(++n));
      expectOk(await run(argv("ENQUEUE", q, {}, ids.slice(0, 4).map((id) => ({ id })))), 4);
      expectOk(await run(argv("SCHEDULE", q, {}, ids.slice(4).map((id) => ({ id, due_ms: 1 })))), 2);
      expectOk(await run(wellFormed("PROMOTE", q, ids[0]!, { limit: 10 })), 2);
      const far = jobId(++n);
      expectOk(await run(argv("SCHEDULE", q, {}, [{ id: far, due_ms: Date.now() + 60_000 }])), 1);
      expectOk(await run(argv("RUN", q, {}, [{ id: far }])), 1);
      const jobs = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 4, block_ms: 0 })))).jobs;
      const short = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 1, count: 1, block_ms: 0 })))).jobs;
      expect([jobs.length, short.length]).toEqual([4, 1]);
      expectOk(await run(argv("ACK", q, {}, held(jobs.slice(0, 1)))), 1);
      expectOk(await run(argv("RETRY", q, {}, held(jobs.slice(1, 2), { delay_ms: 60_000, reason: "r" }))), 1);
      expectOk(await run(argv("BURY", q, {}, held(jobs.slice(2, 3), { reason: "r" }))), 1);
      expectOk(await run(argv("EXTEND", q, { lease_ms: 90_000 }, held(jobs.slice(3)))), 1);
      await sleep(3);
      expectOk(await run(wellFormed("REAP", q, ids[0]!, { limit: 10 })), 1);
    }
    const holders = new Set<number>();
    for (const node of c.primaries) {
      const keys = ((await on(node, ["KEYS", "*"])) as unknown[]).map(String);
      for (const key of keys) {
        const slot = await slotOf(key);
        expect({ key, owner: c.primaryForSlot(slot).server.port }).toEqual({ key, owner: node.server.port });
        holders.add(node.server.port);
      }
      // and for every queue this node does not own, it holds nothing of that slot
      for (const q of queues) {
        const slot = await slotOf(q.meta);
        if (c.primaryForSlot(slot) !== node) {
          expect(Number(await on(node, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)]))).toBe(0);
        }
      }
    }
    expect(holders.size).toBe(c.primaries.length);

    // every replica (module loaded, effects replicated) ends with its primary's digest
    expect(c.replicas.length).toBe(c.primaries.length);
    for (const replica of c.replicas) {
      const primaryPort = Number(infoFields(await on(replica, ["INFO", "replication"]))["master_port"]);
      await waitForSync(primaryPort, replica.server.port);
      const want = String(await command(primaryPort, ["DEBUG", "DIGEST"]));
      expect(want).not.toBe("0".repeat(40));
      expect(String(await on(replica, ["DEBUG", "DIGEST"]))).toBe(want);
    }
  });
});

describe("SETTLE", () => {
  test("settles and claims on each of three primaries, routed by the meta key; replicas end equal", async () => {
    const queues = await queuesOnDistinctNodes("settle-");
    expect(queues.length).toBe(c.primaries.length);
    let n = 3000;
    for (const q of queues) {
      const ids = Array.from({ length: 5 }, () => jobId(++n));
      expectOk(await run(argv("ENQUEUE", q, {}, ids.map((id) => ({ id })))), 5);
      const jobs = claimed(expectOk(await run(argv("CLAIM", q, { lease_ms: 60_000, count: 4, block_ms: 0 })))).jobs;
      const groups = jobs.map((j, op) => ({ op, id: j.id, token: j.token, delay_ms: 0, reason: "r", result: "ok" }));
      const reply = expectOk(await run(argv("SETTLE", q, { lease_ms: 60_000, want: 5 }, groups))) as unknown[];
      expect(reply[1]).toEqual([1, 1, 1, 1]);
      // claimed again: the retried-now, the released and the one never claimed
      const again = claimed([reply[0], ...reply.slice(2)]).jobs;
      expect(again.map((j) => j.id).sort()).toEqual([jobs[1]!.id, jobs[3]!.id, ids[4]!].sort());
      const owner = await ownerOf(q.meta);
      expect(await on(owner, ["ZCARD", q.active])).toBe(3);
      expect(await on(owner, ["HGET", q.meta, "acked"])).toBe("1");
    }
    for (const replica of c.replicas) {
      const primaryPort = Number(infoFields(await on(replica, ["INFO", "replication"]))["master_port"]);
      await waitForSync(primaryPort, replica.server.port);
      expect(String(await on(replica, ["DEBUG", "DIGEST"]))).toBe(String(await command(primaryPort, ["DEBUG", "DIGEST"])));
    }
  });
});

describe("fence by configuration", () => {
  /** A call of `verb` that succeeds unfenced, given one active job `id` (token 1). */
  /** The held job's token: meta's `tokens` is set above the clock's floor (now × 1000) before its claim. */
  const HELD = 9_000_000_000_000_001;
  function callOf(verb: VerbName, q: QueueKeys, id: string, fresh: string): string[] {
    return wellFormed(verb, q, verb === "ENQUEUE" || verb === "SCHEDULE" ? fresh : id, { token: HELD });
  }

  test("CONFIG SET emq.wire 4 on one node refuses every verb there; the other nodes, and 5, accept", async () => {
    const [q, ...elsewhere] = await queuesOnDistinctNodes("fenced-");
    const node = await ownerOf(q!.meta);
    const id = jobId(5000);
    expectOk(await run(wellFormed("ENQUEUE", q!, id)), 1);
    expectOk(await run(["HSET", q!.meta, "tokens", String(HELD - 1)]));
    expect(claimed(expectOk(await run(argv("CLAIM", q!, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs[0]!.token).toBe(HELD);
    expect(await on(node, ["CONFIG", "SET", "emq.wire", "4"])).toBe("OK");
    try {
      const before = String(await on(node, ["DEBUG", "DIGEST"]));
      for (const verb of VERBS) {
        expectRefused(await run(callOf(verb, q!, id, jobId(5001))), refusal("fenced", verb, { found: "4" }));
      }
      expect(String(await on(node, ["DEBUG", "DIGEST"]))).toBe(before);
      // unfenced nodes accept
      for (const other of elsewhere) expectOk(await run(wellFormed("ENQUEUE", other, id)), 1);
    } finally {
      expect(await on(node, ["CONFIG", "SET", "emq.wire", String(WIRE)])).toBe("OK");
    }
    expectOk(await run(callOf("ENQUEUE", q!, id, jobId(5001))), 1);
    expectOk(await run(callOf("ACK", q!, id, jobId(5001))), 1);
  });

  test("in cluster mode the {emq}:version key is not the identity", async () => {
    const versionOwner = await ownerOf("{emq}:version");
    let q: QueueKeys | undefined;
    for (let i = 0; !q && i < 1000; i++) {
      const cand = queue(`v${i}`);
      if ((await ownerOf(cand.meta)) === versionOwner) q = cand;
    }
    expect(await on(versionOwner, ["SET", "{emq}:version", "4"])).toBe("OK");
    try {
      expectOk(await run(wellFormed("ENQUEUE", q!, jobId(1))), 1);
      expect(claimed(expectOk(await run(argv("CLAIM", q!, { lease_ms: 60_000, count: 1, block_ms: 0 })))).jobs.length).toBe(1);
    } finally {
      await on(versionOwner, ["DEL", "{emq}:version"]);
    }
  });
});

describe("the blocking CLAIM", () => {
  test("a CLAIM blocked on the queue's node is woken by an ENQUEUE routed there", async () => {
    for (const q of await queuesOnDistinctNodes("waits-")) {
      const owner = await ownerOf(q.meta);
      const t0 = Date.now();
      const reply = on(owner, argv("CLAIM", q, { lease_ms: 60_000, count: 2, block_ms: 20_000 }), 40_000);
      for (const until = Date.now() + 10_000;;) {
        if (Number(infoFields(await on(owner, ["INFO", "clients"]))["blocked_clients"]) >= 1) break;
        if (Date.now() > until) throw new Error("the CLAIM did not block");
        await sleep(10);
      }
      expectOk(await run(argv("ENQUEUE", q, {}, [{ id: jobId(7001) }, { id: jobId(7002) }])), 2);
      const got = claimed(await reply);
      expect(got.jobs.map((j) => [j.id, j.attempts])).toEqual([[jobId(7001), 1], [jobId(7002), 1]]);
      expect(Date.now() - t0).toBeLessThan(15_000);
      expectOk(await run(argv("ACK", q, {}, held(got.jobs))), 2);
    }
  });
});
