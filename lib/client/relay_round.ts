/**
 * One relay round (docs/design/flows.md, "Relaying"): the outboxes of some queues leased (OUTBOX),
 * their entries applied in their destination queues — grouped by destination across all the
 * queues of the round, so that twelve child queues' outcomes for one parent queue are one TELL,
 * not twelve — then acknowledged per source queue (UNBOX): in the round itself, or (a running
 * relay) in one request with the queue's next lease, so that a busy queue costs two requests a
 * round, not three.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { Decoder } from "@valkey/valkey-glide";
import { type WireCall, wireCall } from "../wire/mod.ts";
import type { WaitFor } from "./backend.ts";
import type { ClientContext } from "./context.ts";
import { callWaited } from "./options.ts";

const text = new TextDecoder();

/** Field `n` (0-based) of a NUL-joined entry: the kind 0, the destination queue 1, the job it is about 2. */
function field(entry: Uint8Array, n: number): string {
  let from = 0;
  for (let i = 0; i < n; i++) from = entry.indexOf(0, from) + 1;
  const to = entry.indexOf(0, from);
  return text.decode(entry.subarray(from, to < 0 ? entry.length : to));
}

/** Whether an entry of `kind` makes a job (`child`, `node`: APPLY's) rather than telling one (`done`, `cancel`: TELL's). */
const creates = (kind: string): boolean => kind === "child" || kind === "node";

const bytes = (x: unknown): Buffer => (x instanceof Uint8Array ? Buffer.from(x) : Buffer.from(String(x)));

/** How a round runs: the options of `RelayOptions`, checked. */
export interface RoundOptions {
  /** How long an entry stays leased (ms). */
  readonly leaseMs: number;
  /** Most entries leased per queue. */
  readonly count: number;
  /** The replicas each APPLY and TELL waits for, or none. */
  readonly wait: WaitFor | undefined;
}

/** What a round did in one source queue. */
export interface QueueRound {
  /** The source queue. */
  readonly queue: string;
  /** Entries it leased. */
  readonly leased: number;
  /** Entries it acknowledged. */
  readonly acked: number;
  /** The first failure of a call that carried its entries (they stay leased, applied again later), if any. */
  readonly error?: unknown;
}

/** One leased entry, the queue it came from, and whether it makes a job (APPLY) or tells one (TELL). */
interface Leased {
  readonly queue: number;
  readonly token: number;
  readonly entry: Buffer;
  readonly creates: boolean;
}

/** Leased entries applied, to acknowledge: each with its lease's token. */
type Applied = ReadonlyArray<{ readonly token: number; readonly entry: Buffer }>;

/** Entries applied and not yet acknowledged, by source queue: their UNBOX goes with the queue's next OUTBOX. */
export type Unacked = Map<string, Applied>;

/** UNBOX of `entries` in `queue`. */
const unbox = <P>(c: ClientContext<P>, queue: string, entries: Applied): WireCall =>
  wireCall("UNBOX", c.keyspace(queue), {}, entries.map(({ token, entry }) => ({ deadline: token, entry })));

/** Acknowledges `unacked`'s entries of `queues` now (a relay that stops relaying them); their count. */
export async function flushUnacked<P>(c: ClientContext<P>, queues: readonly string[], unacked: Unacked): Promise<number> {
  const counts = await Promise.all(queues.map(async (queue) => {
    const entries = unacked.get(queue);
    unacked.delete(queue);
    return entries === undefined || entries.length === 0 ? 0 : Number(await c.impl.call(unbox(c, queue, entries)));
  }));
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * One round over `queues`. The queues are leased at once; then every destination at once (entries
 * for different queues are independent; a destination's keep, per source queue, their order in its
 * calls): its creations first (APPLY, refused under maxmemory), then its outcomes and cancels (TELL,
 * never refused so: a full server still wakes its parents). Once every call is done with, each
 * source queue's entries that landed are acknowledged (UNBOX) — or, given `unacked`, left there for
 * the next round, whose lease of the queue carries them (`acked` counts those it carried). Never throws: each queue's first
 * failure is in its {@link QueueRound}; what was applied and not acknowledged is leased again after
 * `leaseMs` and applied again, which changes nothing.
 */
export async function relayRound<P>(c: ClientContext<P>, queues: readonly string[], o: RoundOptions, unacked?: Unacked): Promise<QueueRound[]> {
  const errors: unknown[] = queues.map(() => undefined);
  const acked: number[] = queues.map(() => 0);
  const fail = (i: number, e: unknown): void => {
    errors[i] ??= e;
  };
  const leased: Leased[][] = await Promise.all(queues.map(async (queue, i) => {
    try {
      const lease = wireCall("OUTBOX", c.keyspace(queue), { lease_ms: o.leaseMs, count: o.count });
      const last = unacked?.get(queue);
      unacked?.delete(queue);
      let reply: unknown[];
      if (last === undefined || last.length === 0) reply = (await c.impl.call(lease, Decoder.Bytes)) as unknown[];
      else {
        // the last round's acknowledgement, then this round's lease: one request
        const [ack, out] = await c.impl.callMany([unbox(c, queue, last), lease], undefined, Decoder.Bytes);
        if (ack instanceof Error) fail(i, ack);
        else acked[i] = Number(ack);
        if (out instanceof Error) throw out;
        reply = out as unknown[];
      }
      const out: Leased[] = [];
      for (let k = 0; k < reply.length; k += 2) {
        const entry = bytes(reply[k + 1]);
        out.push({ queue: i, token: Number(reply[k]), entry, creates: creates(field(entry, 0)) });
      }
      return out;
    } catch (e) {
      fail(i, e);
      return [];
    }
  }));
  const by = new Map<string, Leased[]>();
  for (const list of leased) {
    for (const l of list) {
      const dest = field(l.entry, 1);
      const group = by.get(dest);
      if (group === undefined) by.set(dest, [l]);
      else group.push(l);
    }
  }
  const landed = new Set<Leased>();
  await Promise.all([...by].map(async ([dest, entries]) => {
    for (const [verb, part] of [["APPLY", entries.filter((l) => l.creates)], ["TELL", entries.filter((l) => !l.creates)]] as const) {
      if (part.length === 0) continue;
      try {
        const call = wireCall(verb, c.keyspace(dest), {}, part.map((l) => ({ entry: l.entry })));
        await callWaited(c.impl, call, o.wait, `relay (${verb})`, dest, o.wait === undefined ? [] : part.map((l) => field(l.entry, 2)));
        for (const l of part) landed.add(l);
      } catch (e) {
        for (const l of part) fail(l.queue, e);
      }
    }
  }));
  return await Promise.all(queues.map(async (queue, i): Promise<QueueRound> => {
    const done = leased[i]!.filter((l) => landed.has(l));
    if (done.length > 0 && unacked !== undefined) unacked.set(queue, done);
    else if (done.length > 0) {
      try {
        acked[i] = Number(await c.impl.call(unbox(c, queue, done)));
      } catch (e) {
        fail(i, e);
      }
    }
    const error = errors[i];
    const round = { queue, leased: leased[i]!.length, acked: acked[i]! };
    return error === undefined ? round : { ...round, error };
  }));
}
