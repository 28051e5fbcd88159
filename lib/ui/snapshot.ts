/**
 * Every queue's stats and schedulers for `/metrics`, read in the background: a snapshot of the names discovery
 * knows, `concurrency` queues at a time, taken again `everyMs` after the last one ended while
 * someone scrapes (`idleMs`). A scrape answers from the latest snapshot at once (the first waits
 * for one) and says how old it is (`echomq_snapshot_age_seconds`). A queue whose read fails keeps
 * its last stats; one that vanished between discovery and its read reads as zeros.
 *
 * @module
 */
import type { EchoMQ, FlowStats, QueueMetrics, QueueStats, SchedulerInfo } from "../client/mod.ts";
import type { Discovery } from "./discovery.ts";

/** How often and how hard the snapshot reads. */
export interface SnapshotOptions {
  /** Pause between two snapshots, ms (default 5000). */
  readonly everyMs?: number;
  /** Queues read at once (default 16). */
  readonly concurrency?: number;
  /** Snapshots stop when nobody read for this long, ms (default 120000). */
  readonly idleMs?: number;
}

/**
 * One snapshot: when it was taken (ms since the epoch), and each queue's stats, schedulers and
 * the time its next job to claim became ready (null: none pending) in name order.
 */
export interface Snapshot {
  readonly at: number;
  readonly stats: ReadonlyArray<readonly [string, QueueStats]>;
  /** Each queue's pending head (the job claimed next): when it was admitted or fell due, ms; null when none is pending. */
  readonly oldest: ReadonlyArray<readonly [string, number | null]>;
  /** Each queue's latency histograms, as the server keeps them (`mq.metrics`). */
  readonly latency: ReadonlyArray<readonly [string, QueueMetrics["latency"]]>;
  readonly schedulers: ReadonlyArray<readonly [string, ReadonlyArray<SchedulerInfo<unknown>>]>;
  /** Each queue's flows: parents waiting, its outbox's length and relay lag (`mq.flowStats`). */
  readonly flows: ReadonlyArray<readonly [string, FlowStats]>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `read` of each of `names`, `concurrency` at a time, in name order. */
async function eachOf<T>(names: readonly string[], read: (name: string) => Promise<T>, concurrency: number): Promise<Array<[string, T]>> {
  const out = new Array<[string, T]>(names.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < names.length) {
      const i = next++;
      out[i] = [names[i]!, await read(names[i]!)];
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, names.length) }, lane));
  return out;
}

/** When `queue`'s pending head (the job claimed next) became ready — admitted, or due — ms; null when none is pending. */
export async function oldestPending(mq: EchoMQ<unknown>, queue: string): Promise<number | null> {
  const [head] = await mq.jobs(queue, "pending", { limit: 1 });
  return head === undefined ? null : Math.max(head.createdAt, head.dueAt ?? 0);
}

/** Each of `names`' stats, read `concurrency` at a time. */
export function statsOf(mq: EchoMQ<unknown>, names: readonly string[], concurrency = 16): Promise<Array<[string, QueueStats]>> {
  return eachOf(names, (q) => mq.stats(q), concurrency);
}

/** The background snapshot of every queue's stats. */
export class StatsSnapshot {
  readonly #mq: EchoMQ<unknown>;
  readonly #discovery: Discovery;
  readonly #everyMs: number;
  readonly #concurrency: number;
  readonly #idleMs: number;
  #latest: Snapshot | null = null;
  #first: Promise<Snapshot> | null = null;
  #running = false;
  #readAt = 0;
  #closed = false;

  /** Nothing is read until the first {@link read}. */
  constructor(mq: EchoMQ<unknown>, discovery: Discovery, options: SnapshotOptions = {}) {
    this.#mq = mq;
    this.#discovery = discovery;
    this.#everyMs = options.everyMs ?? 5000;
    this.#concurrency = options.concurrency ?? 16;
    this.#idleMs = options.idleMs ?? 120_000;
  }

  /** The latest snapshot (the first call, and the first after an idle spell, waits for one). */
  async read(): Promise<Snapshot> {
    this.#readAt = Date.now();
    const latest = this.#latest;
    // none yet, or left from before an idle spell: read one now
    if (latest === null || Date.now() - latest.at > this.#idleMs) {
      this.#first ??= this.#take().finally(() => (this.#first = null));
      await this.#first;
    }
    if (!this.#running) void this.#run();
    return this.#latest!;
  }

  /** Stops the snapshots. */
  close(): void {
    this.#closed = true;
  }

  async #take(): Promise<Snapshot> {
    const names = await this.#discovery.names();
    const at = Date.now();
    const [stats, schedulers, oldest, latency, flows] = await Promise.all([
      statsOf(this.#mq, names, this.#concurrency),
      eachOf(names, (q) => this.#mq.schedulers(q), this.#concurrency),
      eachOf(names, (q) => oldestPending(this.#mq, q), this.#concurrency),
      eachOf(names, async (q) => (await this.#mq.metrics(q, { minutes: 1 })).latency, this.#concurrency),
      eachOf(names, (q) => this.#mq.flowStats(q), this.#concurrency),
    ]);
    const snap = { at, stats, schedulers, oldest, latency, flows };
    this.#latest = snap;
    return snap;
  }

  async #run(): Promise<void> {
    this.#running = true;
    while (!this.#closed) {
      await sleep(this.#everyMs);
      if (this.#closed || Date.now() - this.#readAt > this.#idleMs) break;
      await this.#take().catch(() => undefined); // the last snapshot stands; its age says so
    }
    this.#running = false;
  }
}
