/**
 * Which queues exist, for the dashboard, without a keyspace walk per request: a walk of
 * `emq:{*}:meta` (mq.scanQueues) in the background, one SCAN step every `stepMs` (bounded rate:
 * with 1,000,000 job rows a walk is about 1,000 steps), a pause of `cycleMs` between walks, and the
 * names found kept sorted for the pages and `/metrics` to read. A queue appears as soon as a step
 * finds it; one dropped goes at the end of the walk that no longer found it. The first walk goes
 * unpaced (the first page waits for it); walks stop while nobody asks (`idleMs`) and resume on
 * the next read. Names the client cannot read (not UTF-8) are kept apart, escaped.
 *
 * @module
 */
import type { EchoMQ } from "../client/mod.ts";

/** How fast {@link Discovery} walks. */
export interface DiscoveryOptions {
  /** Keys asked per SCAN step (default 1000). */
  readonly count?: number;
  /** Pause between two steps of a walk after the first, ms (default 10: at most 100 steps a second). */
  readonly stepMs?: number;
  /** Pause between walks, ms (default 2000). */
  readonly cycleMs?: number;
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
  #names: string[] = [];
  #known = new Set<string>();
  #unreadable: string[] = [];
  #walks = 0;
  #readAt = 0;
  #running: Promise<void> | null = null;
  #first: Promise<void> | null = null;
  #closed = false;
  #error: unknown = null;

  /** Nothing is read until the first {@link names} call. */
  constructor(mq: EchoMQ<unknown>, options: DiscoveryOptions = {}) {
    this.#mq = mq;
    this.#count = options.count ?? 1000;
    this.#stepMs = options.stepMs ?? 10;
    this.#cycleMs = options.cycleMs ?? 2000;
    this.#idleMs = options.idleMs ?? 60_000;
  }

  /** The queue names, sorted; the first call waits for a whole walk (and throws if it failed). */
  async names(): Promise<readonly string[]> {
    this.#readAt = Date.now();
    this.#first ??= this.#walk(0);
    this.#running ??= this.#run();
    await this.#first;
    return this.#names;
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
    if (this.#walks > 0) this.#add(name);
  }

  /** `name` in the list, if it is not yet. */
  #add(name: string): void {
    if (this.#known.has(name)) return;
    this.#known.add(name);
    this.#names = [...this.#names, name].sort();
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
      for (const n of page.names) {
        found.add(n);
        if (this.#walks > 0) this.#add(n);
      }
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
