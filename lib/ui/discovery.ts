/**
 * Which queues exist, for the dashboard, without a keyspace walk per request: a walk of
 * `emq:{*}:meta` (mq.scanQueues) in the background, one SCAN step every `stepMs` (bounded rate:
 * with 1,000,000 job rows a walk is about 1,000 steps), a pause of `cycleMs` between walks, and the
 * names found kept sorted for the pages and `/metrics` to read. A queue appears as soon as a step
 * finds it; one dropped goes at the end of the walk that no longer found it. The first walk goes
 * unpaced, and the first read waits for it at most `firstWaitMs` (then answers with what it found
 * so far, {@link Discovery.complete} false); walks stop while nobody asks (`idleMs`) and resume on
 * the next read. Names the client cannot read (not UTF-8) are kept apart, escaped.
 *
 * @module
 */
import type { EchoMQ } from "../client/mod.ts";

/** How fast {@link Discovery} walks. */
export interface DiscoveryOptions {
  /** Keys asked per SCAN step (default 1000). */
  readonly count?: number;
  /** Pause between two steps of a walk after the first, ms (default 25: at most 40 steps a second). */
  readonly stepMs?: number;
  /** Pause between walks, ms (default 5000). */
  readonly cycleMs?: number;
  /** How long the first read waits for the first walk, ms (default 500). */
  readonly firstWaitMs?: number;
  /**
   * A fixed list of queues instead of walks: for an ACL user limited to some queues (SCAN is not
   * ACL-filtered, so a walk finds every tenant's names, and their stats would be refused).
   */
  readonly queues?: readonly string[];
  /** Walks stop when nobody read the names for this long, ms (default 60000). */
  readonly idleMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The dashboard's view of which queues exist. */
export class Discovery {
  readonly #mq: EchoMQ<unknown>;
  readonly #count: number;
  readonly #stepMs: number;
  readonly #cycleMs: number;
  readonly #idleMs: number;
  readonly #firstWaitMs: number;
  readonly #fixed: readonly string[] | null;
  #names: string[] = [];
  #known = new Set<string>();
  #unreadable: string[] = [];
  #walks = 0;
  #readAt = 0;
  #running: Promise<void> | null = null;
  #first: Promise<void> | null = null;
  #firstWait: Promise<void> | null = null;
  #closed = false;
  #error: unknown = null;

  /** Nothing is read until the first {@link names} call. */
  constructor(mq: EchoMQ<unknown>, options: DiscoveryOptions = {}) {
    this.#mq = mq;
    this.#count = options.count ?? 1000;
    this.#stepMs = options.stepMs ?? 25;
    this.#cycleMs = options.cycleMs ?? 5000;
    this.#firstWaitMs = options.firstWaitMs ?? 500;
    this.#fixed = options.queues === undefined ? null : [...new Set(options.queues)].sort();
    this.#idleMs = options.idleMs ?? 60_000;
  }

  /**
   * The queue names, sorted. The first call (and any that come while it waits) waits for the
   * first walk, at most `firstWaitMs` (and throws if it failed); later calls answer at once, with
   * what the walk found so far until it ends.
   */
  async names(): Promise<readonly string[]> {
    if (this.#fixed !== null) return this.#fixed;
    this.#readAt = Date.now();
    this.#first ??= this.#walk(0);
    this.#running ??= this.#run();
    if (this.#walks === 0) {
      // One wait, shared by the reads that come during it: once it is over, a read answers at
      // once with what the walk found so far. (Each read waiting anew kept every page and the
      // first snapshot 500 ms late for as long as the first walk of a large keyspace ran.)
      let timer: ReturnType<typeof setTimeout> | undefined;
      this.#firstWait ??= Promise.race([this.#first, new Promise<void>((r) => (timer = setTimeout(r, this.#firstWaitMs)))])
        .finally(() => clearTimeout(timer));
      try {
        await this.#firstWait;
      } catch (e) {
        this.#firstWait = null; // the first walk failed: the next read starts one and waits again
        throw e;
      }
    }
    return this.#names;
  }

  /** Whether a whole walk has finished (until then the names are those found so far). */
  get complete(): boolean {
    return this.#fixed !== null || this.#walks > 0;
  }

  /** `meta` keys found whose name is not UTF-8, escaped (`emq:{\xff}:meta`). */
  get unreadable(): readonly string[] {
    return this.#unreadable;
  }

  /** How many walks have finished. */
  get walks(): number {
    return this.#walks;
  }

  /** Adds a name the dashboard saw in use (a page of a queue that exists), before a walk finds it. */
  saw(name: string): void {
    if (this.#fixed === null) this.#add([name]);
  }

  /** `names` in the list, those it does not hold yet (one sort for them all). */
  #add(names: readonly string[]): void {
    const fresh = names.filter((n) => !this.#known.has(n));
    if (fresh.length === 0) return;
    for (const n of fresh) this.#known.add(n);
    this.#names = [...this.#names, ...fresh].sort();
  }

  /** Stops walking. */
  close(): void {
    this.#closed = true;
  }

  /** Walks again and again, paced, while someone reads; the first walk is {@link names}'s. */
  async #run(): Promise<void> {
    try {
      await this.#first;
    } catch {
      this.#first = null; // the next read tries again
      this.#running = null;
      return;
    }
    while (!this.#closed) {
      await sleep(this.#cycleMs);
      if (this.#closed || Date.now() - this.#readAt > this.#idleMs) break;
      try {
        await this.#walk(this.#stepMs);
        this.#error = null;
      } catch (e) {
        this.#error = e; // the names found before stay; the next walk tries again
      }
    }
    this.#running = null;
  }

  /** The last walk's failure, or null. */
  get error(): unknown {
    return this.#error;
  }

  /** One walk, `stepMs` between steps; the names it found replace the list at its end. */
  async #walk(stepMs: number): Promise<void> {
    const found = new Set<string>();
    const unreadable = new Set<string>();
    let first = true;
    for await (const page of this.#mq.scanQueues({ count: this.#count })) {
      if (this.#closed) return;
      for (const n of page.names) found.add(n);
      this.#add(page.names);
      for (const k of page.unreadable) unreadable.add(k);
      if (!first && stepMs > 0) await sleep(stepMs);
      first = false;
    }
    this.#names = [...found].sort();
    this.#known = found;
    this.#unreadable = [...unreadable].sort();
    this.#walks++;
  }
}
