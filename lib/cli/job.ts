/**
 * `emq job <queue> <id> --url …`: one job as its row has it (`mq.getJob`), one fact a line — its
 * name, state, attempts, times (ISO, UTC), lane, priority, dedup key, scheduler, the last reason,
 * the result (completed), the progress and the payload as JSON; then its failed attempts (the
 * newest 10 the row keeps), each with its error's name, message and stack. `emq find <queue> <text>
 * --url … [--cursor C] [--scan N]`: `mq.findJobs` — the jobs whose id, dedup key or name is the
 * text or whose payload holds it, one line each, with how many rows were scanned and the cursor
 * to go on from. A job that is not there (never
 * admitted, acked without being kept, or deleted) is said so (exit 1). `emq cancel <queue> <id>
 * --url … [--reason R]`: `mq.cancel` — what it did, one line; a job that finished meanwhile is
 * said so (exit 0), one that is not there too (exit 1).
 *
 * @module
 */
import type { CancelOutcome, ChildState, JobInfo } from "../client/mod.ts";
import { openUrlTarget } from "./target.ts";
import { cut } from "./jobs.ts";
import { pageFlag, parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "./usage.ts";
import { noJob, onOneJob } from "./job_command.ts";

/** A time as ISO text, or undefined. */
const iso = (ms: number | undefined): string | undefined => ms === undefined ? undefined : new Date(ms).toISOString();

/** A parent's children as one fact: how many in each state (`emq flow` prints the tree). */
function childrenText(kids: readonly ChildState[]): string {
  const by = new Map<string, number>();
  for (const k of kids) by.set(k.state, (by.get(k.state) ?? 0) + 1);
  return `${kids.length}: ${[...by].map(([s, n]) => `${n} ${s}`).join(", ")}`;
}

/** The lines `emq job` prints for `j`: `  <fact>  <value>`, facts the job does not have left out. */
export function jobLines(j: JobInfo<unknown>): string[] {
  const facts: Array<[string, string | undefined]> = [
    ["name", j.name === undefined ? undefined : JSON.stringify(j.name)],
    ["state", j.state],
    ["attempts", String(j.attempts)],
    ["created", iso(j.createdAt)],
    ["due", iso(j.dueAt)],
    ["lease until", iso(j.leaseUntil)],
    ["buried", iso(j.buriedAt)],
    ["finished", iso(j.finishedAt)],
    ["lane", j.lane === undefined ? undefined : JSON.stringify(j.lane)],
    ["priority", j.priority === undefined ? undefined : String(j.priority)],
    ["dedup key", j.dedupKey === undefined ? undefined : JSON.stringify(j.dedupKey)],
    ["scheduler", j.scheduler === undefined ? undefined : JSON.stringify(j.scheduler)],
    ["reason", j.reason === undefined ? undefined : JSON.stringify(j.reason)],
    ["parent", j.parent === undefined ? undefined : `${JSON.stringify(j.parent.queue)} ${j.parent.id}`],
    ["children", j.children === undefined ? undefined : childrenText(j.children)],
    ["result", j.state === "completed" && "result" in j ? JSON.stringify(j.result) : undefined],
    ["progress", j.progress === undefined ? undefined : JSON.stringify(j.progress)],
    ["payload", j.payloadError === undefined ? JSON.stringify(j.payload) : `not decoded (${j.payloadError})`],
  ];
  const lines = facts.filter((f): f is [string, string] => f[1] !== undefined).map(([k, v]) => `  ${k.padEnd(12)}${v}`);
  const failures = j.failures ?? [];
  if (failures.length > 0) lines.push(`  failed attempts (the newest ${failures.length}, oldest first):`);
  for (const f of failures) {
    const attempt = f.attempt === undefined ? "?" : String(f.attempt);
    lines.push(
      `    attempt ${attempt}  ${iso(f.at > 0 ? f.at : undefined) ?? "—"}  ${f.name === "" ? "" : `${f.name}: `}${f.message}${
        f.truncated ? "  (cut to 8 KiB)" : ""
      }`,
    );
    for (const s of (f.stack ?? "").split("\n").slice(1)) lines.push(`      ${s.trim()}`);
  }
  return lines;
}

/** Runs `emq job`; resolves with the exit code. */
export function jobCommand(argv: string[]): Promise<number> {
  return onOneJob("job", "orders JOB0Nb1VTbfnu4", argv, async (target, queue, id) => {
    const j = await target.mq.getJob(queue, id);
    if (j === null) return noJob(target, queue, id);
    console.log(`${JSON.stringify(queue)} ${j.id}`);
    for (const line of jobLines(j)) console.log(line);
    return 0;
  });
}

/** Runs `emq find`; resolves with the exit code (0 even when nothing matched). */
export async function findCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({ args: argv, allowPositionals: true, options: { ...SERVER_FLAGS, cursor: { type: "string" }, scan: { type: "string" } } });
  const server = serverFlags(parsed.values);
  const [queue, text] = parsed.positionals;
  if (parsed.positionals.length !== 2 || server.url === undefined) {
    throw new UsageError(`emq find takes a queue name, what to find and --url, e.g. emq find orders order-28 --url valkey://127.0.0.1:6379`);
  }
  const scan = pageFlag("--scan", parsed.values.scan as string | undefined, 1, 10_000, 1000);
  const target = await openUrlTarget<unknown>({ ...server, url: server.url, backend: "auto" });
  try {
    const cursor = parsed.values.cursor as string | undefined;
    const found = await target.mq.findJobs(queue!, text!, { scan, ...(cursor === undefined ? {} : { cursor }) });
    const more = found.cursor === null ? "the end of the queue" : `go on with --cursor ${found.cursor}`;
    console.log(`${JSON.stringify(queue)}: ${found.jobs.length} job(s) matching ${JSON.stringify(text)}, ${found.scanned} scanned; ${more}`);
    for (const j of found.jobs) {
      console.log(`  ${j.id}  ${j.state}${j.name === undefined ? "" : `  name ${JSON.stringify(j.name)}`}  payload ${cut(JSON.stringify(j.payload) ?? "")}`);
    }
    return 0;
  } finally {
    await target.close();
  }
}

/** What `emq cancel` prints for each outcome of `mq.cancel`. */
const CANCELLED: Readonly<Record<CancelOutcome, string>> = {
  cancelled: "cancelled: it was waiting, and is buried now",
  aborting: "cancelled: it was running, and is buried now; its handler's signal aborts at its worker's next heartbeat",
  finished: "not cancelled: it had finished already (completed or dead)",
  missing: "not cancelled: no such job (never admitted, or deleted)",
};

/** Runs `emq cancel`; resolves with the exit code (1 when there was no such job). */
export function cancelCommand(argv: string[]): Promise<number> {
  return onOneJob("cancel", "orders JOB0Nb1VTbfnu4", argv, async (target, queue, id, reason) => {
    const outcome = await target.mq.cancel(queue, id, reason === undefined ? {} : { reason });
    console.log(`${JSON.stringify(queue)} ${id}: ${CANCELLED[outcome]}`);
    return outcome === "missing" ? 1 : 0;
  }, true);
}
