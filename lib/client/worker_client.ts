/**
 * The {@link WorkerClient} of an `EchoMQ` client: what a worker needs of it. Claims and waits go
 * on a dedicated connection of the worker's own (the queue's node), with its server id kept so
 * that `CLIENT UNBLOCK` can end a wait from the main connection; settles, extensions, progress and
 * reaps go through the client's own methods.
 *
 * @module
 */
import { type Claim, claimOnce } from "./batch.ts";
import type { ClientContext } from "./context.ts";
import type { WorkerClient } from "./worker.ts";

/** The client's methods a worker calls as they are (the `EchoMQ` facade has them). */
export type WorkerCalls<P> = Pick<WorkerClient<P>, "settleMany" | "extend" | "progress" | "reap">;

/** See `EchoMQ.workerClient`. */
export function workerClient<P>(c: ClientContext<P>, calls: WorkerCalls<P>): WorkerClient<P> {
  return {
    backend: c.impl.kind,
    dedicated: async (queue, blockMs) => {
      const conn = await c.conn.dedicated(blockMs);
      const impl = c.impl.on(conn);
      const route = c.keyspace(queue).meta;
      // the server's id of the connection this line waits on (the queue's node)
      let id: string;
      try {
        id = String(await conn.command(["CLIENT", "ID"], route));
      } catch (e) {
        conn.close();
        throw e;
      }
      return {
        unblock: async () => {
          await c.conn.command(["CLIENT", "UNBLOCK", id], route);
        },
        claim: (queue, count, leaseMs, waitMs): Promise<Claim<P>> =>
          claimOnce(c, impl, c.keyspace(queue), count, leaseMs, waitMs),
        wake: async (queue, timeoutMs) => {
          const ks = c.keyspace(queue);
          await conn.command(["BZPOPMIN", ks.wake, String(timeoutMs / 1000)], ks.meta);
        },
        close: () => {
          impl.close();
          conn.close();
        },
      };
    },
    settleMany: (settlements) => calls.settleMany(settlements),
    extend: (jobs, leaseMs) => calls.extend(jobs, leaseMs),
    progress: (job, value) => calls.progress(job, value),
    reap: (queue) => calls.reap(queue),
  };
}
