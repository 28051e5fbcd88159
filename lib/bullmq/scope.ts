/**
 * What the EchoMQ backend's operations work with: the shared connection, the queue's keyspace,
 * the jobs this backend holds, and the BullMQ options it was built with. Each concept of the
 * backend is a file of functions over a {@link Scope}; the class (`backend.ts`) delegates.
 *
 * @module
 */
import type { ClientContext } from "../client/context.ts";
import type { Keyspace } from "../keyspace/mod.ts";
import type { Locks } from "./locks.ts";

/** The lease a claim takes when BullMQ's `lockDuration` is not given (BullMQ's default). */
export const DEFAULT_LOCK_MS = 30_000;

/** One backend's state, as its operations see it. */
export interface Scope {
  /** The connection (opened on first use) and the queue's keyspace. */
  on(): Promise<{ c: ClientContext<unknown>; ks: Keyspace }>;
  /** The EchoMQ queue this backend serves. */
  readonly queue: string;
  /** The jobs this backend claimed and has not settled. */
  readonly locks: Locks;
  /** The lease of a claim: BullMQ's `lockDuration`. */
  readonly lockMs: number;
  /** The worker's name its `moveToActive` gave (BullMQ's `processedBy` of the jobs it claims), if any. */
  workerName?: string;
}
