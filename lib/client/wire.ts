/**
 * The wire-4 calls, built from a queue's keyspace exactly as docs/WIRE.md lists them: each
 * verb's keys in order and its arguments in order. Both backends send these; only the command
 * differs (`EMQ.<VERB>` or `EVALSHA`).
 *
 * @module
 */
import type { GlideString } from "@valkey/valkey-glide";
import type { JobId, Keyspace } from "../../mod.ts";
import type { Verb } from "../scripts/mod.ts";

export type { Verb };

/** One verb call: its keys and arguments, in wire order. */
export interface WireCall {
  /** The verb (`ENQUEUE` …); the command is `EMQ.<verb>`. */
  readonly verb: Verb;
  /** Declared keys, in the verb's order. */
  readonly keys: string[];
  /** Arguments, in the verb's order. */
  readonly args: GlideString[];
}

/** Row key of `id` in `ks`, built from the base (the id was checked by the caller). */
function row(ks: Keyspace, id: string): string {
  return `${ks.base}job:${id}`;
}

/** `EMQ.ENQUEUE 2 row pending id payload`. */
export function enqueueCall(ks: Keyspace, id: JobId, payload: GlideString): WireCall {
  return { verb: "ENQUEUE", keys: [row(ks, id), ks.pending], args: [id, payload] };
}

/** `EMQ.SCHEDULE 2 row schedule id due_ms payload`. */
export function scheduleCall(ks: Keyspace, id: JobId, dueMs: number, payload: GlideString): WireCall {
  return { verb: "SCHEDULE", keys: [row(ks, id), ks.schedule], args: [id, String(dueMs), payload] };
}

/** `EMQ.PROMOTE 3 schedule pending base limit`. */
export function promoteCall(ks: Keyspace, limit: number): WireCall {
  return { verb: "PROMOTE", keys: [ks.schedule, ks.pending, ks.base], args: [String(limit)] };
}

/** `EMQ.CLAIM 3 pending active base lease_ms`. */
export function claimCall(ks: Keyspace, leaseMs: number): WireCall {
  return { verb: "CLAIM", keys: [ks.pending, ks.active, ks.base], args: [String(leaseMs)] };
}

/** `EMQ.ACK 2 row active id`. */
export function ackCall(ks: Keyspace, id: JobId): WireCall {
  return { verb: "ACK", keys: [row(ks, id), ks.active], args: [id] };
}

/** `EMQ.RETRY 3 row active schedule id delay_ms reason`. */
export function retryCall(ks: Keyspace, id: JobId, delayMs: number, reason: string): WireCall {
  return { verb: "RETRY", keys: [row(ks, id), ks.active, ks.schedule], args: [id, String(delayMs), reason] };
}

/** `EMQ.BURY 3 row active dead id reason`. */
export function buryCall(ks: Keyspace, id: JobId, reason: string): WireCall {
  return { verb: "BURY", keys: [row(ks, id), ks.active, ks.dead], args: [id, reason] };
}

/** `EMQ.REAP 3 active pending base limit`. */
export function reapCall(ks: Keyspace, limit: number): WireCall {
  return { verb: "REAP", keys: [ks.active, ks.pending, ks.base], args: [String(limit)] };
}
