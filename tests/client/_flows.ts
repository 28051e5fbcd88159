/**
 * What the flow suites read and do behind a client's back, in one place: a job's state, the length
 * of a queue's `outbox` or `waiting`, whether a job's row exists, a claim with a long lease, and a
 * claim acked with its payload's `n` as the result.
 */
import { expect } from "bun:test";
import type { Job } from "../../client.ts";
import { keyspace } from "../../mod.ts";
import type { SuiteClient } from "./_harness.ts";

/** The suites' payload: a number. */
type P = { n: number };

/** The flow suites' helpers on `ctx` (read lazily: `ctx` is filled before the first test). */
export interface FlowKit {
  /** Job `id`'s `state` field in queue `q`. */
  state(q: string, id: string): Promise<string>;
  /** The length of `q`'s outbox or waiting set. */
  zcard(q: string, type: "outbox" | "waiting"): Promise<number>;
  /** Whether job `id`'s row exists in queue `q`. */
  exists(q: string, id: string): Promise<boolean>;
  /** One job of `q` claimed with a 60 s lease, or null. */
  claim(q: string): Promise<Job<P> | null>;
  /** Claims one job of `q` (there must be one) and acks it with `result`, by default `{ n: payload.n }`. */
  ackOne(q: string, result?: unknown): Promise<Job<P>>;
}

/** The {@link FlowKit} of a suite's client. */
export function flowKit(ctx: SuiteClient<P>): FlowKit {
  const kit: FlowKit = {
    state: async (q, id) => (await ctx.row(q, id, "state"))[0]!,
    zcard: async (q, type) => Number(await ctx.raw.command(["ZCARD", keyspace(q)[type]], keyspace(q).meta)),
    exists: async (q, id) => Number(await ctx.raw.command(["EXISTS", keyspace(q).job(id as never)], keyspace(q).meta)) === 1,
    claim: (q) => ctx.mq.claim(q, { leaseMs: 60_000 }),
    async ackOne(q, result) {
      const job = await kit.claim(q);
      expect(job).not.toBeNull();
      await ctx.mq.ack(job!, result ?? { n: job!.payload.n });
      return job!;
    },
  };
  return kit;
}
