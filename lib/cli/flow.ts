/**
 * `emq flow <queue> <id> --url …`: the whole flow a job belongs to (`mq.flowOf`), as a tree from
 * its root — one job a line, indented by depth: its queue, id and state, then its result or reason
 * (cut to a line). A job that is not there is said so (exit 1).
 *
 * @module
 */
import type { FlowTree } from "../client/mod.ts";
import { cut } from "./jobs.ts";
import { noJob, onOneJob } from "./job_command.ts";

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
export function flowCommand(argv: string[]): Promise<number> {
  return onOneJob("flow", "reports JOB0Nb1VTbfnu4", argv, async (target, queue, id) => {
    const tree = await target.mq.flowOf(queue, id);
    if (tree === null) return noJob(target, queue, id);
    for (const line of flowLines(tree)) console.log(line);
    return 0;
  });
}
