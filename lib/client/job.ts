/**
 * The shapes the client hands out and takes back: a claimed {@link Job}, a {@link JobRef} for
 * ack / retry / bury, a {@link Settlement} for `settleMany`, and a queue's {@link Counts}.
 *
 * @module
 */
import type { JobId } from "../keyspace/mod.ts";

/** A job identified by queue and id: what ack, retry and bury need. */
export interface JobRef {
  /** The job's id (`JOB…`). */
  readonly id: JobId;
  /** The queue it was claimed from. */
  readonly queue: string;
}

/** A claimed job: its lease runs until acked, retried, buried or reaped. */
export interface Job<P> extends JobRef {
  /** The decoded payload. */
  readonly payload: P;
  /** How many times it has been claimed, this claim included (1 on the first). */
  readonly attempts: number;
}

/** How many ids each of a queue's sets holds. */
export interface Counts {
  /** Ready to claim. */
  readonly pending: number;
  /** Claimed, lease running. */
  readonly active: number;
  /** Delayed (scheduled or waiting for a retry). */
  readonly schedule: number;
  /** Buried after their last attempt. */
  readonly dead: number;
}

/**
 * One way to settle a claimed job, for `EchoMQ.settleMany`: ack it, retry it (due again in
 * `delayMs`, with the failure `reason`) or bury it with `reason`.
 */
export type Settlement =
  | { readonly kind: "ack"; readonly job: JobRef }
  | { readonly kind: "retry"; readonly job: JobRef; readonly delayMs: number; readonly reason?: string }
  | { readonly kind: "bury"; readonly job: JobRef; readonly reason: string };
