/**
 * `emq limit <queue> --url … [--concurrency N|none] [--rate MAX/PERIOD|none] [--burst B]` sets a
 * queue's limits (`mq.limit`: every worker of every process obeys them on the server) and
 * `emq limits <queue> --url …` shows them and any park, each as one line; with `--lane L` a lane's
 * own, with `--per-lane` the default of every lane. Both refuse a queue that does not exist
 * (exit 1): `limit` would write its `meta`, and a typo would become a queue.
 *
 * @module
 */
import { limitsText } from "../ui/limits_text.ts";
import { laneTarget, limitFlags } from "./limit_flags.ts";
import { NoSuchQueueError, queueExists } from "./ops.ts";
import { openUrlTarget } from "./target.ts";
import { parseQueueCommand } from "./usage.ts";

/** Runs `emq limit` (`set`) or `emq limits`; resolves with the exit code. */
export async function limitCommand(command: "limit" | "limits", argv: string[]): Promise<number> {
  const flags = { concurrency: { type: "string" }, rate: { type: "string" }, burst: { type: "string" } } as const;
  const targets = { lane: { type: "string" }, "per-lane": { type: "boolean", default: false } } as const;
  const { queue, server, values } = parseQueueCommand(command, argv, command === "limit" ? { ...flags, ...targets } : targets);
  // before any connection: bad usage costs nothing
  const opts = command === "limit" ? limitFlags(values as Parameters<typeof limitFlags>[0]) : null;
  const to = laneTarget(values);
  const target = await openUrlTarget<unknown>({ ...server, backend: "auto" });
  try {
    const { mq } = target;
    if (!(await queueExists(mq, queue))) {
      throw new NoSuchQueueError(queue, target.description, opts === null ? "" : ": nothing done, and no queue created");
    }
    if (opts !== null) await mq.limit(queue, opts, to?.target);
    // read back, so the line has the park too (mq.limit's own answer keeps the one it read first)
    console.log(`${JSON.stringify(queue)}${to === undefined ? "" : ` ${to.says}`} limits: ${limitsText(await mq.limits(queue, to?.target))}`);
    return 0;
  } finally {
    await target.close();
  }
}
