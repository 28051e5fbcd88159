/**
 * A concurrency limit seen across processes, for tests/client/limits.test.ts (the queue's limit)
 * and tests/client/lanes.test.ts (a lane's): the half of the run in this process, its other half
 * the child `_limit_child.ts`, whose handlers count themselves in the same way.
 */
import { keyspace } from "../../mod.ts";
import { child, line } from "../reliability/_child.ts";
import { type Combo, type Sites, sleep, type SuiteClient } from "./_harness.ts";

/** What {@link runAcrossProcesses} saw. */
export interface AcrossProcesses {
  /** The most jobs running at once that a handler here saw, by lane (`""`: jobs of no lane). */
  readonly here: Map<string, number>;
  /** The most the child's handlers saw, over every lane. */
  readonly there: number;
  /** The most the child's handlers saw, by lane (`""`: jobs of no lane). */
  readonly thereByLane: Map<string, number>;
  /** How many jobs the child handled. */
  readonly thereDone: number;
  /** How many jobs were done, as the server counted them. */
  readonly done: number;
}

/**
 * Runs the `jobs` jobs of queue `q` with 8 workers (concurrency 4 each, a client each) in 2
 * processes: 4 here on clients of `ctx`, 4 in the child. Each handler counts itself in on the
 * server (`INCR emq-test:{q}:running`, or `…:running:<lane>` for a job of a lane: the reply is how
 * many run at once, across both processes), holds 20 ms, counts itself out and the job done.
 * Resolves once the child has seen every job done and the workers here have stopped.
 */
export async function runAcrossProcesses<P>(
  sites: Sites,
  combo: Combo,
  ctx: SuiteClient<P>,
  q: string,
  jobs: number,
): Promise<AcrossProcesses> {
  const running = `emq-test:{${q}}:running`;
  const done = `emq-test:{${q}}:done`;
  const route = keyspace(q).meta;
  const site = sites.sites.get(combo.topology)!;
  const other = child(
    [JSON.stringify(site.addresses), site.cluster ? "1" : "0", combo.backend, q, "4", String(jobs)],
    "../client/_limit_child.ts",
  );
  const here = new Map<string, number>();
  const clients = await Promise.all(Array.from({ length: 4 }, () => ctx.connect<P>()));
  try {
    await line(other.lines, "ready");
    const workers = clients.map((mq) =>
      mq.work(q, async (job) => {
        const counter = job.lane === undefined ? running : `${running}:${job.lane}`;
        const now = Number(await ctx.raw.command(["INCR", counter], route));
        here.set(job.lane ?? "", Math.max(here.get(job.lane ?? "") ?? 0, now));
        await sleep(20);
        await ctx.raw.command(["DECR", counter], route);
        await ctx.raw.command(["INCR", done], route);
      }, { concurrency: 4 })
    );
    const theirs = await line(other.lines, "max ", 60_000);
    await Promise.all(workers.map((w) => w.stop()));
    const [, there, , thereDone, , lanes] = theirs.split(" ");
    return {
      here,
      there: Number(there),
      thereByLane: new Map(Object.entries(JSON.parse(lanes!) as Record<string, number>)),
      thereDone: Number(thereDone),
      done: Number(await ctx.raw.command(["GET", done], route)),
    };
  } finally {
    other.proc.kill();
    await other.exited;
    await Promise.all(clients.map((c) => c.close()));
  }
}
