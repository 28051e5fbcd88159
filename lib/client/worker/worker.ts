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
 * The work is split by role (docs/design/worker.md): the claim loop (claim_loop.ts), the runner
 * (runner.ts), the settler (settler.ts), the heartbeat (heartbeat.ts) and the watchdog
 * (watchdog.ts) share one {@link Crew}; this file holds the options, the counters, and start,
 * stop, drain and hand-back.
 *
 * @module
 */
import { MAX_BATCH } from "../../wire/mod.ts";
import { EchoMQError } from "../errors.ts";
import type { WorkerJob } from "../job.ts";
import type { RelayOptions } from "../relay.ts";
import { integerIn } from "../options.ts";
import { stopOnSignals } from "../signals.ts";
import { FIRE_POLL_MS } from "../schedulers.ts";
import { exponential } from "../backoff.ts";
import { type WorkerIdentity, workerIdentity } from "./worker_name.ts";
import type { WorkerClient } from "./worker_client.ts";
import { abortHeld, doneOf, mayOwn } from "./held.ts";
import { Slots } from "./slots.ts";
import { describe, Settler } from "./settler.ts";
import { currentJobDone, Runner } from "./runner.ts";
import { ClaimLoop } from "./claim_loop.ts";
import { Heartbeat } from "./heartbeat.ts";
import { Watchdog } from "./watchdog.ts";
import { within } from "./timing.ts";
import { Pool } from "./sandbox.ts";

export type { ClaimLine, WorkerClient } from "./worker_client.ts";
export { ownSettle } from "./runner.ts";
export { truncateUtf8 } from "./settler.ts";

/**
 * Runs one job; a throw (or a rejected promise) fails the attempt. What it returns (or its promise
 * resolves with) is the job's result, sent with the ack as `JSON.stringify` writes it (`undefined`:
 * none) and kept with the completed job while the queue keeps completed jobs (`EchoMQ.retain`);
 * a value JSON cannot carry, or whose JSON passes `MAX_PAYLOAD_BYTES`
 * (`ResultTooLargeError`), fails the attempt as a throw does. `C` types a flow parent's
 * children's results (`job.children()`).
 */
export type Handler<P, R = unknown, C = unknown> = (job: WorkerJob<P, C>) => R | Promise<R>;

/**
 * Delay before the next attempt, in ms: a constant, or a function of the attempts made so far
 * (≥ 1) and the error the handler threw. An error with its own `retryDelayMs` (`RetryError`)
 * overrides it.
 */
export type Backoff = number | ((attempts: number, error: unknown) => number);

/** Default `blockMs` of a worker: how long one waiting call of an idle worker lasts. */
export const DEFAULT_BLOCK_MS = 5000;

/** Options of `EchoMQ.work`; each is checked (an `EchoMQError` of rule `options` names the option and its range). */
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
  /**
   * Attempts before a failing job is buried (1 to 1000000, default 3); a job admitted with its own
   * `attempts` (`enqueue`'s, a flow step's `opts`) gets that many instead.
   */
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
   * lost (`LeaseLostError`) or cancelled (`JobCancelledError`, `EchoMQ.cancel`) or ran out before it started (`LeaseExpiredError`), a payload the codec
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
  /**
   * Relay the queue's outbox from this worker (`mq.relay`: a flow's entries for parents and
   * children in other queues; default false). On, the worker looks at the outbox every
   * `intervalMs` (default 250): a parent in another queue runs within about that much after its
   * last child. The workers of one client with the same relay options share one relay (one round
   * over all their queues). Off, run `mq.relay(queues)` or `emq relay` somewhere (a same-queue flow
   * needs none).
   */
  relay?: boolean | RelayOptions;
  /**
   * Where a processor module given as the handler (its URL: `new URL("./processor.ts",
   * import.meta.url)`, its default export the handler) runs: `"thread"` (default), a pool of
   * worker threads, or `"process"`, a pool of child processes of this runtime; one job at a time
   * each, reused across jobs, `concurrency` at most. A sandbox that exits, aborts or runs out of
   * memory fails only its job's attempt (`SandboxCrashError`, saying how it died) and is replaced;
   * one past its job's time limit is terminated, its slot freed. Only with a URL as the handler.
   */
  sandbox?: "thread" | "process";
  /**
   * A sandbox's memory limit in MB (16 to 1048576): a thread's heap (`resourceLimits`; Node only),
   * a process's heap (`--max-old-space-size`, Node and Deno) or, under Bun on Linux, its resident
   * memory. Default: the runtime's own. Only with `sandbox`.
   */
  memoryLimitMb?: number;
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

const DEFAULT_BACKOFF = exponential();

/** The default backoff: 1 s, 2 s, 4 s, … capped at one hour (`exponential()`). */
export function exponentialBackoff(attempts: number): number {
  return DEFAULT_BACKOFF(attempts);
}

/** `value` (default `fallback`) as an integer from `min` to `max`, else an `EchoMQError` (rule `options`) naming `name`. */
function option(name: string, value: unknown, fallback: number, min: number, max: number): number {
  return integerIn(`worker: ${name}`, value === undefined ? fallback : value, min, max, (m) => new EchoMQError("options", m));
}

/** Watchdog: a claim loop step or settle stalls after this many `blockMs` (and at least the minimum). */
const STALL_BLOCKS = 5;
const STALL_MIN_MS = 2000;

/** The worker's options, checked, and what follows from them. */
export interface Config {
  readonly concurrency: number;
  readonly identity: WorkerIdentity;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  readonly backoff: Backoff;
  readonly blockMs: number;
  readonly maintenanceMs: number;
  /** The worker's time limit of a handler (a job's own `timeoutMs` wins), or null. */
  readonly timeoutMs: number | null;
  /** See {@link Worker.stallMs}. */
  readonly stallMs: number;
  /** The watchdog's limit for one claim, wait or settle: `stallMs` + the client's patience. */
  readonly callStallMs: number;
}

/** The worker's counters (public on {@link Worker}), which its roles count in. */
export interface Counts {
  completed: number;
  failed: number;
  buried: number;
  handedBack: number;
  lost: number;
  overdue: number;
}

/** What the worker's roles share. */
export interface Crew<P> {
  readonly queue: string;
  readonly client: WorkerClient<P>;
  readonly config: Config;
  readonly slots: Slots<P>;
  readonly counts: Counts;
  /** `stop()` was called: claims stop. */
  stopping: boolean;
  /** Tells `onError` (a throwing `onError` is ignored). */
  report(error: unknown): void;
}

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
  readonly #crew: Crew<P>;
  readonly #settler: Settler<P>;
  readonly #loop: ClaimLoop<P>;
  readonly #heartbeat: Heartbeat<P>;
  readonly #watchdog: Watchdog<P>;
  readonly #client: WorkerClient<P>;
  readonly #blockMs: number;
  #fireTimer: ReturnType<typeof setTimeout> | undefined;
  /** The last firing's error text: the same error again is not reported again. */
  #fireError: string | null = null;
  #firing: Promise<void> = Promise.resolve();
  readonly #onError: (error: unknown) => void;
  readonly #onStop: () => void;
  #stopped: Promise<void> | null = null;
  #unhook: () => void = () => {};
  /** The sandboxes of a processor module given as the handler (else null). */
  readonly #pool: Pool | null = null;
  /** The relay of the queue's outbox this worker runs (`relay` option), or null. */
  readonly #relay: { stop(): Promise<void> } | null = null;

  /** Starts claiming; use `EchoMQ.work` rather than this. */
  constructor(client: WorkerClient<P>, queue: string, handler: Handler<P> | URL, opts: WorkerOptions, onStop: () => void) {
    if (typeof handler !== "function" && !(handler instanceof URL)) {
      throw new EchoMQError("options", "worker: handler must be a function or a processor module's URL");
    }
    if (opts === null || typeof opts !== "object") throw new EchoMQError("options", "worker: options must be an object");
    if (handler instanceof URL) {
      const kind = opts.sandbox ?? "thread";
      if (kind !== "thread" && kind !== "process") throw new EchoMQError("options", `worker: sandbox must be "thread" or "process"`);
      const memoryLimitMb = opts.memoryLimitMb === undefined ? null : option("memoryLimitMb", opts.memoryLimitMb, 0, 16, 1_048_576);
      this.#pool = new Pool(handler, kind, memoryLimitMb);
      handler = this.#pool.handler as Handler<P>;
    } else if (opts.sandbox !== undefined || opts.memoryLimitMb !== undefined) {
      throw new EchoMQError("options", "worker: sandbox and memoryLimitMb take a processor module's URL as the handler, not a function");
    }
    this.#client = client;
    this.queue = queue;
    // every free slot is claimed in one CLAIM: at most MAX_BATCH
    const concurrency = option("concurrency", opts.concurrency, 1, 1, MAX_BATCH);
    const identity = workerIdentity(queue, concurrency);
    this.id = identity.id;
    const leaseMs = option("leaseMs", opts.leaseMs, 30_000, 100, 86_400_000);
    const heartbeatMs = option("heartbeatMs", opts.heartbeatMs, Math.max(1, Math.floor(leaseMs / 3)), 1, leaseMs - 1);
    const maxAttempts = option("maxAttempts", opts.maxAttempts, 3, 1, 1_000_000);
    const blockMs = option("blockMs", opts.blockMs, DEFAULT_BLOCK_MS, 10, 600_000);
    this.#blockMs = blockMs;
    const maintenanceMs = option("maintenanceMs", opts.maintenanceMs, 5000, 1000, 3_600_000);
    const stopTimeoutMs = option("stopTimeoutMs", opts.stopTimeoutMs, 10_000, 0, 3_600_000);
    const timeoutMs = opts.timeoutMs === undefined ? null : option("timeoutMs", opts.timeoutMs, 0, 1, 86_400_000);
    const backoff = opts.backoff ?? exponentialBackoff;
    if (typeof backoff !== "function") option("backoff", backoff, 0, 0, 3_600_000);
    if (opts.onError !== undefined && typeof opts.onError !== "function") {
      throw new EchoMQError("options", "worker: onError must be a function");
    }
    this.#onError = opts.onError ?? ((e) => console.error(`[echomq] worker ${JSON.stringify(queue)}: ${describe(e)}`));
    this.#onStop = onStop;
    this.stallMs = Math.max(STALL_MIN_MS, STALL_BLOCKS * blockMs);
    const callStallMs = this.stallMs + Math.max(0, client.patienceMs ?? 0);
    const config: Config = {
      concurrency,
      identity,
      leaseMs,
      heartbeatMs,
      maxAttempts,
      backoff,
      blockMs,
      maintenanceMs,
      timeoutMs,
      stallMs: this.stallMs,
      callStallMs,
    };
    this.#crew = { queue, client, config, slots: new Slots(concurrency), counts: this, stopping: false, report: (e) => this.#report(e) };
    this.#settler = new Settler(this.#crew);
    const runner = new Runner(this.#crew, this.#settler, handler);
    this.#loop = new ClaimLoop(this.#crew, this.#settler, runner);
    this.#heartbeat = new Heartbeat(this.#crew, this.#loop);
    this.#watchdog = new Watchdog(this.#crew, this.#loop, this.#settler);
    if (opts.handleSignals) this.#unhook = stopOnSignals(() => this.stop({ timeoutMs: stopTimeoutMs }));
    this.#loop.start();
    if (opts.schedulers !== false && client.fireSchedulers !== undefined) this.#fireIn(0);
    if (opts.relay !== undefined && opts.relay !== false && client.relay !== undefined) {
      this.#relay = client.relay(queue, opts.relay === true ? { onError: (e) => this.#report(e) } : opts.relay);
    }
  }

  /** Fires the queue's due schedulers in `ms`, then again when the next one is due (no leader). */
  #fireIn(ms: number): void {
    this.#fireTimer = setTimeout(() => {
      if (this.#crew.stopping) return;
      this.#firing = this.#client.fireSchedulers!(this.queue, this.#blockMs).then(
        (wait) => {
          this.#fireError = null;
          if (!this.#crew.stopping) this.#fireIn(wait);
        },
        (e: unknown) => {
          if (this.#crew.stopping) return;
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
    return !this.#crew.stopping;
  }

  /**
   * Inside a handler: a promise that resolves once that handler's job is settled; else null.
   * (`stop()` and `EchoMQ.close()` use it so that a handler may call them without waiting on
   * itself.)
   */
  static current(): Promise<void> | null {
    return currentJobDone();
  }

  #report(e: unknown): void {
    try {
      this.#onError(e);
    } catch {
      // a throwing onError must not stop the worker either
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
      this.#crew.stopping = true;
      this.#loop.takeSettles(false);
      this.#loop.interrupt();
      this.#heartbeat.stopMaintenance();
      clearTimeout(this.#fireTimer);
      this.#unhook();
      this.#crew.slots.freed();
      this.#stopped = (async () => {
        // A claim waiting on the server ends there first (so it claims nothing for a connection
        // about to close): UNBLOCK, again until the claim has answered — one that reaches the server
        // before the CLAIM does ends nothing, and the CLAIM would then wait there and take a job
        // enqueued after this stop. Jobs it claimed meanwhile are run (the claim loop's `late`). If
        // that fails, closing the connection ends it.
        const loop = this.#loop;
        const line = loop.line;
        if (line !== null) {
          // calls sent without waiting answer first (none waits on the server): closing the line
          // under one would lose the jobs it claimed until their leases ran out
          await within(Promise.all(loop.inFlight), 2000, undefined);
          let answered = false;
          void loop.claiming.then(() => (answered = true));
          const until = performance.now() + 2000;
          while (!answered && performance.now() < until) {
            await within(line.unblock().catch(() => {}), 1000, undefined);
            await within(loop.claiming, 20, undefined);
          }
          line.close();
        }
        await loop.done;
        // calls the loop sent without waiting: their jobs run (and are drained below)
        await Promise.all(loop.inFlight);
        await this.#firing;
        await this.#relay?.stop();
        loop.line?.close();
        loop.line = null;
        if (deadline !== null) {
          const late = await within(this.#drain(self).then(() => false), deadline, true);
          if (late) this.#handBack(self);
        }
        if (this.#pool !== null) {
          // sandboxes end once every job is settled (or handed back: its sandbox is killed)
          await this.#drain(null);
          await this.#pool.close();
        }
        // the worker is done once every job it holds is settled: then the heartbeat and the
        // watchdog (which gives up settles that never come back) stop
        void this.#drain(null).then(() => {
          this.#heartbeat.stop();
          this.#watchdog.stop();
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
    const settler = this.#settler;
    for (;;) {
      const others = [...this.#crew.slots.held.values()].map(doneOf).filter((d) => d !== except);
      if (others.length > 0) await Promise.all(others);
      else if (settler.flushPending || settler.flushing.size > 0) {
        settler.flush();
        await Promise.all([...settler.flushing].map((f) => f.over));
        if ([...settler.flushing].every((f) => f.givenUp) && !settler.flushPending) return;
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
    const slots = this.#crew.slots;
    for (const held of slots.held.values()) {
      if ((self !== null && doneOf(held) === self) || !mayOwn(held)) continue;
      abortHeld(held, stopped);
      if (held.state === "own") {
        slots.release(held);
        continue;
      }
      // its handler's outcome is ignored ("stopped"): the hand-back settles it
      slots.settling(held, "stopped");
      this.#settler.queue({ settlement: { kind: "release", job: held.job }, why: "hand-back", held }, held.span);
    }
  }
}
