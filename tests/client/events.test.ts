/**
 * `mq.events()` on each backend × topology: the events of a job's life in order, as the verbs
 * write them (wire 10: the twins write the stream in the same command as the transition); where
 * to start (`now`, `start`, an entry id, an item's id: resumed exactly after it); a gap when the
 * stream trimmed entries not read yet; one reader (one connection) per queue per client, shared
 * and released; abort; a reader whose connection is killed reads on; a slow consumer past the
 * buffer reads on from the stream, nothing lost.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import type { QueueEventItem } from "../../lib/client/events.ts";
import { BUFFER_MAX } from "../../lib/client/event_reader.ts";
import { COMBOS, counterIds, eventually, sleep, useClient, useSites } from "./_harness.ts";
import { readers, xadd } from "./_events.ts";

const servers = useSites();

/** The next `n` items of `it`, failing after `ms`. */
async function take(it: AsyncIterator<QueueEventItem>, n: number, ms = 10_000): Promise<QueueEventItem[]> {
  const out: QueueEventItem[] = [];
  const deadline = Date.now() + ms;
  while (out.length < n) {
    const left = deadline - Date.now();
    const next = await Promise.race([it.next(), sleep(Math.max(0, left)).then(() => null)]);
    if (next === null) throw new Error(`took ${out.length} of ${n} events within ${ms} ms: ${JSON.stringify(out)}`);
    if (next.done) break;
    out.push(next.value);
  }
  return out;
}

/** Whether `it` yields nothing more within `ms` (its pending `next()` is left to the iterator's end). */
async function quiet(it: AsyncIterator<QueueEventItem>, ms = 300): Promise<IteratorResult<QueueEventItem> | null> {
  return await Promise.race([it.next(), sleep(ms).then(() => null)]);
}

/** The items without their ids (which carry the server's clock). */
const shapes = (items: QueueEventItem[]): Array<Record<string, unknown>> => items.map(({ id: _, ...rest }) => rest as Record<string, unknown>);

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo, { newId: counterIds(1) });
    const q = (name: string): string => `ev-${name}-${combo.backend}`;

    test("a job's life: enqueued, claimed, progress, completed, in order", async () => {
      const queue = q("life");
      const it = ctx.mq.events(queue)[Symbol.asyncIterator]();
      const id = await ctx.mq.enqueue(queue, { n: 1 });
      const job = (await ctx.mq.claim(queue, { leaseMs: 30_000 }))!;
      await ctx.mq.progress(job, { pct: 50 });
      await ctx.mq.ack(job);
      const got = await take(it, 4);
      expect(shapes(got)).toEqual([
        { type: "enqueued", jobId: id },
        { type: "claimed", jobId: id, attempts: 1 },
        { type: "progress", jobId: id, progress: { pct: 50 } },
        { type: "completed", jobId: id },
      ]);
      // ids increase, each `<entry>:<index>`
      for (const e of got) expect(e.id).toMatch(/^\d+-\d+:0$/);
      await it.return!();
    }, 30_000);

    test("retried and dead, each with its reason (and the retry's due time)", async () => {
      const queue = q("fail");
      const it = ctx.mq.events(queue)[Symbol.asyncIterator]();
      const id = await ctx.mq.enqueue(queue, { n: 1 });
      const first = (await ctx.mq.claim(queue, { leaseMs: 30_000 }))!;
      const before = Date.now();
      await ctx.mq.retry(first, { delayMs: 0, reason: "first try failed" });
      const second = (await ctx.mq.claim(queue, { leaseMs: 30_000 }))!;
      await ctx.mq.bury(second, "gave up");
      const got = await take(it, 5);
      expect(shapes(got).map((e): Record<string, unknown> => ({ ...e, until: e.until === undefined ? undefined : "n" }))).toEqual([
        { type: "enqueued", jobId: id, until: undefined },
        { type: "claimed", jobId: id, attempts: 1, until: undefined },
        { type: "retried", jobId: id, reason: "first try failed", until: "n" },
        { type: "claimed", jobId: id, attempts: 2, until: undefined },
        { type: "dead", jobId: id, reason: "gave up", until: undefined },
      ]);
      const retried = got[2] as Extract<QueueEventItem, { type: "retried" }>;
      expect(Math.abs(retried.until - before)).toBeLessThan(60_000);
      await it.return!();
    }, 30_000);

    test("paused and resumed only when the call changed the state; a lane's carries it", async () => {
      const queue = q("pause");
      const it = ctx.mq.events(queue)[Symbol.asyncIterator]();
      await ctx.mq.enqueue(queue, { n: 1 });
      expect(await ctx.mq.pause(queue)).toBe(true);
      expect(await ctx.mq.pause(queue)).toBe(false);
      expect(await ctx.mq.resume(queue)).toBe(true);
      await ctx.mq.pause(queue, { lane: "acme" });
      const got = shapes(await take(it, 4));
      expect(got.slice(1)).toEqual([{ type: "paused" }, { type: "resumed" }, { type: "paused", lane: "acme" }]);
      expect(await quiet(it)).toBeNull();
      await it.return!();
    }, 30_000);

    test("from start, from now, from an entry id, from an item's id: exactly after it", async () => {
      const queue = q("from");
      const ids = await ctx.mq.enqueueMany(queue, [{ n: 1 }, { n: 2 }, { n: 3 }]); // one entry, three items
      const all = await take(ctx.mq.events(queue, { from: "start" })[Symbol.asyncIterator](), 3);
      expect(all.map((e) => (e as { jobId: string }).jobId)).toEqual(ids);
      const entry = all[0]!.id.split(":")[0]!;
      expect(all.map((e) => e.id)).toEqual([`${entry}:0`, `${entry}:1`, `${entry}:2`]);

      const now = ctx.mq.events(queue)[Symbol.asyncIterator]();
      const afterItem = ctx.mq.events(queue, { from: all[0]!.id })[Symbol.asyncIterator]();
      const afterEntry = ctx.mq.events(queue, { from: entry })[Symbol.asyncIterator]();
      const later = await ctx.mq.enqueue(queue, { n: 4 });
      expect(shapes(await take(now, 1))).toEqual([{ type: "enqueued", jobId: later }]);
      expect((await take(afterItem, 3)).map((e) => (e as { jobId: string }).jobId)).toEqual([ids[1], ids[2], later]);
      expect((await take(afterEntry, 1)).map((e) => (e as { jobId: string }).jobId)).toEqual([later]);
      for (const it of [now, afterItem, afterEntry]) await it.return!();
      expect(() => ctx.mq.events(queue, { from: "yesterday" })).toThrow(/from must be/);
    }, 30_000);

    test("a gap when entries after the starting point were trimmed unread", async () => {
      const queue = q("gap");
      const K = keyspace(queue);
      await ctx.raw.command(["HSET", K.meta, "events_max", "5"], K.meta);
      // nodes of one entry on the queue's node: trimming by whole nodes is then exact (the bound
      // itself is tested in tests/native/events.test.ts)
      await ctx.raw.command(["CONFIG", "SET", "stream-node-max-entries", "1"], K.meta);
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push(await ctx.mq.enqueue(queue, { n: i }));
      expect(await ctx.raw.command(["XLEN", K.events], K.meta)).toBe(5);
      const it = ctx.mq.events(queue, { from: "start" })[Symbol.asyncIterator]();
      const got = await take(it, 6);
      const kept = (await ctx.raw.command(["XRANGE", K.events, "-", "+", "COUNT", "1"], K.meta)) as unknown[];
      const first = String((kept[0] as { key: unknown }).key ?? (kept[0] as unknown[])[0]);
      expect(got[0]).toMatchObject({ type: "gap", from: "0-0", first });
      expect(got.slice(1).map((e) => (e as { jobId: string }).jobId)).toEqual(ids.slice(5));
      // resuming from the gap's id reads from the first kept entry
      const again = await take(ctx.mq.events(queue, { from: got[0]!.id })[Symbol.asyncIterator](), 1);
      expect(again[0]!.id).toBe(got[1]!.id);
      // from a seen item, after more than events_max entries: a gap, then the rest
      const seen = got[5]!.id;
      for (let i = 0; i < 7; i++) ids.push(await ctx.mq.enqueue(queue, { n: i }));
      const resumed = await take(ctx.mq.events(queue, { from: seen })[Symbol.asyncIterator](), 6);
      expect(resumed[0]).toMatchObject({ type: "gap", from: seen });
      expect(resumed.slice(1).map((e) => (e as { jobId: string }).jobId)).toEqual(ids.slice(-5));
      await it.return!();
      await ctx.raw.command(["CONFIG", "SET", "stream-node-max-entries", "100"], K.meta);
    }, 30_000);

    test("iterators of one queue share one reader connection, released after the last ends", async () => {
      const queue = q("share");
      const a = ctx.mq.events(queue)[Symbol.asyncIterator]();
      const b = ctx.mq.events(queue, { from: "start" })[Symbol.asyncIterator]();
      const pa = a.next();
      const pb = b.next();
      await eventually(async () => (await readers(ctx.raw, queue)).length === 1);
      await xadd(ctx.raw, queue, "type", "enqueued", "jobs", "x");
      expect((await pa).value).toMatchObject({ type: "enqueued", jobId: "x" });
      expect((await pb).value).toMatchObject({ type: "enqueued", jobId: "x" });
      expect(await readers(ctx.raw, queue)).toHaveLength(1);
      await a.return!();
      await sleep(1500);
      expect(await readers(ctx.raw, queue)).toHaveLength(1); // b still reads
      await b.return!();
      await eventually(async () => (await readers(ctx.raw, queue)).length === 0);
    }, 30_000);

    test("abort ends the iterator (a pending next() resolves done) and releases the reader", async () => {
      const queue = q("abort");
      const ac = new AbortController();
      const it = ctx.mq.events(queue, { signal: ac.signal })[Symbol.asyncIterator]();
      const pending = it.next();
      await eventually(async () => (await readers(ctx.raw, queue)).length === 1);
      ac.abort();
      expect(await pending).toEqual({ value: undefined, done: true });
      await eventually(async () => (await readers(ctx.raw, queue)).length === 0);
      // for await ends too
      const seen: QueueEventItem[] = [];
      const ac2 = new AbortController();
      setTimeout(() => ac2.abort(), 200);
      for await (const e of ctx.mq.events(queue, { signal: ac2.signal })) seen.push(e);
      expect(seen).toEqual([]);
    }, 30_000);

    test("a reader whose connection is killed reads on from its last id", async () => {
      const queue = q("kill");
      const it = ctx.mq.events(queue)[Symbol.asyncIterator]();
      const first = it.next();
      await eventually(async () => (await readers(ctx.raw, queue)).length === 1);
      const a = await xadd(ctx.raw, queue, "type", "enqueued", "jobs", "a");
      expect((await first).value).toMatchObject({ id: `${a}:0`, jobId: "a" });
      const [reader] = await readers(ctx.raw, queue);
      const K = keyspace(queue);
      await ctx.raw.command(["CLIENT", "KILL", "ID", reader!], K.meta);
      const b = await xadd(ctx.raw, queue, "type", "enqueued", "jobs", "b");
      const c = await xadd(ctx.raw, queue, "type", "enqueued", "jobs", "c");
      expect((await take(it, 2)).map((e) => e.id)).toEqual([`${b}:0`, `${c}:0`]);
      await eventually(async () => {
        const now = await readers(ctx.raw, queue);
        return now.length === 1 && now[0] !== reader;
      });
      await it.return!();
    }, 30_000);

    test(`a consumer past ${BUFFER_MAX} unread items reads on from the stream, nothing lost`, async () => {
      const queue = q("slow");
      const it = ctx.mq.events(queue)[Symbol.asyncIterator]();
      const first = it.next(); // live, then not reading
      // "now" is read on the client's connection at the call: a read of the queue's slot on that
      // connection after it answers only once "now" is taken (the entries below go through another
      // connection, and under load the first of them landed before "now" was read)
      await ctx.mq.counts(queue);
      const n = BUFFER_MAX + 2000;
      const ids = Array.from({ length: n }, (_, i) => `j${i}`);
      for (let i = 0; i < n; i += 1000) await xadd(ctx.raw, queue, "type", "enqueued", "jobs", ids.slice(i, i + 1000).join(" "));
      const got = [(await first).value as QueueEventItem, ...await take(it, n - 1, 60_000)];
      expect(got.filter((e) => e.type === "gap")).toEqual([]);
      expect(got.map((e) => (e as { jobId: string }).jobId)).toEqual(ids);
      await it.return!();
    }, 90_000);

    test("a reader that falls behind past the stream's bound: a gap, then what is kept", async () => {
      const queue = q("lag");
      const K = keyspace(queue);
      const it = ctx.mq.events(queue)[Symbol.asyncIterator]();
      const first = it.next();
      await eventually(async () => (await readers(ctx.raw, queue)).length === 1);
      // 3,000 entries in one MULTI, the stream bounded at 1,500: the reader reads after it, behind
      const ids = Array.from({ length: 3000 }, (_, i) => `JOB${String(i).padStart(11, "0")}`);
      const replies = await ctx.raw.batch(ids.map((id) => ["XADD", K.events, "MAXLEN", "1500", "*", "type", "enqueued", "jobs", id]), K.meta, true);
      for (const r of replies) if (r instanceof Error) throw r;
      const got = [(await first).value as QueueEventItem, ...await take(it, 1500)];
      expect(got[0]).toMatchObject({ type: "gap" });
      expect(got.slice(1).map((e) => (e as { jobId: string }).jobId)).toEqual(ids.slice(1500));
      await it.return!();
    }, 60_000);

    test("close() ends every iterator of the client", async () => {
      const mq = await ctx.connect<unknown>();
      const queue = q("close");
      const it = mq.events(queue)[Symbol.asyncIterator]();
      const pending = it.next();
      await eventually(async () => (await readers(ctx.raw, queue)).length === 1);
      await mq.close();
      expect(await pending).toEqual({ value: undefined, done: true });
      await eventually(async () => (await readers(ctx.raw, queue)).length === 0);
    }, 30_000);
  });
}

/** Compile-time only (tsc -p .): each type carries exactly its fields, and a gap is not a QueueEvent. */
export function typeChecks(e: QueueEventItem, q: import("../../lib/client/events.ts").QueueEvent): void {
  if (e.type === "retried") void ([e.reason, e.until, e.jobId] satisfies [string, number, string]);
  if (e.type === "paused") void (e.lane satisfies string | undefined);
  if (e.type === "scheduler") void (e.name satisfies string);
  if (e.type === "deduplicated") void (e.into satisfies string);
  if (e.type === "gap") void ([e.from, e.first] satisfies [string, string | null]);
  // @ts-expect-error: enqueued carries no reason
  if (e.type === "enqueued") void e.reason;
  // @ts-expect-error: a gap is not a QueueEvent
  if (q.type === "gap") void 0;
}
