import type { QueueType } from "../keyspace/queue_type.ts";

/** The key of one per-queue structure: `emq:{<Q>}:<T>`. Literal in, literal out. */
export type QueueKey<Q extends string, T extends QueueType> = `emq:{${Q}}:${T}`;

/** The row key of one job: `emq:{<Q>}:job:<Id>`. */
export type JobKey<Q extends string, Id extends string> = `emq:{${Q}}:job:${Id}`;

/** The base of a queue, `emq:{<Q>}:`: never a key itself; a row is base + `job:` + id. */
export type QueueBase<Q extends string> = `emq:{${Q}}:`;
