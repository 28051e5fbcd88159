/**
 * BullMQ's job schedulers on EchoMQ's own (issue 41), for each backend × topology: an `every`
 * scheduler's runs are jobs a BullMQ `Worker` runs (the template's name, data and options on each,
 * `repeatJobKey` the scheduler's id, each run a job id of its own), the scheduler is EchoMQ's
 * (`mq.schedulers` lists it), an upsert replaces it, a removal stops it, the getters answer, a
 * pattern keeps its zone, and the options EchoMQ's spec cannot express are refused writing nothing.
 */
import { describe, expect, test } from "bun:test";
import type { Job as BullJob } from "bullmq";
import { RefusedOperationError } from "../../bullmq.ts";
import { queueDigest, settled, useBull } from "./_bull.ts";
import { COMBOS, eventually, useSites } from "../client/_harness.ts";

const sites = useSites();
let n = 0;
const fresh = (what: string): string => `bqs-${what}-${++n}`;

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const bull = useBull(sites, combo);
    const { queue, worker } = bull;

    test("an every scheduler's runs are run by a BullMQ Worker, each with the template and its own id; EchoMQ lists it", async () => {
      const name = fresh("every");
      const q = queue(name);
      const first = await q.upsertJobScheduler("tick", { every: 100 }, {
        name: "beat",
        data: { n: 7 },
        opts: { attempts: 2, priority: 3 },
      });
      expect(first?.id).toMatch(/^JOB[1-9A-Za-z][0-9A-Za-z]{10}$/); // the first run is fired on upsert: a real job
      const ran: BullJob[] = [];
      const errors: Error[] = [];
      worker(name, async (job) => {
        ran.push(job);
        return job.data.n;
      }).on("error", (e) => errors.push(e));
      await eventually(() => ran.length >= 3);
      expect(errors).toEqual([]); // BullMQ's worker takes updateJobSchedulerNextMillis' null: no next run of its own
      expect(ran[0]!.id).toBe(first!.id!);
      expect(new Set(ran.map((j) => j.id)).size).toBe(ran.length);
      for (const job of ran.slice(0, 3)) {
        expect([
          job.name,
          job.data,
          job.repeatJobKey,
          job.opts.attempts,
          job.opts.priority,
        ]).toEqual(["beat", { n: 7 }, "tick", 2, 3]);
      }
      await eventually(async () => (await q.getJobCounts("completed")).completed >= 3);
      const done = (await q.getJob(ran[1]!.id!))!;
      expect([done.returnvalue, done.repeatJobKey, done.name]).toEqual([
        7,
        "tick",
        "beat",
      ]);
      const listed = await bull.mq.schedulers(name);
      expect(listed.map((s) => [s.name, s.spec, s.priority])).toEqual([[
        "tick",
        { everyMs: 100 },
        3,
      ]]);
      expect(listed[0]!.runs).toBeGreaterThanOrEqual(3);
    });

    test("the getters answer; an upsert replaces the template and the spec; a removal stops the runs", async () => {
      const name = fresh("upsert");
      const q = queue(name);
      await q.upsertJobScheduler("s", { every: 60_000, offset: 5_000 }, {
        name: "old",
        data: { v: 1 },
      });
      const s = (await q.getJobScheduler("s"))!;
      expect([s.key, s.name, s.every, s.offset, s.template?.data]).toEqual([
        "s",
        "old",
        60_000,
        5_000,
        { v: 1 },
      ]);
      expect(s.next! % 60_000).toBe(5_000); // the next multiple of every, plus the offset
      expect(await q.getJobSchedulersCount()).toBe(1);
      expect(await q.getJobScheduler("none")).toBeUndefined();
      expect((await q.getJobCounts("waiting")).waiting).toBe(0); // a first run later is not a job yet
      const seen: BullJob[] = [];
      worker(name, async (job) => {
        seen.push(job);
        return null;
      });
      await q.upsertJobScheduler("s", { every: 100 }, {
        name: "new",
        data: { v: 2 },
      });
      await q.upsertJobScheduler("other", { every: 100 }, {
        name: "other",
        data: {},
      });
      expect((await q.getJobSchedulers()).map((x) => x.key).sort()).toEqual([
        "other",
        "s",
      ]);
      expect((await q.getJobScheduler("s"))?.every).toBe(100);
      await eventually(() => seen.filter((j) => j.name === "new").length >= 2);
      expect(seen.some((j) => j.name === "old")).toBe(false);
      expect(seen.find((j) => j.name === "new")!.data).toEqual({ v: 2 });
      expect(await q.removeJobScheduler("s")).toBe(true);
      expect(await q.removeJobScheduler("s")).toBe(false);
      expect(await q.getJobSchedulersCount()).toBe(1);
      expect((await bull.mq.schedulers(name)).map((x) => x.name)).toEqual([
        "other",
      ]);
      // no run of it is admitted once it is removed, while the other scheduler's runs go on
      const runsOf = async (jobName: string): Promise<number> =>
        (await q.getJobs(["completed", "waiting", "active", "failed"])).filter((
          j,
        ) => j.name === jobName).length;
      const admitted = await runsOf("new");
      const others = seen.filter((j) => j.name === "other").length;
      await eventually(() => seen.filter((j) => j.name === "other").length >= others + 3);
      expect(await runsOf("new")).toBe(admitted);
      await q.removeJobScheduler("other");
    });

    test("a pattern with a time zone is EchoMQ's cron spec; its first run is BullMQ's, later", async () => {
      const name = fresh("cron");
      const q = queue(name);
      const job = await q.upsertJobScheduler("nightly", {
        pattern: "0 3 * * *",
        tz: "Europe/Berlin",
      }, { data: { x: 1 } });
      const s = (await q.getJobScheduler("nightly"))!;
      expect([s.pattern, s.tz, s.name]).toEqual([
        "0 3 * * *",
        "Europe/Berlin",
        "nightly",
      ]);
      expect(job!.id).toBe(`repeat:nightly:${s.next}`); // BullMQ's name of the run: no job until it fires
      expect(s.next).toBeGreaterThan(Date.now());
      expect((await bull.mq.schedulers(name)).map((x) => x.spec)).toEqual([{
        cron: "0 3 * * *",
        tz: "Europe/Berlin",
      }]);
      expect(await q.removeJobScheduler("nightly")).toBe(true);
    });

    test("options an EchoMQ scheduler cannot express are refused by name, writing nothing", async () => {
      const name = fresh("refused");
      const q = queue(name);
      await q.add("x", {});
      await settled(q);
      const raw = sites.raws.get(combo.topology)!;
      const before = await queueDigest(raw, name);
      const refusal = async (run: Promise<unknown>): Promise<string> => {
        const e = await run.catch((x) => x);
        expect(e).toBeInstanceOf(RefusedOperationError);
        return (e as RefusedOperationError).operation;
      };
      expect(await refusal(q.upsertJobScheduler("a", { every: 100, limit: 3 })))
        .toBe("addJobScheduler (limit)");
      expect(
        await refusal(
          q.upsertJobScheduler("b", {
            every: 100,
            endDate: Date.now() + 60_000,
          }),
        ),
      ).toBe("addJobScheduler (endDate)");
      expect(
        await refusal(
          q.upsertJobScheduler("c", { every: 100 }, { opts: { lifo: true } }),
        ),
      ).toBe("addJobScheduler (opts.lifo)");
      expect(await refusal(q.upsertJobScheduler("d{x}", { every: 100 }))).toBe(
        "addJobScheduler (id)",
      );
      expect(await queueDigest(raw, name)).toBe(before);
    });
  });
}
