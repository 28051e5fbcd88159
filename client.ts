/**
 * The EchoMQ client for Valkey (through `@valkey/valkey-glide`): durable job queues whose keys all
 * live in one cluster slot per queue. Each verb runs as the native module's `EMQ.*` command when
 * the server has it, or as a Lua script with the same replies when it does not (managed services).
 * The keyspace itself (queue names, ids, keys, slots) is in `mod.ts`.
 *
 * @example
 * ```ts
 * import { EchoMQ } from "./client.ts";
 *
 * const mq = await EchoMQ.connect<{ to: string }>({
 *   addresses: [{ host: "127.0.0.1", port: 6379 }],
 *   backend: "auto",
 * });
 * const id = await mq.enqueue("mail", { to: "ada@example.com" });
 * const worker = mq.work("mail", async (job) => {
 *   console.log(job.id === id, job.payload.to, job.attempts);
 * }, { concurrency: 4, leaseMs: 30_000, maxAttempts: 5 });
 * // …
 * await worker.stop();
 * await mq.close();
 * ```
 *
 * @module
 */
export * from "./lib/client/mod.ts";
