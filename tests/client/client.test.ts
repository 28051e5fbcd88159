/**
 * Client behaviour beyond single verbs, for each backend × topology: enqueueMany past the in-flight
 * limit, the duplicate-id retry, payload codecs, and backend selection.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type JobId, keyspace } from "../../mod.ts";
import { BackendError, bytes, ConnectionError, DuplicateIdError, EchoMQ, EchoMQError, text } from "../../client.ts";
import { command, freePort, modulePath, startReplicated, waitForSync } from "../../tools/embedded/mod.ts";
import { BACKENDS, COMBOS, connector, counterIds, dump, MODULE_WORKS, type Site, startSite, TOPOLOGIES, useSites } from "./_harness.ts";

const servers = useSites();
const { sites, raws } = servers;

for (const combo of COMBOS) {
  const { backend, topology } = combo;
  describe(combo.name, () => {
    const connect = connector(servers, combo);

    test("enqueueMany and concurrent calls beyond the in-flight limit", async () => {
      const mq = await connect<{ n: number }>({ inflightRequestsLimit: 4 });
      try {
        const q = `many-${backend}`;
        const payloads = Array.from({ length: 5000 }, (_, n) => ({ n }));
        const ids = await mq.enqueueMany(q, payloads);
        expect(ids).toHaveLength(5000);
        expect(new Set(ids).size).toBe(5000);
        const more = await Promise.all(Array.from({ length: 300 }, (_, n) => mq.enqueue(q, { n: 5000 + n })));
        expect(new Set(more).size).toBe(300);
        expect(await mq.counts(q)).toEqual({ pending: 5300, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
        const claimed = await Promise.all(Array.from({ length: 50 }, () => mq.claim(q, { leaseMs: 60_000 })));
        // FIFO: the first 50 enqueued come out first (in some interleaving).
        expect(claimed.map((j) => j!.payload.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, n) => n));
        expect(claimed.map((j) => j!.id).sort()).toEqual(ids.slice(0, 50).sort());
        expect(await mq.enqueueMany(q, [])).toEqual([]);
      } finally {
        await mq.close();
      }
    });

    test("enqueueMany admits in input order, also when its first command finds the script not loaded", async () => {
      // the first command goes alone: before, the 2nd–5th were sent behind it, and on the scripts
      // backend a NOSCRIPT resend of one landed after a later one (1 run in 20 here; in a loaded
      // run of the test command, the first 50 claimed were the second command's)
      const mq = await connect<{ n: number }>({ inflightRequestsLimit: 4 });
      const raw = servers.raws.get(topology)!;
      try {
        for (let round = 0; round < 10; round++) {
          const q = `order-${backend}-${round}`;
          await raw.command(["SCRIPT", "FLUSH"], keyspace(q).meta);
          await raw.command(["FUNCTION", "FLUSH"], keyspace(q).meta);
          await mq.enqueueMany(q, Array.from({ length: 5000 }, (_, n) => ({ n })));
          const order = (await mq.claimMany(q, 1000, { leaseMs: 60_000 })).map((j) => (j as { payload: { n: number } }).payload.n);
          expect(order).toEqual(Array.from({ length: 1000 }, (_, n) => n));
        }
      } finally {
        await mq.close();
      }
    });

    test("a duplicate id is retried once with a fresh id", async () => {
      const q = `dup-${backend}`;
      const fixed = "JOB00000000042" as JobId;
      const fresh = counterIds(100);
      let calls = 0;
      // 42, 42, then fresh ids: the second enqueue collides once and succeeds with a fresh id.
      const mq = await connect<number>({ newId: () => (calls++ < 2 ? fixed : fresh()) });
      const stuck = await connect<number>({ newId: () => fixed });
      try {
        expect(await mq.enqueue(q, 1)).toBe(fixed);
        const second = await mq.enqueue(q, 2);
        expect(second).toBe("JOB00000000100" as JobId);
        // Always the same id: one retry, then the refusal surfaces.
        await expect(stuck.enqueue(q, 3)).rejects.toBeInstanceOf(DuplicateIdError);
        await expect(stuck.schedule(q, 3, { delayMs: 10 })).rejects.toBeInstanceOf(DuplicateIdError);
        // Collisions inside one batch (with rows, or twice in the batch) are retried one by one.
        let m = 0;
        const batchy = await connect<number>({ newId: () => (m++ % 2 === 0 ? ("JOB00000000777" as JobId) : fresh()) });
        try {
          const ids = await batchy.enqueueMany(q, [10, 11, 12]);
          expect(new Set(ids).size).toBe(3);
          expect(ids[0]).toBe("JOB00000000777" as JobId);
        } finally {
          await batchy.close();
        }
        expect((await mq.counts(q)).pending).toBe(5);
        // An explicit id is idempotent: a second use is refused, not retried.
        await expect(mq.enqueue(q, 9, { id: fixed })).rejects.toMatchObject({ name: "DuplicateIdError", rule: "duplicate" });
      } finally {
        await mq.close();
        await stuck.close();
      }
    });

    test("codecs: bytes round-trip exactly, text and JSON", async () => {
      const q = `codec-${backend}`;
      const bin = await connect<Uint8Array>({ codec: bytes });
      const str = await connect<string>({ codec: text });
      const js = await connect<{ a: number[]; s: string }>();
      try {
        const all = Uint8Array.from({ length: 256 }, (_, i) => i);
        await bin.enqueue(q, all);
        const got = await bin.claim(q, { leaseMs: 1000 });
        expect(got!.payload).toEqual(all);
        await bin.ack(got!);
        await str.enqueue(q, "héllo\u0000wörld ✓");
        expect((await str.claim(q, { leaseMs: 1000 }))!.payload).toBe("héllo\u0000wörld ✓");
        await js.enqueue(q, { a: [1, 2], s: "x" });
        expect((await js.claim(q, { leaseMs: 1000 }))!.payload).toEqual({ a: [1, 2], s: "x" });
        // A payload at the limit passes, one byte more is refused by the server.
        const K = keyspace(q);
        await bin.enqueue(q, new Uint8Array(1048576));
        await expect(bin.enqueue(q, new Uint8Array(1048577))).rejects.toMatchObject({ rule: "gate" });
        expect((await raws.get(topology)!.command(["LLEN", K.pending], K.pending)) as number).toBe(1);
      } finally {
        await Promise.all([bin.close(), str.close(), js.close()]);
      }
    });
  });
}

describe("connecting", () => {
  let plain: Site;
  beforeAll(async () => {
    plain = await startSite("standalone", false);
  });
  afterAll(async () => {
    await plain.stop();
  });

  test("auto picks scripts on a server without the module; module is refused there", async () => {
    const mq = await EchoMQ.connect({ addresses: plain.addresses });
    expect(mq.backend).toBe("scripts");
    await mq.close();
    await expect(EchoMQ.connect({ addresses: plain.addresses, backend: "module" })).rejects.toBeInstanceOf(BackendError);
    await expect(EchoMQ.connect({ addresses: [] })).rejects.toMatchObject({ rule: "options" });
  });

  for (const topology of TOPOLOGIES) {
    test.skipIf(!MODULE_WORKS)(`auto picks the module when every primary has it (${topology})`, async () => {
      const site = sites.get(topology)!;
      const mq = await EchoMQ.connect({ addresses: site.addresses, cluster: site.cluster });
      expect(mq.backend).toBe("module");
      await mq.close();
    });
  }

  test("a server that is down: ConnectionError naming the address, within the connect timeout", async () => {
    const port = await freePort();
    const t0 = Date.now();
    const e = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port }], connectTimeout: 1000 }).catch((x) => x);
    expect(e).toBeInstanceOf(ConnectionError);
    expect(e).toBeInstanceOf(EchoMQError);
    expect((e as ConnectionError).rule).toBe("connection");
    expect((e as ConnectionError).address).toBe(`127.0.0.1:${port}`);
    expect((e as Error).message).toStartWith(`connect: `);
    expect((e as Error).message).toContain(`127.0.0.1:${port}`);
    expect((e as Error).message.split("\n")).toHaveLength(1);
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  test("glide's own logging is quiet by default (no WARN line for a refusal)", async () => {
    const script = [
      `import { EchoMQ } from ${JSON.stringify(new URL("../../client.ts", import.meta.url).pathname)};`,
      `const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: ${plain.addresses[0]!.port} }], backend: "scripts" });`,
      `await mq.ack({ id: "JOB00000000001", queue: "q", token: 1 }).catch(() => {});`,
      `await mq.close();`,
    ].join("\n");
    const child = Bun.spawnSync([process.execPath, "-e", script], { stderr: "pipe", stdout: "pipe" });
    expect(child.exitCode).toBe(0);
    expect(child.stderr.toString()).not.toContain("logger_core");
  });

  test("a closed client refuses calls", async () => {
    const mq = await EchoMQ.connect({ addresses: plain.addresses, backend: "scripts" });
    await mq.close();
    await expect(mq.enqueue("q", 1)).rejects.toMatchObject({ rule: "closed" });
  });
});

describe("replication", () => {
  for (const backend of BACKENDS) {
    test(`${backend}: a replica ends with the same keyspace, time fields included (effects replicated)`, async () => {
      const pair = await startReplicated({ module: backend === "module" ? modulePath() : false });
      // The same raw RESP helper reads both servers (glide refuses a standalone replica alone).
      const primary = (args: string[]) => command(pair.primary.port, args);
      const replica = (args: string[]) => command(pair.replica.port, args);
      const mq = await EchoMQ.connect<number>({ addresses: [{ host: pair.primary.host, port: pair.primary.port }], backend });
      try {
        const q = "repl";
        await mq.enqueueMany(q, [1, 2, 3, 4]);
        await mq.schedule(q, 5, { at: 1000 });
        await mq.schedule(q, 6, { delayMs: 60_000 });
        const a = await mq.claim(q, { leaseMs: 60_000 });
        await mq.ack(a!);
        const b = await mq.claim(q, { leaseMs: 60_000 });
        await mq.retry(b!, { delayMs: 5, reason: "again" });
        const c = await mq.claim(q, { leaseMs: 1 });
        await new Promise((r) => setTimeout(r, 10));
        await mq.reap(q);
        await mq.promote(q);
        const d = await mq.claim(q, { leaseMs: 60_000 });
        await mq.bury(d!, "dead");
        expect(c).not.toBeNull();
        await waitForSync(pair.primary.port, pair.replica.port);
        const onPrimary = await dump(primary, q, false);
        expect(Object.keys(onPrimary).length).toBeGreaterThan(5);
        expect(await dump(replica, q, false)).toEqual(onPrimary);
      } finally {
        await mq.close();
        await pair.stop();
      }
    });
  }
});
