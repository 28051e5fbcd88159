/**
 * An action that sets something on a queue (pause, resume, its limits) refuses a queue that does
 * not exist (404) and creates nothing: its verb would write the queue's `meta`, so a typo or a
 * stale page would make a queue that `queues()`, the dashboard and /metrics then list. `emq`
 * refuses the same way (lib/cli/ops.ts).
 *
 * @module
 */
import type { EchoMQ } from "../client/mod.ts";
import { ApiError } from "./api_errors.ts";
import { queueExists } from "./queue_rows.ts";

/** Resolves when queue `name` exists; else a 404 naming it. */
export async function existingQueue(mq: EchoMQ<unknown>, name: string): Promise<void> {
  if (queueExists(await mq.stats(name))) return;
  throw new ApiError(404, `no queue ${JSON.stringify(name)} on the server (no meta key and no jobs): nothing done, and no queue created`);
}
