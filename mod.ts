/**
 * EchoMQ's owned keyspace: every key of a queue is `emq:{<queue>}:<type>`, checked by the compiler,
 * again at run time, and once more by the server's native module. The braces are the cluster
 * hashtag, so every key of one queue lives in one slot.
 *
 * This entry point has no dependencies: it imports cleanly in Deno, Bun, Node and browsers.
 * The client lives in `./client`.
 *
 * @example
 * ```ts
 * import { jobKey, keyspace, newJobId, queueKey, slot } from "./mod.ts";
 *
 * const pending = queueKey("orders", "pending"); // type "emq:{orders}:pending"
 * const orders = keyspace("orders");
 * const row = orders.job(newJobId());            // "emq:{orders}:job:JOB…"
 * console.log(pending, row, orders.slot === slot(pending)); // … true
 * console.log(jobKey("orders", "JOB0Nb1VTbfnu4"));
 * ```
 *
 * @module
 */
export * from "./lib/keyspace/mod.ts";
