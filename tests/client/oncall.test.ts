/**
 * On call (issue 37), for each backend × topology. Failures with their stacks: a retry or bury
 * with the attempt's `error` keeps its name, message and stack on the row (the newest 10, 8 KiB
 * each), written by the settle itself (RETRY, BURY, SETTLE), and `getJob` returns them oldest
 * first; a bad one is refused by the server with nothing written. A `completed` event carries
 * each job's result up to 1024 bytes, and flags a longer one (read from the row). Job logs: LOG
 * appends a line to a held job's log (a lost lease logs nothing), the row keeps the newest 1000
 * lines of 1024 bytes and loses them with the row; `jobLogs` reads them oldest first. Search:
 * `findJobs` by id, dedup key, name or payload text, a bounded scan with a cursor. Job names: `enqueue`, `schedule`, `submit` and
 * `enqueueMany` (one name, or one per item) carry `name`, a job option kept on the row; the
 * handler sees `job.name`, `getJob` and pages return it; a bad name is refused before any wire
 * (the name rule), and by the server with nothing written; 10,000 distinct names cost nothing but
 * their rows.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, type Job, LeaseLostError } from "../../client.ts";
import { FAILURES_KEPT, LOG_LINES_KEPT, MAX_ERROR_BYTES, MAX_LOG_LINE_BYTES, renderRefusal } from "../../lib/wire/mod.ts";
import { failureText } from "../../lib/client/failure.ts";
import { COMBOS, digest, eventually, useClient, useSites, wire } from "./_harness.ts";

type P = { n: number };
const sites = useSites();
const FAST = { blockMs: 200 };

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<P>(sites, combo);
    const claimOne = async (q: string): Promise<Job<P>> => (await ctx.mq.claim(q, { leaseMs: 60_000 }))! as Job<P>;

    test("failures: retry and bury keep each attempt's error with its stack; getJob returns them oldest first", async () => {
      const q = `oc-fail-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      const first = await claimOne(q);
      class GatewayError extends Error {
        override name = "GatewayError";
      }
      const e1 = new GatewayError("payment gateway timeout for order 21");
      await ctx.mq.retry(first, { delayMs: 0, reason: String(e1), error: e1 });
      const second = await claimOne(q);
      await ctx.mq.retry(second, { delayMs: 0, reason: "no error sent" });
      const third = await claimOne(q);
      const e3 = new TypeError("cannot read properties of undefined");
      await ctx.mq.bury(third, String(e3), { error: e3 });
      const j = (await ctx.mq.getJob(q, id))!;
      expect(j.state).toBe("dead");
      expect(j.reason).toBe("TypeError: cannot read properties of undefined");
      expect(j.failures!.map((f) => [f.attempt, f.name, f.message])).toEqual([
        [1, "GatewayError", "payment gateway timeout for order 21"],
        [3, "TypeError", "cannot read properties of undefined"],
      ]);
      expect(j.failures![0]!.stack).toBe(e1.stack!);
      expect(j.failures![1]!.stack).toContain("TypeError: cannot read properties of undefined\n");
      expect(j.failures![0]!.at).toBeGreaterThan(Date.now() - 60_000);
      // pages leave them out (up to 80 KiB a job)
      expect((await ctx.mq.jobs(q, "dead", { limit: 10 }))[0]!.failures).toBeUndefined();
      // a value that is not an Error: its type and text
      const other = await ctx.mq.enqueue(q, { n: 2 });
      await ctx.mq.retry(await claimOne(q), { delayMs: 0, error: "just a string" });
      expect((await ctx.mq.getJob(q, other))!.failures).toEqual([expect.objectContaining({ attempt: 1, name: "string", message: "just a string" })]);
      expect("stack" in (await ctx.mq.getJob(q, other))!.failures![0]!).toBe(false);
    });

    test("failures are bounded: the newest 10 of 25 attempts, a 100 KB stack cut to 8 KiB; a worker's failures go through SETTLE", async () => {
      const q = `oc-bound-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      for (let a = 1; a <= 25; a++) {
        const job = await claimOne(q);
        const e = new Error(`attempt ${a}`);
        if (a === 25) e.stack = `Error: attempt 25\n${"    at deep (file.ts:1:1)\n".repeat(4000)}`;
        if (a < 25) await ctx.mq.retry(job, { delayMs: 0, reason: "r", error: e });
        else await ctx.mq.settleMany([{ kind: "bury", job, reason: "r", error: e }]);
      }
      const j = (await ctx.mq.getJob(q, id))!;
      expect(j.failures!.map((f) => f.message)).toEqual(Array.from({ length: FAILURES_KEPT }, (_, k) => `attempt ${16 + k}`));
      const last = j.failures![9]!;
      expect([last.attempt, last.truncated]).toEqual([25, true]);
      expect(last.stack!.startsWith("Error: attempt 25\n    at deep")).toBe(true);
      const row = await ctx.row(q, id, "failures", "failure:4");
      expect(row[0]).toBe("25");
      expect(new TextEncoder().encode(row[1]!).length).toBeLessThanOrEqual(MAX_ERROR_BYTES);
      expect(new TextEncoder().encode(row[1]!).length).toBeGreaterThan(MAX_ERROR_BYTES - 64);
      // exactly 10 failure fields, whatever the number of attempts
      const fields = (await ctx.raw.command(["HKEYS", keyspace(q).job(id)], keyspace(q).meta) as unknown[]).map(String);
      expect(fields.filter((f) => f.startsWith("failure:")).sort()).toEqual(Array.from({ length: 10 }, (_, k) => `failure:${k}`));
      // the worker's own settles (SETTLE): a handler's throw is kept when the worker sends it
      const w = `oc-worker-${backend}`;
      const wid = await ctx.mq.enqueue(w, { n: 1 });
      const job = await claimOne(w);
      await ctx.mq.settleMany([{ kind: "retry", job, delayMs: 0, reason: "Error: boom", error: new Error("boom") }]);
      expect((await ctx.mq.getJob(w, wid))!.failures!.map((f) => [f.attempt, f.message])).toEqual([[1, "boom"]]);
    });

    test("a failure past 8 KiB is refused by the server, nothing written; none sent writes no field", async () => {
      const q = `oc-failgate-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      const job = await claimOne(q);
      const ks = keyspace(q);
      const before = await digest(ctx.raw, ks.meta);
      for (const verb of ["RETRY", "BURY"] as const) {
        const args = verb === "RETRY"
          ? [id, String(job.token), "0", "r", "x".repeat(MAX_ERROR_BYTES + 1)]
          : [id, String(job.token), "r", "x".repeat(MAX_ERROR_BYTES + 1)];
        expect(await wire(ctx.raw, backend, verb, [ks.meta], args)).toEqual({
          err: renderRefusal("failure", `EMQ.${verb}`, { limit: String(MAX_ERROR_BYTES) }),
        });
      }
      expect(await digest(ctx.raw, ks.meta)).toBe(before);
      // exactly the bound is accepted; the encoder never sends more
      expect(new TextEncoder().encode(failureText(Object.assign(new Error("m".repeat(20_000)), { stack: "s".repeat(50_000) }), 1)).length)
        .toBeLessThanOrEqual(MAX_ERROR_BYTES);
      await ctx.mq.retry(job, { delayMs: 0 });
      expect(await ctx.row(q, id, "failures")).toEqual(["null"]);
    });

    test("logs: lines appended to a held job's log, read oldest first; 1 MB logged keeps the newest 1000 lines of 1024 bytes", async () => {
      const q = `oc-logs-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      const job = await claimOne(q);
      await ctx.mq.log(job, "step 1 of 3");
      await ctx.mq.log(job, "");
      await ctx.mq.log(job, "ünïcode ✓");
      expect(await ctx.mq.jobLogs(q, id)).toEqual({ lines: ["step 1 of 3", "ünïcode ✓"], total: 2 });
      // a line longer than the bound is cut (whole characters), not refused
      await ctx.mq.log(job, "é".repeat(600));
      const cut = (await ctx.mq.jobLogs(q, id)).lines.at(-1)!;
      expect(cut).toBe("é".repeat(512));
      // 1 MB: 1,100 lines of 1,000 bytes (LOG pipelined): the newest 1000 kept, oldest first
      const lines = Array.from({ length: 1100 }, (_, k) => `${String(k).padStart(4, "0")} ${"x".repeat(995)}`);
      await Promise.all(lines.map((l) => ctx.mq.log(job, l)));
      const logs = await ctx.mq.jobLogs(q, id);
      expect(logs.total).toBe(1103);
      expect(logs.lines.length).toBe(LOG_LINES_KEPT);
      expect(new Set(logs.lines).size).toBe(LOG_LINES_KEPT);
      expect(logs.lines.every((l) => l.length === 1000)).toBe(true);
      // getJob does not read the log
      expect(Object.keys((await ctx.mq.getJob(q, id))!)).not.toContain("log");
      await ctx.mq.ack(job);
      expect((await ctx.mq.jobLogs(q, id)).total).toBe(1103);
      // removed with the job
      expect(await ctx.mq.remove(q, id)).toBe(true);
      expect(await ctx.mq.jobLogs(q, id)).toEqual({ lines: [], total: 0 });
    });

    test("logs are fenced by the lease token: a worker that lost its job logs nothing; the server refuses a long line", async () => {
      const q = `oc-logfence-${backend}`;
      const id = await ctx.mq.enqueue(q, { n: 1 });
      const lost = (await ctx.mq.claim(q, { leaseMs: 20 }))!;
      await new Promise((r) => setTimeout(r, 60));
      const now = await claimOne(q); // the lease ran out: another claim holds it
      expect(now.token).toBeGreaterThan(lost.token);
      await expect(ctx.mq.log(lost, "late")).rejects.toBeInstanceOf(LeaseLostError);
      await ctx.mq.log(now, "mine");
      expect(await ctx.mq.jobLogs(q, id)).toEqual({ lines: ["mine"], total: 1 });
      const ks = keyspace(q);
      const before = await digest(ctx.raw, ks.meta);
      expect(await wire(ctx.raw, backend, "LOG", [ks.meta], [id, String(now.token), "l".repeat(MAX_LOG_LINE_BYTES + 1)])).toEqual({
        err: renderRefusal("log", "EMQ.LOG", { limit: String(MAX_LOG_LINE_BYTES) }),
      });
      expect(await wire(ctx.raw, backend, "LOG", [ks.meta], [id, String(lost.token), "x"])).toEqual({
        err: renderRefusal("lease-lost", "EMQ.LOG", { ids: id }),
      });
      expect(await digest(ctx.raw, ks.meta)).toBe(before);
      // the dead, retried and completed keep theirs until the row goes (retention, remove, drop)
      await ctx.mq.bury(now, "r");
      expect((await ctx.mq.jobLogs(q, id)).lines).toEqual(["mine"]);
      await ctx.mq.drop(q);
      expect(await ctx.mq.jobLogs(q, id)).toEqual({ lines: [], total: 0 });
    });

    test("findJobs: by id and dedup key in one read; by name and payload text within a bounded scan that says how much it read, with a cursor", async () => {
      const q = `oc-find-${backend}`;
      const items = Array.from({ length: 2_500 }, (_, n) => ({ n }));
      const ids = await ctx.mq.enqueueMany(q, items, { name: (p) => (p.n % 500 === 7 ? "needle" : undefined) });
      const held = await ctx.mq.enqueue(q, { n: 90_210 }, { dedup: { key: "order-28" }, name: "checkout" });
      // an id, a dedup key: one read each
      expect(await ctx.mq.findJobs(q, ids[3]!)).toMatchObject({ scanned: 1, cursor: null, jobs: [{ id: ids[3] }] });
      expect(await ctx.mq.findJobs(q, { dedupKey: "order-28" })).toMatchObject({ scanned: 1, cursor: null, jobs: [{ id: held }] });
      expect((await ctx.mq.findJobs(q, { dedupKey: "nope" })).jobs).toEqual([]);
      // the string form: the dedup key's holder first, then what the scan finds
      const text = await ctx.mq.findJobs(q, "order-28", { scan: 10 });
      expect(text.jobs.map((j) => j.id)).toEqual([held]);
      expect([text.scanned, text.cursor]).toEqual([10, "0:10"]);
      // by name: 1,000 rows per call at most, a cursor to go on; the whole queue in three calls
      const seen: string[] = [];
      let cursor: string | undefined;
      const scans: number[] = [];
      for (;;) {
        const page = await ctx.mq.findJobs(q, { name: "needle" }, cursor === undefined ? {} : { cursor });
        scans.push(page.scanned);
        seen.push(...page.jobs.map((j) => j.id));
        if (page.cursor === null) break;
        cursor = page.cursor;
      }
      expect(scans).toEqual([1000, 1000, 501]);
      expect(seen).toEqual([7, 507, 1007, 1507, 2007].map((n) => ids[n]!));
      // by payload text, with a limit: the cursor stops right after the last one returned
      const first = await ctx.mq.findJobs(q, { payload: '"n":7' }, { limit: 2 }); // 7, 70…79, 700…
      expect(first.jobs.map((j) => j.payload?.n)).toEqual([7, 70]);
      const next = await ctx.mq.findJobs(q, { payload: '"n":7' }, { limit: 1, cursor: first.cursor! });
      expect(next.jobs.map((j) => j.payload?.n)).toEqual([71]);
      // a bad cursor or an empty query: refused before any wire
      await expect(ctx.mq.findJobs(q, "x", { cursor: "9:9" })).rejects.toBeInstanceOf(EchoMQError);
      await expect(ctx.mq.findJobs(q, "")).rejects.toBeInstanceOf(EchoMQError);
      await expect(ctx.mq.findJobs(q, "x", { scan: 10_001 })).rejects.toBeInstanceOf(EchoMQError);
    });

    test("completed events carry results: small ones as sent, a longer one flagged, none for an empty one; ACK, SETTLE and a worker", async () => {
      const q = `oc-results-${backend}`;
      const ids = await ctx.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }]);
      const jobs = (await ctx.mq.claimMany(q, 3, { leaseMs: 60_000 })) as Job<P>[];
      const big = { text: "é".repeat(600) }; // 1,200 bytes of JSON
      // one ACK of three: a result, a long one, none
      await ctx.mq.settleMany([{ kind: "ack", job: jobs[0]!, result: { ok: "ü" } }, { kind: "ack", job: jobs[1]!, result: big }, {
        kind: "ack",
        job: jobs[2]!,
      }]);
      const worker = ctx.mq.work(q, (job) => job.payload.n === 4 ? { n: 4 } : undefined, FAST);
      await eventually(async () => (await ctx.mq.counts(q)).completed === 5);
      await worker.stop();
      const events = (await ctx.mq.recentEvents(q, { limit: 100 })).filter((e) => e.type === "completed") as Array<
        { jobId: string; result?: unknown; resultInRow?: true }
      >;
      const byId = new Map(events.map((e) => [e.jobId, e]));
      expect(byId.get(ids[0]!)!.result).toEqual({ ok: "ü" });
      expect([byId.get(ids[1]!)!.result, byId.get(ids[1]!)!.resultInRow]).toEqual([undefined, true]);
      expect((await ctx.mq.getJob(q, ids[1]!))!.result).toEqual(big);
      expect("result" in byId.get(ids[2]!)! || "resultInRow" in byId.get(ids[2]!)!).toBe(false);
      expect(byId.get(ids[3]!)!.result).toEqual({ n: 4 });
      expect("result" in byId.get(ids[4]!)!).toBe(false);
      // the raw entry: one per call, `results` parallel to `jobs`; absent when every result is empty
      const ks = keyspace(q);
      const raw = (await ctx.raw.command(["XRANGE", ks.events, "-", "+"], ks.meta)) as unknown[];
      const flat = JSON.stringify(raw);
      expect(flat).toContain(`"results","${'11:{\\"ok\\":\\"ü\\"}'}-1:0:"`);
    });

    test("names: enqueue, schedule, submit and enqueueMany carry them; claims, the handler, getJob and pages see them", async () => {
      const q = `oc-names-${backend}`;
      const a = await ctx.mq.enqueue(q, { n: 1 }, { name: "send-invoice" });
      const b = await ctx.mq.enqueue(q, { n: 2 });
      const s = await ctx.mq.schedule(q, { n: 3 }, { delayMs: 3_600_000 }, { name: "nightly report", lane: "t1" });
      const sub = await ctx.mq.submit(q, { n: 4 }, { name: "sub", dedup: { key: "k4" } });
      const many = await ctx.mq.enqueueMany(q, [{ n: 5 }, { n: 6 }, { n: 7 }], { name: (p) => p.n === 6 ? undefined : `item-${p.n}` });
      const same = await ctx.mq.enqueueMany(q, [{ n: 8 }], { name: "all" });
      expect((await ctx.mq.getJob(q, a))!.name).toBe("send-invoice");
      expect((await ctx.mq.getJob(q, b))!.name).toBeUndefined();
      expect("name" in (await ctx.mq.getJob(q, b))!).toBe(false);
      const sj = (await ctx.mq.getJob(q, s))!;
      expect([sj.name, sj.lane, sj.state]).toEqual(["nightly report", "t1", "scheduled"]);
      expect((await ctx.mq.getJob(q, sub.id))!.name).toBe("sub");
      expect(await Promise.all(many.map(async (id) => (await ctx.mq.getJob(q, id))!.name))).toEqual(["item-5", undefined, "item-7"]);
      expect((await ctx.mq.getJob(q, same[0]!))!.name).toBe("all");
      const page = await ctx.mq.jobs(q, "pending", { limit: 100 });
      expect(new Map(page.map((j) => [j.payload?.n, j.name]))).toEqual(
        new Map<number | undefined, string | undefined>([[1, "send-invoice"], [2, undefined], [4, "sub"], [5, "item-5"], [6, undefined], [
          7,
          "item-7",
        ], [8, "all"]]),
      );
      // a claim hands the name back; a worker's handler sees it
      const claimed = (await ctx.mq.claim(q, { leaseMs: 60_000 }))! as Job<P>;
      expect([claimed.payload.n, claimed.name]).toEqual([1, "send-invoice"]);
      await ctx.mq.ack(claimed);
      const seen = new Map<number, string | undefined>();
      const worker = ctx.mq.work(q, (job) => {
        seen.set(job.payload.n, job.name);
      }, FAST);
      await eventually(() => seen.size === 6);
      await worker.stop();
      expect(seen.get(2)).toBeUndefined();
      expect(seen.get(4)).toBe("sub");
      expect(seen.get(5)).toBe("item-5");
      expect(seen.get(8)).toBe("all");
    });

    test("a bad name is refused before any wire (the name rule), and by the server with nothing written", async () => {
      const q = `oc-badname-${backend}`;
      for (const name of ["", "a}b", "{x", "a\0b", "n".repeat(1025), 42 as unknown as string]) {
        const e = await ctx.mq.enqueue(q, { n: 1 }, { name }).then(() => null, (e: unknown) => e);
        expect(e).toBeInstanceOf(EchoMQError);
        expect((e as EchoMQError).rule).toBe("options");
        expect((e as Error).message).toContain("enqueue: name: job name");
      }
      const many = await ctx.mq.enqueueMany(q, [{ n: 1 }], { name: () => "x}" }).then(() => null, (e: unknown) => e);
      expect(many).not.toBeNull();
      expect(await ctx.mq.counts(q)).toMatchObject({ pending: 0 });
      // the server's own gate: the option's value through the name rule
      const ks = keyspace(q);
      const before = await digest(ctx.raw, ks.meta);
      const out = await wire(ctx.raw, backend, "ENQUEUE", [ks.meta], ["JOB00000000001", "name=a}b", "p"]);
      expect(out).toEqual({ err: renderRefusal("name", "EMQ.ENQUEUE", { arg: "name", max: "1024" }) });
      expect(await digest(ctx.raw, ks.meta)).toBe(before);
    });

    test("10,000 distinct names: each kept on its own row, nothing else grows", async () => {
      const q = `oc-manynames-${backend}`;
      const items = Array.from({ length: 10_000 }, (_, n) => ({ n }));
      const ids = await ctx.mq.enqueueMany(q, items, { name: (p) => `name-${p.n}` });
      expect(ids.length).toBe(10_000);
      for (const i of [0, 4_321, 9_999]) expect((await ctx.mq.getJob(q, ids[i]!))!.name).toBe(`name-${i}`);
      const ks = keyspace(q);
      // the queue's keys are its rows and the usual structures: no index per name
      const scan = await ctx.raw.command(["SCAN", "0", "MATCH", `${ks.base}*`, "COUNT", "100000"], ks.meta);
      const keys = ((scan as unknown[])[1] as unknown[]).map(String).filter((k) => !k.includes(":job:"));
      expect(keys.sort()).toEqual([ks.meta, ks.pending, ks.events, ks.wake].sort());
    });
  });
}
