/**
 * The worker: a pool of loops that claim jobs of one queue, run a handler, and settle each job —
 * ack on success, retry with backoff on a throw, bury after the last attempt — while a timer
 * promotes due jobs and reaps expired leases. A throwing handler never stops the loop; `stop()`
 * lets in-flight jobs finish.
 *
 * @module
 */
import { PayloadDecodeError } from "./errors.ts";
import type { Job, JobRef } from "./job.ts";

/** Runs one job; a throw (or a rejected promise) fails the attempt. */
export type Handler<P> = (job: Job<P>) => unknown | Promise<unknown>;

/** Delay before the next attempt, from the attempts made so far (≥ 1). */
export type Backoff = number | ((attempts: number) => number);

/** Options of `EchoMQ.work`. */
export interface WorkerOptions {
  /** Jobs run at once (default 1). */
  concurrency?: number;
  /** Lease of each claim in ms (default 30000); a job running longer may be reaped and re-run. */
  leaseMs?: number;
  /** Attempts before a failing job is buried (default 3). */
  maxAttempts?: number;
  /** Retry delay in ms: a constant or a function of attempts (default 1000·2^(attempts−1), ≤ 1 h). */
  backoff?: Backoff;
  /** Idle wait in ms between empty claims (default 200). */
  pollMs?: number;
  /** Period in ms of promote + reap (default 1000). */
  maintenanceMs?: number;
  /** Called with every error the loop survives (handler errors are not reported here). */
  onError?: (error: unknown) => void;
}

/** What a worker needs of the client (the `EchoMQ` class provides it). */
export interface WorkerClient<P> {
  /** Claims the next job. */
  claim(queue: string, opts: { leaseMs: number }): Promise<Job<P> | null>;
  /** Acks a job. */
  ack(job: JobRef): Promise<void>;
  /** Retries a job. */
  retry(job: JobRef, opts: { delayMs: number; reason?: string }): Promise<void>;
  /** Buries a job. */
  bury(job: JobRef, reason: string): Promise<void>;
  /** Promotes due jobs. */
  promote(queue: string, limit?: number): Promise<number>;
  /** Reaps expired leases. */
  reap(queue: string, limit?: number): Promise<number>;
}

/** The default backoff: 1 s, 2 s, 4 s, … capped at one hour. */
export function exponentialBackoff(attempts: number): number {
  return Math.min(3_600_000, 1000 * 2 ** Math.max(0, attempts - 1));
}

/** Cuts `text` to at most `max` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

function describe(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/** A running worker; see `EchoMQ.work`. */
export class Worker<P> {
  /** The queue it works. */
  readonly queue: string;
  /** Jobs acked so far. */
  completed = 0;
  /** Attempts that failed so far (retried or buried). */
  failed = 0;
  /** Jobs buried so far. */
  buried = 0;
  readonly #client: WorkerClient<P>;
  readonly #handler: Handler<P>;
  readonly #leaseMs: number;
  readonly #maxAttempts: number;
  readonly #backoff: Backoff;
  readonly #pollMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #loops: Promise<void>[];
  readonly #sleepers: Set<() => void> = new Set();
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #onStop: () => void;
  #maintenance: Promise<void> | null = null;
  #stopping = false;
  #stopped: Promise<void> | null = null;

  /** Starts the loops and the maintenance timer; use `EchoMQ.work` rather than this. */
  constructor(client: WorkerClient<P>, queue: string, handler: Handler<P>, opts: WorkerOptions, onStop: () => void) {
    this.#client = client;
    this.queue = queue;
    this.#handler = handler;
    this.#leaseMs = opts.leaseMs ?? 30_000;
    this.#maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
    this.#backoff = opts.backoff ?? exponentialBackoff;
    this.#pollMs = opts.pollMs ?? 200;
    this.#onError = opts.onError ?? (() => {});
    this.#onStop = onStop;
    const concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
    this.#timer = setInterval(() => void this.#maintain(), opts.maintenanceMs ?? 1000);
    void this.#maintain();
    this.#loops = Array.from({ length: concurrency }, () => this.#loop());
  }

  /** True until `stop()` is called. */
  get running(): boolean {
    return !this.#stopping;
  }

  #report(e: unknown): void {
    try {
      this.#onError(e);
    } catch {
      // a throwing onError must not stop the worker either
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    return new Promise<void>((done) => {
      const wake = (): void => {
        clearTimeout(t);
        this.#sleepers.delete(wake);
        done();
      };
      const t = setTimeout(wake, ms);
      this.#sleepers.add(wake);
    });
  }

  #maintain(): Promise<void> {
    if (this.#maintenance || this.#stopping) return this.#maintenance ?? Promise.resolve();
    this.#maintenance = (async () => {
      try {
        await this.#client.promote(this.queue);
        await this.#client.reap(this.queue);
      } catch (e) {
        this.#report(e);
      } finally {
        this.#maintenance = null;
      }
    })();
    return this.#maintenance;
  }

  async #loop(): Promise<void> {
    while (!this.#stopping) {
      let job: Job<P> | null;
      try {
        job = await this.#client.claim(this.queue, { leaseMs: this.#leaseMs });
      } catch (e) {
        if (e instanceof PayloadDecodeError) {
          // claimed but unreadable: a failed attempt (retried, then buried), not a stuck lease
          await this.#settle(e.job as JobRef & { attempts: number }, true, e);
          continue;
        }
        this.#report(e);
        await this.#sleep(this.#pollMs);
        continue;
      }
      if (job === null) {
        await this.#sleep(this.#pollMs);
        continue;
      }
      await this.#run(job);
    }
  }

  async #run(job: Job<P>): Promise<void> {
    let failure: unknown = null;
    let threw = false;
    try {
      await this.#handler(job);
    } catch (e) {
      threw = true;
      failure = e;
    }
    await this.#settle(job, threw, failure);
  }

  async #settle(job: JobRef & { readonly attempts: number }, threw: boolean, failure: unknown): Promise<void> {
    try {
      if (!threw) {
        await this.#client.ack(job);
        this.completed++;
        return;
      }
      this.failed++;
      const reason = truncateUtf8(describe(failure), 4096);
      if (job.attempts >= this.#maxAttempts) {
        await this.#client.bury(job, reason);
        this.buried++;
      } else {
        const b = this.#backoff;
        const raw = typeof b === "function" ? b(job.attempts) : b;
        const delayMs = Math.max(1, Math.floor(Number.isFinite(raw) ? raw : 1));
        await this.#client.retry(job, { delayMs, reason });
      }
    } catch (e) {
      this.#report(e);
    }
  }

  /**
   * Stops claiming; resolves once every in-flight job has been run and settled (acked, retried
   * or buried). Safe to call more than once.
   */
  stop(): Promise<void> {
    if (this.#stopped) return this.#stopped;
    this.#stopping = true;
    clearInterval(this.#timer);
    for (const wake of [...this.#sleepers]) wake();
    this.#stopped = Promise.all([...this.#loops, this.#maintenance ?? Promise.resolve()]).then(() => {
      this.#onStop();
    });
    return this.#stopped;
  }
}
