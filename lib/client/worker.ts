/**
 * The worker: claims jobs of one queue, runs a handler on each, keeps each running job's lease
 * alive, and settles each job — ack on success, retry with backoff on a throw, bury after the last
 * attempt (or at once on an `UnrecoverableError`). A throwing handler never stops it; `stop()` lets
 * in-flight jobs finish and settles them.
 *
 * How it spends round trips: free slots are claimed together, one CLAIM for all of them (which also
 * promotes due jobs and reaps expired leases on the server). An idle worker waits on the server, on
 * a connection of its own — the module's CLAIM blocks until a job is ready or something falls due;
 * with the scripts backend the worker waits on the queue's `wake` key (BZPOPMIN) — so it costs one
 * command per `blockMs` (default 5 s) and starts a new job one round trip after it is enqueued.
 * Finished jobs are settled together, and the slots they free claimed in the same call: one
 * SETTLE carries every ack, retry, bury and hand-back of one tick and claims the free slots (one
 * round trip and one command per batch). A batch of 16 or more goes as a CLAIM, sent
 * first, beside its settles (one command per kind): the claimed jobs' handlers run while the server
 * writes the settles. While the worker waits on the server (an empty queue), its settles go out on
 * their own. Every `heartbeatMs` the leases of all running jobs are extended in one command; a job
 * whose lease is lost (an extension refused) has its `signal` aborted and is not settled. Every
 * worker also fires its queue's due schedulers (`schedulers.ts`: no leader, one job per run) and,
 * with `timeoutMs`, fails an attempt whose handler runs too long (`JobTimeoutError`).
 *
 * What it trusts: only what the server confirmed. A job's lease is taken to end `leaseMs` after its
 * CLAIM was sent, on the monotonic clock (a lower bound of the server's deadline): a job whose lease
 * has run out before its handler could start (the process was paused) is dropped, not started. A
 * settle counts only once the server applied it. Server times (`nextMs`) are compared with the
 * server's clock, not this machine's. A claim loop or a settle that makes no progress for
 * {@link stallMs} is reported (`WorkerStalledError`) and undone, so a worker never sits "running"
 * without working.
 *
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { MAX_BATCH, MAX_REASON_BYTES, MAX_WIRE_NUMBER } from "../wire/mod.ts";
import { EchoMQError, LeaseLostError, PayloadDecodeError } from "./errors.ts";
import type { Job, JobRef, Settlement, WorkerJob } from "./job.ts";
import { BATCH_COMMANDS } from "./options.ts";
import { type Claim, EncodedResult, encodeResult } from "./batch.ts";
import type { SettleClaim } from "./settle_claim.ts";
import { integerIn } from "./options.ts";
import { stopOnSignals } from "./signals.ts";
import { askedDelay, JobOverdueError, JobTimeoutError, LeaseExpiredError, RateLimitedError, UnrecoverableError, WorkerStalledError } from "./worker_errors.ts";
import { FIRE_POLL_MS } from "./schedulers.ts";
import { exponential } from "./backoff.ts";
import type { ProcessSpan, Tracing } from "./tracing.ts";
import { type WorkerIdentity, workerIdentity } from "./worker_name.ts";
import { abortHeld, doneOf, type Held, HeldJob, hold, leave } from "./held.ts";

/**
 * Runs one job; a throw (or a rejected promise) fails the attempt. What it returns (or its promise
 * resolves with) is the job's result, sent with the ack as `JSON.stringify` writes it (`undefined`:
 * none) and kept with the completed job while the queue keeps completed jobs (`EchoMQ.retain`);
 * a value JSON cannot carry, or whose JSON passes `MAX_PAYLOAD_BYTES`
 * (`ResultTooLargeError`), fails the attempt as a throw does.
 */
export type Handler<P, R = unknown> = (job: WorkerJob<P>) => R | Promise<R>;

/**
 * Delay before the next attempt, in ms: a constant, or a function of the attempts made so far
 * (≥ 1) and the error the handler threw. An error with its own `retryDelayMs` (`RetryError`)
 * overrides it.
 */
export type Backoff = number | ((attempts: number, error: unknown) => number);

/**
 * A claim that got nothing but is told the queue claims again sooner than this (ms: a rate limit's
 * next token, a park's end) waits on a timer here, not on the server, whose waits end at its cron
 * ticks (`hz` 10: every 100 ms).
 */
const SOON_MS = 250;

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
  /**
   * Retry delay in ms: a constant or a function of (attempts, error) (default
   * 1000·2^(attempts−1), ≤ 1 h); 0 is "ready now" (the job goes straight back to pending). A thrown
   * error with a `retryDelayMs` (`RetryError`) sets its own.
   */
  backoff?: Backoff;
  /**
   * How long one waiting call of an idle worker lasts, in ms (10 to 600000, default 5000): an idle
   * worker sends one command per `blockMs`, and is woken by the server as soon as a job is ready.
   * The module's blocking CLAIM waits at most half of `leaseMs` (a job claimed at the end of a
   * wait keeps most of its lease). The claim loop's watchdog fires after 5 × `blockMs` (at least
   * 2 s) without progress.
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
   * lost (`LeaseLostError`) or ran out before it started (`LeaseExpiredError`), a payload the codec
   * could not decode, a stall (`WorkerStalledError`), a handler still running at its time limit
   * (`JobOverdueError`). Default: one line on stderr. Handler errors
   * are not reported here (they retry or bury the job, with the reason kept).
   */
  onError?: (error: unknown) => void;
  /**
   * Stop this worker on SIGINT or SIGTERM (Bun, Deno, Node): claims stop, running jobs get
   * `stopTimeoutMs` to finish and settle, then their signals abort and they are handed back (released:
   * pending again, the attempt given back, not counted as a failure); once every worker started with this option has stopped,
   * the process exits with the signal's usual code (130 for SIGINT, 143 for SIGTERM). A second
   * signal exits at once, leaving unfinished jobs to their lease. Default false.
   */
  handleSignals?: boolean;
  /** The deadline of a stop triggered by `handleSignals`, in ms (default 10000). */
  stopTimeoutMs?: number;
  /**
   * A handler running longer than this (ms, 1 to 86400000; default: no limit) has its job's
   * `signal` aborted with a `JobTimeoutError`, and the attempt fails at once with the reason
   * `timed out after <ms> ms` (retried with backoff, or buried after the last attempt). A handler
   * that ignores the signal cannot settle the job afterwards, and keeps its slot until it returns
   * (reported once to `onError` as a `JobOverdueError`, counted in `overdue`): `concurrency` is
   * never exceeded. A job enqueued with its own
   * `timeoutMs` runs under that limit instead.
   */
  timeoutMs?: number;
  /**
   * Fire the queue's due schedulers (`upsertScheduler`) from this worker (default true): every
   * worker of a queue may fire, and the server admits one job per run however many race.
   */
  schedulers?: boolean;
}

/** Options of {@link Worker.stop}. */
export interface StopOptions {
  /**
   * Give running jobs this long to finish; then abort their signals and hand them back (released:
   * back in pending with the attempt given back, not counted as a failure) instead of waiting.
   * Default: wait for them.
   */
  timeoutMs?: number;
}

/** The dedicated connection a worker claims and waits on. */
export interface ClaimLine<P> {
  /** One CLAIM of up to `count` jobs, waiting up to `blockMs` (module) when none is ready. */
  claim(queue: string, count: number, leaseMs: number, blockMs: number): Promise<Claim<P>>;
  /**
   * One SETTLE (wire 11): `settlements` (jobs of `queue`) applied, then up to `want` jobs claimed
   * without waiting, in one call. Absent: the worker settles with `settleMany` beside its claims.
   */
  settle?(queue: string, settlements: readonly Settlement[], want: number, leaseMs: number): Promise<SettleClaim<P>>;
  /** Scripts backend: wait up to `timeoutMs` for a marker on the queue's wake key. */
  wake(queue: string, timeoutMs: number): Promise<void>;
  /**
   * The server's clock now, in ms since the epoch, as this line last measured it (`TIME`): what a
   * server time such as `Claim.nextMs` is compared with. Absent: this machine's clock.
   */
  serverNow?(): number;
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
  /**
   * A connection of its own for claims on `queue` that wait. `signal` aborts when the worker no
   * longer waits for it (a stop, or the watchdog): no attempt should start after that. `worker`
   * is who asks: the connection is named after it (worker_name.ts), so `CLIENT LIST` shows it.
   */
  dedicated(queue: string, blockMs: number, signal?: AbortSignal, worker?: WorkerIdentity): Promise<ClaimLine<P>>;
  /** Settles many jobs; per settlement `null` (applied) or the error that refused it. */
  settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>>;
  /** Extends leases (refused whole, with `LeaseLostError`, when one is lost). */
  extend(jobs: readonly JobRef[], leaseMs: number): Promise<void>;
  /** Records a job's progress (token-checked). */
  progress(job: JobRef, value: unknown): Promise<void>;
  /** Reaps expired leases of the queue. */
  reap(queue: string): Promise<number>;
  /**
   * Parks the queue — or `lane`, when given — for `ms` (`mq.penalize`): a handler's
   * `RateLimitedError`, for the lane of its job.
   */
  penalize?(queue: string, ms: number, lane?: string): Promise<number>;
  /**
   * Fires the queue's due schedulers once; resolves with the ms to wait before looking again
   * (`idleMs` when the queue has none).
   */
  fireSchedulers?(queue: string, idleMs: number): Promise<number>;
  /**
   * How long one call may take beyond its own wait and still be making progress, in ms: the
   * connection's request timeout plus the window in which it sends again a call refused by a
   * redirection (a resharding, a failover). The watchdog waits this much longer for a claim or a
   * settle than for the claim loop's other steps. Default 0.
   */
  readonly patienceMs?: number;
  /**
   * OpenTelemetry tracing (the client's `tracing`): each handler runs inside a `process <queue>`
   * span linked to the job's producer. Absent or null: no span.
   */
  readonly tracing?: Tracing | null;
}

const DEFAULT_BACKOFF = exponential();

/** The default backoff: 1 s, 2 s, 4 s, … capped at one hour (`exponential()`). */
export function exponentialBackoff(attempts: number): number {
  return DEFAULT_BACKOFF(attempts);
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
const nextMacrotask: (task: () => void) => void = typeof immediate === "function" ? (task) => void immediate(task) : (task) => void setTimeout(task, 0);

/**
 * `promise`, or `fallback` once `ms` pass first — the timer is cleared either way, so nothing it
 * started keeps the process alive.
 */
function within<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<F>((done) => (timer = setTimeout(() => done(fallback), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The wait before reconnect attempt `n` (0-based): 50, 100, 200, 400, then 500 ms. */
const reconnectDelay = (n: number): number => Math.min(500, 50 * 2 ** n);

/**
 * In a worker of fewer than {@link PIPELINE_FROM} slots (one call in flight), how many settles,
 * taken at once, go beside a CLAIM sent first rather than in one SETTLE: the
 * handlers of the jobs the claim brings then run while the server writes the settles, which saves
 * more than a second command costs (bench/RESULTS.md, section 11: a worker of concurrency 50
 * drained 2.67× BullMQ's speed with pairs, 2.17× with SETTLEs of 50; 12 workers of 4 or 5 slots,
 * 1.55× with pairs, 2.14× with SETTLEs).
 */
const PAIR_FROM = 16;

/**
 * From this concurrency on, a worker keeps two claims in flight, each of at most half its slots:
 * the jobs one brings run while the server answers the other. With one call in flight a worker
 * waits for each round trip with its slots idle (bench/RESULTS.md, section 12: bare SETTLE calls
 * through glide, no EchoMQ code, drained 3.1× BullMQ's speed one call at a time and 5.9× two at a
 * time; a worker of 50 went from 2.8× to 3.5×). A small worker keeps one: its calls would carry
 * too few jobs.
 */
const PIPELINE_FROM = 32;

/** Watchdog: a claim loop step or settle stalls after this many `blockMs` (and at least the minimum). */
const STALL_BLOCKS = 5;
const STALL_MIN_MS = 2000;

/**
 * A claim's key among the jobs held, when the job's id is taken already by another claim of it:
 * id and token. The same worker may hold one job twice — its lease ran out and this worker claimed
 * it again — and the two claims must stay apart. (A job id has no space: the two kinds of key never meet.)
 */
const claimKey = (job: JobRef): string => `${job.id} ${job.token}`;

/** A settle the worker queued, and why (a hand-back is not a failed attempt). */
interface Queued {
  readonly settlement: Settlement;
  readonly why: "done" | "failed" | "hand-back";
  /** The claim it settles. */
  readonly held: Held<unknown>;
}

/** A settle command in flight: when it left and what it carries. */
interface Flushing {
  since: number;
  readonly batch: readonly Queued[];
  /** It has been out for {@link Worker.stallMs}: its jobs' slots are free again (it still counts). */
  freed: boolean;
  /** The watchdog gave it up: nobody waits for it any more (a stop does not). */
  givenUp: boolean;
  /** Resolves once it came back or was given up. */
  readonly over: Promise<void>;
  readonly end: () => void;
}

/** What an interrupted wait of the claim loop throws (a stop, or the watchdog). */
const INTERRUPTED: unique symbol = Symbol("interrupted");

/** What a running handler's async context knows: its job's settle promise, and its own settles. */
interface Running {
  readonly done: Promise<void>;
  /** `job` is the handler's own and it settles it now: the worker will not; returns the counter. */
  settles(job: JobRef, kind: Settlement["kind"]): ((error: unknown) => void) | null;
}

/** A running handler's {@link Running}: its job's record, and who counts a settle it makes itself. */
class HandlerContext implements Running {
  readonly #held: Held<unknown>;
  readonly #counted: (kind: Settlement["kind"], error: unknown) => void;

  constructor(held: Held<unknown>, counted: (kind: Settlement["kind"], error: unknown) => void) {
    this.#held = held;
    this.#counted = counted;
  }

  get done(): Promise<void> {
    return doneOf(this.#held);
  }

  settles(ref: JobRef, kind: Settlement["kind"]): ((error: unknown) => void) | null {
    const held = this.#held;
    if (ref.id !== held.job.id || ref.token !== held.job.token || held.lost || held.settling) return null;
    held.own = true;
    held.span?.settling(kind);
    return (error) => {
      if (error !== null && error !== undefined) held.span?.settleFailed(kind, error);
      this.#counted(kind, error);
    };
  }
}

/** The job whose handler is running, for `stop()` / `close()` called from inside a handler. */
const running = new AsyncLocalStorage<Running>();

/**
 * Called by the client before it sends a settle of `job` (`ack`, `retry`, `bury`, `settleMany`):
 * when the caller is the handler of that very claim, its worker leaves the job alone from now on
 * (no heartbeat, no settle of its own) and counts the outcome. Returns the function to call with
 * the settle's outcome (`null` when applied), or null when the caller is no such handler.
 */
export function ownSettle(job: JobRef, kind: Settlement["kind"]): ((error: unknown) => void) | null {
  return running.getStore()?.settles(job, kind) ?? null;
}

/** Where the claim loop is, for the watchdog. */
type Step =
  | "waiting for a free slot"
  | "connecting"
  | "waiting for a CLAIM reply"
  | "waiting for a SETTLE reply"
  | "waiting for a job"
  | "waiting to reconnect";

/** A running worker; see `EchoMQ.work`. */
export class Worker<P> {
  /** The queue it works. */
  readonly queue: string;
  /**
   * Its random id (8 Base62 characters): its claim connection's name carries it, with the queue,
   * concurrency, host and pid, so `EchoMQ.workers()` and the dashboard list it while it runs.
   */
  readonly id: string;
  /** Jobs acked so far (acks the server applied; a settle whose command failed is not counted). */
  completed = 0;
  /** Attempts that failed so far (retries and burials the server applied; hand-backs are not). */
  failed = 0;
  /** Jobs buried so far. */
  buried = 0;
  /** Jobs handed back at a stop's deadline (released: pending again; not failed attempts). */
  handedBack = 0;
  /**
   * Jobs whose lease was lost while this worker held them (an extension or a settle refused with
   * `LeaseLostError`), or had run out before their handler could start (`LeaseExpiredError`):
   * they were not settled here; each is also reported to `onError`.
   */
  lost = 0;
  /**
   * Handlers that ignored their signal at their time limit (still running a turn of the event loop
   * later; each reported once to `onError`, a `JobOverdueError`): the attempt failed at the limit,
   * and the slot stays taken until the handler returns.
   */
  overdue = 0;
  /**
   * Milliseconds without progress after which the watchdog reports a stall of the claim loop
   * (5 × `blockMs`, at least 2 s; a claim, a wait or a settle gets the client's `patienceMs` more).
   */
  readonly stallMs: number;
  /** The watchdog's limit for one claim, wait or settle: {@link stallMs} + the client's patience. */
  readonly #callStallMs: number;
  readonly #client: WorkerClient<P>;
  readonly #handler: Handler<P>;
  readonly #concurrency: number;
  readonly #identity: WorkerIdentity;
  readonly #leaseMs: number;
  readonly #heartbeatMs: number;
  readonly #maxAttempts: number;
  readonly #backoff: Backoff;
  readonly #blockMs: number;
  readonly #maintenanceMs: number;
  readonly #timeoutMs: number | null;
  #fireTimer: ReturnType<typeof setTimeout> | undefined;
  /** The last firing's error text: the same error again is not reported again. */
  #fireError: string | null = null;
  #firing: Promise<void> = Promise.resolve();
  readonly #onError: (error: unknown) => void;
  readonly #onStop: () => void;
  /** A job's `progress`, through the client (one function for every job). */
  readonly #progress = (job: JobRef, value: unknown): Promise<void> => this.#client.progress(job, value);
  /** Counts a settle a handler made itself (one function for every job). */
  readonly #ownSettledBy = (kind: Settlement["kind"], error: unknown): void => this.#ownSettled(kind, error);
  /** The jobs held, by {@link Held.key}. */
  readonly #held: Map<string, Held<P>> = new Map();
  /** How many of them are held under a {@link claimKey} (another claim of their job held already). */
  #keyedByClaim = 0;
  /** How many of them are settling (handler done, settle queued or in flight). */
  #settling = 0;
  /** Handlers past their time limit, still running: their jobs left, their slots did not. */
  #overdueRunning = 0;
  /** Wakes the claim loop when a slot frees. */
  #roomWaiter: (() => void) | null = null;
  #line: ClaimLine<P> | null = null;
  /** The last line the watchdog closed: the failure of the call on it is no news. */
  #abandoned: ClaimLine<P> | null = null;
  #queued: Queued[] = [];
  #flushPending = false;
  /**
   * The claim loop takes the queued settles into its next call (one SETTLE: settle and claim in
   * one round trip): it is idle, or its call in flight answers at once. Off while it waits (a
   * blocking claim, a timer, a wake), connects or stops: then settles go out on their own.
   */
  #loopSettles = false;
  readonly #flushing: Set<Flushing> = new Set();
  readonly #heartbeat: ReturnType<typeof setInterval>;
  readonly #maintenance: ReturnType<typeof setInterval>;
  readonly #watchdog: ReturnType<typeof setInterval>;
  readonly #watchEveryMs: number;
  #lastWatch = performance.now();
  #lastClaim = performance.now();
  #step: Step = "connecting";
  #stepSince = performance.now();
  #stallReports = 0;
  /** Settles once the last CLAIM sent has answered (or failed). */
  #claiming: Promise<void> = Promise.resolve();
  /** Slots a call sent beside another asks for at most: half the concurrency, from {@link PIPELINE_FROM} on (else 0: one call in flight). */
  readonly #aside: number;
  /** Calls the claim loop sent without waiting for them (two claims in flight), until they answer. */
  readonly #inFlight: Set<Promise<void>> = new Set();
  /** The slots those calls ask for: not free until they answer. */
  #inFlightWant = 0;
  /** A call sent without waiting claimed fewer jobs than it asked for: the queue ran dry. */
  #ranDry = false;
  /** A call sent without waiting failed without an outcome: the loop handles it as its own. */
  #inFlightError: unknown = null;
  /** The claim loop's current step was interrupted (a stop, or the watchdog): its waits throw {@link INTERRUPTED}. */
  #stepInterrupted = false;
  /** Ends the claim loop's wait in progress, if any (see {@link #wait}). */
  #endWait: (() => void) | null = null;
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
    this.#aside = this.#concurrency >= PIPELINE_FROM ? Math.ceil(this.#concurrency / 2) : 0;
    this.#identity = workerIdentity(queue, this.#concurrency);
    this.id = this.#identity.id;
    this.#leaseMs = option("leaseMs", opts.leaseMs, 30_000, 100, 86_400_000);
    this.#heartbeatMs = option("heartbeatMs", opts.heartbeatMs, Math.max(1, Math.floor(this.#leaseMs / 3)), 1, this.#leaseMs - 1);
    this.#maxAttempts = option("maxAttempts", opts.maxAttempts, 3, 1, 1_000_000);
    this.#blockMs = option("blockMs", opts.blockMs, DEFAULT_BLOCK_MS, 10, 600_000);
    this.#maintenanceMs = option("maintenanceMs", opts.maintenanceMs, 5000, 1000, 3_600_000);
    const stopTimeoutMs = option("stopTimeoutMs", opts.stopTimeoutMs, 10_000, 0, 3_600_000);
    this.#timeoutMs = opts.timeoutMs === undefined ? null : option("timeoutMs", opts.timeoutMs, 0, 1, 86_400_000);
    const b = opts.backoff ?? exponentialBackoff;
    if (typeof b !== "function") option("backoff", b, 0, 0, 3_600_000);
    this.#backoff = b;
    if (opts.onError !== undefined && typeof opts.onError !== "function") {
      throw new TypeError("worker: onError must be a function");
    }
    this.#onError = opts.onError ?? ((e) => console.error(`[echomq] worker ${JSON.stringify(queue)}: ${describe(e)}`));
    this.#onStop = onStop;
    this.stallMs = Math.max(STALL_MIN_MS, STALL_BLOCKS * this.#blockMs);
    this.#callStallMs = this.stallMs + Math.max(0, client.patienceMs ?? 0);
    this.#heartbeat = setInterval(() => void this.#extend(), this.#heartbeatMs);
    this.#maintenance = setInterval(() => void this.#maintain(), this.#maintenanceMs);
    this.#watchEveryMs = Math.max(100, Math.floor(this.stallMs / 4));
    this.#watchdog = setInterval(() => this.#watch(), this.#watchEveryMs);
    if (opts.handleSignals) this.#unhook = stopOnSignals(() => this.stop({ timeoutMs: stopTimeoutMs }));
    this.#loop = this.#claimLoop();
    if (opts.schedulers !== false && client.fireSchedulers !== undefined) this.#fireIn(0);
  }

  /** Fires the queue's due schedulers in `ms`, then again when the next one is due (no leader). */
  #fireIn(ms: number): void {
    this.#fireTimer = setTimeout(() => {
      if (this.#stopping) return;
      this.#firing = this.#client.fireSchedulers!(this.queue, this.#blockMs).then(
        (wait) => {
          this.#fireError = null;
          if (!this.#stopping) this.#fireIn(wait);
        },
        (e: unknown) => {
          if (this.#stopping) return;
          const text = e instanceof Error ? e.message : String(e);
          if (text !== this.#fireError) this.#report(e);
          this.#fireError = text;
          this.#fireIn(FIRE_POLL_MS);
        },
      );
    }, ms);
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
    return running.getStore()?.done ?? null;
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
    const running = this.#held.size - this.#settling + this.#overdueRunning;
    const free = Math.min(this.#concurrency - running, 2 * this.#concurrency - this.#held.size);
    return free - this.#inFlightWant;
  }

  /**
   * Whether the claim loop sends its next call: a slot is free or settles wait; beside a call in
   * flight, only once half the slots are free (calls of a few jobs each would cost more than the
   * overlap saves); never beside two.
   */
  #canSend(): boolean {
    if (this.#inFlight.size >= 2) return false;
    const free = this.#free();
    if (this.#inFlight.size === 1) return free >= this.#aside;
    return free > 0 || (this.#loopSettles && this.#queued.length > 0);
  }

  /** Resolves when a slot is free (a release of a settling job may free none: wait again). */
  async #room(): Promise<void> {
    while (!this.#canSend() && this.#inFlightError === null && !this.#stopping) {
      await new Promise<void>((wake) => (this.#roomWaiter = wake));
    }
  }

  /** Whether the claim loop takes the queued settles from now on; when not, those queued go out now. */
  #takeSettles(on: boolean): void {
    this.#loopSettles = on && !this.#stopping && this.#line?.settle !== undefined;
    if (!this.#loopSettles && this.#queued.length > 0) this.#flush();
  }

  #freed(): void {
    const wake = this.#roomWaiter;
    this.#roomWaiter = null;
    wake?.();
  }

  /** The claim loop is at `step` from now on (the watchdog times each step, and may end its wait). */
  #at(step: Step): void {
    this.#step = step;
    this.#stepSince = performance.now();
    this.#stallReports = 0;
    this.#stepInterrupted = this.#stopping;
    this.#endWait = null;
  }

  /** Ends the claim loop's current step (a stop, or the watchdog): its wait, and any it starts, throw {@link INTERRUPTED}. */
  #interrupt(): void {
    this.#stepInterrupted = true;
    const end = this.#endWait;
    this.#endWait = null;
    end?.();
  }

  /**
   * `promise`, unless the current step is interrupted first (a stop, or the watchdog): then it
   * throws {@link INTERRUPTED}, and `late` gets what the promise brings afterwards. (One promise
   * per wait, not a race: the claim loop waits a few times per call.)
   */
  #wait<T>(promise: Promise<T>, late?: (value: T) => void): Promise<T> {
    if (this.#stepInterrupted) {
      if (late !== undefined) promise.then(late, () => {});
      return Promise.reject(INTERRUPTED);
    }
    return new Promise<T>((resolve, reject) => {
      let over = false;
      const end = (): void => {
        over = true;
        reject(INTERRUPTED);
      };
      this.#endWait = end;
      // the promise's outcome is the wait's, unless the wait was interrupted first
      const first = (): boolean => {
        if (over) return false;
        over = true;
        if (this.#endWait === end) this.#endWait = null;
        return true;
      };
      promise.then((value) => (first() ? resolve(value) : late?.(value)), (e: unknown) => {
        if (first()) reject(e);
      });
    });
  }

  async #claimLoop(): Promise<void> {
    let dry = false;
    let failures = 0;
    // the module's blocking CLAIM: at most half the lease, so a job claimed at the end of a wait
    // still has most of its lease by the lower bound the worker keeps (sent + leaseMs)
    const blockingMs = Math.max(1, Math.min(this.#blockMs, Math.floor(this.#leaseMs / 2)));
    while (!this.#stopping) {
      this.#at("waiting for a free slot");
      this.#takeSettles(true);
      await this.#room();
      if (this.#stopping) break;
      let line: ClaimLine<P> | null = this.#line;
      try {
        if (line === null) {
          this.#takeSettles(false);
          this.#at("connecting");
          const giveUp = new AbortController();
          line = await this.#wait(this.#client.dedicated(this.queue, this.#blockMs, giveUp.signal, this.#identity), (l) => l.close())
            .catch((e: unknown) => {
              if (e === INTERRUPTED) giveUp.abort(new EchoMQError("closed", "the worker no longer waits for this connection"));
              throw e;
            });
          this.#line = line;
          continue; // the settles queued meanwhile went out: take the slots as they are now
        }
        if (this.#inFlightError !== null) {
          // a call sent without waiting failed: the loop's own failure (reported, line made again)
          const e = this.#inFlightError;
          this.#inFlightError = null;
          throw e;
        }
        if (this.#ranDry) {
          this.#ranDry = false;
          dry = true;
        }
        if (dry && this.#inFlight.size > 0) {
          // the calls in flight answer first (their jobs run, the queue may not be dry after all)
          this.#at("waiting for a CLAIM reply");
          await this.#wait(Promise.all(this.#inFlight));
          continue;
        }
        this.#lastClaim = performance.now();
        const sentAt = performance.now();
        let want: number;
        let claim: Claim<P>;
        // the settles of this tick (handlers that finished together) go out together; when no
        // handler is running there is nothing to wait for (a turn of the event loop is not free)
        if (this.#loopSettles && this.#queued.length > 0 && this.#held.size > this.#settling) {
          await this.#wait(new Promise<void>((next) => nextMacrotask(next)));
        }
        want = Math.max(0, Math.min(MAX_BATCH, this.#free()));
        if (this.#aside > 0 && !dry) {
          // two claims in flight, each of at most half the slots: this one answers while the loop
          // goes on (a stop waits for it; its jobs run)
          want = Math.min(want, this.#aside);
          if (want > 0) {
            this.#sendAside(line, this.#loopSettles ? this.#queued.splice(0, BATCH_COMMANDS) : [], want, sentAt);
            failures = 0;
            continue;
          }
        }
        if (this.#loopSettles && this.#queued.length > 0 && (this.#queued.length < PAIR_FROM || want === 0)) {
          const batch = this.#queued.splice(0, BATCH_COMMANDS);
          this.#at("waiting for a SETTLE reply");
          claim = await this.#settleClaim(line, batch, want, sentAt);
        } else {
          const waitMs = this.#client.backend === "module" && dry ? blockingMs : 0;
          // a claim that waits on the server must not hold the settles back
          if (waitMs > 0) this.#takeSettles(false);
          this.#at("waiting for a CLAIM reply");
          const sent = line.claim(this.queue, want, this.#leaseMs, waitMs);
          this.#claiming = sent.then(() => {}, () => {});
          // a large batch of settles goes beside the claim, after it: the handlers of the jobs it
          // brings run while the server writes the settles
          if (this.#queued.length > 0) this.#flush(true);
          // a reply that comes after the wait was interrupted (a stop) still runs its jobs: they are claimed
          claim = await this.#wait(sent, (late) => {
            this.#startAll(late.jobs, sentAt + this.#leaseMs);
          });
        }
        failures = 0;
        this.#startAll(claim.jobs, sentAt + this.#leaseMs);
        dry = claim.jobs.length < want;
        // nextMs is the server's time: compared with the server's clock, not this machine's
        const untilDue = claim.nextMs > 0 ? claim.nextMs - (line.serverNow?.() ?? Date.now()) : this.#blockMs;
        // (not when already past by this clock: a skewed clock must not spin; the server decides)
        if (dry && untilDue >= 0 && untilDue < SOON_MS && !this.#stopping) {
          // soon (a rate limit's next token, a park's end): a timer here, then a claim that does not
          // wait — the server's wait ends only at its next cron tick (10 per second by default)
          this.#takeSettles(false);
          this.#at("waiting for a job");
          let timer: ReturnType<typeof setTimeout> | undefined;
          await this.#wait(new Promise<void>((wake) => (timer = setTimeout(wake, Math.max(1, Math.ceil(untilDue))))))
            .finally(() => clearTimeout(timer));
          dry = false;
          continue;
        }
        if (claim.jobs.length === 0 && want > 0 && this.#client.backend === "scripts" && !this.#stopping) {
          this.#takeSettles(false);
          this.#at("waiting for a job");
          await this.#wait(line.wake(this.queue, Math.max(10, Math.min(this.#blockMs, Math.ceil(untilDue)))));
        }
      } catch (e) {
        this.#takeSettles(false);
        if (this.#stopping) break;
        // (an interrupted wait, or a line the watchdog closed, has been reported already)
        if (e !== INTERRUPTED && (line === null || line !== this.#abandoned)) this.#report(e);
        // a connection that failed is made again, soon: 50 ms, 100 ms … 500 ms
        this.#line?.close();
        this.#line = null;
        this.#at("waiting to reconnect");
        let timer: ReturnType<typeof setTimeout> | undefined;
        await this.#wait(new Promise<void>((wake) => (timer = setTimeout(wake, reconnectDelay(failures++))))).catch(() => {});
        clearTimeout(timer);
      }
    }
    this.#takeSettles(false);
  }

  /**
   * One SETTLE on `line`: `batch` settled, then up to `want` jobs claimed. The outcomes are counted
   * when the reply comes, whatever the loop does meanwhile (a stop): the settles' as `#flush`
   * counts them, the jobs claimed run. A call without an outcome rejects (reported by the loop).
   */
  async #settleClaim(line: ClaimLine<P>, batch: Queued[], want: number, sentAt: number): Promise<Claim<P>> {
    const handled = this.#settleCall(line, batch, want);
    this.#claiming = handled.then(() => {}, () => {});
    return await this.#wait(handled, (late) => {
      this.#startAll(late.jobs, sentAt + this.#leaseMs);
    });
  }

  /**
   * A call the claim loop does not wait for (a worker of {@link PIPELINE_FROM} slots or more keeps
   * two in flight): `batch` settled by a SETTLE that claims up to `want` (a CLAIM when there is
   * nothing to settle). Its jobs run when it answers; a claim short of `want` marks the queue dry
   * and a failure is the loop's own, at its next turn.
   */
  #sendAside(line: ClaimLine<P>, batch: Queued[], want: number, sentAt: number): void {
    this.#inFlightWant += want;
    // (a batch comes only while the loop takes the settles, that is on a line with SETTLE)
    const call = batch.length > 0 ? this.#settleCall(line, batch, want) : line.claim(this.queue, want, this.#leaseMs, 0);
    const done: Promise<void> = call.then((claim) => {
      this.#inFlightWant -= want;
      this.#startAll(claim.jobs, sentAt + this.#leaseMs);
      if (claim.jobs.length < want) this.#ranDry = true;
    }, (e: unknown) => {
      this.#inFlightWant -= want;
      this.#inFlightError ??= e;
    }).finally(() => {
      this.#inFlight.delete(done);
      this.#freed();
    });
    this.#inFlight.add(done);
  }

  /** One SETTLE on `line`; the settles' outcomes counted when it answers (as `#flush` counts them). */
  #settleCall(line: ClaimLine<P>, batch: Queued[], want: number): Promise<Claim<P>> {
    const sent: Promise<SettleClaim<P>> = line.settle!(this.queue, batch.map((q) => q.settlement), want, this.#leaseMs);
    return sent.then(
      (r) => {
        this.#settled(batch, r.results, new Set());
        return r.claim;
      },
      (e: unknown) => {
        // no outcome: counted as neither (the jobs stay active until their leases run out); the
        // loop reports the error once
        const error = e instanceof Error ? e : new Error(String(e));
        this.#settled(batch, batch.map(() => error), new Set([error]));
        throw error;
      },
    );
  }

  /** Takes the jobs one call claimed, whose leases run until `leaseUntil` (see {@link #start}). */
  #startAll(jobs: ReadonlyArray<Job<P> | PayloadDecodeError>, leaseUntil: number): void {
    if (jobs.length === 0) return;
    // one clock read for the batch: the jobs start one after another, and a lease running out
    // during that loop is caught by the next heartbeat or settle
    const now = performance.now();
    for (const job of jobs) this.#start(job, leaseUntil, now);
  }

  /**
   * Takes a claimed job: runs its handler, or (an undecodable payload) fails the attempt. A job
   * whose lease has run out by the monotonic clock (`now`) is not started: another claim has it.
   */
  #start(claimed: Job<P> | PayloadDecodeError, leaseUntil: number, now: number): void {
    const job: Job<P> = claimed instanceof PayloadDecodeError ? { ...claimed.job, payload: undefined as P } : claimed;
    const late = now - leaseUntil;
    if (late >= 0) {
      this.lost++;
      this.#report(new LeaseExpiredError(job, late));
      return;
    }
    let key: string = job.id;
    let twin = this.#held.get(key);
    if (twin !== undefined ? twin.job.token !== job.token : this.#keyedByClaim > 0) {
      // another claim of this job is held under its id, or may be held under its claim key
      const other = this.#held.get(claimKey(job));
      if (twin !== undefined) key = claimKey(job);
      twin = other;
    }
    if (twin !== undefined) {
      // the same claim again (a failover lost its record, and the server handed out the same
      // token): the handler already running settles it
      twin.leaseUntil = Math.max(twin.leaseUntil, leaseUntil);
      return;
    }
    const held = hold(job, key, leaseUntil);
    this.#held.set(key, held);
    if (key !== job.id) this.#keyedByClaim++;
    if (claimed instanceof PayloadDecodeError) {
      this.#report(claimed);
      this.#settle(held, claimed);
      return;
    }
    const view = new HeldJob(held, this.#progress);
    const context = new HandlerContext(held, this.#ownSettledBy);
    // the job's own limit (enqueue's timeoutMs) wins over the worker's
    const limit = job.timeoutMs ?? this.#timeoutMs;
    if (limit !== null) {
      held.timer = setTimeout(() => {
        if (held.lost || held.own || held.settling) return;
        const timeout = new JobTimeoutError(limit);
        abortHeld(held, timeout);
        this.#settle(held, timeout);
        // the handler still runs: its slot stays taken until it returns (see #settle); one that
        // has not returned a turn of the event loop after its signal aborted ignores it: reported
        held.timedOut = true;
        this.#overdueRunning++;
        nextMacrotask(() => {
          if (held.returned) return;
          this.overdue++;
          this.#report(new JobOverdueError(job, limit));
        });
      }, limit);
    }
    const tracing = this.#client.tracing ?? null;
    if (tracing !== null) held.span = tracing.process(job);
    const span = held.span;
    let result: unknown;
    try {
      result = running.run(context, () => span === null ? this.#handler(view) : span.run(() => this.#handler(view)));
    } catch (e) {
      this.#settle(held, e);
      return;
    }
    if (
      result === null || (typeof result !== "object" && typeof result !== "function") ||
      typeof (result as { then?: unknown }).then !== "function"
    ) {
      this.#settle(held, null, result);
      return;
    }
    // Promise.resolve: a thenable whose `then` throws rejects instead of escaping
    Promise.resolve(result as PromiseLike<unknown>).then(
      (value) => this.#settle(held, null, value),
      (e: unknown) => this.#settle(held, e),
    );
  }

  /** A handler settled its own job: counted as the worker's own settles are (only when applied). */
  #ownSettled(kind: Settlement["kind"], error: unknown): void {
    if (error === null || error === undefined) {
      this.#count(kind === "ack" ? "done" : kind === "release" ? "hand-back" : "failed", kind);
    } else if (error instanceof LeaseLostError) this.lost++;
  }

  /**
   * Queues the job's settle: ack (`failure` null) with the handler's `result`, else retry or bury;
   * a lost job is dropped. A result that cannot be sent (no JSON form, or too large) fails the
   * attempt instead, as a throw of the handler would.
   */
  #settle(held: Held<P>, failure: unknown, result?: unknown): void {
    if (held.timedOut) {
      // failed at its timeout already: its handler returned at last, its slot frees
      held.returned = true;
      this.#overdueRunning--;
      this.#freed();
      return;
    }
    let encoded = "";
    if (failure === null && !held.lost && !held.own) {
      try {
        encoded = encodeResult(held.job.id, result);
      } catch (e) {
        failure = e;
      }
    }
    if (failure !== null) held.span?.failed(failure);
    if (held.lost || held.own) {
      this.#release(held);
      return;
    }
    held.settling = true;
    this.#settling++;
    this.#freed();
    const job = held.job;
    if (failure === null) {
      const settlement: Settlement = encoded === "" ? { kind: "ack", job } : { kind: "ack", job, result: new EncodedResult(encoded) };
      this.#queue({ settlement, why: "done", held }, held.span);
      return;
    }
    if (failure instanceof RateLimitedError) {
      // its lane (the queue, for the default lane) parked first, then the job handed back: no other
      // worker takes it before the park
      const handBack = (): void => this.#queue({ settlement: { kind: "release", job }, why: "hand-back", held }, held.span);
      const park = this.#client.penalize?.(this.queue, failure.ms, job.lane);
      if (park === undefined) handBack();
      else {park.then(handBack, (e: unknown) => {
          this.#report(e);
          handBack();
        });}
      return;
    }
    const reason = truncateUtf8(failure instanceof JobTimeoutError ? failure.message : describe(failure), MAX_REASON_BYTES);
    if (failure instanceof UnrecoverableError || job.attempts >= this.#maxAttempts) {
      this.#queue({ settlement: { kind: "bury", job, reason }, why: "failed", held }, held.span);
      return;
    }
    let settlement: Settlement;
    try {
      const b = this.#backoff;
      const raw = askedDelay(failure) ?? (typeof b === "function" ? b(job.attempts, failure) : b);
      const delayMs = Math.max(0, Math.min(MAX_WIRE_NUMBER, Math.floor(Number.isFinite(raw) ? raw : 1)));
      settlement = { kind: "retry", job, delayMs, reason };
    } catch (e) {
      // a throwing backoff: reported; the job is retried after a second
      this.#report(e);
      settlement = { kind: "retry", job, delayMs: 1000, reason: truncateUtf8(describe(e), MAX_REASON_BYTES) };
    }
    this.#queue({ settlement, why: "failed", held }, held.span);
  }

  /** Queues a settle for the next flush (`span`: the job's process span, told what is sent). */
  #queue(q: Queued, span: ProcessSpan | null = null): void {
    span?.settling(q.settlement.kind);
    this.#queued.push(q);
    if (this.#loopSettles && !this.#stopping) {
      // the claim loop takes it into its next call (it stops taking them only by flushing them)
      this.#freed();
      return;
    }
    if (!this.#flushPending) {
      this.#flushPending = true;
      nextMacrotask(() => this.#flush());
    }
  }

  /** One applied settle, counted. */
  #count(why: Queued["why"], kind: Settlement["kind"]): void {
    if (why === "hand-back") this.handedBack++;
    else if (kind === "ack") this.completed++;
    else {
      this.failed++;
      if (kind === "bury") this.buried++;
    }
  }

  /**
   * Sends every queued settle: one command per kind; each outcome counted (only when the server
   * applied it) or reported (each distinct error once). While the claim loop takes the settles
   * into its SETTLE, they wait for it instead (it is woken).
   */
  #flush(now = false): void {
    this.#flushPending = false;
    if (!now && this.#loopSettles && !this.#stopping) {
      this.#freed();
      return;
    }
    const batch = this.#queued;
    if (batch.length === 0) return;
    this.#queued = [];
    let end!: () => void;
    const over = new Promise<void>((done) => (end = done));
    const flushing: Flushing = { since: performance.now(), batch, freed: false, givenUp: false, over, end };
    this.#flushing.add(flushing);
    void (async () => {
      let results: Array<Error | null>;
      try {
        results = await this.#client.settleMany(batch.map((q) => q.settlement));
      } catch (e) {
        // the whole command failed: applied or not, nobody knows; counted as neither (the jobs
        // stay active until their leases run out, then are claimed again)
        const error = e instanceof Error ? e : new Error(String(e));
        results = batch.map(() => error);
      }
      this.#settled(batch, results, new Set());
    })().finally(() => {
      this.#flushing.delete(flushing);
      end();
    });
  }

  /**
   * The outcomes of settles sent: each applied one counted, each error reported once (but those
   * in `reported`), and the jobs leave the worker.
   */
  #settled(batch: readonly Queued[], results: ReadonlyArray<Error | null>, reported: Set<Error>): void {
    batch.forEach((q, i) => {
      const r = results[i] ?? null;
      const held = this.#held.get(q.held.key) === q.held ? q.held as Held<P> : undefined;
      if (r !== null) held?.span?.settleFailed(q.settlement.kind, r);
      if (r === null) this.#count(q.why, q.settlement.kind);
      else {
        if (r instanceof LeaseLostError) this.lost++;
        if (!reported.has(r)) {
          reported.add(r);
          this.#report(r);
        }
      }
      if (held !== undefined) this.#release(held);
    });
  }

  /** The job leaves this worker: its slot frees. */
  #release(held: Held<P>): void {
    if (this.#held.get(held.key) === held) {
      this.#held.delete(held.key);
      if (held.key !== held.job.id) this.#keyedByClaim--;
      if (held.settling) this.#settling--;
    }
    held.span?.end();
    leave(held);
    this.#freed();
  }

  /**
   * Marks the claims of `jobs` lost: their signals abort, they will not be settled here. A claim
   * whose settle went out meanwhile is not lost (the extension raced its own ack): the settle
   * decides. Reported once, for the claims really lost.
   */
  #lose(jobs: readonly Held<P>[], error: LeaseLostError): void {
    let lost = 0;
    for (const held of jobs) {
      if (this.#held.get(held.key) !== held || held.lost || held.settling || held.own) continue;
      held.lost = true;
      lost++;
      held.span?.leaseLost(error);
      abortHeld(held, error);
    }
    this.lost += lost;
    if (lost > 0) this.#report(error);
  }

  /** The heartbeat: extends every running job's lease; lost ones are dropped and the rest extended. */
  async #extend(): Promise<void> {
    let list = [...this.#held.values()].filter((h) => !h.lost && !h.settling && !h.own);
    while (list.length > 0) {
      const sentAt = performance.now();
      try {
        await this.#client.extend(list.map((h) => h.job), this.#leaseMs);
        for (const h of list) h.leaseUntil = Math.max(h.leaseUntil, sentAt + this.#leaseMs);
        return;
      } catch (e) {
        if (!(e instanceof LeaseLostError)) {
          this.#report(e);
          return;
        }
        const lost = new Set(e.ids);
        this.#lose(list.filter((h) => lost.has(h.job.id)), e);
        const rest = list.filter((h) => !lost.has(h.job.id));
        if (rest.length === list.length) return;
        list = rest;
      }
    }
  }

  /** A worker with every slot busy claims nothing: it reaps expired leases itself now and then. */
  async #maintain(): Promise<void> {
    // Only a saturated worker (its claim loop waiting for a slot): a claim out on the server reaps
    // there, and a waiting one is answered when the first lease runs out.
    if (this.#stopping || this.#roomWaiter === null || performance.now() - this.#lastClaim < this.#maintenanceMs) return;
    try {
      await this.#client.reap(this.queue);
    } catch (e) {
      this.#report(e);
    }
  }

  /**
   * The watchdog: a claim loop step (other than waiting for a slot) or a settle that has lasted
   * longer than {@link stallMs} (a claim, a wait or a settle: plus the client's patience) is
   * reported, then undone — the claim connection is closed (the
   * call on it fails, and the loop makes a new one), a stuck settle is given up (its jobs' leases
   * run out on the server). A settle out for {@link stallMs} already frees its jobs' slots.
   */
  #watch(): void {
    const now = performance.now();
    // A tick that comes late says the whole process was paused (SIGSTOP, a suspended machine) or
    // starved: that time is nobody's stall. It is taken off, and pending replies read first.
    const paused = now - this.#lastWatch - 2 * this.#watchEveryMs;
    this.#lastWatch = now;
    if (paused > 0) {
      this.#stepSince += paused;
      for (const f of this.#flushing) f.since += paused;
      return;
    }
    const stalled = now - this.#stepSince;
    const closes = this.#step === "waiting for a CLAIM reply" || this.#step === "waiting for a SETTLE reply" ||
      this.#step === "waiting for a job";
    const limit = closes ? this.#callStallMs : this.stallMs;
    if (!this.#stopping && this.#step !== "waiting for a free slot" && stalled > limit * (this.#stallReports + 1)) {
      this.#stallReports++;
      this.#report(
        new WorkerStalledError(
          this.queue,
          Math.round(stalled),
          `the claim loop is ${this.#step}${closes ? " (its connection is made again)" : ""}`,
        ),
      );
      if (closes && this.#line !== null) {
        this.#abandoned = this.#line;
        this.#line.close();
        this.#line = null;
        this.#interrupt(); // whether or not closing ends the call on it
      }
    }
    for (const f of this.#flushing) {
      // a slow settle (a connection retrying a redirection, or a stale one) must not keep the
      // claim loop from claiming: its jobs' slots free, and its outcome is still counted
      if (!f.freed && now - f.since > this.stallMs) {
        f.freed = true;
        for (const q of f.batch) {
          if (this.#held.get(q.held.key) === q.held) this.#release(q.held as Held<P>);
        }
      }
      if (f.givenUp || now - f.since <= this.#callStallMs) continue;
      f.givenUp = true;
      f.end();
      const n = f.batch.length;
      this.#report(
        new WorkerStalledError(
          this.queue,
          Math.round(now - f.since),
          `a settle of ${n} job${n === 1 ? " has" : "s have"} not come back (given up: the lease runs out on the server)`,
        ),
      );
    }
  }

  /**
   * Stops claiming; resolves once every job it holds has run and been settled (claims already sent
   * are run too). With `timeoutMs`, jobs still running then have their signals aborted and are
   * handed back (released: pending again, the attempt given back; not a failed attempt). Called from inside a handler, it does not wait
   * for that handler's own job (which settles when the handler returns). Safe to call more than
   * once. Every timer the worker started is cleared by the time it resolves.
   */
  stop(opts: StopOptions = {}): Promise<void> {
    const self = Worker.current();
    if (this.#stopped === null) {
      const deadline = opts.timeoutMs === undefined ? null : option("timeoutMs", opts.timeoutMs, 0, 0, 86_400_000);
      this.#stopping = true;
      this.#takeSettles(false);
      this.#interrupt();
      clearInterval(this.#maintenance);
      clearTimeout(this.#fireTimer);
      this.#unhook();
      this.#freed();
      this.#stopped = (async () => {
        // A claim waiting on the server ends there first (so it claims nothing for a connection
        // about to close): UNBLOCK, again until the claim has answered — one that reaches the server
        // before the CLAIM does ends nothing, and the CLAIM would then wait there and take a job
        // enqueued after this stop. Jobs it claimed meanwhile are run (the claim loop's `late`). If
        // that fails, closing the connection ends it.
        const line = this.#line;
        if (line !== null) {
          // calls sent without waiting answer first (none waits on the server): closing the line
          // under one would lose the jobs it claimed until their leases ran out
          await within(Promise.all(this.#inFlight), 2000, undefined);
          let answered = false;
          void this.#claiming.then(() => (answered = true));
          const until = performance.now() + 2000;
          while (!answered && performance.now() < until) {
            await within(line.unblock().catch(() => {}), 1000, undefined);
            await within(this.#claiming, 20, undefined);
          }
          line.close();
        }
        await this.#loop;
        // calls the loop sent without waiting: their jobs run (and are drained below)
        await Promise.all(this.#inFlight);
        await this.#firing;
        this.#line?.close();
        this.#line = null;
        if (deadline !== null) {
          const late = await within(this.#drain(self).then(() => false), deadline, true);
          if (late) this.#handBack(self);
        }
        // the worker is done once every job it holds is settled: then the heartbeat and the
        // watchdog (which gives up settles that never come back) stop
        void this.#drain(null).then(() => {
          clearInterval(this.#heartbeat);
          clearInterval(this.#watchdog);
          this.#onStop();
        });
      })();
    }
    return this.#stopped.then(() => this.#drain(self));
  }

  /**
   * Resolves once every job held (but `except`, the caller's own) has run and been settled (or its
   * settle given up by the watchdog).
   */
  async #drain(except: Promise<void> | null): Promise<void> {
    for (;;) {
      const others = [...this.#held.values()].map(doneOf).filter((d) => d !== except);
      if (others.length > 0) await Promise.all(others);
      else if (this.#flushPending || this.#flushing.size > 0) {
        this.#flush();
        await Promise.all([...this.#flushing].map((f) => f.over));
        if ([...this.#flushing].every((f) => f.givenUp) && !this.#flushPending) return;
      } else return;
    }
  }

  /**
   * At a stop's deadline: running jobs' signals abort, and each is handed back at once (RELEASE:
   * back in pending, the attempt its claim counted given back). A job its handler settled itself
   * is left to it.
   */
  #handBack(self: Promise<void> | null): void {
    const stopped = new EchoMQError("closed", "worker stopped before the job finished");
    for (const held of this.#held.values()) {
      if ((self !== null && doneOf(held) === self) || held.lost || held.settling) continue;
      abortHeld(held, stopped);
      held.lost = true; // its handler's outcome is ignored: the hand-back below settles it
      if (held.own) {
        this.#release(held);
        continue;
      }
      held.settling = true;
      this.#settling++;
      this.#queue({ settlement: { kind: "release", job: held.job }, why: "hand-back", held }, held.span);
    }
  }
}
