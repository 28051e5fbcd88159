/**
 * The EchoMQ client, by concept: connection and options, backend selection, the wire calls, the
 * payload codecs, the worker and the errors. Only what a user calls is exported here; backends
 * and wire calls stay internal (tests import them from their files).
 *
 * @module
 */
export { EchoMQ } from "./echomq.ts";
export {
  BATCH_BYTES,
  BATCH_COMMANDS,
  type ClaimOptions,
  DEFAULT_DURABLE_TIMEOUT_MS,
  DEFAULT_MOVE_LIMIT,
  type DurableOptions,
  type EchoMQOptions,
  type EnqueueManyOptions,
  type EnqueueOptions,
  MAX_WIRE_NUMBER,
  type RetryOptions,
  type When,
} from "./options.ts";
export type { Address, BackendChoice, ConnectionOptions } from "./connection.ts";
export { bytes, type Codec, json, text } from "./codec.ts";
export type { Counts, Job, JobRef, Settlement } from "./job.ts";
export {
  type Backoff,
  DEFAULT_POLL_MS,
  exponentialBackoff,
  type Handler,
  Worker,
  type WorkerClient,
  type WorkerOptions,
} from "./worker.ts";
export {
  BackendError,
  type ClientRule,
  DuplicateIdError,
  DurabilityError,
  EchoMQError,
  FencedError,
  JobNotActiveError,
  PayloadDecodeError,
  type Rule,
  WireError,
  type WireRule,
} from "./errors.ts";
export { KeyspaceError, type KeyspaceRule } from "../keyspace/mod.ts";
