/**
 * BullMQ applications on EchoMQ, unchanged: the backend of BullMQ 6 (`bullmq` ≥ 6.7, an optional
 * peer dependency) whose jobs live in EchoMQ's keyspace, on the native module or the Lua twin.
 *
 * @example
 * With `setDefaultBackendFactory` from `bullmq` and `createEchoMQBackend` from this module:
 *
 * ```ts ignore
 * setDefaultBackendFactory(createEchoMQBackend({ url: "valkey://127.0.0.1:6379" }));
 * ```
 *
 * @module
 */
export * from "./lib/bullmq/mod.ts";
