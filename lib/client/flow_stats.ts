/**
 * A queue's side of its flows at a glance (`EchoMQ.flowStats`): its parents waiting for children,
 * and its outbox — how many entries wait for a relay, and how long the oldest free one has waited
 * (the relay lag). Three plain reads (`ZCARD waiting`, `ZCARD outbox`, the outbox's lowest score),
 * not one snapshot.
 *
 * @module
 */
import type { Keyspace } from "../keyspace/mod.ts";
import type { GlideReturnType } from "@valkey/valkey-glide";
import type { ClientContext } from "./context.ts";
import { scored } from "./info.ts";

/** A queue's flow figures. */
export interface FlowStats {
  /** Its parents waiting for their children (state `waiting-children`). */
  readonly waitingParents: number;
  /** Entries in its outbox (children to create, outcomes and cancels to deliver in other queues). */
  readonly outbox: number;
  /**
   * How long (ms, at the read) the oldest entry no relay holds has waited since it was written or
   * its lease ran out: 0 when every entry is leased (in flight) or there is none.
   */
  readonly relayLagMs: number;
}

/** See `EchoMQ.flowStats`. */
export async function flowStats<P>(c: ClientContext<P>, ks: Keyspace): Promise<FlowStats> {
  const [waiting, outbox, head] = await Promise.all([
    c.conn.command(["ZCARD", ks.waiting], ks.meta),
    c.conn.command(["ZCARD", ks.outbox], ks.meta),
    c.conn.command(["ZRANGE", ks.outbox, "0", "0", "WITHSCORES"], ks.meta),
  ]);
  const [first] = scored(head as GlideReturnType);
  const lag = first === undefined || !Number.isFinite(first[1]) ? 0 : Math.max(0, Date.now() - first[1]);
  return { waitingParents: Number(waiting), outbox: Number(outbox), relayLagMs: lag };
}
