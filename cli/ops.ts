/**
 * The operator's commands on a running server: `emq requeue <queue> [--ids a,b] [--limit N]`,
 * `emq pause <queue>`, `emq resume <queue>` and `emq drop <queue> --yes`, each with
 * `--url valkey://host:port [--cluster]`. One line of outcome each.
 *
 * @module
 */
import { openTarget } from "./target.ts";
import { parseQueueCommand, UsageError } from "./usage.ts";

/** The operations, by command name. */
export const OPERATIONS = ["requeue", "pause", "resume", "drop"] as const;

/** An operation. */
export type Operation = (typeof OPERATIONS)[number];

/** Runs `emq <operation> <queue> --url …`; resolves with the exit code. */
export async function operate(operation: Operation, argv: string[]): Promise<number> {
  const { queue, url, cluster, values: v } = parseQueueCommand(operation, argv, {
    ids: { type: "string" },
    limit: { type: "string" },
    yes: { type: "boolean", default: false },
  });
  if (operation !== "requeue" && (v.ids !== undefined || v.limit !== undefined)) {
    throw new UsageError(`--ids and --limit go with emq requeue only`);
  }
  if (operation === "drop" && !v.yes) {
    throw new UsageError(`emq drop deletes every job and key of ${JSON.stringify(queue)}: add --yes to do it`);
  }
  const limit = v.limit === undefined ? undefined : Number(v.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) throw new UsageError(`--limit must be a positive integer, not ${v.limit}`);
  const target = await openTarget<unknown>({ url, cluster, backend: "auto" });
  try {
    const { mq } = target;
    switch (operation) {
      case "requeue": {
        const ids = v.ids === undefined ? undefined : v.ids.split(",").map((x) => x.trim()).filter((x) => x !== "");
        const moved = await mq.requeueDead(queue, { ...(ids ? { ids } : {}), ...(limit ? { limit } : {}) });
        console.log(`requeued ${moved} dead job(s) of ${JSON.stringify(queue)} to pending`);
        return 0;
      }
      case "pause":
        console.log(await mq.pause(queue) ? `paused ${JSON.stringify(queue)}` : `${JSON.stringify(queue)} was paused already`);
        return 0;
      case "resume":
        console.log(await mq.resume(queue) ? `resumed ${JSON.stringify(queue)}` : `${JSON.stringify(queue)} was not paused`);
        return 0;
      case "drop":
        console.log(`dropped ${JSON.stringify(queue)}: ${await mq.drop(queue)} job(s) and its keys deleted`);
        return 0;
    }
  } finally {
    await target.close();
  }
}
