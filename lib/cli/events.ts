/**
 * `emq events <queue> --url … [--from now|start|<id>]`: the queue's events as they happen, one JSON
 * line each (`mq.events`: `{"id":…,"type":…,"jobId":…}`, a `gap` line when entries were trimmed
 * unread), following the queue until interrupted (Ctrl-C, SIGTERM: exit 0). `emq result <queue>
 * <id> --url … [--timeout-ms N]`: waits for job `id` to finish and prints its result as JSON
 * (`undefined`: nothing printed); a dead job, a missing one or the timeout is one `emq:` line,
 * exit 1. Neither creates anything on the server.
 *
 * @module
 */
import process from "node:process";
import { JobFailedError } from "../client/mod.ts";
import { openUrlTarget } from "./target.ts";
import { parseFlags, parseQueueCommand, SERVER_FLAGS, serverFlags, UsageError } from "./usage.ts";

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** Runs `emq events`; resolves with the exit code. */
export async function eventsCommand(argv: string[]): Promise<number> {
  const { queue, server, values } = parseQueueCommand("events", argv, { from: { type: "string", default: "now" } });
  const from = values.from!;
  if (!/^(now|start|\d{1,20}-\d{1,20}(:\d{1,9})?)$/.test(from)) {
    throw new UsageError(`--from must be now, start, an entry id <ms>-<seq> or an event's id <ms>-<seq>:<i>, not ${JSON.stringify(from)}`);
  }
  const target = await openUrlTarget<unknown>({ ...server, backend: "auto" });
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  for (const s of SIGNALS) process.once(s, onSignal);
  try {
    for await (const event of target.mq.events(queue, { from, signal: stop.signal })) {
      process.stdout.write(`${JSON.stringify(event)}\n`);
    }
    return 0;
  } finally {
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    await target.close();
  }
}

/** Runs `emq result`; resolves with the exit code. */
export async function resultCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({ args: argv, allowPositionals: true, options: { ...SERVER_FLAGS, "timeout-ms": { type: "string" } } });
  const server = serverFlags(parsed.values);
  if (parsed.positionals.length !== 2 || server.url === undefined) {
    throw new UsageError("emq result takes a queue name, a job id and --url, e.g. emq result orders JOB… --url valkey://127.0.0.1:6379");
  }
  const [queue, id] = parsed.positionals as [string, string];
  const text = parsed.values["timeout-ms"] as string | undefined;
  const timeoutMs = text === undefined ? undefined : Number(text);
  if (text !== undefined && (!/^\d{1,10}$/.test(text) || timeoutMs! > 2 ** 31 - 1)) {
    throw new UsageError(`--timeout-ms must be a whole number of ms (at most ${2 ** 31 - 1}), not ${JSON.stringify(text)}`);
  }
  const target = await openUrlTarget<unknown>({ ...server, url: server.url, backend: "auto" });
  const stop = new AbortController();
  const onSignal = (): void => stop.abort(new UsageError("interrupted"));
  for (const s of SIGNALS) process.once(s, onSignal);
  try {
    const value = await target.mq.result(queue, id, { ...(timeoutMs === undefined ? {} : { timeoutMs }), signal: stop.signal });
    if (value !== undefined) process.stdout.write(`${JSON.stringify(value)}\n`);
    return 0;
  } catch (e) {
    if (e instanceof JobFailedError) throw new Error(`job ${id} failed: ${e.reason}`);
    throw e;
  } finally {
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    await target.close();
  }
}
