/**
 * The worker: claims jobs of one queue, runs a handler on each, and settles each job — ack on
 * success, retry with backoff on a throw, bury after the last attempt — while a timer promotes due
 * jobs and reaps expired leases. A throwing handler never stops it; `stop()` lets in-flight jobs
 * finish and settles them.
 *
 * How it spends round trips: free slots are claimed together, `k` CLAIMs in one batch (from a
 * concurrency of 16 up, two claim batches in flight, so that one is on the wire while the other's
 * jobs run); finished jobs are settled together, every ack / retry / bury queued in one tick
 * going out in one batch on the next macrotask. When a claim comes back short, the queue is dry:
 * from then on a single claim of one job at a time (the scout) polls, waiting 1 ms, 2 ms, 4 ms …
 * up to `pollMs` between empty claims, while every other slot stays parked — it claims nothing
 * until the scout finds a job (then all free slots claim at once) or a slot frees.
 *
 * @module
 */
import { JobNotActiveError, PayloadDecodeError } from "./errors.ts";
import type { Job, JobRef, Settlement } from "./job.ts";

/** Runs one job; a throw (or a rejected promise) fails the attempt. */
export type Handler<P> = (job: Job<P>) => unknown | Promise<unknown>;

/** Delay before the next attempt, from the attempts made so far (≥ 1). */
export type Backoff = number | ((attempts: number) => number);

/** Default `pollMs` of a worker. */
export const DEFAULT_POLL_MS = 20;

/** Options of `EchoMQ.work`. */
export interface WorkerOptions {
  /**
   * Jobs claimed at once (default 1): never more than this many jobs are claimed and not yet
   * settled (each holds a lease), so at most this many handlers run at once.
   */
  concurrency?: number;
  /** Lease of each claim in ms (default 30000); a job running longer may be reaped and re-run. */
  leaseMs?: number;
  /** Attempts before a failing job is buried (default 3). */
  maxAttempts?: number;
  /** Retry delay in ms: a constant or a function of attempts (default 1000·2^(attempts−1), ≤ 1 h). */
  backoff?: Backoff;
  /**
   * Longest wait in ms between two claims of an idle worker (default {@link DEFAULT_POLL_MS}, 20).
   * Once a claim comes back empty, one claim at a time polls the queue, whatever the concurrency:
   * it waits 1 ms after the first empty claim and doubles the wait after each further one, up to
   * `pollMs`; the first job it finds wakes every free slot. So an idle worker costs about
   * 1000 / `pollMs` empty CLAIMs a second (≈ 50 at the default, ≈ 5 at 200) plus the maintenance
   * calls, and a job enqueued on an idle worker's queue starts after about `pollMs` / 2 on average
   * (at most `pollMs`) plus a round trip; sooner if the worker was busy a moment before.
   */
  pollMs?: number;
  /** Period in ms of promote + reap (default 1000). */
  maintenanceMs?: number;
  /**
   * Called with every error the worker survives: a failed claim, promote or reap, and every ack,
   * retry or bury the server refused (a {@link JobNotActiveError} when the job's lease ran out
   * and it was reaped; see {@link Worker.lost}). Handler errors are not reported here.
   */
  onError?: (error: unknown) => void;
}

/** What a worker needs of the client (the `EchoMQ` class provides it). */
export interface WorkerClient<P> {
  /** Claims the next job. */
  claim(queue: string, opts: { leaseMs: number }): Promise<Job<P> | null>;
  /**
   * Claims up to `n` jobs in one round trip (an undecodable one as the error naming it); without
   * it the worker sends `n` single claims at once.
   */
  claimMany?(queue: string, n: number, opts: { leaseMs: number }): Promise<Array<Job<P> | PayloadDecodeError>>;
  /** Acks a job. */
  ack(job: JobRef): Promise<void>;
  /** Retries a job. */
  retry(job: JobRef, opts: { delayMs: number; reason?: string }): Promise<void>;
  /** Buries a job. */
  bury(job: JobRef, reason: string): Promise<void>;
  /**
   * Settles many jobs in one round trip: per settlement `null` (applied) or the error that refused
   * it; without it the worker sends single acks, retries and buries at once.
   */
  settleMany?(settlements: readonly Settlement[]): Promise<Array<Error | null>>;
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

/**
 * Claim batches in flight at once while jobs keep coming, each for up to concurrency / this many
 * jobs: two from this concurrency up (one batch on the wire while the other's jobs run), else one
 * (small batches cost more per job than the overlap saves; measured side by side).
 */
const TWO_STREAMS_FROM = 16;
/** Queued settles that flush at once instead of on the next macrotask. */
const FLUSH_AT = 256;

/** Runs `task` on the next macrotask (after pending I/O callbacks), in Bun, Node and Deno. */
const immediate = (globalThis as { setImmediate?: (task: () => void) => unknown }).setImmediate;
const nextMacrotask: (task: () => void) => void = typeof immediate === "function"
  ? (task) => void immediate(task)
  : (task) => void setTimeout(task, 0);

/** A queued settle: what to send, and how to count its outcome. */
interface Queued {
  readonly settlement: Settlement;
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
  /**
   * Settles (ack, retry or bury) refused because the job was no longer active — its lease ran out
   * and it was reaped, so it runs again elsewhere; each is also reported to `onError`.
   */
  lost = 0;
  readonly #client: WorkerClient<P>;
  readonly #handler: Handler<P>;
  readonly #concurrency: number;
  readonly #streams: number;
  readonly #batchMax: number;
  readonly #leaseMs: number;
  readonly #maxAttempts: number;
  readonly #backoff: Backoff;
  readonly #pollMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #timer: ReturnType<typeof setInterval>;
  readonly #onStop: () => void;
  /** Claims, handler runs and settle batches still going (stop waits for them). */
  #busy = 0;
  /** Wakes `stop()` once nothing is going. */
  #drained: (() => void) | null = null;
  /** Slots taken: jobs asked for by claims in flight, plus jobs claimed and not yet settled. */
  #held = 0;
  /** Claim batches in flight. */
  #claiming = 0;
  /** The last claim came back short: one claim of one job at a time (the scout). */
  #scouting = false;
  /** The scout's wait before its next claim (null: claim at once). */
  #wait: number | null = null;
  /** The scout's pending wait (or the pause after a failed claim). */
  #pause: ReturnType<typeof setTimeout> | null = null;
  /** Settles waiting for the next flush. */
  #queued: Queued[] = [];
  #flushPending = false;
  #maintenance: Promise<void> | null = null;
  #stopping = false;
  #stopped: Promise<void> | null = null;

  /** Starts claiming and the maintenance timer; use `EchoMQ.work` rather than this. */
  constructor(client: WorkerClient<P>, queue: string, handler: Handler<P>, opts: WorkerOptions, onStop: () => void) {
    this.#client = client;
    this.queue = queue;
    this.#handler = handler;
    this.#leaseMs = opts.leaseMs ?? 30_000;
    this.#maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
    this.#backoff = opts.backoff ?? exponentialBackoff;
    const poll = opts.pollMs ?? DEFAULT_POLL_MS;
    this.#pollMs = Number.isFinite(poll) ? Math.max(0, poll) : DEFAULT_POLL_MS;
    this.#onError = opts.onError ?? (() => {});
    this.#onStop = onStop;
    this.#concurrency = Math.max(1, Math.floor(opts.concurrency ?? 1));
    this.#streams = this.#concurrency >= TWO_STREAMS_FROM ? 2 : 1;
    this.#batchMax = Math.ceil(this.#concurrency / this.#streams);
    this.#timer = setInterval(() => void this.#maintain(), opts.maintenanceMs ?? 1000);
    void this.#maintain();
    this.#pump();
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

  /** Counts `task` as running until it settles (stop waits for it). */
  #track(task: Promise<void>): void {
    this.#busy++;
    void task.catch((e) => this.#report(e)).finally(() => this.#done());
  }

  /** One task (claim, handler run or settle batch) is over. */
  #done(): void {
    if (--this.#busy === 0 && this.#drained !== null) {
      const wake = this.#drained;
      this.#drained = null;
      wake();
    }
  }

  #maintain(): Promise<void> {
    if (this.#maintenance || this.#stopping) return this.#maintenance ?? Promise.resolve();
    this.#maintenance = (async () => {
      try {
        const moved = await this.#client.promote(this.queue) + await this.#client.reap(this.queue);
        // jobs just became ready: an idle scout claims now rather than at the end of its wait
        if (moved > 0 && this.#scouting && this.#pause !== null) {
          clearTimeout(this.#pause);
          this.#pause = null;
          this.#wait = null;
          this.#pump();
        }
      } catch (e) {
        this.#report(e);
      } finally {
        this.#maintenance = null;
      }
    })();
    return this.#maintenance;
  }

  /** Starts the claims the state allows: every free slot while jobs come, else the scout. */
  #pump(): void {
    if (this.#stopping || this.#pause !== null) return;
    if (this.#scouting) {
      if (this.#claiming > 0 || this.#held >= this.#concurrency) return; // parked
      if (this.#wait === null) {
        this.#claim(1);
        return;
      }
      this.#pause = setTimeout(() => {
        this.#pause = null;
        if (this.#stopping || this.#claiming > 0 || this.#held >= this.#concurrency) return;
        this.#claim(1);
      }, this.#wait);
      return;
    }
    while (this.#claiming < this.#streams && this.#held < this.#concurrency) {
      this.#claim(Math.min(this.#concurrency - this.#held, this.#batchMax));
    }
  }

  /** Claims up to `k` jobs (their slots taken before the wire) and starts their handlers. */
  #claim(k: number): void {
    this.#held += k;
    this.#claiming++;
    this.#track((async () => {
      let got: Array<Job<P> | PayloadDecodeError> = [];
      let failed = false;
      try {
        got = await this.#claimBatch(k);
      } catch (e) {
        failed = true;
        this.#report(e);
      }
      this.#claiming--;
      this.#held -= k - got.length;
      for (const job of got) {
        // claimed but unreadable: a failed attempt (retried, then buried), not a stuck lease
        if (job instanceof PayloadDecodeError) this.#finish(job.job as JobRef & { attempts: number }, true, job);
        else this.#run(job);
      }
      if (failed) {
        this.#scouting = true;
        this.#wait = this.#pollMs;
      } else if (got.length >= k) {
        this.#scouting = false;
        this.#wait = null;
      } else if (got.length > 0) {
        this.#scouting = true; // the queue ran dry: look once more at once, then back off
        this.#wait = null;
      } else {
        this.#scouting = true;
        this.#wait = this.#wait === null ? Math.min(1, this.#pollMs) : Math.min(this.#pollMs, Math.max(1, this.#wait * 2));
      }
      this.#pump();
    })());
  }

  async #claimBatch(k: number): Promise<Array<Job<P> | PayloadDecodeError>> {
    const opts = { leaseMs: this.#leaseMs };
    if (this.#client.claimMany) return await this.#client.claimMany(this.queue, k, opts);
    const settled = await Promise.allSettled(Array.from({ length: k }, () => this.#client.claim(this.queue, opts)));
    const out: Array<Job<P> | PayloadDecodeError> = [];
    const errors: unknown[] = [];
    for (const s of settled) {
      if (s.status === "fulfilled") {
        if (s.value !== null) out.push(s.value);
      } else if (s.reason instanceof PayloadDecodeError) out.push(s.reason);
      else errors.push(s.reason);
    }
    if (out.length === 0 && errors.length > 0) throw errors[0];
    for (const e of errors) this.#report(e);
    return out;
  }

  /** Runs the handler (a synchronous one at once, without a promise) and queues the settle. */
  #run(job: Job<P>): void {
    this.#busy++;
    let result: unknown;
    try {
      result = this.#handler(job);
    } catch (e) {
      this.#finish(job, true, e);
      this.#done();
      return;
    }
    if (result === null || (typeof result !== "object" && typeof result !== "function") ||
      typeof (result as { then?: unknown }).then !== "function") {
      this.#finish(job, false, null);
      this.#done();
      return;
    }
    // Promise.resolve: a thenable whose `then` throws rejects instead of escaping
    Promise.resolve(result as PromiseLike<unknown>).then(
      () => {
        this.#finish(job, false, null);
        this.#done();
      },
      (e: unknown) => {
        this.#finish(job, true, e);
        this.#done();
      },
    );
  }

  /** Queues the job's settle (ack, or retry / bury after a failure) for the next flush. */
  #finish(job: JobRef & { readonly attempts: number }, threw: boolean, failure: unknown): void {
    let settlement: Settlement;
    try {
      if (!threw) settlement = { kind: "ack", job };
      else {
        this.failed++;
        const reason = truncateUtf8(describe(failure), 4096);
        if (job.attempts >= this.#maxAttempts) settlement = { kind: "bury", job, reason };
        else {
          const b = this.#backoff;
          const raw = typeof b === "function" ? b(job.attempts) : b;
          const delayMs = Math.max(1, Math.floor(Number.isFinite(raw) ? raw : 1));
          settlement = { kind: "retry", job, delayMs, reason };
        }
      }
    } catch (e) {
      // a throwing backoff: reported; the job stays active until its lease runs out and is reaped
      this.#report(e);
      this.#release(1);
      return;
    }
    this.#queued.push({ settlement });
    if (this.#queued.length >= FLUSH_AT) this.#flush();
    else if (!this.#flushPending) {
      this.#flushPending = true;
      nextMacrotask(() => this.#flush());
    }
  }

  /** Sends every queued settle in one batch; each reply is counted or reported on its own. */
  #flush(): void {
    this.#flushPending = false;
    const batch = this.#queued;
    if (batch.length === 0) return;
    this.#queued = [];
    this.#track((async () => {
      try {
        const results = await this.#settleBatch(batch.map((q) => q.settlement));
        batch.forEach(({ settlement }, i) => {
          const r = results[i] ?? null;
          if (r === null) {
            if (settlement.kind === "ack") this.completed++;
            else if (settlement.kind === "bury") this.buried++;
            return;
          }
          if (r instanceof JobNotActiveError) this.lost++;
          this.#report(r);
        });
      } catch (e) {
        this.#report(e); // the whole batch failed: its jobs stay active until reaped
      } finally {
        this.#release(batch.length);
      }
    })());
  }

  async #settleBatch(settlements: Settlement[]): Promise<Array<Error | null>> {
    const c = this.#client;
    if (c.settleMany) return await c.settleMany(settlements);
    return await Promise.all(settlements.map(async (s) => {
      try {
        if (s.kind === "ack") await c.ack(s.job);
        else if (s.kind === "retry") await c.retry(s.job, { delayMs: s.delayMs, reason: s.reason });
        else await c.bury(s.job, s.reason);
        return null;
      } catch (e) {
        return e instanceof Error ? e : new Error(String(e));
      }
    }));
  }

  /** Frees `n` slots (their jobs settled, or given up) and lets parked slots claim. */
  #release(n: number): void {
    this.#held -= n;
    this.#pump();
  }

  /**
   * Stops claiming; resolves once every in-flight job has been run and settled (acked, retried
   * or buried) — claims already sent are run too — and maintenance has finished. Safe to call
   * more than once.
   */
  stop(): Promise<void> {
    if (this.#stopped) return this.#stopped;
    this.#stopping = true;
    clearInterval(this.#timer);
    if (this.#pause !== null) clearTimeout(this.#pause);
    this.#pause = null;
    this.#stopped = (async () => {
      while (this.#busy > 0 || this.#queued.length > 0) {
        this.#flush();
        if (this.#busy > 0) await new Promise<void>((wake) => (this.#drained = wake));
      }
      await this.#maintenance;
      this.#onStop();
    })();
    return this.#stopped;
  }
}
