/**
 * Cancelling a job from anywhere (`EchoMQ.cancel`): one CANCEL. A job that waits (pending or
 * scheduled) is buried at once with the cancel's reason; a running one is buried at once too, and
 * its worker, wherever it runs, learns of it at its next heartbeat (its EXTEND is refused
 * `cancelled`) and aborts the handler's `job.signal`; its late settle is refused as for a lost
 * lease. Buried, not deleted: the record of what was cancelled and why stays where an operator
 * looks (the dead set, `getJob`), and a mistaken cancel is undone with `requeueDead`.
 *
 * @module
 */
import type { Keyspace } from "../keyspace/mod.ts";
import { assertJobId } from "../keyspace/mod.ts";
import { MAX_REASON_BYTES, wireCall } from "../wire/mod.ts";
import { byteLength } from "./codec.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";

/**
 * What a cancel did: `cancelled` — the job waited (pending, scheduled, or a flow's parent waiting
 * for its children, whose unfinished children are cancelled with it) and is buried now;
 * `aborting` — it was running and is buried now, its handler's signal aborts at its worker's next
 * heartbeat; `finished` — it had completed or was dead already, nothing changed; `missing` — no
 * such job. A cancelled flow child tells its parent as a failure with the reason, under its
 * `onFailure` policy.
 */
export type CancelOutcome = "cancelled" | "aborting" | "finished" | "missing";

/** The options of `EchoMQ.cancel`. */
export interface CancelOptions {
  /** Why, kept on the buried job as `cancelled: <reason>` (default: the reason is `cancelled`). */
  readonly reason?: string;
}

/** The reason every cancelled job is buried with (followed by `: <reason>` when one is given). */
export const CANCELLED_REASON = "cancelled";

const OUTCOMES: readonly CancelOutcome[] = ["missing", "cancelled", "aborting", "finished"];

/** See `EchoMQ.cancel`. */
export async function cancel<P>(c: ClientContext<P>, ks: Keyspace, id: string, opts: CancelOptions = {}): Promise<CancelOutcome> {
  assertJobId(id);
  if (opts.reason !== undefined && typeof opts.reason !== "string") {
    throw new EchoMQError("options", "cancel: reason must be a string");
  }
  const reason = opts.reason ? `${CANCELLED_REASON}: ${opts.reason}` : CANCELLED_REASON;
  if (byteLength(reason) > MAX_REASON_BYTES) {
    throw new EchoMQError("options", `cancel: the reason exceeds ${MAX_REASON_BYTES} bytes`);
  }
  const reply = await c.impl.call(wireCall("CANCEL", ks, { reason }, [{ id }]));
  const status = Array.isArray(reply) ? Number(reply[0]) : NaN;
  const outcome = OUTCOMES[status];
  if (outcome === undefined) throw new Error(`EMQ.CANCEL: unexpected reply ${String(reply)}`);
  return outcome;
}
