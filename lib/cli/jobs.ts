/**
 * `emq jobs <queue> <state> --url … [--offset N] [--limit N]`: a page of the queue's jobs in one
 * state (`mq.jobs`: pending in claim order, scheduled by due time, active by lease deadline, dead
 * and completed most recent first), one line each — id, the time that state is about (admitted,
 * lease end, due, buried, finished), attempts, and the reason (dead), the result (completed) or
 * the payload (the others) as JSON, cut to {@link SHOWN_CHARS} characters. Refuses a queue that does
 * not exist (exit 1).
 *
 * @module
 */
import { JOB_STATES, type JobInfo, type JobState } from "../client/mod.ts";
import { NoSuchQueueError, queueExists } from "./ops.ts";
import { openUrlTarget } from "./target.ts";
import { pageFlag, parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "./usage.ts";

/** How much of a result, reason or payload a line shows. */
export const SHOWN_CHARS = 120;

/** `text` cut to `max` characters, with `…` when cut. */
export function cut(text: string, max: number = SHOWN_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The time a job's state is about, and what it is called. */
function when(j: JobInfo<unknown>): [string, number | undefined] {
  switch (j.state) {
    case "pending":
      return ["admitted", j.createdAt];
    case "active":
      return ["lease until", j.leaseUntil];
    case "scheduled":
      return ["due", j.dueAt];
    case "dead":
      return ["buried", j.buriedAt];
    case "completed":
      return ["finished", j.finishedAt];
    case "waiting-children":
      return ["admitted", j.createdAt];
  }
}

/** One line of `emq jobs`. */
export function jobLine(j: JobInfo<unknown>): string {
  const [what, at] = when(j);
  const time = at === undefined ? "—" : new Date(at).toISOString();
  const tail = j.state === "dead"
    ? `reason ${cut(JSON.stringify(j.reason ?? ""))}`
    : j.state === "completed"
    ? ("result" in j ? `result ${cut(JSON.stringify(j.result) ?? "")}` : "no result")
    : j.payloadError === undefined
    ? `payload ${cut(JSON.stringify(j.payload) ?? "")}`
    : `payload not decoded (${j.payloadError})`;
  return `  ${j.id}  ${what} ${time}  attempts ${j.attempts}  ${tail}`;
}

/** Runs `emq jobs`; resolves with the exit code. */
export async function jobsCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({
    args: argv,
    allowPositionals: true,
    options: { ...SERVER_FLAGS, offset: { type: "string" }, limit: { type: "string" } },
  });
  const server = serverFlags(parsed.values);
  const [queue, state] = parsed.positionals;
  if (parsed.positionals.length !== 2 || server.url === undefined) {
    throw new UsageError(`emq jobs takes a queue name, a state and --url, e.g. emq jobs orders completed --url valkey://127.0.0.1:6379`);
  }
  if (!JOB_STATES.includes(state as JobState)) {
    throw new UsageError(`the state must be one of ${JOB_STATES.join(", ")}, not ${JSON.stringify(state)}`);
  }
  const offset = pageFlag("--offset", parsed.values.offset as string | undefined, 0, Number.MAX_SAFE_INTEGER, 0);
  const limit = pageFlag("--limit", parsed.values.limit as string | undefined, 1, 1000, 20);
  const target = await openUrlTarget<unknown>({ ...server, url: server.url, backend: "auto" });
  try {
    const { mq } = target;
    if (!(await queueExists(mq, queue!))) throw new NoSuchQueueError(queue!, target.description);
    const counts = await mq.counts(queue!);
    const total = ({
      pending: counts.pending,
      active: counts.active,
      scheduled: counts.schedule,
      dead: counts.dead,
      completed: counts.completed,
      "waiting-children": counts.waitingChildren,
    } satisfies Record<JobState, number>)[state as JobState];
    const page = await mq.jobs(queue!, state as JobState, { offset, limit });
    const order = state === "dead" || state === "completed" ? ", most recent first" : "";
    const shown = page.length === 0 ? "none shown" : `${offset + 1}–${offset + page.length} shown${order}`;
    console.log(`${JSON.stringify(queue)}: ${total} ${state} job(s), ${shown}`);
    for (const j of page) console.log(jobLine(j));
    return 0;
  } finally {
    await target.close();
  }
}
