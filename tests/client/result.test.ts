/**
 * `mq.result()` on each backend × topology: a job finished before the call answers from its row;
 * one finished during the wait is answered by the events reader — from the server, not by polling
 * (the client reads the row twice in all: INFO commandstats); a dead job rejects with
 * `JobFailedError` and its reason, a missing or removed one with `JobNotFoundError`; a timeout, an
 * abort; a reader whose connection is killed during the wait still answers; a queue whose events
 * are off is polled; a queue that keeps no completed jobs resolves `undefined` on the event.
 *
 * The server's side is written two ways: by the verbs (a worker returning a value, `ack`, `bury`,
 * `remove`: wire 10's twins and the worker's results), and by hand — the row and the stream entry
 * in one MULTI, as the spec says the verbs write them — so the client's logic is tested apart.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { JobFailedError, JobNotFoundError, ResultTimeoutError } from "../../lib/client/errors.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { COMBOS, counterIds, eventually, rejection, sleep, useClient, useSites } from "./_harness.ts";
import { readers } from "./_events.ts";

const servers = useSites();

/** `id` of `q` finished by hand: its row as ACK or BURY leaves it and the entry, atomically. */
async function finish(
  raw: Connection,
  q: string,
  id: string,
  how: { completed: string | null } | { dead: string } | { removed: true } | { gone: true },
  event = true,
): Promise<void> {
  const K = keyspace(q);
  const row = K.job(id as never);
  const commands: string[][] = [];
  if ("completed" in how) {
    commands.push(["HSET", row, "state", "completed", "finished_ms", String(Date.now())]);
    if (how.completed !== null) commands.push(["HSET", row, "result", how.completed]);
    if (event) commands.push(["XADD", K.events, "*", "type", "completed", "jobs", id]);
  } else if ("dead" in how) {
    commands.push(["HSET", row, "state", "dead", "reason", how.dead]);
    if (event) commands.push(["XADD", K.events, "*", "type", "dead", "jobs", id, "reason", how.dead]);
  } else {
    commands.push(["DEL", row]);
    if (event) commands.push(["XADD", K.events, "*", "type", "removed" in how ? "removed" : "completed", "jobs", id]);
  }
  for (const r of await raw.batch(commands, K.meta, true)) if (r instanceof Error) throw r;
}

/** HGETALL calls the node of `q` has served. */
async function hgetalls(raw: Connection, q: string): Promise<number> {
  const info = String(await raw.command(["INFO", "commandstats"], keyspace(q).meta));
  return Number(/cmdstat_hgetall:calls=(\d+)/.exec(info)?.[1] ?? 0);
}

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo, { newId: counterIds(1) });
    const q = (name: string): string => `res-${name}-${combo.backend}`;

    test("finished before the call: completed resolves its result, dead rejects, no row rejects", async () => {
      const queue = q("before");
      const [a, b, c] = await ctx.mq.enqueueMany(queue, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      await finish(ctx.raw, queue, a!, { completed: JSON.stringify({ sum: 3 }) });
      await finish(ctx.raw, queue, b!, { completed: null });
      await finish(ctx.raw, queue, c!, { dead: "out of paper" });
      expect(await ctx.mq.result(queue, a!)).toEqual({ sum: 3 });
      expect(await ctx.mq.result(queue, b!)).toBeUndefined();
      const dead = await rejection(ctx.mq.result(queue, c!));
      expect(dead).toBeInstanceOf(JobFailedError);
      expect((dead as JobFailedError).reason).toBe("out of paper");
      const missing = await rejection(ctx.mq.result(queue, "JOB99999999999"));
      expect(missing).toBeInstanceOf(JobNotFoundError);
    }, 30_000);

    test("finished during the wait: answered by the event, the row read twice in all (no polling)", async () => {
      const queue = q("during");
      const id = await ctx.mq.enqueue(queue, { n: 1 });
      const before = await hgetalls(ctx.raw, queue);
      const started = Date.now();
      const waiting = ctx.mq.result(queue, id);
      await sleep(1500);
      await finish(ctx.raw, queue, id, { completed: "42" });
      expect(await waiting).toBe(42);
      expect(Date.now() - started).toBeLessThan(5000);
      // the MULTI's read and the one after the event; polling through 1.5 s would read it more
      expect((await hgetalls(ctx.raw, queue)) - before).toBeLessThanOrEqual(2);
    }, 30_000);

    test("dead during the wait rejects JobFailedError with its reason; removed JobNotFoundError", async () => {
      const queue = q("dead");
      const [a, b] = await ctx.mq.enqueueMany(queue, [{ n: 1 }, { n: 2 }]);
      const dying = rejection(ctx.mq.result(queue, a!));
      const going = rejection(ctx.mq.result(queue, b!));
      await sleep(200);
      await finish(ctx.raw, queue, a!, { dead: "boom" });
      await finish(ctx.raw, queue, b!, { removed: true });
      const dead = await dying;
      expect(dead).toBeInstanceOf(JobFailedError);
      expect((dead as JobFailedError).reason).toBe("boom");
      expect(await going).toBeInstanceOf(JobNotFoundError);
    }, 30_000);

    test("a queue that keeps no completed jobs: the completed event resolves undefined", async () => {
      const queue = q("nokeep");
      const id = await ctx.mq.enqueue(queue, { n: 1 });
      const waiting = ctx.mq.result(queue, id);
      await sleep(200);
      await finish(ctx.raw, queue, id, { gone: true });
      expect(await waiting).toBeUndefined();
    }, 30_000);

    test("timeoutMs rejects ResultTimeoutError; an abort rejects with the signal's reason", async () => {
      const queue = q("timeout");
      const id = await ctx.mq.enqueue(queue, { n: 1 });
      const started = Date.now();
      const late = await rejection(ctx.mq.result(queue, id, { timeoutMs: 300 }));
      expect(late).toBeInstanceOf(ResultTimeoutError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      const ac = new AbortController();
      const why = new Error("no longer needed");
      setTimeout(() => ac.abort(why), 200);
      expect(await rejection(ctx.mq.result(queue, id, { signal: ac.signal }))).toBe(why);
      const aborted = new AbortController();
      aborted.abort(why);
      expect(await rejection(ctx.mq.result(queue, id, { signal: aborted.signal }))).toBe(why);
    }, 30_000);

    test("the reader's connection killed during the wait: still answered", async () => {
      const queue = q("kill");
      const id = await ctx.mq.enqueue(queue, { n: 1 });
      const waiting = ctx.mq.result(queue, id, { timeoutMs: 20_000 });
      await eventually(async () => (await readers(ctx.raw, queue)).length === 1);
      const [reader] = await readers(ctx.raw, queue);
      await ctx.raw.command(["CLIENT", "KILL", "ID", reader!], keyspace(queue).meta);
      await finish(ctx.raw, queue, id, { completed: '"done"' });
      expect(await waiting).toBe("done");
    }, 30_000);

    test("events off (events_max 0): the row is polled, and still answers", async () => {
      const queue = q("off");
      const K = keyspace(queue);
      const id = await ctx.mq.enqueue(queue, { n: 1 });
      await ctx.raw.command(["HSET", K.meta, "events_max", "0"], K.meta);
      const waiting = ctx.mq.result(queue, id, { timeoutMs: 10_000 });
      await sleep(300);
      await finish(ctx.raw, queue, id, { completed: "7" }, false);
      expect(await waiting).toBe(7);
      expect(await readers(ctx.raw, queue)).toEqual([]);
    }, 30_000);

    test("through the verbs: a worker's returned value, a bury's reason, a remove", async () => {
      const queue = q("verbs");
      const [a, b, c] = await ctx.mq.enqueueMany(queue, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const results = [ctx.mq.result(queue, a!, { timeoutMs: 20_000 }), rejection(ctx.mq.result(queue, b!, { timeoutMs: 20_000 }))];
      const removed = rejection(ctx.mq.result(queue, c!, { timeoutMs: 20_000 }));
      await sleep(200);
      expect(await ctx.mq.remove(queue, c!)).toBe(true);
      const worker = ctx.mq.work(queue, (job) => {
        if (job.payload.n === 2) throw new Error("two is bad");
        return { double: job.payload.n * 2 };
      }, { maxAttempts: 1 });
      try {
        expect(await results[0]).toEqual({ double: 2 });
        const failed = await results[1];
        expect(failed).toBeInstanceOf(JobFailedError);
        expect((failed as JobFailedError).reason).toContain("two is bad");
        expect(await removed).toBeInstanceOf(JobNotFoundError);
      } finally {
        await worker.stop();
      }
    }, 30_000);
  });
}
