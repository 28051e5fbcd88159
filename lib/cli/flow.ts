/**
 * `emq flow <queue> <id> --url …`: the whole flow a job belongs to (`mq.flowOf`), as a tree from
 * its root — one job a line, indented by depth: its queue, id and state, then its result or reason
 * (cut to a line). A job that is not there is said so (exit 1).
 *
 * @module
 */
import type { FlowTree } from "../client/mod.ts";
import { assertJobId } from "../keyspace/mod.ts";
import { cut } from "./jobs.ts";
import { openUrlTarget } from "./target.ts";
import { parseFlags, SERVER_FLAGS, serverFlags, UsageError } from "./usage.ts";

/** The lines `emq flow` prints for `tree`: one a job, children indented two spaces under their parent. */
export function flowLines(tree: FlowTree, depth = 0): string[] {
  const what = tree.reason !== undefined
    ? `  reason ${cut(JSON.stringify(tree.reason))}`
    : "result" in tree
    ? `  result ${cut(JSON.stringify(tree.result) ?? "")}`
    : tree.resultBytes !== undefined
    ? `  result of ${tree.resultBytes} bytes (not kept on its parent)`
    : "";
  const line = `${"  ".repeat(depth)}${JSON.stringify(tree.queue)} ${tree.id}  ${tree.state}${what}`;
  return [line, ...tree.children.flatMap((c) => flowLines(c, depth + 1))];
}

/** Runs `emq flow`; resolves with the exit code. */
export async function flowCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({ args: argv, allowPositionals: true, options: { ...SERVER_FLAGS } });
  const server = serverFlags(parsed.values);
  const [queue, id] = parsed.positionals;
  if (parsed.positionals.length !== 2 || server.url === undefined) {
    throw new UsageError(`emq flow takes a queue name, a job id and --url, e.g. emq flow reports JOB0Nb1VTbfnu4 --url valkey://127.0.0.1:6379`);
  }
  try {
    assertJobId(id);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const target = await openUrlTarget<unknown>({ ...server, url: server.url, backend: "auto" });
  try {
    const tree = await target.mq.flowOf(queue!, id);
    if (tree === null) {
      console.error(`emq: no job ${id} in ${JSON.stringify(queue)} on ${target.description} (never admitted, or deleted)`);
      return 1;
    }
    for (const line of flowLines(tree)) console.log(line);
    return 0;
  } finally {
    await target.close();
  }
}
