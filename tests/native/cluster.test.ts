/**
 * The native module on a 3-primary cluster: the server itself routes EMQ.* by the declared keys
 * (COMMAND GETKEYS, MOVED, CROSSSLOT), no node ever holds a key of a slot it does not own, and the
 * per-node `emq.wire` configuration fences a node. Each primary has one replica (the module is
 * loaded there too) whose digest must follow its primary's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { GlideClusterClient, Routes } from "@valkey/valkey-glide";
import {
  type ClusterHandle,
  type ClusterNode,
  command,
  infoFields,
  RespError,
  startCluster,
  waitForSync,
} from "../../tools/embedded/mod.ts";
import {
  call,
  cluster,
  declaredKeys,
  expectOk,
  expectRefused,
  jobId,
  queue,
  type QueueKeys,
  requireModule,
  VERBS,
  type VerbName,
  wellFormed,
} from "./_native.ts";

let c: ClusterHandle;
let client: GlideClusterClient;

beforeAll(async () => {
  c = await startCluster({ primaries: 3, replicasPerPrimary: 1, module: requireModule() });
  client = await cluster(c.addresses);
}, 90_000);

afterAll(async () => {
  client?.close();
  await c?.stop();
});

const routeTo = (key: string): Routes => ({ type: "primarySlotKey", key });

/** Runs a verb through glide, routed by its first declared key. */
const run = (args: string[]) => call(client, args, routeTo(args[2]!));

/** Sends a command straight to one node (no redirection). */
const on = (node: ClusterNode, args: string[]) => command(node.server.port, args);

async function slotOf(key: string): Promise<number> {
  return Number(await on(c.primaries[0]!, ["CLUSTER", "KEYSLOT", key]));
}

async function ownerOf(key: string): Promise<ClusterNode> {
  return c.primaryForSlot(await slotOf(key));
}

/** Queue names whose slots land on pairwise different primaries. */
async function queuesOnDistinctNodes(): Promise<QueueKeys[]> {
  const byNode = new Map<number, QueueKeys>();
  for (let i = 0; byNode.size < c.primaries.length && i < 1000; i++) {
    const q = queue(`q${i}`);
    const owner = await ownerOf(q.pending);
    if (!byNode.has(owner.server.port)) byNode.set(owner.server.port, q);
  }
  return [...byNode.values()];
}

function errorText(v: unknown): string {
  if (!(v instanceof RespError)) throw new Error(`expected an error reply, got ${JSON.stringify(v)}`);
  return v.message;
}

describe("routing by declared keys", () => {
  test("COMMAND GETKEYS lists each verb's declared keys on every node", async () => {
    const q = queue("orders");
    for (const verb of VERBS) {
      const args = wellFormed(verb, q, jobId(1));
      for (const node of c.nodes) {
        const keys = (await on(node, ["COMMAND", "GETKEYS", ...args])) as unknown[];
        expect(keys.map(String)).toEqual(declaredKeys(args));
      }
    }
  });

  test("a node that does not own the slot answers MOVED and writes nothing", async () => {
    const q = queue("moved-here");
    const slot = await slotOf(q.pending);
    const owner = c.primaryForSlot(slot);
    for (const node of c.primaries.filter((n) => n !== owner)) {
      const before = String(await on(node, ["DEBUG", "DIGEST"]));
      const size = Number(await on(node, ["DBSIZE"]));
      for (const verb of VERBS) {
        const reply = await on(node, wellFormed(verb, q, jobId(1)));
        expect(errorText(reply)).toBe(`MOVED ${slot} 127.0.0.1:${owner.server.port}`);
      }
      expect(String(await on(node, ["DEBUG", "DIGEST"]))).toBe(before);
      expect(Number(await on(node, ["DBSIZE"]))).toBe(size);
    }
    // the owner runs it
    expect(await on(owner, wellFormed("ENQUEUE", q, jobId(1)))).toBe(1);
  });

  test("keys of two queues in one call → CROSSSLOT, nothing written", async () => {
    const [q1, q2] = await queuesOnDistinctNodes();
    const owner = await ownerOf(q1!.pending);
    const before = String(await on(owner, ["DEBUG", "DIGEST"]));
    for (const verb of VERBS) {
      const args = wellFormed(verb, q1!, jobId(1));
      const mixed = [...args];
      mixed[3] = wellFormed(verb, q2!, jobId(1))[3]!;
      expect(errorText(await on(owner, mixed))).toBe("CROSSSLOT Keys in request don't hash to the same slot");
      // through glide, routed by the first key, too
      expectRefused(await run(mixed), "CROSSSLOT Keys in request don't hash to the same slot");
    }
    expect(String(await on(owner, ["DEBUG", "DIGEST"]))).toBe(before);
  });

  test("the empty queue name is refused by the module in cluster mode", async () => {
    const args = ["EMQ.ENQUEUE", "2", "emq:{}:job:JOB0Nb1VTbfnu4", "emq:{}:pending", "JOB0Nb1VTbfnu4", "x"];
    const owner = await ownerOf(args[2]!);
    const before = String(await on(owner, ["DEBUG", "DIGEST"]));
    const reply = await on(owner, args);
    // with no hashtag the two keys hash as whole keys: the cluster refuses them when their slots
    // differ, the module's layout check otherwise
    const sameSlot = (await slotOf(args[2]!)) === (await slotOf(args[3]!));
    expect(errorText(reply)).toBe(
      sameSlot ? "ERR EMQ.ENQUEUE keys do not match the wire-4 layout" : "CROSSSLOT Keys in request don't hash to the same slot",
    );
    expect(String(await on(owner, ["DEBUG", "DIGEST"]))).toBe(before);
  });
});

describe("ownership", () => {
  test("a workload over many queues leaves every key on its slot's owner", async () => {
    const queues = Array.from({ length: 24 }, (_, i) => queue(`tenant-${i}`));
    let n = 1000;
    for (const q of queues) {
      const ids = Array.from({ length: 6 }, () => jobId(++n));
      for (const id of ids.slice(0, 4)) expectOk(await run(["EMQ.ENQUEUE", "2", q.row(id), q.pending, id, "p"]), 1);
      for (const id of ids.slice(4)) expectOk(await run(["EMQ.SCHEDULE", "2", q.row(id), q.schedule, id, "1", "p"]), 1);
      expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]), 2);
      const claimed: string[] = [];
      for (let i = 0; i < 4; i++) {
        const out = expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, i === 3 ? "1" : "60000"]));
        claimed.push(String((out as unknown[])[0]));
      }
      expectOk(await run(["EMQ.ACK", "2", q.row(claimed[0]!), q.active, claimed[0]!]), 1);
      expectOk(await run(["EMQ.RETRY", "3", q.row(claimed[1]!), q.active, q.schedule, claimed[1]!, "60000", "r"]), 1);
      expectOk(await run(["EMQ.BURY", "3", q.row(claimed[2]!), q.active, q.dead, claimed[2]!, "r"]), 1);
      await new Promise((r) => setTimeout(r, 3));
      expectOk(await run(["EMQ.REAP", "3", q.active, q.pending, q.base, "10"]), 1);
    }
    const holders = new Set<number>();
    for (const node of c.primaries) {
      const keys = ((await on(node, ["KEYS", "*"])) as unknown[]).map(String);
      for (const key of keys) {
        const slot = await slotOf(key);
        expect({ key, owner: c.primaryForSlot(slot).server.port }).toEqual({ key, owner: node.server.port });
        expect(Number(await on(node, ["CLUSTER", "COUNTKEYSINSLOT", String(slot)]))).toBeGreaterThan(0);
        holders.add(node.server.port);
      }
      // and for every queue this node does not own, it holds nothing of that slot
      for (const q of queues) {
        const slot = await slotOf(q.pending);
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

describe("fence by configuration", () => {
  /** A call of `verb` that succeeds unfenced, given one active job `id` and one due schedule. */
  function callOf(verb: VerbName, q: QueueKeys, id: string, fresh: string): string[] {
    return wellFormed(verb, q, verb === "ENQUEUE" || verb === "SCHEDULE" ? fresh : id);
  }

  test("CONFIG SET emq.wire 3 on a node refuses every verb there; other nodes and 4 accept", async () => {
    const [q, elsewhere] = await queuesOnDistinctNodes();
    const node = await ownerOf(q!.pending);
    const id = jobId(5000);
    expectOk(await run(["EMQ.ENQUEUE", "2", q!.row(id), q!.pending, id, "p"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q!.pending, q!.active, q!.base, "60000"]));
    expect(await on(node, ["CONFIG", "SET", "emq.wire", "3"])).toBe("OK");
    try {
      const before = String(await on(node, ["DEBUG", "DIGEST"]));
      for (const verb of VERBS) {
        expectRefused(await run(callOf(verb, q!, id, jobId(5001))), `ERR EMQ.${verb} fenced: this server speaks wire 3, not wire 4`);
      }
      expect(String(await on(node, ["DEBUG", "DIGEST"]))).toBe(before);
      // an unfenced node accepts
      expectOk(await run(["EMQ.ENQUEUE", "2", elsewhere!.row(id), elsewhere!.pending, id, "p"]), 1);
    } finally {
      expect(await on(node, ["CONFIG", "SET", "emq.wire", "4"])).toBe("OK");
    }
    expectOk(await run(callOf("ENQUEUE", q!, id, jobId(5001))), 1);
    expectOk(await run(callOf("ACK", q!, id, jobId(5001))), 1);
  });

  test("in cluster mode the {emq}:version key is not the identity", async () => {
    const versionOwner = await ownerOf("{emq}:version");
    let q: QueueKeys | undefined;
    for (let i = 0; !q && i < 1000; i++) {
      const cand = queue(`v${i}`);
      if ((await ownerOf(cand.pending)) === versionOwner) q = cand;
    }
    expect(await on(versionOwner, ["SET", "{emq}:version", "3"])).toBe("OK");
    try {
      expectOk(await run(["EMQ.ENQUEUE", "2", q!.row(jobId(1)), q!.pending, jobId(1), "p"]), 1);
    } finally {
      await on(versionOwner, ["DEL", "{emq}:version"]);
    }
  });
});
