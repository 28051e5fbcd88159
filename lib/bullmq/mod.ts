/**
 * The EchoMQ backend of BullMQ 6: `createEchoMQBackend` and what it refuses.
 *
 * @module
 */
export { createEchoMQBackend, echoQueueName, type EchoMQBackendOptions } from "./factory.ts";
export { RefusedOperationError } from "./refused.ts";
export { IdCollisionError } from "./ids.ts";
export { emqIdOf } from "./ids.ts";
