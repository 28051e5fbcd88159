/**
 * A flow on a full server (issue 36; docs/design/flows.md, "Relaying"), for each backend, on a real
 * standalone server whose `maxmemory` is set to 1 byte (noeviction): the relay's creations (APPLY)
 * are refused, their entries kept for a later round, while a child's outcome reaching its parent
 * (TELL, registered without `deny-oom`, the script `allow-oom`) is applied, so the parent becomes
 * claimable and workers can drain the server; TELL refuses an entry that makes a job.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { EchoMQ, WireError } from "../../client.ts";
import { Connection } from "../../lib/client/connection.ts";
import { keyspace } from "../../mod.ts";
import { command, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { BACKENDS, wire } from "./_harness.ts";

const MODULE = moduleIfBuilt();
const servers: ServerHandle[] = [];

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

const full = (s: ServerHandle, on: boolean): Promise<unknown> => command(s.port, ["CONFIG", "SET", "maxmemory", on ? "1" : "0"]);
const outbox = async (s: ServerHandle, q: string): Promise<number> => Number(await command(s.port, ["ZCARD", keyspace(q).outbox]));

for (const backend of BACKENDS) {
  describe(backend, () => {
    test("at maxmemory: a creation waits in its outbox, a child's outcome still wakes its parent", async () => {
      const server = await startServer({ module: MODULE });
      servers.push(server);
      const mq = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: server.host, port: server.port }], backend, warn: () => {} });
      try {
        const [p, a] = ["oom-parent", "oom-child"];
        // a round-trip first: the scripts loaded, the queues made
        const warm = await mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: a, payload: { n: 1 } }] });
        expect(await mq.relayOnce([p])).toBe(1);
        await mq.ack((await mq.claim(a, { leaseMs: 60_000 }))!, 1);
        expect(await mq.relayOnce([a])).toBe(1);
        expect((await mq.claim(p, { leaseMs: 60_000 }))!.id).toBe(warm.id);

        const tree = await mq.flow({ queue: p, payload: { n: 0 }, children: [{ queue: a, payload: { n: 2 } }] });
        await full(server, true);
        // the child's creation (APPLY) is refused: its entry stays, leased, for a later round
        const e = await mq.relayOnce([p], { leaseMs: 1 }).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(WireError);
        expect((e as WireError).rule).toBe("oom");
        expect(await outbox(server, p)).toBe(1);
        expect(await mq.getJob(a, tree.children[0]!.id)).toBeNull();
        await full(server, false);
        expect(await mq.relayOnce([p])).toBe(1);
        const child = (await mq.claim(a, { leaseMs: 60_000 }))!;
        expect(child.id).toBe(tree.children[0]!.id);
        await mq.ack(child, 2);

        await full(server, true);
        // a full server refuses admissions, yet the outcome (TELL) lands and the parent runs
        expect(await mq.enqueue(p, { n: 9 }).catch((x: unknown) => (x as WireError).rule)).toBe("oom");
        expect(await mq.relayOnce([a])).toBe(1);
        expect(await outbox(server, a)).toBe(0);
        const parent = (await mq.claim(p, { leaseMs: 60_000 }))!;
        expect(parent.id).toBe(tree.id);
        expect(await mq.children(p, tree.id)).toMatchObject([{ state: "completed", result: 2 }]);
        await mq.ack(parent, 0);
        // TELL takes outcomes and cancels only: a creation is a malformed entry there, nothing written
        const entry = `child\0${a}\0JOB00000000077\0${p}\0${tree.id}\x000\x000\0x`;
        const raw = await Connection.open({ addresses: [{ host: server.host, port: server.port }] });
        try {
          const before = await command(server.port, ["DEBUG", "DIGEST"]);
          expect(await wire(raw, backend, "TELL", [keyspace(a).meta], [entry])).toEqual({ err: "ERR EMQ.TELL malformed outbox entry" });
          expect(await command(server.port, ["DEBUG", "DIGEST"])).toEqual(before);
        } finally {
          raw.close();
        }
      } finally {
        await full(server, false);
        await mq.close();
      }
    });
  });
}
