/**
 * BullMQ 6 on EchoMQ (issue 41), for each backend × topology: a conformance suite written from
 * BullMQ's documentation and typings. A BullMQ `Queue` and `Worker` built with
 * `createEchoMQBackend` run jobs end to end — counter and custom ids, return values, retries with
 * backoff, final failures with their reason and stack, delays, priorities, progress and logs,
 * counts and getters, pause and resume, `QueueEvents` and `waitUntilFinished`, a lease that ran
 * out (BullMQ's stalled job) fenced off its first worker — and what BullMQ writes is EchoMQ's:
 * the rows are `emq:{q}:…` jobs that `mq.getJob` reads, no `bull:` key is written, and an EchoMQ
 * producer's job is run by a BullMQ worker. An operation EchoMQ does not do is refused by name,
 * writing nothing.
 */
import { describe, expect, test } from "bun:test";
import { type Job as BullJob, QueueEvents, Worker } from "bullmq";
import { keyspace } from "../../mod.ts";
import { emqIdOf, IdCollisionError, RefusedOperationError } from "../../bullmq.ts";
import { queueDigest, settled, useBull } from "./_bull.ts";
import { COMBOS, eventually, useSites } from "../client/_harness.ts";

const sites = useSites();
let n = 0;
/** A queue name of its own per test (BullMQ forbids `:` in names). */
const fresh = (what: string): string => `bq-${what}-${++n}`;

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);
    const { queue, worker } = bull;

    test("a Queue and a Worker run jobs end to end; the jobs are EchoMQ's, under emq:{q}:", async () => {
      const name = fresh("e2e");
      const q = queue(name);
      const a = await q.add("mail", { to: "ada" });
      const b = await q.add("mail", { to: "bob" });
      expect([a.id, b.id]).toEqual(["1", "2"]); // BullMQ's counter ids
      const row = await bull.mq.getJob(name, emqIdOf("1"));
      expect(row?.state).toBe("pending");
      expect(row?.name).toBe("mail");
      expect((row?.payload as { data: unknown }).data).toEqual({ to: "ada" });
      const seen: string[] = [];
      const w = worker(name, async (job) => {
        seen.push(job.id!);
        return { sent: job.data.to };
      });
      await eventually(async () => (await q.getJobCounts("completed")).completed === 2);
      expect(seen).toEqual(["1", "2"]); // FIFO
      const done = (await q.getJob("2"))!;
      expect(done.returnvalue).toEqual({ sent: "bob" });
      expect(done.name).toBe("mail");
      expect(done.data).toEqual({ to: "bob" });
      expect(done.attemptsMade).toBe(1);
      expect(typeof done.finishedOn).toBe("number");
      expect(await done.getState()).toBe("completed");
      expect((await bull.mq.getJob(name, emqIdOf("2")))?.result).toEqual({ sent: "bob" });
      const raw = sites.raws.get(combo.topology)!;
      const K = keyspace(name);
      expect(Number(await raw.command(["EXISTS", K.meta], K.meta))).toBe(1);
      expect(Number(await raw.command(["EXISTS", `bull:${name}:meta`], `bull:${name}:meta`))).toBe(0);
      await w.close();
    });

    test("a worker of concurrency 4 runs 40 jobs, each once, while a second worker shares the queue", async () => {
      const name = fresh("many");
      const q = queue(name);
      const seen = new Map<string, number>();
      const count = (job: BullJob): void => void seen.set(job.id!, (seen.get(job.id!) ?? 0) + 1);
      worker(name, async (job) => count(job), { concurrency: 4 });
      worker(name, async (job) => count(job), { concurrency: 2 });
      for (let i = 0; i < 4; i++) await q.addBulk(Array.from({ length: 10 }, (_, k) => ({ name: "m", data: { i, k } })));
      await eventually(async () => (await q.getJobCounts("completed")).completed === 40, 30_000);
      expect(seen.size).toBe(40);
      expect([...seen.values()].every((v) => v === 1)).toBe(true);
    });

    test("a custom jobId keeps its id; adding it again writes nothing and answers its id", async () => {
      const name = fresh("custom");
      const q = queue(name);
      const first = await q.add("x", { v: 1 }, { jobId: "order-17" });
      expect(first.id).toBe("order-17");
      const again = await q.add("x", { v: 2 }, { jobId: "order-17" });
      expect(again.id).toBe("order-17");
      expect((await q.getJobCounts("waiting")).waiting).toBe(1);
      expect((await q.getJob("order-17"))!.data).toEqual({ v: 1 });
      const id = emqIdOf("order-17");
      expect(id).toMatch(/^JOB[1-9A-Za-z][0-9A-Za-z]{10}$/);
      expect(((await bull.mq.getJob(name, id))?.payload as { id: string }).id).toBe("order-17");
      const bulk = await q.addBulk([{ name: "a", data: { i: 0 } }, { name: "b", data: { i: 1 }, opts: { jobId: "b-1" } }, { name: "c", data: { i: 2 } }]);
      expect(bulk.map((j) => j.id)).toEqual(["1", "b-1", "2"]);
      expect((await q.getWaiting()).map((j) => j.id).sort()).toEqual(["1", "2", "b-1", "order-17"]);
    });

    test("retries with backoff, then success: attemptsMade counts each attempt", async () => {
      const name = fresh("retry");
      const q = queue(name);
      await q.add("flaky", {}, { attempts: 3, backoff: { type: "fixed", delay: 50 } });
      let calls = 0;
      const failures: string[] = [];
      const w = worker(name, async () => {
        if (++calls < 3) throw new Error(`boom ${calls}`);
        return "ok";
      });
      w.on("failed", (_job, err) => failures.push(err.message));
      await eventually(async () => (await q.getJobCounts("completed")).completed === 1);
      const job = (await q.getJob("1"))!;
      expect(failures).toEqual(["boom 1", "boom 2"]);
      expect(job.attemptsMade).toBe(3);
      expect(job.returnvalue).toBe("ok");
      const row = await bull.mq.getJob(name, emqIdOf("1"));
      expect(row?.failures?.map((f) => f.message)).toEqual(["boom 1", "boom 2"]);
    });

    test("attempts spent: failed, with its reason and stack; a failed job is retried by REQUEUE", async () => {
      const name = fresh("fail");
      const q = queue(name);
      await q.add("doomed", { k: 1 }, { attempts: 2, backoff: { type: "exponential", delay: 20 } });
      const w = worker(name, async () => {
        throw new TypeError("no way");
      });
      await eventually(async () => (await q.getJobCounts("failed")).failed === 1);
      await w.close();
      const job = (await q.getJob("1"))!;
      expect(await job.getState()).toBe("failed");
      expect(job.failedReason).toBe("no way");
      expect(job.attemptsMade).toBe(2);
      expect(job.stacktrace!.length).toBe(2);
      expect(job.stacktrace![1]).toContain("no way");
      expect((await bull.mq.getJob(name, emqIdOf("1")))?.state).toBe("dead");
      expect((await q.getFailed()).map((j) => j.id)).toEqual(["1"]);
      await job.retry("failed");
      expect(await job.getState()).toBe("waiting");
    });

    test("a delayed job waits in delayed until due; promote runs it now", async () => {
      const name = fresh("delay");
      const q = queue(name);
      const later = await q.add("later", {}, { delay: 60_000 });
      const soon = await q.add("soon", {}, { delay: 200 });
      expect(await later.getState()).toBe("delayed");
      expect((await q.getJobCounts("delayed")).delayed).toBe(2);
      expect((await bull.mq.getJob(name, emqIdOf(soon.id!)))?.state).toBe("scheduled");
      const done: string[] = [];
      worker(name, async (job) => void done.push(job.name));
      await eventually(() => done.length === 1);
      expect(done).toEqual(["soon"]);
      expect(await later.getState()).toBe("delayed");
      await later.promote();
      await eventually(() => done.length === 2);
      expect(done).toEqual(["soon", "later"]);
    });

    test("priorities: jobs without one first, then the lowest number; prioritized counted apart", async () => {
      const name = fresh("prio");
      const q = queue(name);
      await q.add("p3", {}, { priority: 3 });
      await q.add("p1", {}, { priority: 1 });
      await q.add("none", {});
      await q.add("p2", {}, { priority: 2 });
      const counts = await q.getJobCounts("waiting", "prioritized");
      expect(counts).toEqual({ waiting: 1, prioritized: 3 });
      expect(await (await q.getJob("2"))!.getState()).toBe("prioritized");
      expect((await q.getPrioritized()).map((j) => j.name)).toEqual(["p1", "p2", "p3"]);
      const order: string[] = [];
      worker(name, async (job) => void order.push(job.name));
      await eventually(() => order.length === 4);
      expect(order).toEqual(["none", "p1", "p2", "p3"]);
    });

    test("progress and logs from the processor; getJob and getJobLogs read them", async () => {
      const name = fresh("progress");
      const q = queue(name);
      await q.add("p", {});
      worker(name, async (job) => {
        await job.updateProgress({ pct: 50 });
        await job.log("half way");
        await job.log("done");
        return 1;
      });
      await eventually(async () => (await q.getJobCounts("completed")).completed === 1);
      const job = (await q.getJob("1"))!;
      expect(job.progress).toEqual({ pct: 50 });
      expect(await q.getJobLogs("1")).toEqual({ logs: ["half way", "done"], count: 2 });
    });

    test("pause holds the jobs on the server (an EchoMQ claim gets none); resume runs them", async () => {
      const name = fresh("pause");
      const q = queue(name);
      await q.pause();
      expect(await q.isPaused()).toBe(true);
      await q.add("held", {});
      expect(await bull.mq.claim(name, { leaseMs: 1000 })).toBeNull();
      const ran: string[] = [];
      worker(name, async (job) => void ran.push(job.id!));
      expect((await q.getJobCounts("waiting")).waiting).toBe(1);
      await q.resume();
      expect(await q.isPaused()).toBe(false);
      await eventually(() => ran.length === 1);
    });

    test("QueueEvents: completed and failed with BullMQ's ids; waitUntilFinished", async () => {
      const name = fresh("events");
      const q = queue(name);
      const events = new QueueEvents(name, { connection: {} }, bull.factory);
      bull.closing(() => events.close());
      await events.waitUntilReady();
      const completed: Array<{ jobId: string; returnvalue: unknown }> = [];
      const failed: Array<{ jobId: string; failedReason: string }> = [];
      events.on("completed", (e) => void completed.push({ jobId: e.jobId, returnvalue: e.returnvalue }));
      events.on("failed", (e) => void failed.push({ jobId: e.jobId, failedReason: e.failedReason }));
      worker(name, async (job) => {
        if (job.data.fail) throw new Error("bad input");
        return { twice: job.data.v * 2 };
      });
      const good = await q.add("ok", { v: 21 }, { jobId: "good-1" });
      expect(await good.waitUntilFinished(events, 20_000)).toEqual({ twice: 42 });
      const bad = await q.add("no", { fail: true });
      expect(await good.waitUntilFinished(events, 20_000)).toEqual({ twice: 42 });
      await eventually(() => failed.length === 1);
      expect(completed).toEqual([{ jobId: "good-1", returnvalue: { twice: 42 } }]);
      expect(failed).toEqual([{ jobId: bad.id!, failedReason: "bad input" }]);
    });

    test("a job's delay reads 0 when it was added without one (BullMQ's hash always has it), its delay when it was", async () => {
      const name = fresh("delay0");
      const q = queue(name);
      const plain = await q.add("plain", {});
      const later = await q.add("later", {}, { delay: 60_000 });
      expect((await q.getJob(plain.id!))!.delay).toBe(0);
      expect((await q.getJob(later.id!))!.delay).toBe(60_000);
      const seen: unknown[] = [];
      worker(name, async (job) => void seen.push(job.delay));
      await eventually(() => seen.length === 1);
      expect(seen).toEqual([0]);
    });

    test("a finished job's processedOn is its claim time, read back from the row (wire 17) by getJob and getJobs", async () => {
      const name = fresh("processed");
      const q = queue(name);
      const before = Date.now() - 1000; // the server's clock may be a little behind ours
      await q.add("ok", {});
      await q.add("bad", {}, { attempts: 1 });
      const w = worker(name, async (job: BullJob) => {
        if (job.name === "bad") throw new Error("no");
        return 1;
      });
      await eventually(async () => {
        const c = await q.getJobCounts("completed", "failed");
        return c.completed === 1 && c.failed === 1;
      });
      await w.close();
      const done = [...(await q.getJobs("completed")), ...(await q.getJobs("failed"))];
      expect(done.length).toBe(2);
      for (const job of [...done, (await q.getJob(done[0]!.id!))!]) {
        expect(job.processedOn).toBeGreaterThanOrEqual(before);
        expect(job.processedOn).toBeLessThanOrEqual(job.finishedOn!);
      }
    });

    test("job.delay after a retry with backoff is the backoff (BullMQ's moveToDelayed writes it), from getJob too", async () => {
      const name = fresh("backoff-delay");
      const q = queue(name);
      const failed: number[] = [];
      const w = worker(name, async () => {
        throw new Error("again");
      });
      w.on("failed", (job) => void failed.push(job!.delay));
      const job = await q.add("retried", {}, { attempts: 3, backoff: 60_000 });
      await eventually(async () => failed.length === 1 && (await q.getJobCounts("delayed")).delayed === 1);
      expect(failed).toEqual([60_000]);
      expect((await q.getJob(job.id!))!.delay).toBe(60_000);
    });

    test("job.retry() of a failed job keeps its attempts (attemptsStarted counts on); with the resets it starts again", async () => {
      const name = fresh("retry-keeps");
      const q = queue(name);
      const seen: Array<[string, number, number]> = [];
      let failing = true;
      const handler = async (job: BullJob): Promise<string> => {
        seen.push([job.name, job.attemptsStarted, job.attemptsMade]);
        if (failing) throw new Error("not yet");
        return job.name;
      };
      const first = worker(name, handler);
      const kept = await q.add("kept", {});
      const reset = await q.add("reset", {});
      await eventually(async () => (await q.getJobCounts("failed")).failed === 2);
      failing = false;
      // no worker while the jobs are retried (a paused Worker's claim already waiting on the
      // module's blocking CLAIM could take one at once: docs/design/bullmq.md "Next")
      await first.close();
      const again = (await q.getJob(kept.id!))!;
      expect(again.processedOn).toBeGreaterThan(0);
      await again.retry("failed");
      // no processedOn until its next claim, as BullMQ's reprocessJob deletes it
      expect((await q.getJob(kept.id!))!.processedOn).toBeUndefined();
      await (await q.getJob(reset.id!))!.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
      const w = worker(name, handler);
      await eventually(async () => (await q.getJobCounts("completed")).completed === 2);
      await w.close();
      expect(seen.filter(([n]) => n === "kept")).toEqual([["kept", 1, 0], ["kept", 2, 1]]);
      expect(seen.filter(([n]) => n === "reset")).toEqual([["reset", 1, 0], ["reset", 1, 0]]);
      const done = (await q.getJob(kept.id!))!;
      expect([done.attemptsStarted, done.attemptsMade]).toEqual([2, 2]);
    });

    test("a named Worker's jobs carry its name as processedBy (the first claim and the ones fetched after a settle)", async () => {
      const name = fresh("named");
      const q = queue(name);
      await q.addBulk([{ name: "a", data: {} }, { name: "b", data: {} }]);
      const seen: Array<string | undefined> = [];
      worker(name, async (job) => void seen.push(job.processedBy), { name: "mailer-1" });
      await eventually(() => seen.length === 2);
      expect(seen).toEqual(["mailer-1", "mailer-1"]);
    });

    test("waitUntilFinished of a job already removed on completion rejects with BullMQ's missing-key text", async () => {
      const name = fresh("gone");
      const q = queue(name);
      const events = new QueueEvents(name, { connection: {} }, bull.factory);
      bull.closing(() => events.close());
      await events.waitUntilReady();
      const w = worker(name, async () => "qux");
      const done = new Promise((resolve) => w.once("completed", resolve));
      // the QueueEvents reader past the job's `completed` too: a reader lagging under load would hand
      // it to waitUntilFinished's listener (resolving with the result) before the missing-key check
      const heard = new Promise((resolve) => events.once("completed", resolve));
      const job = await q.add("once", {}, { removeOnComplete: true });
      await Promise.all([done, heard]);
      await eventually(async () => (await q.getJob(job.id!)) === undefined);
      const e = await job.waitUntilFinished(events, 20_000).catch((x) => x);
      expect(e).toBeInstanceOf(Error);
      expect((e as Error).message).toBe(`Missing key for job ${q.toKey(job.id!)}. isFinished`);
    });

    test("a lease that ran out (a stalled job) goes to another worker; the first is fenced off", async () => {
      const name = fresh("stall");
      const q = queue(name);
      await q.add("slow", { s: 1 });
      const first = worker(name, async (): Promise<string> => "unused", { autorun: false, lockDuration: 300 });
      const taken = (await first.getNextJob("tok-1"))!;
      expect(taken.id).toBe("1");
      expect(await taken.getState()).toBe("active");
      const ran: string[] = [];
      worker(name, async (job) => void ran.push(`${job.id}:${job.attemptsStarted}`), { lockDuration: 30_000 });
      await eventually(() => ran.length === 1);
      expect(ran).toEqual(["1:2"]);
      await expect(taken.moveToCompleted("late", "tok-1", false)).rejects.toThrow("Missing lock for job 1");
      const job = (await q.getJob("1"))!;
      expect(job.returnvalue).toBeNull();
      expect(job.stalledCounter).toBe(1); // the lease that ran out, counted on the row (wire 17)
    });

    test("a SIGKILLed worker's job: its lease runs out and another worker runs it (its next attempt)", async () => {
      const name = fresh("killed");
      const q = queue(name);
      await q.add("k", { v: 1 });
      const site = sites.sites.get(combo.topology)!;
      const child = Bun.spawn(
        [process.execPath, `${import.meta.dir}/_worker_child.ts`, JSON.stringify(site.addresses), site.cluster ? "1" : "0", combo.backend, name, "500"],
        { stdout: "pipe", stderr: "inherit" },
      );
      const reader = child.stdout.getReader();
      let out = "";
      while (!out.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      expect(out.trim()).toBe("took 1 1");
      expect(await (await q.getJob("1"))!.getState()).toBe("active");
      child.kill("SIGKILL");
      await child.exited;
      const ran: string[] = [];
      worker(name, async (job) => void ran.push(`${job.id} ${job.attemptsStarted}`));
      await eventually(() => ran.length === 1);
      expect(ran).toEqual(["1 2"]);
      expect((await bull.mq.getJob(name, emqIdOf("1")))?.attempts).toBe(2);
    });

    test("a sandboxed processor (a file BullMQ runs in a child process) runs on top, its progress and log under the lease", async () => {
      const name = fresh("sandbox");
      const q = queue(name);
      await q.add("s", { v: 14 });
      const w = new Worker(name, `${import.meta.dir}/_sandboxed.cjs`, { connection: {}, drainDelay: 1 }, bull.factory);
      bull.closing(() => w.close());
      await eventually(async () => (await q.getJobCounts("completed")).completed === 1, 30_000);
      const job = (await q.getJob("1"))!;
      expect(job.returnvalue).toBe(42);
      expect(job.progress).toBe(7);
      expect((await q.getJobLogs("1")).logs).toEqual(["sandboxed 1"]);
    });

    test("an EchoMQ producer's job is run by a BullMQ worker under its EchoMQ id", async () => {
      const name = fresh("mixed");
      const id = await bull.mq.enqueue(name, { hello: "world" }, { name: "native" });
      const q = queue(name);
      const seen: Array<[string, string, unknown]> = [];
      worker(name, async (job) => void seen.push([job.id!, job.name, job.data]));
      await eventually(() => seen.length === 1);
      expect(seen).toEqual([[id, "native", { hello: "world" }]]);
      expect(await (await q.getJob(id))!.getState()).toBe("completed");
    });

    test("two custom ids on one EchoMQ id: the second is refused, nothing written", async () => {
      const name = fresh("collide");
      const q = queue(name);
      // a row at order-9's EchoMQ id that holds another BullMQ id: what a hash collision leaves
      await bull.mq.enqueue(name, { bullmq: 1, id: "other", name: "x", data: {}, opts: {}, ts: 1 }, { id: emqIdOf("order-9") });
      const raw = sites.raws.get(combo.topology)!;
      await settled(q);
      const before = await queueDigest(raw, name);
      const e = await q.add("x", {}, { jobId: "order-9" }).catch((x) => x);
      expect(e).toBeInstanceOf(IdCollisionError);
      expect(String(e.message)).toContain(`job id "order-9" maps to ${emqIdOf("order-9")}, which job "other" holds`);
      expect(await queueDigest(raw, name)).toBe(before);
      expect(await q.getJob("order-9")).toBeUndefined(); // the row is not order-9's
      expect(await q.getJob("other")).toBeUndefined(); // nor found under a name that maps elsewhere
    });

    test("a worker's limiter is the queue's rate limit, obeyed on the server by every claim", async () => {
      const name = fresh("limit");
      const q = queue(name);
      await q.addBulk([0, 1, 2, 3].map((i) => ({ name: "r", data: { i } })));
      const ran: number[] = [];
      worker(name, async (job) => void ran.push(job.data.i), { limiter: { max: 2, duration: 600_000 } });
      await eventually(() => ran.length === 2);
      expect((await bull.mq.limits(name)).rate).toEqual({ max: 2, perMs: 600_000, burst: 2 });
      expect(await bull.mq.claim(name, { leaseMs: 1000 })).toBeNull(); // spent: no claim of anyone's gets a job
      expect((await q.getJobCounts("waiting")).waiting).toBe(2);
      await bull.mq.limit(name, { rate: null });
    });

    test("an operation EchoMQ does not do is refused by name and writes nothing", async () => {
      const name = fresh("refused");
      const q = queue(name);
      const job = await q.add("d", {}, { delay: 60_000 });
      const raw = sites.raws.get(combo.topology)!;
      await settled(q);
      const before = await queueDigest(raw, name);
      const e = await job.changeDelay(1000).catch((x) => x);
      expect(e).toBeInstanceOf(RefusedOperationError);
      expect((e as RefusedOperationError).operation).toBe("changeDelay");
      expect(String(e.message)).toContain("changeDelay is refused: no EchoMQ verb");
      await expect(q.add("l", {}, { lifo: true })).rejects.toThrow("addJob (opts.lifo) is refused");
      await expect(q.updateJobProgress(job.id!, 5)).rejects.toThrow("updateProgress is refused");
      expect(await queueDigest(raw, name)).toBe(before);
    });
  });
}
