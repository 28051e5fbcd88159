/**
 * A worker stopped while its waiting CLAIM is on its way but not yet waiting on the server (module
 * backend): the UNBLOCK that `stop()` sends finds nothing to end, the CLAIM then waits there, and
 * a job enqueued after `stop()` resolved was handed to that dead line — active, unseen, until its
 * lease ran out (found as a flaky tracing test on a busy machine). Here the line sends its waiting
 * CLAIM 50 ms late and closes 300 ms late (glide closes lazily), which makes that order certain:
 * the job must stay pending for the next worker.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { EchoMQ, Worker, type WorkerClient } from "../../client.ts";
import { moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

type P = { n: number };
let server: ServerHandle;

beforeAll(async () => {
  server = await startServer({ module: moduleIfBuilt() });
}, 60_000);
afterAll(async () => {
  await server.stop();
});

test.skipIf(moduleIfBuilt() === undefined)("a job enqueued after stop() resolved is not claimed by the stopped worker's late CLAIM", async () => {
  const mq = await EchoMQ.connect<P>({ addresses: [{ host: "127.0.0.1", port: server.port }], backend: "module" });
  const q = "stop-race";
  const base = mq.workerClient();
  const waiting = Promise.withResolvers<void>();
  const closed = Promise.withResolvers<void>();
  const client: WorkerClient<P> = {
    ...base,
    async dedicated(queue, blockMs, signal) {
      const line = await base.dedicated(queue, blockMs, signal);
      return {
        ...line,
        claim(queue, count, leaseMs, waitMs) {
          if (waitMs === 0) return line.claim(queue, count, leaseMs, waitMs);
          waiting.resolve(); // a waiting CLAIM, still on its way
          return new Promise((r) => setTimeout(r, 50)).then(() => line.claim(queue, count, leaseMs, waitMs));
        },
        close() {
          setTimeout(() => {
            line.close();
            closed.resolve();
          }, 300);
        },
      };
    },
  };
  const handled: string[] = [];
  const worker = new Worker(client, q, (job) => void handled.push(job.id), { blockMs: 5000 }, () => {});
  try {
    await waiting.promise;
    await worker.stop();
    const id = await mq.enqueue(q, { n: 1 });
    await closed.promise;
    // the stopped worker's line is gone: nothing took the job, or the worker ran it before stop() resolved
    const counts = await mq.counts(q);
    expect({ counts, handled }).toEqual({ counts: { pending: 1, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 }, handled: [] });
    const next = await mq.claim(q, { leaseMs: 60_000 });
    expect(next?.id).toBe(id);
  } finally {
    await worker.stop();
    await mq.close();
  }
});
