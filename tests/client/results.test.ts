/**
 * Results and the completed state (wire 10, issue 21 §1), for each backend × topology: a worker's
 * return value is sent with its ack and kept with the completed job — `getJob` and
 * `jobs(q, "completed")` show it (decoded JSON; the stored text when it is not JSON) with
 * `finishedAt` and `attempts`; `undefined` keeps no result. `ack(job, result)` and `settleMany`
 * carry one too. A result whose JSON passes `MAX_PAYLOAD_BYTES` fails its job as a handler throw
 * would (`ResultTooLargeError`, retried then buried) while the jobs of the same settle batch
 * complete. Retention: `completedMax` 0 keeps none (acks delete the rows), a count keeps the newest,
 * an age drops the old (a claim, an ack or RETAIN applies it); `retain()` keeps the settings left
 * out and `retention()` reads them. REMOVE and DROP take completed jobs; `counts().completed`.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import {
  COMPLETED_AGE_DEFAULT_MS,
  COMPLETED_MAX_DEFAULT,
  DEAD_AGE_DEFAULT_MS,
  DEAD_MAX_DEFAULT,
  EchoMQError,
  EVENTS_MAX_DEFAULT,
  type Job,
  JobNotDeadError,
  MAX_PAYLOAD_BYTES,
  ResultTooLargeError,
  Worker,
} from "../../client.ts";
import { COMBOS, counterIds, dump, eventually, recordingSettles, sleep, useClient, useSites } from "./_harness.ts";

const servers = useSites();
const FAST = { blockMs: 200 };
const dumps = new Map<string, unknown>();
type P = { n: number };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(servers, combo, { newId: counterIds(1) });

    /** Claims the `n` jobs of `q` one at a time and acks each with `result(job)`, a few ms apart (distinct finish times). */
    async function ackEach(q: string, n: number, result: (job: Job<P>) => unknown = (j) => ({ n: j.payload.n })): Promise<Array<Job<P>>> {
      const out: Array<Job<P>> = [];
      for (let i = 0; i < n; i++) {
        const job = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
        await ctx.mq.ack(job, result(job));
        out.push(job);
        await sleep(3);
      }
      return out;
    }

    const zcard = async (q: string): Promise<number> => Number(await ctx.raw.command(["ZCARD", keyspace(q).completed], keyspace(q).meta));
    const exists = async (q: string, id: string): Promise<number> => Number(await ctx.raw.command(["EXISTS", keyspace(q).job(id as never)], keyspace(q).meta));

    test("your own id: taken while the completed job is kept; a remove, or completedMax 0, frees it (docs/PACKAGE.md, Your own ids)", async () => {
      const q = `res-own-id-${backend}`;
      const id = "JOB0OwnId00001" as never;
      await ctx.mq.enqueue(q, { n: 1 }, { id });
      await ackEach(q, 1);
      expect((await ctx.mq.getJob(q, id))?.state).toBe("completed");
      await expect(ctx.mq.enqueue(q, { n: 2 }, { id })).rejects.toMatchObject({ name: "DuplicateIdError" });
      await ctx.mq.remove(q, id);
      expect(await ctx.mq.enqueue(q, { n: 3 }, { id })).toBe(id);
      await ctx.mq.retain(q, { completedMax: 0 });
      await ackEach(q, 1);
      expect(await ctx.mq.getJob(q, id)).toBeNull();
      expect(await ctx.mq.enqueue(q, { n: 4 }, { id })).toBe(id);
      await ctx.mq.drop(q);
    });

    test("a worker's return value is kept: getJob and jobs('completed') show it with finishedAt and attempts; undefined keeps none", async () => {
      const q = `res-worker-${backend}`;
      const [a, b, c, d] = await ctx.mq.enqueueMany(q, [1, 2, 3, 4].map((n) => ({ n })));
      const t0 = Date.now();
      const worker = ctx.mq.work(q, async (job) => {
        if (job.payload.n === 2) return undefined; // no result
        if (job.payload.n === 3) {
          if (job.attempts === 1) throw new Error("once");
          return "third";
        }
        if (job.payload.n === 4) return null;
        return { doubled: job.payload.n * 2, at: [job.attempts] };
      }, { concurrency: 4, backoff: 1, ...FAST });
      try {
        await eventually(() => worker.completed === 4);
      } finally {
        await worker.stop();
      }
      const t1 = Date.now();
      const first = (await ctx.mq.getJob(q, a!))!;
      expect(first).toMatchObject({ id: a, queue: q, state: "completed", attempts: 1, payload: { n: 1 }, result: { doubled: 2, at: [1] } });
      expect(first.finishedAt).toBeGreaterThanOrEqual(t0 - 1000);
      expect(first.finishedAt).toBeLessThanOrEqual(t1 + 1000);
      // a completed row keeps no lease, but its last claim's token (wire 17): when that claim took it
      expect(first).not.toHaveProperty("leaseUntil");
      expect(first.claimedAt).toBeGreaterThanOrEqual(t0 - 1000);
      expect(first.claimedAt).toBeLessThanOrEqual(first.finishedAt!);
      expect(first.claimedAt).toBe(Math.floor(first.token! / 1000));
      expect(await ctx.row(q, a!, "state", "result", "deadline_ms", "token")).toEqual(["completed", '{"doubled":2,"at":[1]}', "null", String(first.token)]);
      const none = (await ctx.mq.getJob(q, b!))!;
      expect(none).toMatchObject({ state: "completed", attempts: 1 });
      expect(none).not.toHaveProperty("result");
      expect(await ctx.row(q, b!, "result")).toEqual(["null"]);
      expect(await ctx.mq.getJob(q, c!)).toMatchObject({ state: "completed", attempts: 2, result: "third", reason: "Error: once" });
      const nil = (await ctx.mq.getJob(q, d!))!;
      expect(nil).toHaveProperty("result", null); // null is a result: JSON's "null"
      const page = await ctx.mq.jobs(q, "completed");
      expect(page.map((j) => j.id).sort()).toEqual([a, b, c, d].sort());
      expect(page.every((j) => j.state === "completed" && typeof j.finishedAt === "number")).toBe(true);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 4, waitingChildren: 0 });
      const stats = await ctx.mq.stats(q);
      expect(stats).toMatchObject({ completed: 4, acked: 4, completedMax: COMPLETED_MAX_DEFAULT, completedAgeMs: COMPLETED_AGE_DEFAULT_MS });
    });

    test("ack(job, result) and settleMany carry results; jobs('completed') pages newest first; a stored result that is not JSON reads back as text", async () => {
      const q = `res-ack-${backend}`;
      await ctx.mq.enqueueMany(q, [1, 2, 3, 4, 5].map((n) => ({ n })));
      const done = await ackEach(q, 3, (j) => ({ n: j.payload.n, text: "é" }));
      const [x, y] = (await ctx.mq.claimMany(q, 2, { leaseMs: 60_000 })) as Array<Job<P>>;
      expect(await ctx.mq.settleMany([{ kind: "ack", job: x!, result: [1, "two"] }, { kind: "ack", job: y! }])).toEqual([null, null]);
      expect((await ctx.mq.getJob(q, x!.id))!.result).toEqual([1, "two"]);
      expect(await ctx.mq.getJob(q, y!.id)).not.toHaveProperty("result");
      // newest first, offset and limit as dead's
      const newest = await ctx.mq.jobs(q, "completed", { offset: 2, limit: 3 });
      expect(newest.map((j) => j.id)).toEqual([done[2]!.id, done[1]!.id, done[0]!.id]);
      expect(newest.map((j) => j.result)).toEqual([3, 2, 1].map((n) => ({ n, text: "é" })));
      expect(await ctx.mq.jobs(q, "completed", { offset: 5 })).toEqual([]);
      // a result written by something else than this client: the text as stored
      const K = keyspace(q);
      await ctx.raw.command(["HSET", K.job(done[0]!.id), "result", "not json {"], K.meta);
      expect((await ctx.mq.getJob(q, done[0]!.id))!.result).toBe("not json {");
      // through a Queue handle
      await ctx.mq.enqueue(q, { n: 6 });
      const handle = ctx.mq.queue<P>(q);
      const z = (await handle.claim({ leaseMs: 60_000 }))!;
      await ctx.mq.ack(z, { last: true });
      expect((await handle.getJob(z.id))!.result).toEqual({ last: true });
      expect((await handle.counts()).completed).toBe(6);
    });

    test("a result too large fails its job (ResultTooLargeError: retried, then buried); the other jobs of its settle batch complete", async () => {
      const q = `res-big-${backend}`;
      const [big, ok1, ok2] = await ctx.mq.enqueueMany(q, [1, 2, 3].map((n) => ({ n })));
      const batches: string[][] = [];
      const client = recordingSettles(ctx.mq.workerClient(), batches);
      let release!: () => void;
      const barrier = new Promise<void>((r) => (release = r));
      let started = 0;
      const errors: unknown[] = [];
      const worker = new Worker<P>(
        client,
        q,
        async (job) => {
          started++;
          await barrier; // the three finish together: one settle batch
          return job.payload.n === 1 ? "x".repeat(MAX_PAYLOAD_BYTES) : { ok: job.payload.n }; // its JSON: 2 bytes more
        },
        { concurrency: 3, maxAttempts: 2, backoff: 1, onError: (e) => errors.push(e), ...FAST },
        () => {},
      );
      try {
        await eventually(() => started === 3);
        release();
        await eventually(async () => (await ctx.mq.counts(q)).dead === 1);
      } finally {
        await worker.stop();
      }
      expect(batches[0]).toEqual(["ack", "ack", "retry"]);
      expect(errors).toEqual([]); // a handler failure, not a worker error
      expect([worker.completed, worker.failed, worker.buried]).toEqual([2, 2, 1]);
      const dead = (await ctx.mq.getJob(q, big!))!;
      expect(dead).toMatchObject({ state: "dead", attempts: 2 });
      expect(dead.reason).toStartWith(`ResultTooLargeError: result of ${big}: ${MAX_PAYLOAD_BYTES + 2} bytes of JSON`);
      expect(await ctx.mq.getJob(q, ok1!)).toMatchObject({ state: "completed", result: { ok: 2 } });
      expect(await ctx.mq.getJob(q, ok2!)).toMatchObject({ state: "completed", result: { ok: 3 } });
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 1, completed: 2, waitingChildren: 0 });

      // ack and settleMany: refused before the wire, the job still held; the others settle
      await ctx.mq.enqueueMany(q, [4, 5].map((n) => ({ n })));
      const [h1, h2] = (await ctx.mq.claimMany(q, 2, { leaseMs: 60_000 })) as Array<Job<P>>;
      const e = await ctx.mq.ack(h1!, "y".repeat(MAX_PAYLOAD_BYTES)).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ResultTooLargeError);
      expect(e).toMatchObject({ rule: "result", id: h1!.id, bytes: MAX_PAYLOAD_BYTES + 2, limit: MAX_PAYLOAD_BYTES });
      await expect(ctx.mq.ack(h1!, { big: 1n })).rejects.toMatchObject({ rule: "result" });
      const results = await ctx.mq.settleMany([
        { kind: "ack", job: h1!, result: "z".repeat(MAX_PAYLOAD_BYTES) },
        { kind: "ack", job: h2!, result: "fine" },
      ]);
      expect(results[0]).toBeInstanceOf(ResultTooLargeError);
      expect(results[0]).toBeInstanceOf(EchoMQError);
      expect(results[1]).toBeNull();
      expect(await ctx.mq.getJob(q, h1!.id)).toMatchObject({ state: "active" });
      await ctx.mq.ack(h1!, "x".repeat(MAX_PAYLOAD_BYTES - 2)); // exactly the limit: kept
      expect(((await ctx.mq.getJob(q, h1!.id))!.result as string).length).toBe(MAX_PAYLOAD_BYTES - 2);
    });

    test("completedMax 0 keeps none: an ack deletes the row and drops the result", async () => {
      const q = `res-none-${backend}`;
      expect(await ctx.mq.retain(q, { completedMax: 0 })).toBe(0);
      const [a] = await ctx.mq.enqueueMany(q, [{ n: 1 }]);
      const job = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      await ctx.mq.ack(job, { kept: false });
      expect(await ctx.mq.getJob(q, a!)).toBeNull();
      expect(await exists(q, a!)).toBe(0);
      expect(await zcard(q)).toBe(0);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
      expect((await ctx.mq.stats(q)).acked).toBe(1);
      // kept ones are deleted when the setting drops to 0
      await ctx.mq.retain(q, { completedMax: 10 });
      await ctx.mq.enqueueMany(q, [2, 3].map((n) => ({ n })));
      await ackEach(q, 2);
      expect(await zcard(q)).toBe(2);
      expect(await ctx.mq.retain(q, { completedMax: 0 })).toBe(2);
      expect(await ctx.mq.jobs(q, "completed")).toEqual([]);
    });

    test("retention by count: completedMax 3 after 5 jobs keeps the newest 3, the others' rows deleted", async () => {
      const q = `res-count-${backend}`;
      await ctx.mq.retain(q, { completedMax: 3 });
      await ctx.mq.enqueueMany(q, [1, 2, 3, 4, 5].map((n) => ({ n })));
      const done = await ackEach(q, 5);
      expect((await ctx.mq.jobs(q, "completed")).map((j) => j.payload!.n)).toEqual([5, 4, 3]);
      for (const j of done.slice(0, 2)) {
        expect(await ctx.mq.getJob(q, j.id)).toBeNull();
        expect(await exists(q, j.id)).toBe(0);
      }
      expect((await ctx.mq.counts(q)).completed).toBe(3);
      dumps.set(combo.name, await dump(ctx.raw, q));
      // a lower limit, applied at once by RETAIN: its reply counts the completed jobs deleted
      expect(await ctx.mq.retain(q, { completedMax: 1 })).toBe(2);
      expect((await ctx.mq.jobs(q, "completed")).map((j) => j.payload!.n)).toEqual([5]);
      expect(await ctx.mq.retain(q, { completedMax: 1 })).toBe(0);
    });

    test("completedMax 1 keeps one: of two acks, the newest row stays completed, the older is deleted", async () => {
      // the boundary of "keeps any" (1, not only more than 1): an ack keeps its row, then trims
      const q = `res-one-${backend}`;
      await ctx.mq.retain(q, { completedMax: 1 });
      await ctx.mq.enqueueMany(q, [1, 2].map((n) => ({ n })));
      const [older, newest] = await ackEach(q, 2);
      expect(await zcard(q)).toBe(1);
      expect((await ctx.mq.jobs(q, "completed")).map((j) => j.id)).toEqual([newest!.id]);
      expect(await ctx.row(q, newest!.id, "state", "result")).toEqual(["completed", '{"n":2}']);
      expect(await exists(q, older!.id)).toBe(0);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 1, waitingChildren: 0 });
    });

    test("retention by age: jobs older than completedAgeMs go (at a claim, an ack or RETAIN)", async () => {
      const q = `res-age-${backend}`;
      await ctx.mq.retain(q, { completedAgeMs: 150 });
      await ctx.mq.enqueueMany(q, [1, 2].map((n) => ({ n })));
      await ackEach(q, 2);
      expect(await zcard(q)).toBe(2);
      await sleep(250);
      expect(await ctx.mq.claim(q, { leaseMs: 1000 })).toBeNull(); // a claim applies the retention
      expect(await zcard(q)).toBe(0);
      // an ack applies it too: the older one goes, the new one stays
      await ctx.mq.enqueueMany(q, [3, 4].map((n) => ({ n })));
      await ackEach(q, 1);
      await sleep(250);
      await ackEach(q, 1);
      expect((await ctx.mq.jobs(q, "completed")).map((j) => j.payload!.n)).toEqual([4]);
      // and RETAIN (keeping every setting): the last one, once old enough
      await sleep(250);
      expect(await ctx.mq.retain(q, {})).toBe(1);
      expect(await zcard(q)).toBe(0);
      expect((await ctx.mq.retention(q)).completedAgeMs).toBe(150);
    });

    test("retain() keeps the settings left out, retention() reads them (defaults when never set); bad values refused before the wire", async () => {
      const q = `res-settings-${backend}`;
      const K = keyspace(q);
      const defaults = {
        deadMax: DEAD_MAX_DEFAULT,
        deadAgeMs: DEAD_AGE_DEFAULT_MS,
        completedMax: COMPLETED_MAX_DEFAULT,
        completedAgeMs: COMPLETED_AGE_DEFAULT_MS,
        eventsMax: EVENTS_MAX_DEFAULT,
        historyMinutes: 1440,
      };
      expect(defaults).toEqual({ deadMax: 10000, deadAgeMs: 2592000000, completedMax: 1000, completedAgeMs: 86400000, eventsMax: 10000, historyMinutes: 1440 });
      expect(await ctx.mq.retention(q)).toEqual(defaults);
      await ctx.mq.retain(q, { deadMax: 7 });
      expect(await ctx.mq.retention(q)).toEqual({ ...defaults, deadMax: 7 });
      // all six written by the one RETAIN
      const meta = async () =>
        ((await ctx.raw.command(
          ["HMGET", K.meta, "dead_max", "dead_age_ms", "completed_max", "completed_age_ms", "events_max", "history_minutes"],
          K.meta,
        )) as unknown[])
          .map(String);
      expect(await meta()).toEqual(["7", "2592000000", "1000", "86400000", "10000", "1440"]);
      await ctx.mq.retain(q, { completedMax: 5, eventsMax: 0 });
      expect(await ctx.mq.retention(q)).toEqual({ ...defaults, deadMax: 7, completedMax: 5, eventsMax: 0 });
      await ctx.mq.queue(q).retain({ deadAgeMs: 0, completedAgeMs: 0 });
      const now = { ...defaults, deadMax: 7, completedMax: 5, eventsMax: 0, deadAgeMs: 0, completedAgeMs: 0 };
      expect(await ctx.mq.queue(q).retention()).toEqual(now);
      expect(await ctx.mq.stats(q)).toMatchObject(now);
      for (const bad of [{ completedMax: -1 }, { eventsMax: 1.5 }, { completedAgeMs: Number.NaN }, { deadMax: "3" as unknown as number }]) {
        await expect(ctx.mq.retain(q, bad)).rejects.toMatchObject({ name: "EchoMQError", rule: "options" });
      }
      expect(await ctx.mq.retention(q)).toEqual(now);
    });

    test("remove and drop take completed jobs; requeueDead does not", async () => {
      const q = `res-remove-${backend}`;
      const K = keyspace(q);
      await ctx.mq.enqueueMany(q, [1, 2, 3].map((n) => ({ n })));
      const [a, b, c] = await ackEach(q, 3);
      expect(await ctx.mq.remove(q, a!.id)).toBe(true);
      expect(await ctx.mq.getJob(q, a!.id)).toBeNull();
      expect(await ctx.raw.command(["ZSCORE", K.completed, a!.id], K.meta)).toBeNull();
      expect(await ctx.mq.remove(q, a!.id)).toBe(false);
      expect(await ctx.mq.removeMany(q, [b!.id, "JOB00000009999"])).toBe(1);
      expect((await ctx.mq.counts(q)).completed).toBe(1);
      const e = await ctx.mq.requeueDead(q, { ids: [c!.id] }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(JobNotDeadError);
      expect(await ctx.mq.getJob(q, c!.id)).toMatchObject({ state: "completed" });
      // drop: the completed job and the completed set go with the queue
      await ctx.mq.enqueue(q, { n: 4 });
      expect(await ctx.mq.drop(q)).toBe(2);
      expect(await exists(q, c!.id)).toBe(0);
      expect(await ctx.raw.command(["EXISTS", K.completed, K.meta], K.meta)).toBe(0);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
    });
  });
}

describe("identical across backends", () => {
  test("the keyspaces the count retention leaves", () => {
    const all = [...dumps.values()];
    for (const d of all) expect(d).toEqual(all[0]);
  });
});
