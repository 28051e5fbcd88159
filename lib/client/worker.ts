/**
 * The worker: claims jobs of one queue, runs a handler on each, keeps each running job's lease
 * alive, and settles each job — ack on success, retry with backoff on a throw, bury after the last
 * attempt. A throwing handler never stops it; `stop()` lets in-flight jobs finish and settles them.
 *
 * How it spends round trips: free slots are claimed together, one CLAIM for all of them (which also
 * promotes due jobs and reaps expired leases on the server). An idle worker waits on the server, on
 * a connection of its own — the module's CLAIM blocks until a job is ready or something falls due;
 * with the scripts backend the worker waits on the queue's `wake` key (BZPOPMIN) — so it costs one
 * command per `blockMs` (default 5 s) and starts a new job one round trip after it is enqueued.
 * Finished jobs are settled together: every ack, retry and bury of one tick go out as one command
 * per kind. Every `heartbeatMs` the leases of all running jobs are extended in one command; a job
 * whose lease is lost (an extension refused) has its `signal` aborted and is not settled.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { MAX_BATCH, MAX_REASON_BYTES, MAX_WIRE_NUMBER } from "../wire/mod.ts";
import { EchoMQError, LeaseLostError, PayloadDecodeError } from "./errors.ts";
import type { Job, JobRef, Settlement, WorkerJob } from "./job.ts";
import type { Claim } from "./batch.ts";
import { integerIn } from "./options.ts";
import { stopOnSignals } from "./signals.ts";

/** Runs one job; a throw (or a rejected promise) fails the attempt. */
export type Handler<P> = (job: WorkerJob<P>) => unknown | Promise<unknown>;

/** Delay before the next attempt, from the attempts made so far (≥ 1). */
export type Backoff = number | ((attempts: number) => number);

/** Default `blockMs` of a worker: how long one waiting call of an idle worker lasts. */
export const DEFAULT_BLOCK_MS = 5000;

/** Options of `EchoMQ.work`; each is checked (a `RangeError` names the option and its range). */
export interface WorkerOptions {
  /**
   * Handlers run at once (1 to 10000, default 1). A finished job's slot is refilled while its
   * settle is in flight, so up to twice as many jobs may be claimed and not yet settled.
   */
  concurrency?: number;
  /** Lease of each claim in ms (100 to 86400000, default 30000); extended while the handler runs. */
  leaseMs?: number;
  /** How often running jobs' leases are extended, in ms (default `leaseMs / 3`; below `leaseMs`). */
  heartbeatMs?: number;
  /** Attempts before a failing job is buried (1 to 1000000, default 3). */
  maxAttempts?: number;
  /** Retry delay in ms: a constant or a function of attempts (default 1000·2^(attempts−1), ≤ 1 h). */
  backoff?: Backoff;
  /**
   * How long one waiting call of an idle worker lasts, in ms (10 to 600000, default 5000): an idle
   * worker sends one command per `blockMs`, and is woken by the server as soon as a job is ready.
   */
  blockMs?: number;
  /**
   * A worker whose every slot is busy sends no claim; every `maintenanceMs` (1000 to 3600000,
   * default 5000) it then reaps expired leases itself, so that jobs of crashed workers do not wait
   * for a free slot.
   */
  maintenanceMs?: number;
  /**
   * Called with every error the worker survives: a failed claim or settle, a job whose lease was
   * lost (`LeaseLostError`), a payload the codec could not decode. Default: one line on stderr.
   * Handler errors are not reported here (they retry or bury the job, with the reason kept).
   */
  onError?: (error: unknown) => void;
  /**
   * Stop this worker on SIGINT or SIGTERM (Bun, Deno, Node): claims stop, running jobs get
   * `stopTimeoutMs` to finish and settle, then their signals abort and they are handed back (a
   * retry due at once); once every worker started with this option has stopped, the process exits
   * with the signal's usual code (130 for SIGINT, 143 for SIGTERM). A second signal exits at once,
   * leaving unfinished jobs to their lease. Default false.
   */
  handleSignals?: boolean;
  /** The deadline of a stop triggered by `handleSignals`, in ms (default 10000). */
  stopTimeoutMs?: number;
}

/** Options of {@link Worker.stop}. */
export interface StopOptions {
  /**
   * Give running jobs this long to finish; then abort their signals and hand them back (a retry
   * due at once, reason "worker stopped") instead of waiting. Default: wait for them.
   */
  timeoutMs?: number;
}

/** The dedicated connection a worker claims and waits on. */
export interface ClaimLine<P> {
  /** One CLAIM of up to `count` jobs, waiting up to `blockMs` (module) when none is ready. */
  claim(queue: string, count: number, leaseMs: number, blockMs: number): Promise<Claim<P>>;
  /** Scripts backend: wait up to `timeoutMs` for a marker on the queue's wake key. */
  wake(queue: string, timeoutMs: number): Promise<void>;
  /**
   * Ends a call waiting on this connection at once, on the server (`CLIENT UNBLOCK`): it answers
   * as on a timeout, so no job is claimed for a connection about to close.
   */
  unblock(): Promise<void>;
  /** Closes the connection (a call waiting on it fails). */
  close(): void;
}

/** What a worker needs of the client (the `EchoMQ` class provides it). */
export interface WorkerClient<P> {
  /** Which backend the client uses. */
  readonly backend: "module" | "scripts";
  /** A connection of its own for claims on `queue` that wait. */
  dedicated(queue: string, blockMs: number): Promise<ClaimLine<P>>;
  /** Settles many jobs; per settlement `null` or the error that refused it. */
  settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>>;
  /** Extends leases (refused whole, with `LeaseLostError`, when one is lost). */
  extend(jobs: readonly JobRef[], leaseMs: number): Promise<void>;
  /** Records a job's progress (token-checked). */
  progress(job: JobRef, value: unknown): Promise<void>;
  /** Reaps expired leases of the queue. */
  reap(queue: string): Promise<number>;
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

/** `value` (default `fallback`) as an integer from `min` to `max`, else a RangeError naming `name`. */
function option(name: string, value: unknown, fallback: number, min: number, max: number): number {
  return integerIn(`worker: ${name}`, value === undefined ? fallback : value, min, max, (m) => new RangeError(m));
}

/** Runs `task` on the next macrotask (after pending I/O callbacks), in Bun, Node and Deno. */
const immediate = (globalThis as { setImmediate?: (task: () => void) => unknown }).setImmediate;
const nextMacrotask: (task: () => void) => void = typeof immediate === "function"
  ? (task) => void immediate(task)
  : (task) => void setTimeout(task, 0);

const sleep = (ms: number): Promise<void> => new Promise((wake) => setTimeout(wake, ms));

/**
 * A claim's key among the jobs held: id and token. The same worker may hold one job twice — its
 * lease ran out and this worker claimed it again — and the two claims must stay apart.
 */
const claimKey = (job: JobRef): string => `${job.id} ${job.token}`;

/** A job this worker holds: claimed and not yet settled. */
interface Held<P> {
  readonly job: Job<P>;
  readonly controller: AbortController;
  /** Its lease was lost: it is not settled. */
  lost: boolean;
  /** Its settle is queued or in flight: the heartbeat leaves it alone. */
  settling: boolean;
  /** Resolves once the job is settled (or given up). */
  readonly done: Promise<void>;
  readonly finish: () => void;
}

/** The job whose handler is running, for `stop()` / `close()` called from inside a handler. */
const running = new AsyncLocalStorage<Promise<void>>();

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
   * Jobs whose lease was lost while this worker held them (an extension or a settle refused with
   * `LeaseLostError`): they were not settled here; each is also reported to `onError`.
   */
  lost = 0;
  readonly #client: WorkerClient<P>;
  readonly #handler: Handler<P>;
  readonly #concurrency: number;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #maxAttempts: number;
  readonly #backoff: Backoff;
  readonly #blockMs: number;
  readonly #maintenanceMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #onStop: () => void;
  /** The jobs held, by {@link claimKey}. */
  readonly #held: Map<string, Held<P>> = new Map();
  /** How many of them are settling (handler done, settle queued or in flight). */
  #settling = 0;
  /** Wakes the claim loop when a slot frees. */
  #roomWaiter: (() => void) | null = null;
  #line: ClaimLine<P> | null = null;
  #queued: Settlement[] = [];
  #flushPending = false;
  #flushing: Set<Promise<void>> = new Set();
  #heartbeat: ReturnType<typeof setInterval>;
  #maintenance: ReturnType<typeof setInterval>;
  #lastClaim = Date.now();
  #stopping = false;
  #stopped: Promise<void> | null = null;
  #loop: Promise<void>;
  #unhook: () => void = () => {};

  /** Starts claiming; use `EchoMQ.work` rather than this. */
  constructor(client: WorkerClient<P>, queue: string, handler: Handler<P>, opts: WorkerOptions, onStop: () => void) {
    if (typeof handler !== "function") throw new TypeError("worker: handler must be a function");
    if (opts === null || typeof opts !== "object") throw new TypeError("worker: options must be an object");
    this.#client = client;
    this.queue = queue;
    this.#handler = handler;
    // every free slot is claimed in one CLAIM: at most MAX_BATCH
    this.#concurrency = option("concurrency", opts.concurrency, 1, 1, MAX_BATCH);
    this.#leaseMs = option("leaseMs", opts.leaseMs, 30_000, 100, 86_400_000);
    this.#heartbeatMs = option("heartbeatMs", opts.heartbeatMs, Math.max(1, Math.floor(this.#leaseMs / 3)), 1, this.#leaseMs - 1);
    this.#maxAttempts = option("maxAttempts", opts.maxAttempts, 3, 1, 1_000_000);
    this.#blockMs = option("blockMs", opts.blockMs, DEFAULT_BLOCK_MS, 10, 600_000);
    this.#maintenanceMs = option("maintenanceMs", opts.maintenanceMs, 5000, 1000, 3_600_000);
    const stopTimeoutMs = option("stopTimeoutMs", opts.stopTimeoutMs, 10_000, 0, 3_600_000);
    const b = opts.backoff ?? exponentialBackoff;
    if (typeof b !== "function") option("backoff", b, 0, 1, 3_600_000);
    this.#backoff = b;
    if (opts.onError !== undefined && typeof opts.onError !== "function") {
      throw new TypeError("worker: onError must be a function");
    }
    this.#onError = opts.onError ?? ((e) => console.error(`[echomq] worker ${JSON.stringify(queue)}: ${describe(e)}`));
    this.#onStop = onStop;
    this.#heartbeat = setInterval(() => void this.#extend(), this.#heartbeatMs);
    this.#maintenance = setInterval(() => void this.#maintain(), this.#maintenanceMs);
    if (opts.handleSignals) this.#unhook = stopOnSignals(() => this.stop({ timeoutMs: stopTimeoutMs }));
    this.#loop = this.#claimLoop();
  }

  /** True until `stop()` is called. */
  get running(): boolean {
    return !this.#stopping;
  }

  /**
   * Inside a handler: a promise that resolves once that handler's job is settled; else null.
   * (`stop()` and `EchoMQ.close()` use it so that a handler may call them without waiting on
   * itself.)
   */
  static current(): Promise<void> | null {
    return running.getStore() ?? null;
  }

  #report(e: unknown): void {
    try {
      this.#onError(e);
    } catch {
      // a throwing onError must not stop the worker either
    }
  }

  /**
   * Free slots: a job's slot frees when its handler is done and its settle queued, so the next
   * claim goes out while that settle is in flight (two round trips per batch would otherwise be
   * serial). Jobs held — running, or settling — stay below twice the concurrency.
   */
  #free(): number {
    return Math.min(this.#concurrency - (this.#held.size - this.#settling), 2 * this.#concurrency - this.#held.size);
  }

  /** Resolves when a slot is free (a release of a settling job may free none: wait again). */
  async #room(): Promise<void> {
    while (this.#free() <= 0 && !this.#stopping) await new Promise<void>((wake) => (this.#roomWaiter = wake));
  }

  #freed(): void {
    const wake = this.#roomWaiter;
    this.#roomWaiter = null;
    wake?.();
  }

  async #claimLoop(): Promise<void> {
    let dry = false;
    let failures = 0;
    while (!this.#stopping) {
      await this.#room();
      if (this.#stopping) break;
      try {
        this.#line ??= await this.#client.dedicated(this.queue, this.#blockMs);
        if (this.#stopping) break;
        const want = this.#free();
        const wait = this.#client.backend === "module" && dry ? this.#blockMs : 0;
        this.#lastClaim = Date.now();
        const claim = await this.#line.claim(this.queue, want, this.#leaseMs, wait);
        failures = 0;
        for (const job of claim.jobs) this.#start(job);
        dry = claim.jobs.length < want;
        if (claim.jobs.length === 0 && this.#client.backend === "scripts" && !this.#stopping) {
          const untilDue = claim.nextMs > 0 ? claim.nextMs - Date.now() : this.#blockMs;
          await this.#line.wake(this.queue, Math.max(10, Math.min(this.#blockMs, untilDue)));
        }
      } catch (e) {
        if (this.#stopping) break;
        this.#report(e);
        // a connection that failed is made again; back off 50 ms, 100 ms … 5 s
        this.#line?.close();
        this.#line = null;
        await sleep(Math.min(5000, 50 * 2 ** failures++));
      }
    }
  }

  /** Takes a claimed job: runs its handler, or (an undecodable payload) fails the attempt. */
  #start(claimed: Job<P> | PayloadDecodeError): void {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const job: Job<P> = claimed instanceof PayloadDecodeError ? { ...claimed.job, payload: undefined as P } : claimed;
    const held: Held<P> = { job, controller: new AbortController(), lost: false, settling: false, done, finish };
    this.#held.set(claimKey(job), held);
    if (claimed instanceof PayloadDecodeError) {
      this.#report(claimed);
      this.#settle(held, claimed);
      return;
    }
    const view: WorkerJob<P> = {
      ...job,
      signal: held.controller.signal,
      progress: (value) => this.#client.progress(job, value),
    };
    let result: unknown;
    try {
      result = running.run(done, () => this.#handler(view));
    } catch (e) {
      this.#settle(held, e);
      return;
    }
    if (result === null || (typeof result !== "object" && typeof result !== "function") ||
      typeof (result as { then?: unknown }).then !== "function") {
      this.#settle(held, null);
      return;
    }
    // Promise.resolve: a thenable whose `then` throws rejects instead of escaping
    Promise.resolve(result as PromiseLike<unknown>).then(() => this.#settle(held, null), (e: unknown) => this.#settle(held, e));
  }

  /** Queues the job's settle: ack (`failure` null), else retry or bury; a lost job is dropped. */
  #settle(held: Held<P>, failure: unknown): void {
    if (held.lost) {
      this.#release(held);
      return;
    }
    held.settling = true;
    this.#settling++;
    this.#freed();
    const job = held.job;
    let settlement: Settlement;
    try {
      if (failure === null) settlement = { kind: "ack", job };
      else {
        this.failed++;
        const reason = truncateUtf8(describe(failure), MAX_REASON_BYTES);
        if (job.attempts >= this.#maxAttempts) settlement = { kind: "bury", job, reason };
        else {
          const b = this.#backoff;
          const raw = typeof b === "function" ? b(job.attempts) : b;
          const delayMs = Math.max(1, Math.min(MAX_WIRE_NUMBER, Math.floor(Number.isFinite(raw) ? raw : 1)));
          settlement = { kind: "retry", job, delayMs, reason };
        }
      }
    } catch (e) {
      // a throwing backoff: reported; the job is retried after a second
      this.#report(e);
      settlement = { kind: "retry", job, delayMs: 1000, reason: truncateUtf8(describe(e), MAX_REASON_BYTES) };
    }
    this.#queue(settlement);
  }

  #queue(settlement: Settlement): void {
    this.#queued.push(settlement);
    if (!this.#flushPending) {
      this.#flushPending = true;
      nextMacrotask(() => this.#flush());
    }
  }

  /** Sends every queued settle: one command per kind; each outcome counted or reported. */
  #flush(): void {
    this.#flushPending = false;
    const batch = this.#queued;
    if (batch.length === 0) return;
    this.#queued = [];
    const sending = (async () => {
      let results: Array<Error | null>;
      try {
        results = await this.#client.settleMany(batch);
      } catch (e) {
        this.#report(e); // the whole batch failed: its jobs stay active until their leases run out
        results = batch.map(() => null);
      }
      batch.forEach((s, i) => {
        const r = results[i] ?? null;
        if (r === null) {
          if (s.kind === "ack") this.completed++;
          else if (s.kind === "bury") this.buried++;
        } else {
          if (r instanceof LeaseLostError) this.lost++;
          this.#report(r);
        }
        const held = this.#held.get(claimKey(s.job));
        if (held !== undefined) this.#release(held);
      });
    })();
    this.#flushing.add(sending);
    void sending.finally(() => this.#flushing.delete(sending));
  }

  /** The job leaves this worker: its slot frees. */
  #release(held: Held<P>): void {
    const key = claimKey(held.job);
    if (this.#held.get(key) === held) {
      this.#held.delete(key);
      if (held.settling) this.#settling--;
    }
    held.finish();
    this.#freed();
  }

  /**
   * Marks the claims of `jobs` lost: their signals abort, they will not be settled here. A claim
   * whose settle went out meanwhile is not lost (the extension raced its own ack): the settle
   * decides. Reported once, for the claims really lost.
   */
  #lose(jobs: readonly Job<P>[], error: LeaseLostError): void {
    let lost = 0;
    for (const job of jobs) {
      const held = this.#held.get(claimKey(job));
      if (held === undefined || held.lost || held.settling) continue;
      held.lost = true;
      lost++;
      held.controller.abort(error);
    }
    this.lost += lost;
    if (lost > 0) this.#report(error);
  }

  /** The heartbeat: extends every running job's lease; lost ones are dropped and the rest extended. */
  async #extend(): Promise<void> {
    let jobs = [...this.#held.values()].filter((h) => !h.lost && !h.settling).map((h) => h.job);
    while (jobs.length > 0) {
      try {
        await this.#client.extend(jobs, this.#leaseMs);
        return;
      } catch (e) {
        if (!(e instanceof LeaseLostError)) {
          this.#report(e);
          return;
        }
        const lost = new Set(e.ids);
        this.#lose(jobs.filter((j) => lost.has(j.id)), e);
        const rest = jobs.filter((j) => !lost.has(j.id));
        if (rest.length === jobs.length) return;
        jobs = rest;
      }
    }
  }

  /** A worker with every slot busy claims nothing: it reaps expired leases itself now and then. */
  async #maintain(): Promise<void> {
    // Only a saturated worker (its claim loop waiting for a slot): a claim out on the server reaps
    // there, and a waiting one is answered when the first lease runs out.
    if (this.#stopping || this.#roomWaiter === null || Date.now() - this.#lastClaim < this.#maintenanceMs) return;
    try {
      await this.#client.reap(this.queue);
    } catch (e) {
      this.#report(e);
    }
  }

  /**
   * Stops claiming; resolves once every job it holds has run and been settled (claims already sent
   * are run too). With `timeoutMs`, jobs still running then have their signals aborted and are
   * handed back (a retry due at once). Called from inside a handler, it does not wait for that
   * handler's own job (which settles when the handler returns). Safe to call more than once.
   */
  stop(opts: StopOptions = {}): Promise<void> {
    const self = Worker.current();
    if (this.#stopped === null) {
      this.#stopping = true;
      clearInterval(this.#maintenance);
      this.#unhook();
      this.#freed();
      const deadline = opts.timeoutMs === undefined ? null : option("timeoutMs", opts.timeoutMs, 0, 0, 86_400_000);
      this.#stopped = (async () => {
        // A claim waiting on the server ends there first (so it claims nothing for a connection
        // about to close); if that fails, closing the connection ends it.
        const line = this.#line;
        if (line !== null) {
          await Promise.race([line.unblock().catch(() => {}), sleep(1000)]);
          line.close();
        }
        await this.#loop;
        this.#line?.close();
        this.#line = null;
        if (deadline !== null) {
          const timer = sleep(deadline).then(() => "late" as const);
          const late = await Promise.race([this.#drain(self).then(() => "done" as const), timer]);
          if (late === "late") this.#handBack(self);
        }
        // the worker is done once every job it holds is settled: then the heartbeat stops
        void this.#drain(null).then(() => {
          clearInterval(this.#heartbeat);
          this.#onStop();
        });
      })();
    }
    return this.#stopped.then(() => this.#drain(self));
  }

  /** Resolves once every job held (but `except`, the caller's own) has run and been settled. */
  async #drain(except: Promise<void> | null): Promise<void> {
    for (;;) {
      const others = [...this.#held.values()].map((h) => h.done).filter((d) => d !== except);
      if (others.length > 0) await Promise.all(others);
      else if (this.#flushPending || this.#flushing.size > 0) {
        this.#flush();
        await Promise.all(this.#flushing);
      } else return;
    }
  }

  /** At a stop's deadline: running jobs' signals abort, and each is handed back at once. */
  #handBack(self: Promise<void> | null): void {
    const stopped = new EchoMQError("closed", "worker stopped before the job finished");
    for (const held of this.#held.values()) {
      if (held.done === self || held.lost) continue;
      held.controller.abort(stopped);
      held.lost = true; // its handler's outcome is ignored: the retry below settles it
      this.#queue({ kind: "retry", job: held.job, delayMs: 1, reason: stopped.message });
    }
  }
}
