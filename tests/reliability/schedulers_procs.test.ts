/**
 * Schedulers across processes, for each backend × topology: 4 processes upsert the same scheduler
 * at once (one scheduler, whose next run no upsert resets) and fire it every 100 ms with 2 workers each, for
 * about 6 s; one process is SIGKILLed while it fires. Every run between the first and the last has
 * exactly one job (counted per run, from what the handlers printed and what is still queued), the
 * runs are 100 ms apart with none missing, and the scheduler's `runs` is their number.
 */
import { describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { BACKENDS, comboName, TOPOLOGIES, useSites } from "../client/_harness.ts";
import { child } from "./_child.ts";

const { sites } = useSites();
const PROCS = 4;
/** How long the processes fire (EMQ_SCHED_RUN_MS: the 20 s run, outside the test command). */
const RUN_MS = Number(process.env["EMQ_SCHED_RUN_MS"] ?? 6_000);

for (const topology of TOPOLOGIES) {
  for (const backend of BACKENDS) {
    describe(comboName(backend, topology), () => {
      test(`${PROCS} processes upsert and fire one scheduler, one SIGKILLed mid-fire: one job per run, none missed`, async () => {
        const site = sites.get(topology)!;
        const q = `sch-procs-${backend}`;
        const startAt = String(Date.now() + 4_000); // every process upserts then: a race
        const kids = Array.from(
          { length: PROCS },
          () => child([JSON.stringify(site.addresses), site.cluster ? "1" : "0", q, backend, "2", String(RUN_MS), startAt], "_scheduler_child.ts"),
        );
        const victim = kids[PROCS - 1]!;
        // kill one once it has fired and handled a few runs
        const until = Date.now() + 60_000;
        while (victim.lines.filter((l) => l.startsWith("tick ")).length < 3 && Date.now() < until) await Bun.sleep(20);
        victim.proc.kill("SIGKILL");
        await Promise.all(kids.map((k) => k.exited));
        for (const k of kids.slice(0, -1)) expect(k.lines.at(-1)).toBe("done");
        // the upsert race: one scheduler, made once — every process got a run on the first one's
        // grid (an upsert that reset the next run would have moved it off the grid)
        const nexts = kids.map((k) => Number(k.lines.find((l) => l.startsWith("next "))!.slice(5)));
        expect(nexts.map((n) => (n - Math.min(...nexts)) % 100)).toEqual([0, 0, 0, 0]);

        const mq = await EchoMQ.connect({ addresses: site.addresses, cluster: site.cluster, backend });
        try {
          const [s, ...others] = await mq.schedulers(q);
          expect(others).toEqual([]);
          const jobsOf = new Map<number, Set<string>>();
          const lags: number[] = []; // how long after its run a job was admitted (printed, not asserted)
          const add = (tick: number, id: string) => jobsOf.set(tick, (jobsOf.get(tick) ?? new Set()).add(id));
          for (const k of kids) {
            for (const l of k.lines) {
              const m = /^tick (\d+) (\S+) (\d+)$/.exec(l);
              if (m) add(Number(m[1]), m[2]!);
              if (m) lags.push(Number(m[3]) - Number(m[1]));
            }
          }
          // jobs the killed process held, and any not yet handled
          for (const state of ["active", "pending"] as const) {
            for (const j of await mq.jobs(q, state, { limit: 1000 })) add(j.tickAt!, j.id);
          }
          const ticks = [...jobsOf.keys()].sort((a, b) => a - b);
          expect(ticks.length).toBeGreaterThanOrEqual(20);
          expect([...jobsOf.values()].filter((ids) => ids.size !== 1)).toEqual([]);
          for (let i = 1; i < ticks.length; i++) expect(ticks[i]! - ticks[i - 1]!).toBe(100);
          expect(s!.runs).toBe(ticks.length);
          expect(s!.lastRun!.getTime()).toBe(ticks.at(-1)!);
          lags.sort((a, b) => a - b);
          console.log(
            `[schedulers ${comboName(backend, topology)}] ${ticks.length} runs, one job each; admitted after its run: ` +
              `median ${lags[lags.length >> 1]} ms, p95 ${lags[Math.floor(lags.length * 0.95)]} ms, max ${lags.at(-1)} ms`,
          );
        } finally {
          await mq.close();
        }
      }, 120_000);
    });
  }
}
