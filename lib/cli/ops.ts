/**
 * The operator's commands on a running server: `emq requeue <queue> [--ids a,b] [--limit N]`,
 * `emq run <queue> --ids a,b`, `emq pause <queue> [--lane L]`, `emq resume <queue> [--lane L]`, `emq retain <queue>
 * [--dead-max N] [--dead-age-ms N] [--completed-max N] [--completed-age-ms N] [--events-max N]` and `emq drop <queue> --yes`, each with `--url
 * valkey://host:port [--cluster]`. One line of outcome each. Requeue, run, pause, resume and retain
 * refuse a queue that does not exist (exit 1) and create nothing: their verbs would write the
 * queue's `meta`, and a typo would become a queue in `queues()` and the dashboard.
 *
 * @module
 */
import type { EchoMQ, Retention } from "../client/mod.ts";
import { openUrlTarget } from "./target.ts";
import { parseQueueCommand, UsageError } from "./usage.ts";

/** The operations, by command name. */
export const OPERATIONS = ["requeue", "run", "pause", "resume", "retain", "drop"] as const;

/** An operation. */
export type Operation = (typeof OPERATIONS)[number];

/** `emq retain`'s flags, each with the setting it gives (`mq.retain`). */
const RETAIN_FLAGS = [
  ["dead-max", "deadMax"],
  ["dead-age-ms", "deadAgeMs"],
  ["completed-max", "completedMax"],
  ["completed-age-ms", "completedAgeMs"],
  ["events-max", "eventsMax"],
  ["history-minutes", "historyMinutes"],
] as const satisfies ReadonlyArray<readonly [string, keyof Retention]>;

/** A queue the server does not have: a one-line refusal, exit 1. */
export class NoSuchQueueError extends Error {
  /** Names the queue and the server; `tail` says what was not done. */
  constructor(queue: string, where: string, tail = "") {
    super(`no queue ${JSON.stringify(queue)} on ${where} (no meta key and no jobs)${tail}`);
    this.name = "NoSuchQueueError";
  }
}

/** Whether `queue` exists: its `meta` was written by a first use, or it holds jobs. */
export async function queueExists(mq: EchoMQ<unknown>, queue: string): Promise<boolean> {
  const s = await mq.stats(queue);
  return s.createdAt > 0 || s.pending + s.active + s.schedule + s.dead + s.completed > 0;
}

function positive(flag: string, text: string | undefined, min: number): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < min) throw new UsageError(`${flag} must be ${min === 0 ? "a whole number" : "a positive integer"}, not ${text}`);
  return n;
}

/** Runs `emq <operation> <queue> --url …`; resolves with the exit code. */
export async function operate(operation: Operation, argv: string[]): Promise<number> {
  const { queue, server, values: v } = parseQueueCommand(operation, argv, {
    ids: { type: "string" },
    limit: { type: "string" },
    "dead-max": { type: "string" },
    "dead-age-ms": { type: "string" },
    "completed-max": { type: "string" },
    "completed-age-ms": { type: "string" },
    "events-max": { type: "string" },
    "history-minutes": { type: "string" },
    yes: { type: "boolean", default: false },
    lane: { type: "string" },
  });
  if (operation !== "pause" && operation !== "resume" && v.lane !== undefined) {
    throw new UsageError(`--lane goes with emq pause and emq resume only (emq limit takes it too)`);
  }
  const lane = v.lane === undefined ? {} : { lane: v.lane };
  const which = v.lane === undefined ? JSON.stringify(queue) : `lane ${JSON.stringify(v.lane)} of ${JSON.stringify(queue)}`;
  if (operation !== "requeue" && operation !== "run" && (v.ids !== undefined || v.limit !== undefined)) {
    throw new UsageError(`--ids and --limit go with emq requeue only (--ids with emq run too)`);
  }
  if (operation === "run" && v.limit !== undefined) throw new UsageError(`--limit goes with emq requeue only`);
  const ids = v.ids === undefined ? undefined : v.ids.split(",").map((x) => x.trim()).filter((x) => x !== "");
  if (operation === "run" && (ids === undefined || ids.length === 0)) {
    throw new UsageError(`emq run needs --ids id,id: the scheduled jobs to run now`);
  }
  if (operation !== "retain" && RETAIN_FLAGS.some(([flag]) => v[flag] !== undefined)) {
    throw new UsageError(`${RETAIN_FLAGS.map(([flag]) => `--${flag}`).join(", ")} go with emq retain only`);
  }
  if (operation === "drop" && !v.yes) {
    throw new UsageError(`emq drop deletes every job and key of ${JSON.stringify(queue)}: add --yes to do it`);
  }
  const limit = positive("--limit", v.limit, 1);
  const settings: { -readonly [K in keyof Retention]?: number } = {};
  for (const [flag, name] of RETAIN_FLAGS) {
    const n = positive(`--${flag}`, v[flag], 0);
    if (n !== undefined) settings[name] = n;
  }
  const target = await openUrlTarget<unknown>({ ...server, backend: "auto" });
  try {
    const { mq } = target;
    if (operation !== "drop" && !(await queueExists(mq, queue))) throw new NoSuchQueueError(queue, target.description, ": nothing done, and no queue created");
    switch (operation) {
      case "requeue": {
        const moved = await mq.requeueDead(queue, { ...(ids ? { ids } : {}), ...(limit ? { limit } : {}) });
        console.log(`requeued ${moved} dead job(s) of ${JSON.stringify(queue)} to pending`);
        return 0;
      }
      case "run": {
        const moved = await mq.runNow(queue, ids!);
        console.log(`moved ${moved} scheduled job(s) of ${JSON.stringify(queue)} to pending, due now`);
        return 0;
      }
      case "pause":
        console.log(await mq.pause(queue, lane) ? `paused ${which}` : `${which} was paused already`);
        return 0;
      case "resume":
        console.log(await mq.resume(queue, lane) ? `resumed ${which}` : `${which} was not paused`);
        return 0;
      case "retain": {
        await mq.retain(queue, settings);
        const r = await mq.retention(queue);
        const completed = r.completedMax === 0
          ? "no completed job"
          : `at most ${r.completedMax} completed job(s) with their results, ${r.completedAgeMs === 0 ? "for ever" : `for ${r.completedAgeMs} ms`}`;
        const events = r.eventsMax === 0 ? "no events" : `at most ${r.eventsMax} events`;
        const history = r.historyMinutes === 0 ? "no history" : `${r.historyMinutes} minute(s) of history`;
        console.log(
          `${JSON.stringify(queue)} keeps ${r.deadMax === 0 ? "any number of" : `at most ${r.deadMax}`} dead job(s), ` +
            `${r.deadAgeMs === 0 ? "for ever" : `for ${r.deadAgeMs} ms`}; ${completed}; ${events}; ${history}`,
        );
        return 0;
      }
      case "drop":
        console.log(`dropped ${JSON.stringify(queue)}: ${await mq.drop(queue)} job(s) and its keys deleted`);
        return 0;
    }
  } finally {
    await target.close();
  }
}
