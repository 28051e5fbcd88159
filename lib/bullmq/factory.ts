/**
 * `createEchoMQBackend`: BullMQ's `BackendFactory` for EchoMQ. One connection per factory, shared
 * by every `Queue`, `Worker`, `QueueEvents` it builds; BullMQ's `connection` option is not read.
 *
 * @module
 */
import type { BackendFactory, IQueueBackend } from "bullmq";
import type { ConnectionOptions } from "../client/connection.ts";
import { EchoMQQueueBackend } from "./backend.ts";
import { DEFAULT_LOCK_MS } from "./scope.ts";
import { SharedClient } from "./shared.ts";

/** How the EchoMQ backend connects: EchoMQ's own connection options (`url`, or `addresses`; `cluster`, `backend`, …). */
export type EchoMQBackendOptions = ConnectionOptions;

/**
 * The EchoMQ queue a BullMQ queue maps to: its name under BullMQ's default prefix `bull`, else
 * `<prefix>:<name>` (prefixes keep queues apart, as on Redis).
 */
export function echoQueueName(name: string, prefix: string): string {
  return prefix === "bull" ? name : `${prefix}:${name}`;
}

/**
 * BullMQ's backend factory for EchoMQ: pass it to a `Queue`, `Worker` or `QueueEvents`, or set it
 * for the process with `setDefaultBackendFactory(createEchoMQBackend({ url }))`. The jobs live in
 * EchoMQ's keyspace (`emq:{<queue>}:…`) on the module or the Lua twin (`backend`), their BullMQ
 * ids mapped to EchoMQ's branded ids and BullMQ's lock tokens on EchoMQ's fenced leases
 * (docs/design/bullmq.md). An operation EchoMQ does not do is refused by name
 * (`RefusedOperationError`).
 *
 * @example
 * With `Queue`, `Worker` and `setDefaultBackendFactory` from `bullmq`:
 *
 * ```ts ignore
 * setDefaultBackendFactory(createEchoMQBackend({ url: "valkey://127.0.0.1:6379" }));
 * const queue = new Queue("mail");
 * await queue.add("welcome", { to: "ada@example.com" }, { attempts: 3, backoff: { type: "exponential", delay: 1000 } });
 * new Worker("mail", async (job) => send(job.data));
 * ```
 */
export function createEchoMQBackend(options: EchoMQBackendOptions): BackendFactory<IQueueBackend, unknown> {
  const shared = new SharedClient(options);
  return (name, opts, how) => {
    const prefix = (opts as { prefix?: string }).prefix ?? "bull";
    const { lockDuration: lock, limiter } = opts as { lockDuration?: number; limiter?: { max: number; duration: number } };
    return new EchoMQQueueBackend({
      shared,
      name,
      prefix,
      queue: echoQueueName(name, prefix),
      lockMs: lock !== undefined && lock > 0 ? lock : DEFAULT_LOCK_MS,
      owns: true,
      blocking: how?.blocking === true,
      queueOf: echoQueueName,
      ...(limiter !== undefined && limiter.max > 0 && limiter.duration > 0 ? { limiter: { max: limiter.max, duration: limiter.duration } } : {}),
    });
  };
}
