/**
 * The EchoMQ backend of BullMQ 6: `createEchoMQBackend` and what it refuses.
 *
 * @module
 */
export { createEchoMQBackend, type EchoMQBackendOptions, echoQueueName } from "./factory.ts";
export { RefusedOperationError } from "./refused.ts";
export { IdCollisionError } from "./ids.ts";
export { emqIdOf } from "./ids.ts";
export type { Address, BackendChoice, ConnectionOptions, TlsOptions } from "../client/connection.ts";
export type { BrandedId, JobId, JobNamespace } from "../keyspace/mod.ts";
