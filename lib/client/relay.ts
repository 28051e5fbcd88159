/**
 * The relay (docs/design/flows.md): it drains the outboxes of some queues — leases their entries
 * (OUTBOX), applies each in its destination queue (grouped by destination, the destinations at once:
 * APPLY for the entries that make jobs, then TELL for outcomes and cancels, which a server at
 * maxmemory still takes), then acknowledges those applied (UNBOX). Delivery is at least once; APPLY is
 * idempotent, so an entry applied twice (a relay that died between apply and acknowledge, whose
 * lease ran out) changes nothing the second time; an acknowledgement of a lease that ran out is
 * refused (`outbox-lost`) and the entry stays for the relay that holds it now.
 *
 * Workers relay the queues they serve; `EchoMQ.relay(queues)` (and `emq relay`) drains queues
 * nobody works.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { Decoder } from "@valkey/valkey-glide";
import { wireCall } from "../wire/mod.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import { callWaited, type DurableOptions, waitFor, wholeNumber } from "./options.ts";

/** How a relay runs. */
export interface RelayOptions {
  /** How long an entry stays leased to this relay (ms; default 10,000): another relay takes it after. */
  readonly leaseMs?: number;
  /** Most entries leased per queue per round (default 100). */
  readonly batch?: number;
  /** How long an idle relay waits before it looks again (ms; default 250): the consistency window's main term. */
  readonly intervalMs?: number;
  /**
   * Acknowledge an entry only once a replica (or `replicas`) of its destination has what it applied:
   * each APPLY and TELL is followed by `WAIT` on the destination's primary. An entry a replica has not
   * acknowledged in time stays leased, and is applied again (changing nothing) once its lease runs
   * out: a failover cannot lose an acknowledged entry's effect. Default: no `WAIT`.
   */
  readonly durable?: boolean | DurableOptions;
  /** Errors of a round (the relay goes on); default `console.error`. */
  readonly onError?: (e: unknown) => void;
}

/** A running relay. */
export interface Relay {
  /** Stops it: the round in flight finishes, then no other starts. */
  stop(): Promise<void>;
}

/** Field `n` (0-based) of a NUL-joined entry: the kind 0, the destination queue 1, the job it is about 2. */
function field(entry: Uint8Array, n: number): string {
  let from = 0;
  for (let i = 0; i < n; i++) from = entry.indexOf(0, from) + 1;
  const to = entry.indexOf(0, from);
  return new TextDecoder().decode(entry.subarray(from, to < 0 ? entry.length : to));
}

/** Whether `entry` makes a job (`child`, `node`: APPLY's) rather than telling one (`done`, `cancel`: TELL's). */
function creates(entry: Uint8Array): boolean {
  const kind = field(entry, 0);
  return kind === "child" || kind === "node";
}

const bytes = (x: unknown): Buffer => (x instanceof Uint8Array ? Buffer.from(x) : Buffer.from(String(x)));

/**
 * One round over `queues`: each queue's free entries leased, applied and acknowledged. Returns the
 * entries acknowledged. The queues go at once, and so do a queue's destinations (entries for
 * different queues are independent; a destination's keep their order in its calls). Per destination
 * its creations go first (APPLY, refused under maxmemory), then its outcomes and cancels (TELL, never
 * refused so: a full server still wakes its parents); the entries of each call that landed are
 * acknowledged (UNBOX) once every call of the queue is done with, and the first failure is thrown
 * after that: what was applied and not acknowledged is leased again after `leaseMs` and applied
 * again, which changes nothing.
 */
export async function relayOnce<P>(c: ClientContext<P>, queues: readonly string[], opts: RelayOptions = {}): Promise<number> {
  const leaseMs = wholeNumber("relay: leaseMs", "lease-ms", opts.leaseMs ?? 10_000, 1);
  const count = wholeNumber("relay: batch", "count", opts.batch ?? 100, 1);
  const wait = waitFor("relay", opts.durable);
  const one = async (queue: string): Promise<number> => {
    const ks = c.keyspace(queue);
    const reply = (await c.impl.call(wireCall("OUTBOX", ks, { lease_ms: leaseMs, count }), Decoder.Bytes)) as unknown[];
    if (reply.length === 0) return 0;
    const leased: Array<{ token: number; entry: Buffer }> = [];
    for (let i = 0; i < reply.length; i += 2) leased.push({ token: Number(reply[i]), entry: bytes(reply[i + 1]) });
    const by = new Map<string, Buffer[]>();
    for (const { entry } of leased) {
      const dest = field(entry, 1);
      const list = by.get(dest);
      if (list === undefined) by.set(dest, [entry]);
      else list.push(entry);
    }
    const landed = new Set<Buffer>();
    let failure: unknown;
    await Promise.all([...by].map(async ([dest, entries]) => {
      for (const [verb, part] of [["APPLY", entries.filter(creates)], ["TELL", entries.filter((e) => !creates(e))]] as const) {
        if (part.length === 0) continue;
        try {
          const call = wireCall(verb, c.keyspace(dest), {}, part.map((entry) => ({ entry })));
          await callWaited(c.impl, call, wait, `relay (${verb})`, dest, wait === undefined ? [] : part.map((e) => field(e, 2)));
          for (const e of part) landed.add(e);
        } catch (e) {
          failure ??= e;
        }
      }
    }));
    const done = leased.filter(({ entry }) => landed.has(entry));
    const acked = done.length === 0 ? 0 : Number(await c.impl.call(wireCall("UNBOX", ks, {}, done.map(({ token, entry }) => ({ deadline: token, entry })))));
    if (failure !== undefined) throw failure;
    return acked;
  };
  const settled = await Promise.allSettled(queues.map(one));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed !== undefined) throw failed.reason;
  return settled.reduce((sum, s) => sum + (s as PromiseFulfilledResult<number>).value, 0);
}

/** See `EchoMQ.relay`: rounds of {@link relayOnce} until stopped, waiting `intervalMs` after an idle one. */
export function relay<P>(c: ClientContext<P>, queues: readonly string[], opts: RelayOptions = {}): Relay {
  if (!Array.isArray(queues) || queues.length === 0) throw new EchoMQError("flow", "relay: name at least one queue");
  for (const q of queues) c.keyspace(q);
  const interval = wholeNumber("relay: intervalMs", "options", opts.intervalMs ?? 250, 1);
  const onError = opts.onError ?? ((e: unknown) => console.error("relay:", e));
  let stopped = false;
  let wake: (() => void) | null = null;
  const loop = (async () => {
    while (!stopped && !c.closed) {
      let n = 0;
      try {
        n = await relayOnce(c, queues, opts);
      } catch (e) {
        if (!stopped && !c.closed) onError(e);
      }
      if (n === 0 && !stopped) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, interval);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        wake = null;
      }
    }
  })();
  return {
    async stop(): Promise<void> {
      stopped = true;
      (wake as (() => void) | null)?.();
      await loop;
    },
  };
}
