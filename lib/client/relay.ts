/**
 * The relay (docs/design/flows.md): it drains the outboxes of some queues in rounds
 * (relay_round.ts) — leases their entries (OUTBOX), applies each in its destination queue (grouped
 * by destination, the destinations at once: APPLY for the entries that make jobs, then TELL for
 * outcomes and cancels, which a server at maxmemory still takes), then acknowledges those applied
 * (UNBOX). Delivery is at least once; APPLY is idempotent, so an entry applied twice (a relay that
 * died between apply and acknowledge, whose lease ran out) changes nothing the second time; an
 * acknowledgement of a lease that ran out is refused (`outbox-lost`) and the entry stays for the
 * relay that holds it now.
 *
 * A round starts every `intervalMs` (at once after one that leased a full batch of a queue). The
 * workers of one client with the same relay options share one relay over all their queues: a
 * round's calls go out together, and a destination's entries from all of them are one call.
 * `EchoMQ.relay(queues)` (and `emq relay`) drains queues nobody works.
 *
 * @module
 */
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import { type DurableOptions, waitFor, wholeNumber } from "./options.ts";
import { flushUnacked, relayRound, type RoundOptions, type Unacked } from "./relay_round.ts";

/** How a relay runs. */
export interface RelayOptions {
  /** How long an entry stays leased to this relay (ms; default 10,000): another relay takes it after. */
  readonly leaseMs?: number;
  /** Most entries leased per queue per round (default 100). */
  readonly batch?: number;
  /**
   * How often a round starts (ms; default 250): the consistency window's main term. A round that
   * leased a full batch of a queue is followed at once.
   */
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

/** The options of a round, checked. */
function roundOptions(opts: RelayOptions): RoundOptions {
  return {
    leaseMs: wholeNumber("relay: leaseMs", "lease-ms", opts.leaseMs ?? 10_000, 1),
    count: wholeNumber("relay: batch", "count", opts.batch ?? 100, 1),
    wait: waitFor("relay", opts.durable),
  };
}

/**
 * One round over `queues` (relay_round.ts): each queue's free entries leased, applied and
 * acknowledged. Returns the entries acknowledged; throws the first failure once the round is done
 * (what was applied and not acknowledged is leased again after `leaseMs`, and applied again, which
 * changes nothing).
 */
export async function relayOnce<P>(c: ClientContext<P>, queues: readonly string[], opts: RelayOptions = {}): Promise<number> {
  const rounds = await relayRound(c, queues, roundOptions(opts));
  const failed = rounds.find((r) => r.error !== undefined);
  if (failed !== undefined) throw failed.error;
  return rounds.reduce((sum, r) => sum + r.acked, 0);
}

/** Who relays some queues through a {@link RelayLoop}: its queues' failures go to its `onError`. */
interface Member {
  readonly queues: readonly string[];
  readonly onError: (e: unknown) => void;
}

/** Rounds of {@link relayRound} over its members' queues, one every `interval` ms, until it has none. */
class RelayLoop<P> {
  readonly #c: ClientContext<P>;
  readonly #o: RoundOptions;
  readonly #interval: number;
  readonly #onEnd: () => void;
  readonly #members = new Set<Member>();
  /** Ends the wait between rounds. */
  #wake: (() => void) | null = null;
  /** The round in flight (a member stopping waits for it). */
  #round: Promise<unknown> = Promise.resolve();
  /**
   * Entries applied whose UNBOX goes with their queue's next lease (one request, not two) — unless
   * a round's wait comes near a lease: then each round acknowledges its own.
   */
  readonly #unacked: Unacked | undefined;
  /** Resolves once the loop ended: no member left, or the client closed. */
  done: Promise<void> = Promise.resolve();
  #started = false;
  /** The loop ended (a member joins a new one). */
  ended = false;

  constructor(c: ClientContext<P>, o: RoundOptions, interval: number, onEnd: () => void) {
    this.#c = c;
    this.#o = o;
    this.#interval = interval;
    this.#onEnd = onEnd;
    this.#unacked = interval * 4 <= o.leaseMs ? new Map() : undefined;
  }

  /**
   * Adds `member` (the first starts the loop); its handle stops it: the round in flight finishes,
   * then none relays its queues for it.
   */
  join(member: Member): Relay {
    this.#members.add(member);
    if (!this.#started) {
      this.#started = true;
      this.done = this.#run().finally(() => {
        this.ended = true;
        this.#onEnd();
      });
    }
    return {
      stop: async (): Promise<void> => {
        this.#members.delete(member);
        if (this.#members.size === 0) this.#wake?.();
        await this.#round.catch(() => {});
        // what the last rounds applied in the queues no round relays now is acknowledged here
        const relayed = new Set([...this.#members].flatMap((m) => m.queues));
        const left = member.queues.filter((q) => !relayed.has(q));
        if (this.#unacked !== undefined && left.length > 0 && !this.#c.closed) {
          await flushUnacked(this.#c, left, this.#unacked).catch((e: unknown) => member.onError(e));
        }
      },
    };
  }

  async #run(): Promise<void> {
    while (this.#members.size > 0 && !this.#c.closed) {
      const started = performance.now();
      const queues = [...new Set([...this.#members].flatMap((m) => m.queues))];
      const round = relayRound(this.#c, queues, this.#o, this.#unacked);
      this.#round = round;
      let full = false;
      // (a round never throws; were it to, its queues hear of it and the loop goes on)
      const results = await round.catch((e: unknown) => queues.map((queue) => ({ queue, leased: 0, acked: 0, error: e })));
      for (const r of results) {
        if (r.leased >= this.#o.count) full = true;
        if (r.error === undefined || this.#c.closed) continue;
        // the first member that relays the queue hears of it (none: it stopped meanwhile)
        for (const m of this.#members) {
          if (!m.queues.includes(r.queue)) continue;
          m.onError(r.error);
          break;
        }
      }
      const rest = this.#interval - (performance.now() - started);
      if (full || rest <= 0 || this.#members.size === 0) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, rest);
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = null;
    }
  }
}

/** Checks a relay's queues and options: the round's options and the interval. */
function checked<P>(c: ClientContext<P>, queues: readonly string[], opts: RelayOptions): { o: RoundOptions; interval: number } {
  if (!Array.isArray(queues) || queues.length === 0) throw new EchoMQError("flow", "relay: name at least one queue");
  for (const q of queues) c.keyspace(q);
  const interval = wholeNumber("relay: intervalMs", "options", opts.intervalMs ?? 250, 1);
  return { o: roundOptions(opts), interval };
}

const defaultOnError = (e: unknown): void => console.error("relay:", e);

/** See `EchoMQ.relay`: rounds of {@link relayRound} over `queues` until stopped, one every `intervalMs`. */
export function relay<P>(c: ClientContext<P>, queues: readonly string[], opts: RelayOptions = {}): Relay {
  const { o, interval } = checked(c, queues, opts);
  const loop = new RelayLoop(c, o, interval, () => {});
  const member = loop.join({ queues: [...queues], onError: opts.onError ?? defaultOnError });
  return {
    async stop(): Promise<void> {
      await member.stop();
      await loop.done;
    },
  };
}

/** Each client's shared relays (see {@link joinRelay}), by their options. */
const shared = new WeakMap<object, Map<string, RelayLoop<unknown>>>();

/**
 * Relays `queue` in the client's shared relay of these options (a worker's `relay` option): one
 * loop for all the queues of the workers of one client, so that a round's calls go out together and
 * a destination's entries from all of them are one call. `onError` hears of `queue`'s failures.
 */
export function joinRelay<P>(c: ClientContext<P>, queue: string, opts: RelayOptions = {}): Relay {
  const { o, interval } = checked(c, [queue], opts);
  let loops = shared.get(c);
  if (loops === undefined) shared.set(c, loops = new Map());
  const key = JSON.stringify([o.leaseMs, o.count, o.wait ?? null, interval]);
  let loop = loops.get(key) as RelayLoop<P> | undefined;
  if (loop === undefined || loop.ended) {
    const fresh: RelayLoop<P> = new RelayLoop(c, o, interval, () => {
      if (loops.get(key) === fresh) loops.delete(key);
    });
    loops.set(key, fresh as RelayLoop<unknown>);
    loop = fresh;
  }
  return loop.join({ queues: [queue], onError: opts.onError ?? defaultOnError });
}
