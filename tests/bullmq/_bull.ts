/**
 * What the BullMQ suites share: per backend × topology, a `createEchoMQBackend` factory on the
 * combo's site, an EchoMQ client beside it, and BullMQ `Queue`s and `Worker`s made on the factory
 * and closed after the suite (newest first).
 */
import { afterAll, beforeAll } from "bun:test";
import { FlowProducer, type IQueueBackend, type Job as BullJob, Queue, Worker } from "bullmq";
import type { EchoMQ } from "../../client.ts";
import { createEchoMQBackend } from "../../bullmq.ts";
import { keyspace } from "../../mod.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { type Combo, connector, queueKeys, type Sites } from "../client/_harness.ts";

/** The digest of every key of queue `name` (other suites' workers write other queues of the server meanwhile). */
export async function queueDigest(raw: Connection, name: string): Promise<string> {
  const keys = (await queueKeys(raw, name)).sort();
  const values = keys.length === 0 ? [] : (await raw.command(["DEBUG", "DIGEST-VALUE", ...keys], keyspace(name).meta)) as unknown[];
  return JSON.stringify([keys, values.map(String)]);
}

/** A BullMQ queue's first writes (its meta: `version`, the events' bound) done. */
export const settled = (q: object): Promise<unknown> => (q as { queueMetaInitialized: Promise<unknown> }).queueMetaInitialized;

/**
 * Registers the suite's setup and teardown (call it inside the combo's `describe`): `queue`,
 * `worker` and `producer` (a `FlowProducer`) make BullMQ's on the EchoMQ backend, `closing` adds anything else to close, `factory`
 * and `mq` are the backend factory and an EchoMQ client of the same site once the suite started.
 */
// deno-lint-ignore explicit-function-return-type
export function useBull(sites: Sites, combo: Combo) {
  let factory: ReturnType<typeof createEchoMQBackend>;
  let mq: EchoMQ<unknown> | undefined;
  const closers: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    const site = sites.sites.get(combo.topology)!;
    factory = createEchoMQBackend({ addresses: site.addresses, cluster: site.cluster, backend: combo.backend });
    mq = await connector(sites, combo)<unknown>();
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await mq?.close();
  });
  return {
    queue(name: string) {
      const q = new Queue(name, { connection: {} }, factory);
      closers.push(() => q.close());
      return q;
    },
    worker<R>(name: string, fn: (job: BullJob) => Promise<R>, opts: Record<string, unknown> = {}) {
      const w = new Worker(name, fn, { connection: {}, drainDelay: 1, ...opts }, factory);
      closers.push(() => w.close());
      return w;
    },
    producer(): FlowProducer<IQueueBackend, unknown> {
      const p = new FlowProducer<IQueueBackend, unknown>({ connection: {} }, factory);
      closers.push(() => p.close());
      return p;
    },
    closing(close: () => Promise<unknown>): void {
      closers.push(close);
    },
    get factory(): ReturnType<typeof createEchoMQBackend> {
      return factory;
    },
    get mq(): EchoMQ<unknown> {
      return mq!;
    },
  };
}
