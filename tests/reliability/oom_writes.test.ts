/**
 * Under `maxmemory` with `noeviction`, per backend: only what frees memory or keeps it bounded runs
 * past the limit. PROGRESS only adds memory: refused with the server's OOM text, nothing written
 * (DEBUG DIGEST unchanged). RETRY and BURY run (a worker must drain a full server) and keep at most
 * a reason of MAX_REASON_BYTES (a longer one is refused at the gate: tests/client/behaviour.test.ts).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { EchoMQ, WireError } from "../../client.ts";
import { MAX_REASON_BYTES } from "../../lib/wire/mod.ts";
import { command, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { BACKENDS } from "./_server.ts";

const servers: ServerHandle[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

for (const backend of BACKENDS) {
  describe(`oom writes (${backend})`, () => {
    test("a full server: PROGRESS refused with OOM and writes nothing; RETRY and BURY run, reasons bounded", async () => {
      const server = await startServer({ module: moduleIfBuilt() });
      servers.push(server);
      const port = server.port;
      const mq = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: "127.0.0.1", port }], backend });
      const q = `oomw-${backend}`;
      try {
        await mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }]);
        const jobs = await mq.claimMany(q, 3, { leaseMs: 60_000 });
        const [a, b] = jobs.map((j) => {
          if (j instanceof Error) throw j;
          return j;
        });
        await command(port, ["CONFIG", "SET", "maxmemory", "1"]);
        const before = String(await command(port, ["DEBUG", "DIGEST"]));
        const refused = await mq.progress(a!, { big: "x".repeat(60_000) }).then(() => null, (e: unknown) => e);
        expect(refused).toBeInstanceOf(WireError);
        expect((refused as WireError).rule).toBe("oom");
        expect((refused as Error).message).toContain("OOM command not allowed when used memory > 'maxmemory'");
        expect(String(await command(port, ["DEBUG", "DIGEST"]))).toBe(before);

        // what a settle keeps is bounded by the reason gate (tests/client/behaviour.test.ts: a longer one is refused)
        await mq.retry(a!, { delayMs: 60_000, reason: "r".repeat(MAX_REASON_BYTES) });
        await mq.bury(b!, "b".repeat(MAX_REASON_BYTES));
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 1, schedule: 1, dead: 1, completed: 0, waitingChildren: 0 });
      } finally {
        await command(port, ["CONFIG", "SET", "maxmemory", "0"]);
        await mq.close();
        await server.stop();
      }
    }, 60_000);
  });
}
