/**
 * What the holder of a claimed job may do before settling it, token-checked like a settle: extend
 * its lease, and record its progress. A lost lease is refused with `LeaseLostError`.
 *
 * @module
 */
import { MAX_PROGRESS_BYTES, wireCall } from "../wire/mod.ts";
import { byteLength } from "./codec.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import type { JobRef } from "./job.ts";
import { jobRef, wholeNumber } from "./options.ts";

/** See `EchoMQ.extend`: one EXTEND of jobs of one queue. */
export async function extend<P>(c: ClientContext<P>, jobs: JobRef | readonly JobRef[], leaseMs: number): Promise<void> {
  const list = Array.isArray(jobs) ? jobs as readonly JobRef[] : [jobs as JobRef];
  if (list.length === 0) return;
  const lease = wholeNumber("extend: leaseMs", "lease-ms", leaseMs, 1);
  const ks = jobRef("extend", list[0]!, (q) => c.keyspace(q));
  for (const job of list) {
    if (jobRef("extend", job, (q) => c.keyspace(q)).name !== ks.name) {
      throw new EchoMQError("job", "extend: every job must be of one queue");
    }
  }
  const call = wireCall("EXTEND", ks, { lease_ms: lease }, list.map((j) => ({ id: j.id, token: j.token })));
  const reply = await c.impl.call(call);
  if (reply !== list.length) throw new Error(`EMQ.EXTEND: unexpected reply ${String(reply)}`);
}

/** See `EchoMQ.progress`: the value as JSON, at most {@link MAX_PROGRESS_BYTES}. */
export async function progress<P>(c: ClientContext<P>, job: JobRef, value: unknown): Promise<void> {
  const ks = jobRef("progress", job, (q) => c.keyspace(q));
  let encoded: string | undefined;
  try {
    encoded = JSON.stringify(value);
  } catch (e) {
    // a BigInt, a cycle: JSON's own TypeError, as the cause
    throw new EchoMQError("options", `progress: the value has no JSON form: ${e instanceof Error ? e.message : String(e)}`, e);
  }
  if (encoded === undefined) throw new EchoMQError("options", "progress: the value has no JSON form");
  if (byteLength(encoded) > MAX_PROGRESS_BYTES) {
    throw new EchoMQError("options", `progress: the value exceeds ${MAX_PROGRESS_BYTES} bytes of JSON`);
  }
  await c.impl.call(wireCall("PROGRESS", ks, {}, [{ id: job.id, token: job.token, value: encoded }]));
}
