/**
 * One `EMQ.SETTLE` (wire 11): a worker's finished jobs of one queue settled and the slots they
 * free claimed again, in one call — one round trip and one command per batch, where a CLAIM and
 * an ACK (and a RETRY, a BURY…) went before. Each settlement gets its own outcome: `null` when
 * the server applied it, a {@link LeaseLostError} when its job was not held under its token, a
 * {@link DuplicateIdError} when the same settlement is given twice; a settlement the client refuses
 * before the wire (a result too large) gets that error and is not sent. One call names a job once:
 * the same job under another token (a stale claim of it beside the current one, which a worker
 * holds after its lease ran out and it claimed the job again) goes in a later SETTLE of its own,
 * which claims nothing. Errors name the verb of the settlement's kind (`EMQ.ACK`, `EMQ.RETRY`…),
 * as `settleMany`'s do.
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
  // One call names a job once: the same job under another token (a stale claim beside the current
  // one) goes in a later call of its own, as settleMany does; the same settlement twice is refused
  // before the wire.
  const rounds: Array<{ sent: Sent[]; groups: Array<Record<string, string | number>>; tokens: Map<string, number> }> = [];
  settlements.forEach((s, at) => {
    try {
      const { verb, group } = settleGroup(s);
      for (let r = 0;; r++) {
        const round = rounds[r] ?? (rounds[r] = { sent: [], groups: [], tokens: new Map() });
        const token = round.tokens.get(s.job.id);
        if (token === s.job.token) {
          const name = `EMQ.${verb}`;
          results[at] = new DuplicateIdError(name, renderRefusal("repeated", name, { id: s.job.id }), s.job.id);
          return;
        }
        if (token !== undefined) continue;
        round.tokens.set(s.job.id, s.job.token);
        // every field named (no spread): this runs once per job of a busy worker
        round.groups.push({
          op: OPS[verb]!,
          id: group.id!,
          token: group.token!,
          delay_ms: group.delay_ms ?? 0,
          reason: group.reason ?? "",
          result: group.result ?? "",
          failure: group.failure ?? "",
        });
        round.sent.push({ at, verb, id: s.job.id });
        return;
      }
    } catch (e) {
      results[at] = e instanceof Error ? e : new Error(String(e));
    }
  });
  if (rounds.length === 0) {
    // nothing to settle: a plain claim (SETTLE carries at least one settlement)
    const claim = want === 0 ? { nextMs: 0, jobs: [] } : await claimOnce(c, backend, ks, want, leaseMs, 0);
    return { results, claim };
  }
  let claim: Claim<P> = { nextMs: 0, jobs: [] };
  for (const [r, round] of rounds.entries()) {
    if (r === 0) {
      claim = await settleOnce(c, backend, ks, round.sent, round.groups, want, leaseMs, results);
      continue;
    }
    // (the first call was answered: a later one without an outcome is its own settlements' error)
    try {
      await settleOnce(c, backend, ks, round.sent, round.groups, 0, leaseMs, results);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      for (const { at } of round.sent) results[at] = error;
    }
  }
  return { results, claim };
}

/** A settlement sent: where it came from, its verb, its job. */
interface Sent {
  readonly at: number;
  readonly verb: Verb;
  readonly id: string;
}

/** One SETTLE of `groups` (no job twice); each outcome into `results`; the claim. */
async function settleOnce<P>(
  c: ClientContext<P>,
  backend: Backend,
  ks: Keyspace,
  sent: readonly Sent[],
  groups: Array<Record<string, string | number>>,
  want: number,
  leaseMs: number,
  results: Array<Error | null>,
): Promise<Claim<P>> {
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
  return { nextMs: Number(reply[0]), jobs };
}
