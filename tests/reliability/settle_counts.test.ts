/**
 * A worker counts only the settles the server applied, per backend: four handlers finish while
 * the server is down (SIGKILLed, `appendfsync always`), so their acks fail as a whole command; the
 * server comes back with the jobs still active; their leases run out and the same worker handles
 * them again. `completed` must equal the server's count of acks (stats `acked`), not count the
 * failed command too.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { sleep } from "./_recorder.ts";
import { killRestarted, restartable } from "./_restart.ts";
import { BACKENDS } from "./_server.ts";

const servers: ServerHandle[] = [];
afterAll(async () => {
  killRestarted();
  await Promise.all(servers.map((s) => s.stop()));
});

for (const backend of BACKENDS) {
  describe(`settle counts (${backend})`, () => {
    test("acks sent while the server is down are not counted as completed", async () => {
      const args = ["--appendonly", "yes", "--appendfsync", "always"];
      const server = await startServer({ module: moduleIfBuilt(), args });
      servers.push(server);
      const node = restartable(server, { cluster: false, args });
      const mq = await EchoMQ.connect<{ n: number }>({
        addresses: [{ host: "127.0.0.1", port: server.port }],
        backend,
        requestTimeout: 1000,
        retryWindowMs: 0,
      });
      const q = `counts-${backend}`;
      try {
        await mq.enqueueMany(q, [0, 1, 2, 3, 4, 5, 6, 7].map((n) => ({ n })));
        let open!: () => void;
        const gate = new Promise<void>((done) => (open = done));
        let started = 0;
        const errors: string[] = [];
        const worker = mq.work(q, async () => {
          started++;
          await gate;
        }, { concurrency: 4, leaseMs: 1000, blockMs: 200, maintenanceMs: 1000, onError: (e) => errors.push(String(e)) });
        while (started < 4) await sleep(5);
        await node.kill();
        open(); // the four handlers finish: their acks go to a dead server
        await sleep(2000); // past the request timeout: the ack command fails as a whole
        await node.start();
        const until = Date.now() + 30_000;
        let acked = 0;
        while (Date.now() < until) {
          const s = await mq.stats(q).catch(() => null);
          if (s !== null && s.pending + s.active + s.schedule === 0) {
            acked = s.acked;
            break;
          }
          await sleep(50);
        }
        await worker.stop();
        console.log(`[settle counts ${backend}] handled ${started}, worker completed ${worker.completed}, server acked ${acked}, errors ${errors.length}`);
        expect(acked).toBe(8);
        expect(worker.completed).toBe(acked);
      } finally {
        await mq.close();
      }
    }, 60_000);
  });
}
