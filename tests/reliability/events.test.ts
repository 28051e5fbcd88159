/**
 * Events and `result()` under adversity (issue 21): what `mq.events()` yields is what the queue's
 * stream holds — none missing, none twice, in order, a gap only where entries were trimmed — and a
 * waiting `result()` answers, across
 * 1. a restart of a standalone server with AOF (`appendfsync always`): a new iterator from an item
 *    seen before the restart yields exactly the items after it; the iterator that saw it reads on
 *    by itself; a `result()` waiting across the restart resolves once the job completes after it;
 * 2. a failover (3-primary cluster, a replica each; the queue's primary SIGKILLed, its replica
 *    promoted): a reader following the queue while a producer and a worker run jobs through it
 *    reads on by itself; its items equal the promoted primary's stream (the replica was in sync at
 *    the kill: the load is paused and the replica's offset waited for, so nothing it yielded was
 *    lost with the primary); a `result()` issued before the kill resolves after it;
 * 3. a live migration of the queue's slot under load (3-primary cluster, as migration.test.ts moves
 *    it): every job's `enqueued`, `claimed`, `completed` seen exactly once, in that order, no gap;
 * 4. the default bound: 200,000 jobs through a queue keep the stream between 10,000 entries and
 *    one stream node (100) more (sampled during the run: never more), `retention().eventsMax`
 *    10,000, 1,000 completed jobs.
 * Every wait is on a condition, bounded.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { EchoMQ, type EchoMQOptions, type Worker } from "../../client.ts";
import { keyspace, slot } from "../../mod.ts";
import { entryItems, type QueueEventItem, streamEntries } from "../../lib/client/events.ts";
import { READER_NAME_PREFIX } from "../../lib/client/event_reader.ts";
import {
  type ClusterHandle,
  command,
  infoFields,
  moduleIfBuilt,
  replicasOf,
  RespError,
  startCluster,
  startServer,
  waitUntil,
} from "../../tools/embedded/mod.ts";
import { sleep } from "./_recorder.ts";
import { killRestarted, restartable } from "./_restart.ts";
import { BACKENDS } from "./_server.ts";
import { migrate, MOVERS, owner } from "./_slots.ts";

type P = { seq: number };

const servers: Array<{ stop(): Promise<unknown> }> = [];
afterAll(async () => {
  killRestarted();
  await Promise.all(servers.map((s) => s.stop().catch(() => {})));
});

/** An iterator of `mq.events()` drained into `items` in the background until stopped. */
class Follower {
  readonly items: QueueEventItem[] = [];
  error: unknown = null;
  readonly #ac = new AbortController();
  readonly #done: Promise<void>;
  constructor(mq: EchoMQ<P>, q: string, from?: string) {
    const it = mq.events(q, { from, signal: this.#ac.signal });
    this.#done = (async () => {
      for await (const e of it) this.items.push(e);
    })().catch((e) => void (this.error = e));
  }
  get gaps(): QueueEventItem[] {
    return this.items.filter((e) => e.type === "gap");
  }
  async stop(): Promise<void> {
    this.#ac.abort();
    await this.#done;
  }
}

/** The items of `key`'s stream on the server at `port`, as the client splits its entries. */
async function streamItems(port: number, key: string): Promise<QueueEventItem[]> {
  const reply = await command(port, ["XRANGE", key, "-", "+"], 30_000);
  if (reply instanceof RespError) throw new Error(`XRANGE on ${port}: ${reply.message}`);
  return streamEntries(reply).flatMap(entryItems);
}

/**
 * Whether `q`'s events reader waits on the server at `port`: a connection of that name blocked
 * (flag `b`; on a cluster its client has a connection to every primary, only the owner's blocks).
 */
async function readerWaiting(port: number, q: string): Promise<boolean> {
  const list = String(await command(port, ["CLIENT", "LIST"]));
  return list.split("\n").some((l) => l.includes(`name=${READER_NAME_PREFIX}${encodeURIComponent(q)} `) && /\bflags=\S*b/.test(l));
}

/** `f` retried (after a short wait) until it succeeds, for at most `ms`: a call made while the client reconnects. */
async function retrying<T>(what: string, f: () => Promise<T>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await f();
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${what}: ${(e as Error).message}`);
      await sleep(100);
    }
  }
}

/** The jobs' items, by job, in the order yielded (types only). */
function perJob(items: readonly QueueEventItem[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of items) {
    if (!("jobId" in e)) continue;
    const list = out.get(e.jobId) ?? [];
    list.push(e.type);
    out.set(e.jobId, list);
  }
  return out;
}

async function replication(port: number): Promise<Record<string, string>> {
  return infoFields(await command(port, ["INFO", "replication"], 2000));
}

// ---------------------------------------------------------------------------------------------
// 1. Restart with AOF

describe("events across a restart with AOF", () => {
  for (const backend of BACKENDS) {
    test(`${backend}: resuming from a seen item yields exactly what followed it; result() waits across the restart`, async () => {
      const args = ["--appendonly", "yes", "--appendfsync", "always"];
      const site = await startServer({ module: moduleIfBuilt(), args });
      servers.push(site);
      const server = restartable(site, { cluster: false, args });
      const mq = await EchoMQ.connect<P>({ addresses: [{ host: "127.0.0.1", port: site.port }], backend, requestTimeout: 5000 });
      try {
        const q = `restart-${backend}`;
        const K = keyspace(q);
        // a reader sees a few jobs' lives, up to X
        const first = new Follower(mq, q, "start");
        await mq.enqueueMany(q, [1, 2, 3, 4, 5].map((seq) => ({ seq })));
        for (const job of await mq.claimMany(q, 2, { leaseMs: 60_000 })) await mq.ack(job as never);
        await waitUntil("the first reader to see 9 items", () => first.items.length >= 9, 20_000, 10);
        expect(first.gaps).toEqual([]);
        const x = first.items.at(-1)!.id; // (the first reader follows on, across the restart)

        // after X, before the restart: a job enqueued, and a result() waiting for it on the server
        const j = await mq.enqueue(q, { seq: 6 });
        const answer = mq.result(q, j, { timeoutMs: 90_000 });
        let settled: unknown = "waiting";
        answer.then((v) => (settled = v), (e) => (settled = e));
        await waitUntil("result()'s events reader to be open", () => readerWaiting(site.port, q), 20_000, 10);

        await server.kill();
        await server.start();
        expect(settled).toBe("waiting");

        // after the restart: more transitions; j (fifth in line) completes
        const later = await retrying("enqueue after the restart", () => mq.enqueueMany(q, [{ seq: 7 }, { seq: 8 }]));
        const claimed = await retrying("claim after the restart", () => mq.claimMany(q, 4, { leaseMs: 60_000 }));
        expect(claimed.map((c) => (c as { id: string }).id)).toContain(j);
        for (const job of claimed) {
          const id = (job as { id: string }).id;
          await mq.ack(job as never, id === j ? { answer: 42 } : undefined);
        }
        expect(await answer).toEqual({ answer: 42 });

        // a new iterator from X: exactly the stream's items after X, none missing, no gap
        const all = await streamItems(site.port, K.events);
        const at = all.findIndex((e) => e.id === x);
        expect(at).toBeGreaterThanOrEqual(0); // X itself survived the restart
        const expected = all.slice(at + 1);
        // j's enqueued (written before the restart) and its completion (after) are among them
        expect(expected.filter((e) => "jobId" in e && e.jobId === j).map((e) => e.type)).toEqual(["enqueued", "claimed", "completed"]);
        expect(expected.filter((e) => e.type === "enqueued").map((e) => (e as { jobId: string }).jobId)).toEqual([j, ...later]);
        const resumed = new Follower(mq, q, x);
        await waitUntil(`the resumed reader to yield ${expected.length} items`, () => resumed.items.length >= expected.length, 20_000, 10);
        await sleep(200); // (nothing more may come: the stream holds no more)
        await resumed.stop();
        expect(resumed.error).toBeNull();
        expect(resumed.gaps).toEqual([]);
        expect(resumed.items).toEqual(expected);
        // the first reader read on by itself after the restart: the whole stream, once, no gap
        await waitUntil(`the first reader to yield ${all.length} items`, () => first.items.length >= all.length, 20_000, 10);
        await first.stop();
        expect(first.error).toBeNull();
        expect(first.items).toEqual(all);
      } finally {
        await mq.close();
      }
    }, 90_000);
  }
});

// ---------------------------------------------------------------------------------------------
// 2. Failover

/** A queue with a producer (paced, pausable), a worker returning its job's seq, and a reader from the start. */
class Flow {
  readonly follower: Follower;
  readonly worker: Worker<P>;
  readonly errors: string[] = [];
  readonly state = { producing: true, idle: false, on: true };
  enqueued = 0;
  readonly #loop: Promise<void>;
  constructor(readonly mq: EchoMQ<P>, readonly q: string) {
    this.follower = new Follower(mq, q, "start");
    this.worker = mq.work(q, (job) => ({ seq: job.payload.seq }), {
      concurrency: 4,
      leaseMs: 30_000,
      blockMs: 1000,
      onError: (e) => void this.errors.push(e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e)),
    });
    this.#loop = this.#produce();
  }
  async #produce(): Promise<void> {
    let seq = 0;
    while (this.state.on) {
      if (!this.state.producing) {
        this.state.idle = true;
        await sleep(10);
        continue;
      }
      this.state.idle = false;
      try {
        await this.mq.enqueue(this.q, { seq: seq++ });
        this.enqueued++;
      } catch {
        await sleep(50);
      }
      await sleep(2);
    }
  }
  /** Stops producing; resolves once no enqueue is in flight. */
  async hold(): Promise<void> {
    this.state.producing = false;
    await waitUntil(`${this.q}'s producer to hold`, () => this.state.idle, 30_000, 5);
  }
  async stop(): Promise<void> {
    this.state.on = false;
    await this.#loop;
    await this.worker.stop({ timeoutMs: 5000 }).catch(() => {});
    await this.follower.stop();
  }
}

describe("events across a failover", () => {
  test(
    `the primary killed, its replica promoted: each reader reads on, its items = the new primary's stream; result() answers (${BACKENDS.join(", ")})`,
    async () => {
      const args = ["--cluster-node-timeout", "2000", "--cluster-replica-validity-factor", "0"];
      const c: ClusterHandle = await startCluster({ primaries: 3, replicasPerPrimary: 1, module: moduleIfBuilt(), args });
      servers.push(c);
      const victim = c.primaries[0]!;
      const replicaPort = (await replicasOf(c, victim))[0]!.server.port;
      const flows: Flow[] = [];
      try {
        for (const backend of BACKENDS) {
          let q = "";
          for (let i = 0; q === ""; i++) {
            const name = `fo-ev-${backend}-${i}`;
            if (c.primaryForSlot(slot(keyspace(name).pending)).id === victim.id) q = name;
          }
          const mq = await EchoMQ.connect<P>({ addresses: [...c.addresses], cluster: true, backend, requestTimeout: 5000 });
          servers.unshift({ stop: () => mq.close() }); // (closed before the servers stop)
          flows.push(new Flow(mq, q));
        }
        await waitUntil("every worker to complete 50 jobs", () => flows.every((f) => f.worker.completed >= 50), 60_000, 20);

        // the load paused, a job waiting (pending, paused) and a result() for it; the replica in sync
        const waiting: Array<{ id: string; seq: number; answer: Promise<unknown>; settled: { v: unknown } }> = [];
        for (const f of flows) {
          await f.hold();
          await f.mq.pause(f.q);
          await waitUntil(`${f.q}: no job active`, async () => (await f.mq.counts(f.q)).active === 0, 30_000, 10);
          const seq = 1_000_000;
          const id = await f.mq.enqueue(f.q, { seq });
          const answer = f.mq.result(f.q, id, { timeoutMs: 120_000 });
          const settled = { v: "waiting" as unknown };
          answer.then((v) => (settled.v = v), (e) => (settled.v = e));
          waiting.push({ id, seq, answer, settled });
          await waitUntil(`${f.q}: the events reader open`, () => readerWaiting(victim.server.port, f.q), 20_000, 10);
        }
        const offset = Number((await replication(victim.server.port))["master_repl_offset"]);
        await waitUntil("the replica to have every write", async () => Number((await replication(replicaPort))["slave_repl_offset"]) >= offset, 30_000, 10);
        const beforeKill = flows.map((f) => f.follower.items.length);

        process.kill(victim.server.pid, "SIGKILL");
        const killedAt = Date.now();
        await waitUntil("the replica to be promoted", async () => (await replication(replicaPort))["role"] === "master", 60_000, 20);
        const promotedAt = Date.now();
        for (const w of waiting) expect(w.settled.v).toBe("waiting");

        // the load resumes on the promoted primary: the waiting jobs complete, and more
        const completedAt = flows.map((f) => f.worker.completed);
        for (const f of flows) {
          expect(await retrying(`${f.q}: resume`, () => f.mq.resume(f.q), 60_000)).toBe(true);
          f.state.producing = true;
        }
        for (const [i, f] of flows.entries()) {
          expect(await waiting[i]!.answer).toEqual({ seq: waiting[i]!.seq });
          await waitUntil(`${f.q}: 50 more jobs completed`, () => f.worker.completed >= completedAt[i]! + 50, 60_000, 20);
          await f.hold();
          await waitUntil(
            `${f.q} to drain`,
            async () => {
              const n = await f.mq.counts(f.q);
              return n.pending + n.active + n.schedule === 0;
            },
            60_000,
            20,
          );
        }

        // what each reader yielded = the promoted primary's stream, from its start
        for (const [i, f] of flows.entries()) {
          const expected = await streamItems(replicaPort, keyspace(f.q).events);
          await waitUntil(`${f.q}: the reader to yield ${expected.length} items`, () => f.follower.items.length >= expected.length, 30_000, 10)
            .catch((e) => {
              throw new Error(`${(e as Error).message}; yielded ${f.follower.items.length}, gaps ${JSON.stringify(f.follower.gaps)}`);
            });
          console.log(
            `[events failover ${f.q}] promotion ${promotedAt - killedAt} ms after the kill | ${f.enqueued} enqueued, ` +
              `${f.worker.completed} completed | reader: ${beforeKill[i]} items before the kill, ${f.follower.items.length} in all, ` +
              `stream ${expected.length} | worker errors ${f.errors.length}${f.errors.length ? ` (${[...new Set(f.errors)].slice(0, 2).join(" | ")})` : ""}`,
          );
          expect(f.follower.error).toBeNull();
          expect(f.follower.gaps).toEqual([]);
          expect(f.follower.items.length).toBe(expected.length);
          expect(f.follower.items).toEqual(expected);
          expect(expected.length).toBeGreaterThan(beforeKill[i]!); // it read on after the failover
          const jobs = perJob(expected);
          expect(jobs.get(waiting[i]!.id)).toEqual(["enqueued", "claimed", "completed"]);
        }
      } finally {
        await Promise.all(flows.map((f) => f.stop()));
      }
    },
    180_000,
  );
});

// ---------------------------------------------------------------------------------------------
// 3. Slot migration (the moves of _slots.ts, which migration.test.ts makes too)

const BACKLOG = 5_000; // rows of a sibling queue of the same slot: the move takes a while

describe("events across a slot migration", () => {
  let site: ClusterHandle | undefined;
  const cluster = async (): Promise<ClusterHandle> => {
    if (site === undefined) {
      site = await startCluster({ primaries: 3, module: moduleIfBuilt() });
      servers.push(site);
    }
    return site;
  };
  for (const backend of BACKENDS) {
    for (const mover of MOVERS) {
      test(`${backend}, ${mover}: every job's enqueued, claimed, completed seen once, in order, no gap`, async () => {
        const c = await cluster();
        let q = "";
        for (let i = 0; q === ""; i++) {
          const name = `mig-ev-${backend}-${mover}-${i}`;
          if ((await owner(c, slot(keyspace(name).pending))).id === c.primaries[0]!.id) q = name; // a slot not moved before
        }
        const s = slot(keyspace(q).pending);
        let sibling = "";
        for (let i = 0; sibling === ""; i++) if (slot(keyspace(`fill-ev-${i}`).pending) === s) sibling = `fill-ev-${i}`;
        const from = await owner(c, s);
        const to = c.primaries.find((p) => p.id !== from.id)!;
        const options: EchoMQOptions<P> = { addresses: [...c.addresses], cluster: true, backend, requestTimeout: 5000 };
        const mq = await EchoMQ.connect<P>(options);
        const flows: Flow[] = [];
        try {
          for (let i = 0; i < BACKLOG; i += 1000) {
            await mq.enqueueMany(sibling, Array.from({ length: 1000 }, (_, k) => ({ seq: i + k })), { lane: (_, k) => `b${k % 20}` });
          }
          const flow = new Flow(mq, q);
          flows.push(flow);
          await waitUntil("the worker to complete 30 jobs", () => flow.worker.completed >= 30, 60_000, 10);
          // the reader waits on the slot's owner as the move begins
          await waitUntil("the reader to be open on the source", () => readerWaiting(from.server.port, q), 20_000, 10);
          const t0 = Date.now();
          const enqueuedBefore = flow.enqueued;
          const completedBefore = flow.worker.completed;
          const { keys: moved } = await migrate(c, mover, s, from, to);
          const took = Date.now() - t0;
          const during = { enqueued: flow.enqueued - enqueuedBefore, completed: flow.worker.completed - completedBefore };
          const completedAt = flow.worker.completed;
          await waitUntil("the reader to wait on the slot's new owner", () => readerWaiting(to.server.port, q), 20_000, 10);
          const readerMovedMs = Date.now() - t0 - took;
          await waitUntil("30 more jobs completed after the move", () => flow.worker.completed >= completedAt + 30, 60_000, 10);
          const resumedMs = Date.now() - t0 - took;
          await flow.hold();
          await waitUntil(
            `${q} to drain`,
            async () => {
              const n = await mq.counts(q);
              return n.pending + n.active + n.schedule === 0;
            },
            60_000,
            20,
          );
          const expected = await streamItems(to.server.port, keyspace(q).events);
          await waitUntil(`the reader to yield ${expected.length} items`, () => flow.follower.items.length >= expected.length, 30_000, 10);
          const jobs = perJob(flow.follower.items);
          const wrong = [...jobs].filter(([, types]) => types.join(" ") !== "enqueued claimed completed");
          console.log(
            `[events migration ${backend} ${mover}] slot ${s} moved ${from.server.port} → ${to.server.port}: ${moved} keys in ${took} ms ` +
              `(${during.enqueued} enqueued and ${during.completed} completed meanwhile; the reader waited on the new owner ${readerMovedMs} ms after, ` +
              `30 more jobs completed ${resumedMs} ms after) | ` +
              `${flow.enqueued} enqueued, ${flow.worker.completed} completed, reader ${flow.follower.items.length} items ` +
              `(stream ${expected.length}), jobs out of order or repeated ${wrong.length} | worker errors ${flow.errors.length}`,
          );
          expect((await owner(c, s)).id).toBe(to.id);
          expect(moved).toBeGreaterThan(BACKLOG);
          // the load ran across the move (during it, the queue's multi-key calls wait out TRYAGAIN)
          expect(completedBefore).toBeGreaterThanOrEqual(30);
          expect(flow.worker.completed).toBeGreaterThanOrEqual(completedBefore + 30);
          expect(await readerWaiting(from.server.port, q)).toBe(false);
          expect(flow.follower.error).toBeNull();
          expect(flow.follower.gaps).toEqual([]);
          expect(wrong.slice(0, 5)).toEqual([]);
          expect(jobs.size).toBe(flow.enqueued);
          expect(flow.follower.items).toEqual(expected);
        } finally {
          await Promise.all(flows.map((f) => f.stop()));
          await mq.close();
        }
      }, 120_000);
    }
  }
});

// ---------------------------------------------------------------------------------------------
// 4. Bounded

const JOBS = 200_000;
const CLAIM_BATCH = 25; // small claims and acks: ~16,000 entries, well past the bound
const LOOPS = 8;

describe("the default bound", () => {
  for (const backend of BACKENDS) {
    test(`${backend}: ${JOBS} jobs through a queue: the stream holds 10,000 entries to one node (100) more, never more; 1,000 completed jobs`, async () => {
      const site = await startServer({ module: moduleIfBuilt() });
      servers.push(site);
      const mq = await EchoMQ.connect<P>({ addresses: [{ host: "127.0.0.1", port: site.port }], backend, requestTimeout: 10_000 });
      const q = `bounded-${backend}`;
      const K = keyspace(q);
      const run = { on: true };
      let maxLen = 0;
      let samples = 0;
      const sampler = (async () => {
        while (run.on) {
          const n = Number(await command(site.port, ["XLEN", K.events]));
          maxLen = Math.max(maxLen, n);
          samples++;
          await sleep(20);
        }
      })();
      try {
        const t0 = Date.now();
        const ids = await mq.enqueueMany(q, Array.from({ length: JOBS }, (_, seq) => ({ seq })));
        expect(ids.length).toBe(JOBS);
        let acked = 0;
        const loop = async (): Promise<void> => {
          for (;;) {
            const jobs = await mq.claimMany(q, CLAIM_BATCH, { leaseMs: 120_000 });
            if (jobs.length === 0) {
              return;
            }
            const errors = await mq.settleMany(jobs.map((job) => ({ kind: "ack" as const, job: job as never })));
            for (const e of errors) if (e !== null) throw e;
            acked += jobs.length;
          }
        };
        await Promise.all(Array.from({ length: LOOPS }, loop));
        const took = Date.now() - t0;
        run.on = false;
        await sampler;
        const len = Number(await command(site.port, ["XLEN", K.events]));
        const added = await command(site.port, ["XINFO", "STREAM", K.events]) as unknown[];
        const entriesAdded = Number(added[added.indexOf("entries-added") + 1]);
        const retention = await mq.retention(q);
        const counts = await mq.counts(q);
        console.log(
          `[events bounded ${backend}] ${JOBS} jobs in ${took} ms: entries added ${entriesAdded}, XLEN ${len} at the end, ` +
            `at most ${maxLen} in ${samples} samples; completed ${counts.completed}`,
        );
        expect(acked).toBe(JOBS);
        expect(entriesAdded).toBeGreaterThan(10_000); // the bound was reached, and trimmed to
        // trimmed by whole nodes (stream-node-max-entries 100): at least the bound, at most a node more
        expect(len).toBeGreaterThanOrEqual(10_000);
        expect(len).toBeLessThan(10_100);
        expect(maxLen).toBeGreaterThanOrEqual(10_000); // reached during the run
        expect(maxLen).toBeLessThan(10_100); // never past a node more
        expect(samples).toBeGreaterThan(10);
        expect(retention.eventsMax).toBe(10_000);
        expect(counts).toMatchObject({ pending: 0, active: 0, completed: 1000 });
        expect(Number(await command(site.port, ["ZCARD", K.completed]))).toBe(1000);
      } finally {
        run.on = false;
        await sampler.catch(() => {});
        await mq.close();
      }
    }, 120_000);
  }
});
