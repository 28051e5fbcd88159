/**
 * Workers that do not come back (BullMQ #648), again and again. Both backends at once, under
 * producers (durable enqueues) and workers:
 *
 * - a 3-primary cluster, one replica each: the primary of one shard is SIGKILLed, its replica is
 *   promoted, the killed node is started again (it rejoins as the new primary's replica), ten
 *   times over; after each promotion every worker of that shard's queues must claim again (a CLAIM
 *   answered by the promoted primary) within 2 s;
 * - a standalone server with `appendfsync always`, SIGKILLed and started again on its port: every
 *   worker must claim again within 2 s of the server answering.
 *
 * At the end every acknowledged enqueue was handled or is dead (nothing lost), and across the
 * failovers no worker's watchdog fired (nothing hung). Prints per round how long each worker took.
 */
import { expect, test } from "bun:test";
import { DurabilityError, EchoMQ, Worker, type WorkerClient } from "../../client.ts";
import { keyspace, slot } from "../../mod.ts";
import {
  type ClusterHandle,
  command,
  infoFields,
  moduleIfBuilt,
  replicasOf,
  type ServerHandle,
  startCluster,
  startServer,
  waitUntil,
} from "../../tools/embedded/mod.ts";
import { sleep } from "./_recorder.ts";
import { killRestarted, type Restartable, restartable } from "./_restart.ts";
import { BACKENDS, useClosers } from "./_server.ts";

const ROUNDS = 10;
const RESTARTS = 4;
const RESUME_MS = 2000;
const NODE_TIMEOUT_MS = 1000;
type P = { n: number };

let site: ClusterHandle | undefined;
let standalone: ServerHandle | undefined;
const closers = useClosers(() => {
  killRestarted();
  return Promise.all([site?.stop(), standalone?.stop()]);
});

/** One worker, its queue, when each of its CLAIMs was answered, and what it is waiting for. */
interface Watched {
  readonly backend: "module" | "scripts";
  readonly queue: string;
  readonly worker: Worker<P>;
  readonly answered: number[];
  readonly errors: string[];
  readonly waiting: Map<string, number>; // what → since (ms since epoch)
}

/** `mq`'s worker client, recording when each CLAIM is answered and which calls are out. */
function recording(mq: EchoMQ<P>, answered: number[], waiting: Map<string, number>): WorkerClient<P> {
  const base = mq.workerClient();
  const out = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    waiting.set(what, Date.now());
    try {
      return await call();
    } finally {
      waiting.delete(what);
    }
  };
  return {
    ...base,
    async dedicated(queue, blockMs, signal) {
      const line = await out("a claim connection", () => base.dedicated(queue, blockMs, signal));
      return {
        ...line,
        async claim(queue, count, leaseMs, waitMs) {
          const claim = await out(`a CLAIM (wait ${waitMs} ms)`, () => line.claim(queue, count, leaseMs, waitMs));
          answered.push(Date.now());
          return claim;
        },
        async settle(queue, settlements, want, leaseMs) {
          const r = await out(`a SETTLE of ${settlements.length} (want ${want})`, () => line.settle!(queue, settlements, want, leaseMs));
          answered.push(Date.now());
          return r;
        },
        wake: (queue, timeoutMs) => out(`a wake (${timeoutMs} ms)`, () => line.wake(queue, timeoutMs)),
      };
    },
    settleMany: (settlements) => out(`a settle of ${settlements.length}`, () => base.settleMany(settlements)),
  };
}

/** What a worker that did not claim again was waiting for. */
function stuck(w: Watched): string {
  const now = Date.now();
  const calls = [...w.waiting].map(([what, since]) => `${what} for ${now - since} ms`);
  return `${w.queue}: ${calls.length ? calls.join(", ") : "no call out"}; last errors ${w.errors.slice(-3).join(" | ") || "none"}`;
}

/** Producers, workers and the record of what was acknowledged and handled, on some queues. */
class Load {
  readonly watched: Watched[] = [];
  readonly acknowledged = new Map<string, string>(); // id → queue
  readonly handled = new Set<string>();
  readonly #run = { producing: true };
  readonly #producers: Promise<void>[] = [];

  constructor(readonly clients: Map<"module" | "scripts", EchoMQ<P>>, readonly durable: boolean) {}

  start(backend: "module" | "scripts", queue: string): void {
    const mq = this.clients.get(backend)!;
    const answered: number[] = [];
    const errors: string[] = [];
    const waiting = new Map<string, number>();
    const worker = new Worker<P>(recording(mq, answered, waiting), queue, (job) => {
      this.handled.add(job.id);
    }, {
      concurrency: 2,
      leaseMs: 2000,
      blockMs: 1000,
      maintenanceMs: 1000,
      onError: (e) => errors.push(e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e)),
    }, () => {});
    this.watched.push({ backend, queue, worker, answered, errors, waiting });
    const run = this.#run;
    this.#producers.push((async () => {
      for (let n = 0; run.producing; n++) {
        try {
          const id = await mq.enqueue(queue, { n }, this.durable ? { durable: { timeoutMs: 500 } } : {});
          this.acknowledged.set(id, queue);
          await sleep(10);
        } catch (e) {
          if (!(e instanceof DurabilityError)) await sleep(20);
        }
      }
    })());
  }

  /** Per watched worker of `queues`: ms from `from` to its first CLAIM answered after `after`. */
  async resumed(queues: Set<string>, after: number, from: number, capMs: number): Promise<Array<number | null>> {
    const mine = this.watched.filter((w) => queues.has(w.queue));
    const first = (w: Watched): number | undefined => w.answered.find((t) => t > after);
    await waitUntil("every worker to claim again", () => mine.every((w) => first(w) !== undefined), capMs, 10)
      .catch(() => {});
    return mine.map((w) => {
      const t = first(w);
      return t === undefined ? null : t - from;
    });
  }

  async stop(): Promise<void> {
    this.#run.producing = false;
    await Promise.all(this.#producers);
  }

  /** Waits for every queue to drain; then stops the workers and returns the ids lost. */
  async drain(): Promise<string[]> {
    const queues = this.watched.map((w) => ({ queue: w.queue, mq: this.clients.get(w.backend)! }));
    await waitUntil(
      "the queues to drain",
      async () => {
        for (const { queue, mq } of queues) {
          const n = await mq.counts(queue);
          if (n.pending + n.active + n.schedule > 0) return false;
        }
        return true;
      },
      60_000,
      100,
    );
    await Promise.all(this.watched.map((w) => w.worker.stop({ timeoutMs: 5000 })));
    const dead = new Set<string>();
    for (const { queue, mq } of queues) {
      for (const job of await mq.jobs(queue, "dead", { limit: 1000 })) dead.add(job.id);
    }
    return [...this.acknowledged.keys()].filter((id) => !this.handled.has(id) && !dead.has(id));
  }
}

async function role(port: number): Promise<string> {
  try {
    return infoFields(await command(port, ["INFO", "replication"], 1000))["role"] ?? "";
  } catch {
    return "";
  }
}

async function connect(addresses: Array<{ host: string; port: number }>, cluster: boolean): Promise<Map<"module" | "scripts", EchoMQ<P>>> {
  const clients = new Map<"module" | "scripts", EchoMQ<P>>();
  for (const backend of BACKENDS) {
    const mq = await EchoMQ.connect<P>({ addresses, cluster, backend, requestTimeout: 3000 });
    closers.push(() => mq.close());
    clients.set(backend, mq);
  }
  return clients;
}

test(`${ROUNDS} failovers under load: every worker claims again within ${RESUME_MS} ms of each promotion; nothing lost`, async () => {
  const args = ["--cluster-node-timeout", String(NODE_TIMEOUT_MS), "--cluster-replica-validity-factor", "0"];
  site = await startCluster({ primaries: 3, replicasPerPrimary: 1, module: moduleIfBuilt(), args });
  const c = site;
  const victim = c.primaries[0]!;
  const partner = (await replicasOf(c, victim)).at(-1)?.server;
  const shard: Restartable[] = [victim.server, partner!].map((s) => restartable(s, { cluster: true, args }));
  const onVictim = (q: string): boolean => c.primaryForSlot(slot(keyspace(q).pending)).id === victim.id;
  const load = new Load(await connect([...c.addresses], true), true);
  const victimQueues = new Set<string>();
  for (const backend of BACKENDS) {
    let here = 0;
    let there = 0;
    for (let i = 0; here < 2 || there < 1; i++) {
      const q = `fl-${backend}-${i}`;
      if (onVictim(q) ? here++ >= 2 : there++ >= 1) continue;
      if (onVictim(q)) victimQueues.add(q);
      load.start(backend, q);
    }
  }
  await waitUntil("every worker to handle a job", () => load.watched.every((w) => w.answered.length > 2), 30_000, 20);

  const rounds: string[] = [];
  const late: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const roles = await Promise.all(shard.map((n) => role(n.port)));
    const primary = shard[roles.indexOf("master")]!;
    const replica = shard.find((n) => n !== primary)!;
    await primary.kill();
    const killedAt = Date.now(); // the process is gone: every CLAIM answered from now on came from elsewhere
    await waitUntil("the replica to be promoted", async () => (await role(replica.port)) === "master", 30_000, 20);
    const promotedAt = Date.now();
    const delays = await load.resumed(victimQueues, killedAt, promotedAt, 10_000);
    rounds.push(`${promotedAt - killedAt}+[${delays.map((d) => d ?? "never").join(",")}]`);
    delays.forEach((d, i) => {
      if (d === null || d > RESUME_MS) late.push(`round ${r} ${[...victimQueues][i]}: ${d ?? "never"}`);
      if (d === null) console.log(`[failover_loop] round ${r}, not claiming: ${stuck(load.watched.filter((w) => victimQueues.has(w.queue))[i]!)}`);
    });
    await primary.start();
    await waitUntil(
      "the killed node to follow the promoted one",
      async () => {
        const info = infoFields(await command(primary.port, ["INFO", "replication"], 1000).catch(() => ""));
        return info["role"] === "slave" && info["master_link_status"] === "up" && info["master_sync_in_progress"] === "0";
      },
      30_000,
      20,
    );
    await sleep(300);
  }
  await load.stop();
  const lost = await load.drain();
  const errors = load.watched.flatMap((w) => w.errors);
  console.log(
    `[failover_loop] ${ROUNDS} failovers, ms to promotion + ms from it to each worker's next claim: ${rounds.join(" ")} | ` +
      `acknowledged ${load.acknowledged.size}, handled ${load.handled.size}, lost ${lost.length} | worker errors ${errors.length}` +
      `${errors.length ? ` (${[...new Set(errors.map((e) => e.slice(0, 120)))].slice(0, 4).join(" | ")})` : ""}`,
  );
  expect(late).toEqual([]);
  expect(lost).toEqual([]);
  expect(errors.filter((e) => e.startsWith("WorkerStalledError"))).toEqual([]); // nothing hung
  for (const w of load.watched) expect(w.worker.completed).toBeGreaterThan(0);
}, 240_000);

test(`${RESTARTS} restarts of a standalone server: every worker claims again within ${RESUME_MS} ms; nothing lost`, async () => {
  const args = ["--appendonly", "yes", "--appendfsync", "always"];
  standalone = await startServer({ module: moduleIfBuilt(), args });
  const server = restartable(standalone, { cluster: false, args });
  const load = new Load(await connect([{ host: "127.0.0.1", port: standalone.port }], false), false);
  const queues = new Set<string>();
  for (const backend of BACKENDS) {
    queues.add(`rs-${backend}`);
    load.start(backend, `rs-${backend}`);
  }
  await waitUntil("every worker to handle a job", () => load.watched.every((w) => w.answered.length > 2), 30_000, 20);
  const rounds: string[] = [];
  const late: string[] = [];
  for (let r = 0; r < RESTARTS; r++) {
    await server.kill();
    const killedAt = Date.now();
    await sleep([0, 1000, 3000, 6000][r]!); // down a while longer each time
    await server.start();
    const upAt = Date.now();
    const delays = await load.resumed(queues, killedAt, upAt, 10_000);
    rounds.push(`${upAt - killedAt}+[${delays.map((d) => d ?? "never").join(",")}]`);
    delays.forEach((d, i) => {
      if (d === null || d > RESUME_MS) late.push(`restart ${r} ${[...queues][i]}: ${d ?? "never"}`);
    });
    await sleep(300);
  }
  await load.stop();
  const lost = await load.drain();
  const errors = load.watched.flatMap((w) => w.errors);
  console.log(
    `[failover_loop] ${RESTARTS} restarts, ms down + ms from up to each worker's next claim: ${rounds.join(" ")} | ` +
      `acknowledged ${load.acknowledged.size}, handled ${load.handled.size}, lost ${lost.length} | worker errors ${errors.length} ` +
      `(${errors.filter((e) => e.startsWith("WorkerStalledError")).length} stall reports)`,
  );
  expect(late).toEqual([]);
  expect(lost).toEqual([]);
  // (a worker that cannot connect for 5 × blockMs says so: WorkerStalledError during the 6 s outage)
}, 180_000);
