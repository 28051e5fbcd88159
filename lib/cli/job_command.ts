/**
 * What `emq job`, `emq flow` and `emq cancel` share: `<queue> <id> --url …` read and checked (a
 * usage error names the command and shows an example), the server opened, the command run on it,
 * the connection closed whatever happens.
 *
 * @module
 */
import { assertJobId } from "../keyspace/mod.ts";
import { openUrlTarget, type Target } from "./target.ts";
import { parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "./usage.ts";

/**
 * Runs `emq <name> <queue> <id> --url …` with `run`, which gets the open target, the queue, the id
 * and the value of `--reason` when `reason` is true; resolves with `run`'s exit code.
 */
export async function onOneJob(
  name: string,
  example: string,
  argv: string[],
  run: (target: Target<unknown>, queue: string, id: string, reason: string | undefined) => Promise<number>,
  reason = false,
): Promise<number> {
  const options = reason ? { ...SERVER_FLAGS, reason: { type: "string" as const } } : { ...SERVER_FLAGS };
  const parsed = parseFlags({ args: argv, allowPositionals: true, options });
  const server = serverFlags(parsed.values);
  const [queue, id] = parsed.positionals;
  if (parsed.positionals.length !== 2 || server.url === undefined) {
    throw new UsageError(`emq ${name} takes a queue name, a job id and --url, e.g. emq ${name} ${example} --url valkey://127.0.0.1:6379`);
  }
  try {
    assertJobId(id);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const target = await openUrlTarget<unknown>({ ...server, url: server.url, backend: "auto" });
  try {
    return await run(target, queue!, id, (parsed.values as { reason?: string }).reason);
  } finally {
    await target.close();
  }
}

/** Says that `id` is not a job of `queue` on the target (on stderr); the exit code, 1. */
export function noJob(target: Target<unknown>, queue: string, id: string): number {
  console.error(`emq: no job ${id} in ${JSON.stringify(queue)} on ${target.description} (never admitted, or deleted)`);
  return 1;
}
