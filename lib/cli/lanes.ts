/**
 * `emq lanes <queue> --url … [--offset N] [--limit N]`: a page of the queue's lanes, busiest
 * first (`mq.lanes`), one line each — ready, active, the limits in force with any park, paused —
 * under a line that says which of how many. Refuses a queue that does not exist (exit 1).
 *
 * @module
 */
import { laneText } from "../ui/lanes_text.ts";
import { NoSuchQueueError, queueExists } from "./ops.ts";
import { openUrlTarget } from "./target.ts";
import { pageFlag, parseQueueCommand } from "./usage.ts";

/** Runs `emq lanes`; resolves with the exit code. */
export async function lanesCommand(argv: string[]): Promise<number> {
  const { queue, server, values } = parseQueueCommand("lanes", argv, { offset: { type: "string" }, limit: { type: "string" } });
  const offset = pageFlag("--offset", values.offset, 0, Number.MAX_SAFE_INTEGER, 0);
  const limit = pageFlag("--limit", values.limit, 1, 1000, 100);
  const target = await openUrlTarget<unknown>({ ...server, backend: "auto" });
  try {
    const { mq } = target;
    if (!(await queueExists(mq, queue))) throw new NoSuchQueueError(queue, target.description);
    const page = await mq.lanes(queue, { offset, limit });
    const shown = page.lanes.length === 0 ? "none shown" : `${offset + 1}–${offset + page.lanes.length} by backlog`;
    console.log(`${JSON.stringify(queue)}: ${page.total} lane(s), ${shown}`);
    const now = Date.now();
    for (const l of page.lanes) console.log(`  ${laneText(l, now)}`);
    return 0;
  } finally {
    await target.close();
  }
}
