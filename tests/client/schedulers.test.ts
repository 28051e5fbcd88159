/**
 * Schedulers (repeatable jobs), for each backend × topology: the wire verbs SCHEDULER, UNSCHEDULE
 * and TICK (upsert semantics, the compare-and-set of a tick, every refusal with its exact text and
 * nothing written, identical keyspaces across backends), the client's upsertScheduler /
 * schedulers / removeScheduler with bad input refused before any wire, and workers firing: several
 * workers on one scheduler every 100 ms admit exactly one job per run; a restart after missed runs
 * gives one run (the latest); a paused queue fires nothing.
 */
import { describe, expect, test } from "bun:test";
import { keyspace } from "../../mod.ts";
import { EchoMQError, SchedulerOptionError } from "../../client.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { BACKENDS, comboName, COMBOS, digest, dump, eventually, sleep, TOPOLOGIES, useClient, useSites, wire } from "./_harness.ts";

const servers = useSites();
const dumps = new Map<string, unknown>();
const JOB = (n: number): string => `JOB${String(n).padStart(11, "0")}`;

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo);

    const call = (q: string, verb: "SCHEDULER" | "UNSCHEDULE" | "TICK", args: string[]) => wire(ctx.raw, backend, verb, [keyspace(q).meta], args);

    /** `run` answers exactly `err` and leaves the queue's node unchanged. */
    async function refused(q: string, run: () => Promise<unknown>, err: string): Promise<void> {
      const d0 = await digest(ctx.raw, keyspace(q).meta);
      expect(await run()).toEqual({ err });
      expect(await digest(ctx.raw, keyspace(q).meta)).toBe(d0);
    }

    test("SCHEDULER upserts: same spec keeps the next run, another spec replaces it; UNSCHEDULE deletes", async () => {
      const q = `sch-wire-${backend}`;
      const ks = keyspace(q);
      expect(await call(q, "SCHEDULER", ["nightly", "every 100", "1000", "1", "", "p1"])).toEqual({ ok: 1000 });
      // same spec: the next run in force stays, only max_missed and payload change
      expect(await call(q, "SCHEDULER", ["nightly", "every 100", "5000", "3", "", "p2"])).toEqual({ ok: 1000 });
      let h = (await dump(ctx.raw, q))[`emq:{Q}:scheduler:nightly`] as { value: Record<string, string> };
      expect(h.value).toEqual({ created_ms: "<now>", max_missed: "3", next_ms: "1000", payload: "p2", runs: "0", spec: "every 100" });
      // another spec: its own next run
      expect(await call(q, "SCHEDULER", ["nightly", "every 200", "2000", "1", "", "p3"])).toEqual({ ok: 2000 });
      h = (await dump(ctx.raw, q))[`emq:{Q}:scheduler:nightly`] as { value: Record<string, string> };
      expect(h.value).toMatchObject({ next_ms: "2000", spec: "every 200", payload: "p3", runs: "0" });
      expect(await ctx.raw.command(["ZSCORE", ks.schedulers, "nightly"], ks.meta)).toBe(2000);
      expect(await call(q, "SCHEDULER", ["other", "cron 0 * * * *", "3000", "0", "", "x"])).toEqual({ ok: 3000 });
      expect(await call(q, "UNSCHEDULE", ["other"])).toEqual({ ok: 1 });
      expect(await call(q, "UNSCHEDULE", ["other"])).toEqual({ ok: 0 });
      expect(await ctx.raw.command(["EXISTS", ks.scheduler("other")], ks.meta)).toBe(0);
    });

    test("the first run is computed on the server's clock: a caller 8 s fast does not move it", async () => {
      const q = `sch-clock-${backend}`;
      const real = Date.now;
      const before = real();
      Date.now = () => real() + 8000;
      let next: Date;
      try {
        next = await ctx.mq.upsertScheduler(q, "minutely", { everyMs: 60_000 }, { payload: { n: 1 } });
      } finally {
        Date.now = real;
      }
      // every 60 s from the server's now (this machine's real clock: one host), not from now + 8 s
      expect(next.getTime()).toBeGreaterThanOrEqual(before + 60_000 - 1000);
      expect(next.getTime()).toBeLessThan(real() + 60_000 + 4000);
      await ctx.mq.drop(q);
    });

    test("DROP deletes the schedulers first, within its limit, then the jobs, then every key", async () => {
      const q = `sch-drop-${backend}`;
      const ks = keyspace(q);
      for (const name of ["a", "b", "c"]) {
        expect(await call(q, "SCHEDULER", [name, "every 100", "1000", "1", "", "p"])).toEqual({ ok: 1000 });
      }
      expect(await wire(ctx.raw, backend, "ENQUEUE", [ks.meta], [JOB(1), "", "x"])).toEqual({ ok: 1 });
      // limit 2: two schedulers, no job; the queue is still there
      expect(await wire(ctx.raw, backend, "DROP", [ks.meta], ["2"])).toEqual({ ok: 2 });
      expect(await ctx.raw.command(["ZRANGE", ks.schedulers, "0", "-1"], ks.meta)).toEqual(["c"]);
      expect(await ctx.raw.command(["EXISTS", ks.scheduler("a"), ks.scheduler("b")], ks.meta)).toBe(0);
      // the last scheduler and the job, fewer than the limit: every key goes
      expect(await wire(ctx.raw, backend, "DROP", [ks.meta], ["10"])).toEqual({ ok: 2 });
      expect(await ctx.raw.command(["SCAN", "0", "MATCH", `emq:{${q}}:*`, "COUNT", "1000"], ks.meta)).toEqual(["0", []]);
    });

    test("TICK fires only on the next run it names: stale, not later, paused and missing write nothing", async () => {
      const q = `sch-tick-${backend}`;
      const ks = keyspace(q);
      expect(await call(q, "SCHEDULER", ["s", "every 100", "1000", "5", "", "pay"])).toEqual({ ok: 1000 });
      const d0 = await digest(ctx.raw, ks.meta);
      for (const args of [["s", "999", "1100", JOB(1), "999"], ["s", "1000", "1000", JOB(1), "1000"], ["gone", "1000", "1100"]]) {
        expect(await call(q, "TICK", args)).toEqual({ ok: -1 });
      }
      expect(await digest(ctx.raw, ks.meta)).toBe(d0);
      await ctx.mq.pause(q);
      const d1 = await digest(ctx.raw, ks.meta);
      expect(await call(q, "TICK", ["s", "1000", "1100", JOB(1), "1000"])).toEqual({ ok: -1 });
      expect(await digest(ctx.raw, ks.meta)).toBe(d1);
      await ctx.mq.resume(q);
      // two runs at once (missed runs), then the racing second firer gets -1
      expect(await call(q, "TICK", ["s", "1000", "1300", JOB(1), "1100", JOB(2), "1200"])).toEqual({ ok: 2 });
      expect(await call(q, "TICK", ["s", "1000", "1300", JOB(3), "1200"])).toEqual({ ok: -1 });
      // a skip: no job, the next run moves
      expect(await call(q, "TICK", ["s", "1300", "1400"])).toEqual({ ok: 0 });
      const d = await dump(ctx.raw, q);
      expect(d[`emq:{Q}:scheduler:s`]).toEqual({
        type: "hash",
        value: { created_ms: "<now>", last_ms: "1200", max_missed: "5", next_ms: "1400", payload: "pay", runs: "2", spec: "every 100" },
      });
      expect(d[`emq:{Q}:job:${JOB(1)}`]).toEqual({
        type: "hash",
        value: { attempts: "0", created_ms: "<now>", payload: "pay", scheduler: "s", state: "pending", tick_ms: "1100" },
      });
      expect((d["emq:{Q}:pending"] as { value: string[] }).value).toEqual([JOB(2), JOB(1)]);
      expect((d["emq:{Q}:schedulers"] as { value: unknown }).value).toEqual([["s", "1400"]]);
      expect(await ctx.mq.getJob(q, JOB(2))).toMatchObject({ scheduler: "s", tickAt: 1200, payload: undefined });
    });

    test("refusals: the name rule, spec and bounds, a duplicate id — exact texts, nothing written", async () => {
      const q = `sch-refuse-${backend}`;
      await call(q, "SCHEDULER", ["s", "every 100", "1000", "1", "", "p"]);
      const name = (verb: string) => renderRefusal("name", `EMQ.${verb}`, { arg: "name", max: "1024" });
      await refused(q, () => call(q, "SCHEDULER", ["a{b", "every 1", "1", "1", "", "p"]), name("SCHEDULER"));
      await refused(q, () => call(q, "SCHEDULER", ["", "every 1", "1", "1", "", "p"]), name("SCHEDULER"));
      await refused(q, () => call(q, "SCHEDULER", ["n".repeat(1025), "every 1", "1", "1", "", "p"]), name("SCHEDULER"));
      await refused(q, () => call(q, "UNSCHEDULE", ["x}"]), name("UNSCHEDULE"));
      await refused(q, () => call(q, "TICK", ["a\0b", "1000", "1100"]), name("TICK"));
      await refused(q, () => call(q, "SCHEDULER", ["s", "x".repeat(1025), "1", "1", "", "p"]), renderRefusal("spec", "EMQ.SCHEDULER", { limit: "1024" }));
      await refused(q, () => call(q, "SCHEDULER", ["s", "every 1", "0", "1", "", "p"]), renderRefusal("positive", "EMQ.SCHEDULER", { arg: "next_ms" }));
      await refused(
        q,
        () => call(q, "SCHEDULER", ["s", "every 1", "1", "10001", "", "p"]),
        renderRefusal("too-large", "EMQ.SCHEDULER", { arg: "max_missed", max: "10000" }),
      );
      await refused(q, () => call(q, "TICK", ["s", "1000", "1100", JOB(7), "1000", JOB(7), "1000"]), renderRefusal("repeated", "EMQ.TICK", { id: JOB(7) }));
      await ctx.mq.enqueue(q, { n: 1 }, { id: JOB(8) as never });
      await refused(q, () => call(q, "TICK", ["s", "1000", "1100", JOB(8), "1000"]), renderRefusal("duplicate", "EMQ.TICK", { id: JOB(8) }));
      await ctx.raw.command(["SET", keyspace(q).scheduler("str"), "x"], keyspace(q).meta);
      await refused(q, () => call(q, "TICK", ["str", "1000", "1100"]), renderRefusal("wrongtype", "EMQ.TICK", {}));
      await refused(q, () => call(q, "SCHEDULER", ["str", "every 1", "1", "1", "", "p"]), renderRefusal("wrongtype", "EMQ.SCHEDULER", {}));
      await ctx.raw.command(["DEL", keyspace(q).scheduler("str")], keyspace(q).meta); // (a string dumps as binary)
      await ctx.raw.command(["HSET", keyspace(q).scheduler("s"), "runs", "x"], keyspace(q).meta);
      await refused(q, () => call(q, "TICK", ["s", "1000", "1100"]), renderRefusal("counter", "EMQ.TICK", {}));
      dumps.set(combo.name, await Promise.all([`sch-wire-${backend}`, `sch-tick-${backend}`, q].map((n) => dump(ctx.raw, n))));
    });

    test("SCHEDULER keeps its jobs' options (gated, changed in place, deleted when empty); TICK admits with them", async () => {
      const q = `sch-opts-${backend}`;
      const ks = keyspace(q);
      const sched = `emq:{Q}:scheduler:s`;
      const fieldsOf = async (key: string) => ((await dump(ctx.raw, q))[key] as { value: Record<string, string> } | undefined)?.value;
      /** A row TICK made for run `tick_ms`, with `extra` fields. */
      const ticked = (tick_ms: string, extra: Record<string, string> = {}) => ({
        attempts: "0",
        created_ms: "<now>",
        payload: "pay",
        scheduler: "s",
        state: "pending",
        tick_ms,
        ...extra,
      });
      expect(await call(q, "SCHEDULER", ["s", "every 100", "1000", "5", "lane=t1\0priority=2", "pay"])).toEqual({ ok: 1000 });
      expect(await fieldsOf(sched)).toMatchObject({ opts: "lane=t1\0priority=2", payload: "pay" });
      // a bad options text is refused as ENQUEUE's, writing nothing
      await refused(
        q,
        () => call(q, "SCHEDULER", ["s", "every 100", "1000", "5", "group=x", "p"]),
        renderRefusal("option-unknown", "EMQ.SCHEDULER", { option: "group" }),
      );
      await refused(
        q,
        () => call(q, "SCHEDULER", ["s", "every 100", "1000", "5", "lane=a{b", "p"]),
        renderRefusal("name", "EMQ.SCHEDULER", { arg: "lane", max: "1024" }),
      );
      await refused(
        q,
        () => call(q, "SCHEDULER", ["n", "every 100", "1000", "5", "dedup_ms=5", "p"]),
        renderRefusal("option-needs", "EMQ.SCHEDULER", { option: "dedup_ms", needs: "dedup" }),
      );
      // TICK: the row carries the options, the job is in its lane's ready list, the queue is laned
      expect(await call(q, "TICK", ["s", "1000", "1100", JOB(1), "1000"])).toEqual({ ok: 1 });
      expect(await fieldsOf(`emq:{Q}:job:${JOB(1)}`)).toEqual(ticked("1000", { lane: "t1", opts: "lane=t1\0priority=2", priority: "2" }));
      expect(await ctx.mq.getJob(q, JOB(1))).toMatchObject({ lane: "t1", priority: 2, scheduler: "s" });
      expect(await ctx.raw.command(["LRANGE", ks.ready("t1", 2), "0", "-1"], ks.meta)).toEqual([JOB(1)]);
      expect(await ctx.raw.command(["HEXISTS", ks.meta, "laned"], ks.meta)).toBe(true);
      // an upsert with the same spec changes them in place (the next run stays)
      expect(await call(q, "SCHEDULER", ["s", "every 100", "9000", "5", "timeout_ms=500", "pay"])).toEqual({ ok: 1100 });
      expect(await call(q, "TICK", ["s", "1100", "1200", JOB(2), "1100"])).toEqual({ ok: 1 });
      expect(await fieldsOf(`emq:{Q}:job:${JOB(2)}`)).toMatchObject({ opts: "timeout_ms=500" });
      const second = await ctx.mq.getJob(q, JOB(2));
      expect(second).toMatchObject({ timeoutMs: 500 });
      expect(second).not.toHaveProperty("lane");
      expect(second).not.toHaveProperty("priority");
      // empty: the field goes, and the jobs carry none
      expect(await call(q, "SCHEDULER", ["s", "every 100", "9000", "5", "", "pay"])).toEqual({ ok: 1200 });
      expect(await fieldsOf(sched)).not.toHaveProperty("opts");
      // a stored text that fails the gate (a hand-edited hash) is ignored: the jobs carry none
      await ctx.raw.command(["HSET", ks.scheduler("s"), "opts", "colour=red"], ks.meta);
      expect(await call(q, "TICK", ["s", "1200", "1300", JOB(3), "1200"])).toEqual({ ok: 1 });
      expect(await fieldsOf(`emq:{Q}:job:${JOB(3)}`)).toEqual(ticked("1200"));
      // dedup: a run whose key is held admits no job (the reply, runs and last_ms count the admitted)
      expect(await call(q, "SCHEDULER", ["d", "every 100", "1000", "5", "dedup=d-runs", "dp"])).toEqual({ ok: 1000 });
      expect(await call(q, "TICK", ["d", "1000", "1300", JOB(4), "1100", JOB(5), "1200"])).toEqual({ ok: 1 });
      expect(await call(q, "TICK", ["d", "1300", "1400", JOB(6), "1300"])).toEqual({ ok: 0 });
      expect(await fieldsOf(`emq:{Q}:scheduler:d`)).toMatchObject({ runs: "1", last_ms: "1100", next_ms: "1400" });
      expect(await ctx.raw.command(["EXISTS", ks.job(JOB(5)), ks.job(JOB(6))], ks.meta)).toBe(0);
      dumps.set(`${combo.name}/opts`, await dump(ctx.raw, q));
    });

    test("client: a scheduler's jobs go to its lane with its priority, served round-robin with other lanes", async () => {
      const q = `sch-lane-${backend}`;
      await ctx.mq.pause(q, { lane: "t1" });
      await ctx.mq.pause(q, { lane: "t2" });
      for (let i = 0; i < 6; i++) await ctx.mq.enqueue(q, { n: 100 + i }, { lane: "t2" });
      await ctx.mq.upsertScheduler(q, "tenant", { everyMs: 100 }, { payload: { n: 1 }, lane: "t1", priority: 2, missed: { max: 100 } });
      const [listed] = await ctx.mq.schedulers(q);
      expect(listed).toMatchObject({ name: "tenant", lane: "t1", priority: 2 });
      expect(listed).not.toHaveProperty("timeoutMs");
      // a worker fires (its lanes are paused: it claims nothing) until three runs are in t1
      const w = ctx.mq.work(q, async () => {}, { blockMs: 100 });
      await eventually(async () => (await ctx.mq.schedulers(q))[0]!.runs >= 3, 20_000);
      await w.stop();
      expect(await ctx.mq.removeScheduler(q, "tenant")).toBe(true);
      await ctx.mq.resume(q, { lane: "t1" });
      await ctx.mq.resume(q, { lane: "t2" });
      const claimed = [];
      for (let i = 0; i < 6; i++) claimed.push((await ctx.mq.claim(q, { leaseMs: 60_000 }))!);
      // one of each lane in turn
      for (let i = 1; i < claimed.length; i++) expect(claimed[i]!.lane).not.toBe(claimed[i - 1]!.lane);
      const fired = claimed.filter((j) => j.lane === "t1");
      expect(fired.length).toBe(3);
      for (const j of fired) expect([j.payload, j.priority]).toEqual([{ n: 1 }, 2]);
      // another upsert changes the options of later runs; an empty set removes them
      await ctx.mq.upsertScheduler(q, "tenant", { everyMs: 60_000 }, { payload: { n: 2 }, lane: "t3", timeoutMs: 1000 });
      expect((await ctx.mq.schedulers(q))[0]).toMatchObject({ lane: "t3", timeoutMs: 1000 });
      expect((await ctx.mq.schedulers(q))[0]).not.toHaveProperty("priority");
      await ctx.mq.upsertScheduler(q, "tenant", { everyMs: 60_000 }, { payload: { n: 2 } });
      expect((await ctx.mq.schedulers(q))[0]).not.toHaveProperty("lane");
      // a bad option is the enqueue's error, before any wire
      const d0 = await digest(ctx.raw, keyspace(q).meta);
      for (const bad of [{ lane: "a{b" }, { lane: "" }, { priority: -1 }, { priority: 1.5 }, { timeoutMs: 0 }]) {
        const e = await ctx.mq.upsertScheduler(q, "x", { everyMs: 10 }, { payload: { n: 0 }, ...bad } as never).then(() => null, (x: unknown) => x);
        expect(e).toBeInstanceOf(EchoMQError);
        expect((e as EchoMQError).rule).toBe("options");
        expect((e as Error).message).toMatch(/^upsertScheduler: /);
      }
      expect(await digest(ctx.raw, keyspace(q).meta)).toBe(d0);
    }, 30_000);

    test("client: upsert returns the next run, lists, removes; bad input is typed before any wire", async () => {
      const q = `sch-client-${backend}`;
      const before = Date.now();
      const next = await ctx.mq.upsertScheduler(q, "every-min", { everyMs: 60_000 }, { payload: { n: 1 } });
      expect(next).toBeInstanceOf(Date);
      expect(next.getTime()).toBeGreaterThanOrEqual(before + 60_000);
      expect((await ctx.mq.upsertScheduler(q, "every-min", { everyMs: 60_000 }, { payload: { n: 2 }, missed: "skip" })).getTime()).toBe(next.getTime());
      const cron = await ctx.mq.upsertScheduler(q, "hourly", { cron: "0 * * * *", tz: "Europe/Berlin" }, { payload: { n: 3 }, missed: { max: 5 } });
      expect(cron.getUTCMinutes()).toBe(0);
      const list = await ctx.mq.schedulers(q);
      expect(list.map((s) => [s.name, s.spec, s.missed, s.payload, s.runs, s.lastRun])).toEqual([
        ["every-min", { everyMs: 60_000 }, "skip", { n: 2 }, 0, null],
        ["hourly", { cron: "0 * * * *", tz: "Europe/Berlin" }, { max: 5 }, { n: 3 }, 0, null],
      ].sort((a, b) => (list.find((s) => s.name === a[0])!.nextRun < list.find((s) => s.name === b[0])!.nextRun ? -1 : 1)));
      expect(await ctx.mq.removeScheduler(q, "hourly")).toBe(true);
      expect(await ctx.mq.removeScheduler(q, "hourly")).toBe(false);
      const d0 = await digest(ctx.raw, keyspace(q).meta);
      const bad: Array<[() => Promise<unknown>, string, RegExp]> = [
        [() => ctx.mq.upsertScheduler(q, "x", { cron: "not a cron" }, { payload: { n: 0 } }), "cron", /cron "not a cron" is not a cron pattern/],
        [
          () => ctx.mq.upsertScheduler(q, "x", { cron: "* * * * *", tz: "Mars/Olympus" }, { payload: { n: 0 } }),
          "tz",
          /tz "Mars\/Olympus" is not a known time zone/,
        ],
        [() => ctx.mq.upsertScheduler(q, "x", { everyMs: 0 }, { payload: { n: 0 } }), "everyMs", /everyMs must be an integer/],
        [() => ctx.mq.upsertScheduler(q, "x", { everyMs: Number.NaN }, { payload: { n: 0 } }), "everyMs", /got NaN/],
        [() => ctx.mq.upsertScheduler(q, "a{b" as string, { everyMs: 10 }, { payload: { n: 0 } }), "name", /name rule/],
        [() => ctx.mq.upsertScheduler(q, "x", { everyMs: 10 }, { payload: { n: 0 }, missed: { max: 0 } }), "missed", /missed must be/],
        [() => ctx.mq.removeScheduler(q, "" as string), "name", /name rule/],
      ];
      for (const [run, option, text] of bad) {
        const e = await run().then(() => null, (x: unknown) => x);
        expect(e).toBeInstanceOf(SchedulerOptionError);
        expect([(e as SchedulerOptionError).option as string, (e as SchedulerOptionError).rule as string]).toEqual([option, "scheduler"]);
        expect((e as Error).message).toMatch(text);
      }
      expect(await digest(ctx.raw, keyspace(q).meta)).toBe(d0);
    });

    test("workers fire: 4 workers, every 100 ms, each run exactly once and none missed", async () => {
      const q = `sch-fire-${backend}`;
      const seen = new Map<number, number>();
      const clients = await Promise.all([0, 1].map(() => ctx.connect<{ n: number }>()));
      await ctx.mq.upsertScheduler(q, "fast", { everyMs: 100 }, { payload: { n: 1 }, missed: { max: 1000 } });
      const workers = clients.flatMap((c) =>
        [0, 1].map(() =>
          c.work(q, async (job) => {
            const info = await c.getJob(q, job.id);
            seen.set(info!.tickAt!, (seen.get(info!.tickAt!) ?? 0) + 1);
          }, { blockMs: 100, concurrency: 4 })
        )
      );
      await eventually(() => seen.size >= 40, 60_000);
      await Promise.all(workers.map((w) => w.stop()));
      await Promise.all(clients.map((c) => c.close()));
      const ticks = [...seen.keys()].sort((a, b) => a - b);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      // consecutive runs 100 ms apart from the first to the last: nothing missed, nothing twice
      for (let i = 1; i < ticks.length; i++) expect(ticks[i]! - ticks[i - 1]!).toBe(100);
      const [s] = await ctx.mq.schedulers(q);
      expect(s!.runs).toBe(ticks.length + (await ctx.mq.counts(q)).pending);
    }, 90_000);

    test("a restart after 10 missed runs gives one run, the latest; a paused queue fires nothing", async () => {
      const q = `sch-missed-${backend}`;
      await ctx.mq.upsertScheduler(q, "m", { everyMs: 100 }, { payload: { n: 1 } });
      await sleep(1_200); // no worker: 10 or more runs missed
      const [before] = await ctx.mq.schedulers(q);
      const ticks: number[] = [];
      const w = ctx.mq.work(q, async (job) => {
        ticks.push((await ctx.mq.getJob(q, job.id))!.tickAt!);
      }, { blockMs: 100 });
      await eventually(() => ticks.length >= 1, 20_000);
      await w.stop();
      // one run for the latest missed one: none of the 10 earlier runs has a job
      expect(Math.min(...ticks)).toBeGreaterThanOrEqual(before!.nextRun.getTime() + 1_000);
      expect(new Set(ticks).size).toBe(ticks.length);
      const [after] = await ctx.mq.schedulers(q);
      expect(after!.runs).toBe(ticks.length + (await ctx.mq.counts(q)).pending);
      expect(after!.lastRun!.getTime()).toBe(Math.max(...ticks, after!.lastRun!.getTime()));
      // paused: firers get -1, nothing is admitted
      await ctx.mq.pause(q);
      const enqueued = (await ctx.mq.stats(q)).enqueued;
      const w2 = ctx.mq.work(q, async () => {}, { blockMs: 100 });
      await sleep(500);
      await w2.stop();
      expect((await ctx.mq.stats(q)).enqueued).toBe(enqueued);
      await ctx.mq.resume(q);
      // drop takes the schedulers with the queue: no key of it is left
      await ctx.mq.drop(q);
      expect(await ctx.raw.command(["SCAN", "0", "MATCH", `emq:{${q}}:*`, "COUNT", "1000"], keyspace(q).meta)).toEqual(["0", []]);
      expect(await ctx.mq.schedulers(q)).toEqual([]);
    }, 60_000);
  });
}

describe("both backends leave identical keyspaces", () => {
  test.skipIf(BACKENDS.length < 2)("SCHEDULER, TICK, UNSCHEDULE, their refusals and a scheduler's job options", () => {
    for (const topology of TOPOLOGIES) {
      expect(dumps.get(comboName("module", topology))).toEqual(dumps.get(comboName("scripts", topology)));
      expect(dumps.get(`${comboName("module", topology)}/opts`)).toEqual(dumps.get(`${comboName("scripts", topology)}/opts`));
    }
  });
});
