/**
 * One `EMQ.SETTLE` (wire 11): a worker's finished jobs of one queue settled and the slots they
 * free claimed again, in one call — one round trip and one command per batch, where a CLAIM and
 * an ACK (and a RETRY, a BURY…) went before. Each settlement gets its own outcome: `null` when
 * the server applied it, a {@link LeaseLostError} when its job was not held under its token, a
 * {@link DuplicateIdError} when the call named its job already; a settlement the client refuses
 * before the wire (a result too large) gets that error and is not sent. Errors name the verb of
 * the settlement's kind (`EMQ.ACK`, `EMQ.RETRY`…), as `settleMany`'s do.
 *
 * @module
 */
import { Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import type { Keyspace } from "../keyspace/mod.ts";
import { renderRefusal, type Verb, wireCall } from "../wire/mod.ts";
import type { Backend } from "./backend.ts";
import { type Claim, claimed, claimOnce, settleGroup } from "./batch.ts";
import type { ClientContext } from "./context.ts";
import { DuplicateIdError, LeaseLostError } from "./errors.ts";
import type { Settlement } from "./job.ts";

/** SETTLE's `op` of each settling verb. */
const OPS: Partial<Record<Verb, number>> = { ACK: 0, RETRY: 1, BURY: 2, RELEASE: 3 };

/** What one SETTLE brought: an outcome per settlement, in order, and the claim. */
export interface SettleClaim<P> {
  /** Per settlement: `null` (applied) or the error that kept it from being applied. */
  readonly results: Array<Error | null>;
  /** The jobs claimed after the settlements (none when `want` was 0), and `nextMs` as CLAIM's. */
  readonly claim: Claim<P>;
}

/**
 * One SETTLE on `backend` of `settlements` (all of queue `ks`; at most `MAX_BATCH`), then a
 * claim of up to `want` jobs (0: none) leased for `leaseMs`. Rejects only when the call has no
 * outcome (a refusal of the whole call, a timeout, a lost connection): then nobody knows which
 * settlements were applied, as with a failed `settleMany` command.
 */
export async function settleClaim<P>(
  c: ClientContext<P>,
  backend: Backend,
  ks: Keyspace,
  settlements: readonly Settlement[],
  want: number,
  leaseMs: number,
): Promise<SettleClaim<P>> {
  const results: Array<Error | null> = new Array(settlements.length).fill(null);
  const sent: Array<{ at: number; verb: Verb; id: string }> = [];
  const groups: Array<Record<string, string | number>> = [];
  settlements.forEach((s, at) => {
    try {
      const { verb, group } = settleGroup(s);
      groups.push({ op: OPS[verb]!, delay_ms: 0, reason: "", result: "", ...group });
      sent.push({ at, verb, id: s.job.id });
    } catch (e) {
      results[at] = e instanceof Error ? e : new Error(String(e));
    }
  });
  if (groups.length === 0) {
    // nothing to settle: a plain claim (SETTLE carries at least one settlement)
    const claim = want === 0 ? { nextMs: 0, jobs: [] } : await claimOnce(c, backend, ks, want, leaseMs, 0);
    return { results, claim };
  }
  const reply = await backend.call(wireCall("SETTLE", ks, { lease_ms: leaseMs, want }, groups as never), Decoder.Bytes);
  const statuses = Array.isArray(reply) ? reply[1] : undefined;
  if (!Array.isArray(reply) || !Array.isArray(statuses) || statuses.length !== sent.length) {
    throw new Error(`EMQ.SETTLE: unexpected reply ${String(reply)}`);
  }
  sent.forEach(({ at, verb, id }, i) => {
    const status = Number(statuses[i]);
    const name = `EMQ.${verb}`;
    if (status === 0) results[at] = new LeaseLostError(name, renderRefusal("lease-lost", name, { ids: id }), [id]);
    else if (status === 2) results[at] = new DuplicateIdError(name, renderRefusal("repeated", name, { id }), id);
  });
  const jobs = reply.slice(2).map((entry: GlideReturnType) => claimed(c, ks, entry));
  return { results, claim: { nextMs: Number(reply[0]), jobs } };
}
