/**
 * `enqueue(queue, payload, { wait })` on each backend × topology: resolves `{ id, result }` with
 * the handler's return value; on a queue that keeps no completed jobs (`completedMax` 0) a job that
 * completes before the call could listen is still answered — deterministically: the backend below
 * acks the job between ENQUEUE's reply and the call's next step, so a position read after the
 * enqueue (the bug this guards) waits past the job's events and times out; rejects
 * `JobFailedError` for a job that dies, `ResultTimeoutError` past `timeoutMs`, the signal's reason
 * on an abort (an aborted signal admits nothing); a held `dedup` key answers from its holder; a
 * queue whose events are off is polled; without `wait`, a JobId as before; a bad `wait` is refused
 * before anything is sent. The handle (`mq.queue(q).enqueue`) takes it too.
 */
import { describe, expect, test } from "bun:test";
import { EchoMQ, EchoMQError, type Enqueued, type Handler, JobFailedError, ResultTimeoutError, type WorkerOptions } from "../../client.ts";
import { type JobId, keyspace } from "../../mod.ts";
import type { Backend } from "../../lib/client/backend.ts";
import { ClientContext } from "../../lib/client/context.ts";
import { type Combo, COMBOS, counterIds, rejection, type Sites, sleep, useClient, useSites } from "./_harness.ts";

const servers = useSites();
const FAST = { blockMs: 200 };
type P = { n: number };

/**
 * A client of `combo` whose backend runs `after(queue)` once each ENQUEUE has its reply, before
 * the enqueue call goes on: what a worker faster than the producer's next step does.
 */
async function slowProducer(sites: Sites, combo: Combo, after: (queue: string) => Promise<void>): Promise<EchoMQ<P>> {
  const site = sites.sites.get(combo.topology)!;
  const c = await ClientContext.connect<P>({ addresses: site.addresses, cluster: site.cluster, backend: combo.backend });
  const real = c.impl;
  const impl: Backend = {
    kind: real.kind,
    call: async (call, decoder) => {
      const reply = await real.call(call, decoder);
      if (call.verb === "ENQUEUE") await after(call.keys[0]!.slice("emq:{".length, -"}:meta".length));
      return reply;
    },
    callMany: (calls, wait, decoder) => real.callMany(calls, wait, decoder),
    on: (conn) => real.on(conn),
    close: () => real.close(),
  };
  const wrapped = new ClientContext<P>(c.conn, impl, c.codec, counterIds(900_000), c.tracing);
  // the facade over that context (its constructor is private: connect() makes its own context)
  return Reflect.construct(EchoMQ, [wrapped]) as EchoMQ<P>;
}

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo, { newId: counterIds(1) });
    const q = (name: string): string => `ew-${name}-${combo.backend}`;
    /** Runs `run` while a worker of `queue` runs `handler` (stopped after). */
    const working = async (queue: string, handler: Handler<P>, opts: WorkerOptions, run: () => Promise<void>): Promise<void> => {
      const worker = ctx.mq.work(queue, handler, opts);
      try {
        await run();
      } finally {
        await worker.stop();
      }
    };

    test("resolves { id, result } with the handler's result; the handle too; without wait a JobId", async () => {
      const queue = q("ok");
      await working(queue, (job) => ({ double: job.payload.n * 2 }), FAST, async () => {
        const done = await ctx.mq.enqueue(queue, { n: 21 }, { wait: true });
        expect(done).toEqual({ id: done.id, result: { double: 42 } });
        expect((await ctx.mq.getJob(queue, done.id))?.state).toBe("completed");
        const viaHandle = await ctx.mq.queue<P>(queue).enqueue({ n: 2 }, { wait: { timeoutMs: 20_000 }, priority: 3 });
        expect(viaHandle.result).toEqual({ double: 4 });
        expect((await ctx.mq.getJob(queue, viaHandle.id))?.priority).toBe(3);
        const id = await ctx.mq.enqueue(queue, { n: 1 }, { wait: false });
        expect(typeof id).toBe("string");
        expect(await ctx.mq.result(queue, id, { timeoutMs: 20_000 })).toEqual({ double: 2 });
      });
    }, 30_000);

    test("completedMax 0, a job acked before the call could listen: answered (the position is read before the enqueue)", async () => {
      const queue = q("instant");
      await ctx.mq.retain(queue, { completedMax: 0 });
      const acked: JobId[] = [];
      // a worker faster than the producer: the job is claimed and acked (its row deleted) before enqueue returns
      const mq = await slowProducer(servers, combo, async (name) => {
        const job = (await ctx.mq.claim(name, { leaseMs: 60_000 }))!;
        await ctx.mq.ack(job, { fast: true });
        acked.push(job.id);
      });
      try {
        for (let i = 0; i < 3; i++) {
          const done = await mq.enqueue(queue, { n: i }, { wait: { timeoutMs: 3000 } });
          expect(done).toEqual({ id: acked[i]!, result: undefined }); // the queue keeps no result
          expect(await ctx.mq.getJob(queue, done.id)).toBeNull();
        }
      } finally {
        await mq.close();
      }
    }, 30_000);

    test("completedMax 0 and a fast worker: every call answered", async () => {
      const queue = q("fast");
      await ctx.mq.retain(queue, { completedMax: 0 });
      await working(queue, (job) => job.payload.n, { ...FAST, concurrency: 4 }, async () => {
        const all = await Promise.all(Array.from({ length: 40 }, (_, n) => ctx.mq.enqueue(queue, { n }, { wait: { timeoutMs: 20_000 } })));
        expect(all.map((d) => d.result)).toEqual(Array.from({ length: 40 }, () => undefined));
        expect(new Set(all.map((d) => d.id)).size).toBe(40);
      });
    }, 30_000);

    test("a job that dies rejects JobFailedError (its id and reason)", async () => {
      const queue = q("dies");
      await working(
        queue,
        () => {
          throw new Error("out of paper");
        },
        { ...FAST, maxAttempts: 1 },
        async () => {
          const failed = await rejection(ctx.mq.enqueue(queue, { n: 1 }, { wait: { timeoutMs: 20_000 } }));
          expect(failed).toBeInstanceOf(JobFailedError);
          expect((failed as JobFailedError).reason).toContain("out of paper");
          expect((await ctx.mq.getJob(queue, (failed as JobFailedError).jobId))?.state).toBe("dead");
        },
      );
    }, 30_000);

    test("timeoutMs rejects ResultTimeoutError (the job stays); an abort rejects with its reason; an aborted signal admits nothing", async () => {
      const queue = q("timeout");
      const started = Date.now();
      const late = await rejection(ctx.mq.enqueue(queue, { n: 1 }, { wait: { timeoutMs: 300 } }));
      expect(late).toBeInstanceOf(ResultTimeoutError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect((await ctx.mq.getJob(queue, (late as ResultTimeoutError).jobId))?.state).toBe("pending");
      const ac = new AbortController();
      const why = new Error("no longer needed");
      setTimeout(() => ac.abort(why), 200);
      expect(await rejection(ctx.mq.enqueue(queue, { n: 2 }, { wait: { signal: ac.signal } }))).toBe(why);
      expect((await ctx.mq.counts(queue)).pending).toBe(2);
      expect(await rejection(ctx.mq.enqueue(queue, { n: 3 }, { wait: { signal: ac.signal } }))).toBe(why);
      expect((await ctx.mq.counts(queue)).pending).toBe(2);
    }, 30_000);

    test("a held dedup key: the holder's id and result, even when it finished before the call", async () => {
      const queue = q("dedup");
      await working(queue, (job) => `ran ${job.payload.n}`, FAST, async () => {
        const dedup = { key: "once", ttlMs: 60_000 };
        const first = await ctx.mq.enqueue(queue, { n: 1 }, { dedup, wait: { timeoutMs: 20_000 } });
        expect(first.result).toBe("ran 1");
        const again: Enqueued = await ctx.mq.enqueue(queue, { n: 2 }, { dedup, wait: { timeoutMs: 2000 } });
        expect(again).toEqual({ id: first.id, result: "ran 1" });
      });
    }, 30_000);

    test("events off (events_max 0): the row is polled, and still answers", async () => {
      const queue = q("off");
      await ctx.mq.retain(queue, { eventsMax: 0 });
      await working(queue, (job) => job.payload.n + 1, FAST, async () => {
        expect((await ctx.mq.enqueue(queue, { n: 6 }, { wait: { timeoutMs: 20_000 } })).result).toBe(7);
        expect(await ctx.raw.command(["EXISTS", keyspace(queue).events], keyspace(queue).meta)).toBe(0);
      });
    }, 30_000);

    test("a bad wait is refused before anything is sent", async () => {
      const queue = q("bad");
      for (const wait of [5, "yes", null, { timeoutMs: -1 }, { signal: "stop" }]) {
        const e = await rejection(ctx.mq.enqueue(queue, { n: 1 }, { wait: wait as never }));
        expect(e).toBeInstanceOf(EchoMQError);
        expect((e as EchoMQError).rule).toBe("options");
      }
      await sleep(10);
      expect((await ctx.mq.counts(queue)).pending).toBe(0);
    }, 30_000);
  });
}
