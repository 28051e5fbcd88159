/**
 * `POST /api/limit` (`{ name, concurrency?, rate? }`): sets a queue's limits through `mq.limit` —
 * a field left out keeps its limit, `null` removes it, as the client has it. The values are the
 * client's to check (one rule, one message: a bad one is a 400 with the client's `EchoMQError`
 * text); a queue that does not exist is refused (404) and not created. Like every action, only
 * the page's own origin reaches it, and a read-only dashboard answers it with 403 (guard.ts).
 *
 * @module
 */
import type { EchoMQ, LimitOptions } from "../client/mod.ts";
import { ApiError, queueName } from "./api_errors.ts";
import { existingQueue } from "./existing.ts";
import type { LimitReply } from "./json_api.ts";
import { body } from "./request_body.ts";

/** The limits a body asks for: only the two fields, each as sent (the client checks the values). */
export function limitOptions(b: Record<string, unknown>): LimitOptions {
  if (b.concurrency === undefined && b.rate === undefined) {
    throw new ApiError(400, "concurrency or rate: give a limit to set (null removes one)");
  }
  return {
    ...(b.concurrency === undefined ? {} : { concurrency: b.concurrency as number | null }),
    ...(b.rate === undefined ? {} : { rate: b.rate as LimitOptions["rate"] }),
  };
}

/** Answers `POST /api/limit`: the limits now in force. */
export async function limitReply(mq: EchoMQ<unknown>, request: Request): Promise<LimitReply> {
  const b = await body(request);
  const name = queueName(b.name as string);
  const opts = limitOptions(b);
  await existingQueue(mq, name);
  return { limits: await mq.limit(name, opts) };
}
