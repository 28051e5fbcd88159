/**
 * The claim loop: claims the free slots on the worker's own connection, one call at a time — or,
 * from {@link PIPELINE_FROM} slots on, two in flight (the call aside) — and hands the jobs to the
 * runner. Which call it sends (docs/design/worker.md has the table): queued settles and a claim in
 * one SETTLE; a CLAIM sent first with a large batch of settles beside it (a pair); a plain CLAIM,
 * blocking on the server (module) when the queue ran dry; then, with nothing claimed, a timer when
 * the server says a job is due soon, or (scripts) a wait on the queue's wake key. Each wait is one
 * step the watchdog times, and a stop or the watchdog interrupts.
 *
 * @module
 */
import { MAX_BATCH } from "../../wire/mod.ts";
import { EchoMQError } from "../errors.ts";
import { BATCH_COMMANDS } from "../options.ts";
import type { Claim } from "../batch.ts";
import type { SettleClaim } from "../settle_claim.ts";
import type { ClaimLine } from "./worker_client.ts";
import type { Queued, Settler } from "./settler.ts";
import type { Runner } from "./runner.ts";
import type { Crew } from "./worker.ts";
import { nextMacrotask } from "./timing.ts";

/**
 * A claim that got nothing but is told the queue claims again sooner than this (ms: a rate limit's
 * next token, a park's end) waits on a timer here, not on the server, whose waits end at its cron
 * ticks (`hz` 10: every 100 ms).
 */
const SOON_MS = 250;

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
export const PIPELINE_FROM = 32;

/** The wait before reconnect attempt `n` (0-based): 50, 100, 200, 400, then 500 ms. */
const reconnectDelay = (n: number): number => Math.min(500, 50 * 2 ** n);

/** What an interrupted wait of the claim loop throws (a stop, or the watchdog). */
const INTERRUPTED: unique symbol = Symbol("interrupted");

/** A wait that claimed as it ended (scripts): its claim of up to `want`, sent at `sentAt`. */
interface Woken<P> {
  readonly claim: Claim<P>;
  readonly waitError: Error | null;
  readonly want: number;
  readonly sentAt: number;
}

/** Where the claim loop is, for the watchdog. */
export type Step =
  | "waiting for a free slot"
  | "connecting"
  | "waiting for a CLAIM reply"
  | "waiting for a SETTLE reply"
  | "waiting for a job"
  | "waiting to reconnect";

/** The claim loop of one worker. */
export class ClaimLoop<P> {
  readonly #crew: Crew<P>;
  readonly #settler: Settler<P>;
  readonly #runner: Runner<P>;
  /** Its connection (null until made, and after a failure). */
  line: ClaimLine<P> | null = null;
  /** The last line the watchdog closed: the failure of the call on it is no news. */
  #abandoned: ClaimLine<P> | null = null;
  /** Where it is, since when, and how often the watchdog reported this step. */
  step: Step = "connecting";
  stepSince: number = performance.now();
  stallReports = 0;
  /** When it last sent a claim (the heartbeat's maintenance reaps only after a while without). */
  lastClaim: number = performance.now();
  /** Settles once the last CLAIM sent has answered (or failed). */
  claiming: Promise<void> = Promise.resolve();
  /** Calls sent without waiting for them (two claims in flight), until they answer. */
  readonly inFlight: Set<Promise<void>> = new Set();
  /** The slots those calls ask for: not free until they answer. */
  #inFlightWant = 0;
  /** A call sent without waiting claimed fewer jobs than it asked for: the queue ran dry. */
  #ranDry = false;
  /** A call sent without waiting failed without an outcome: the loop handles it as its own. */
  #inFlightError: unknown = null;
  /** The current step was interrupted (a stop, or the watchdog): its waits throw {@link INTERRUPTED}. */
  #stepInterrupted = false;
  /** Ends the wait in progress, if any (see {@link #wait}). */
  #endWait: (() => void) | null = null;
  /** Slots a call sent beside another asks for at most: half the concurrency, from {@link PIPELINE_FROM} on (else 0: one call in flight). */
  readonly #aside: number;
  /** Resolves once the loop ended (after a stop). */
  done: Promise<void> = Promise.resolve();

  constructor(crew: Crew<P>, settler: Settler<P>, runner: Runner<P>) {
    this.#crew = crew;
    this.#settler = settler;
    this.#runner = runner;
    const concurrency = crew.config.concurrency;
    this.#aside = concurrency >= PIPELINE_FROM ? Math.ceil(concurrency / 2) : 0;
  }

  /** Starts the loop. */
  start(): void {
    this.done = this.#run();
  }

  /** Free slots, but those the calls in flight ask for. */
  #free(): number {
    return this.#crew.slots.free(this.#inFlightWant);
  }

  /**
   * Whether the loop sends its next call: a slot is free or settles wait; beside a call in
   * flight, only once half the slots are free (calls of a few jobs each would cost more than the
   * overlap saves); never beside two.
   */
  #canSend(): boolean {
    if (this.inFlight.size >= 2) return false;
    const free = this.#free();
    if (this.inFlight.size === 1) return free >= this.#aside;
    return free > 0 || (this.#settler.loopSettles && this.#settler.queued.length > 0);
  }

  /** Resolves when a slot is free (a release of a settling job may free none: wait again). */
  async #room(): Promise<void> {
    while (!this.#canSend() && this.#inFlightError === null && !this.#crew.stopping) await this.#crew.slots.wait();
  }

  /** Whether the loop takes the queued settles from now on; when not, those queued go out now. */
  takeSettles(on: boolean): void {
    const settler = this.#settler;
    settler.loopSettles = on && !this.#crew.stopping && this.line?.settle !== undefined;
    if (!settler.loopSettles && settler.queued.length > 0) settler.flush();
  }

  /** The loop is at `step` from now on (the watchdog times each step, and may end its wait). */
  #at(step: Step): void {
    this.step = step;
    this.stepSince = performance.now();
    this.stallReports = 0;
    this.#stepInterrupted = this.#crew.stopping;
    this.#endWait = null;
  }

  /** Ends the current step (a stop, or the watchdog): its wait, and any it starts, throw {@link INTERRUPTED}. */
  interrupt(): void {
    this.#stepInterrupted = true;
    const end = this.#endWait;
    this.#endWait = null;
    end?.();
  }

  /** The watchdog gives up the call in progress: its line is closed, the loop makes a new one. */
  abandon(): void {
    if (this.line === null) return;
    this.#abandoned = this.line;
    this.line.close();
    this.line = null;
    this.interrupt(); // whether or not closing ends the call on it
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

  async #run(): Promise<void> {
    const crew = this.#crew;
    const { client, config, queue } = crew;
    const settler = this.#settler;
    const runner = this.#runner;
    let dry = false;
    let failures = 0;
    // the module's blocking CLAIM: at most half the lease, so a job claimed at the end of a wait
    // still has most of its lease by the lower bound the worker keeps (sent + leaseMs)
    const blockingMs = Math.max(1, Math.min(config.blockMs, Math.floor(config.leaseMs / 2)));
    while (!crew.stopping) {
      this.#at("waiting for a free slot");
      this.takeSettles(true);
      await this.#room();
      if (crew.stopping) break;
      let line: ClaimLine<P> | null = this.line;
      try {
        if (line === null) {
          line = await this.#connect();
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
        if (dry && this.inFlight.size > 0) {
          // the calls in flight answer first (their jobs run, the queue may not be dry after all)
          this.#at("waiting for a CLAIM reply");
          await this.#wait(Promise.all(this.inFlight));
          continue;
        }
        this.lastClaim = performance.now();
        const sentAt = performance.now();
        let want: number;
        let claim: Claim<P>;
        // the settles of this tick (handlers that finished together) go out together; when no
        // handler is running there is nothing to wait for (a turn of the event loop is not free)
        if (settler.loopSettles && settler.queued.length > 0 && crew.slots.busy > 0) {
          await this.#wait(new Promise<void>((next) => nextMacrotask(next)));
        }
        want = Math.max(0, Math.min(MAX_BATCH, this.#free()));
        if (this.#aside > 0 && !dry) {
          // two claims in flight, each of at most half the slots: this one answers while the loop
          // goes on (a stop waits for it; its jobs run)
          want = Math.min(want, this.#aside);
          if (want > 0) {
            this.#sendAside(line, settler.loopSettles ? settler.queued.splice(0, BATCH_COMMANDS) : [], want, sentAt);
            failures = 0;
            continue;
          }
        }
        if (settler.loopSettles && settler.queued.length > 0 && (settler.queued.length < PAIR_FROM || want === 0)) {
          const batch = settler.queued.splice(0, BATCH_COMMANDS);
          this.#at("waiting for a SETTLE reply");
          claim = await this.#settleClaim(line, batch, want, sentAt);
        } else {
          const waitMs = client.backend === "module" && dry ? blockingMs : 0;
          // a claim that waits on the server must not hold the settles back
          if (waitMs > 0) this.takeSettles(false);
          this.#at("waiting for a CLAIM reply");
          const sent = line.claim(queue, want, config.leaseMs, waitMs);
          this.claiming = sent.then(() => {}, () => {});
          // a large batch of settles goes beside the claim, after it: the handlers of the jobs it
          // brings run while the server writes the settles
          if (settler.queued.length > 0) settler.flush(true);
          // a reply that comes after the wait was interrupted (a stop) still runs its jobs: they are claimed
          claim = await this.#wait(sent, (late) => {
            runner.startAll(late.jobs, sentAt + config.leaseMs);
          });
        }
        failures = 0;
        runner.startAll(claim.jobs, sentAt + config.leaseMs);
        dry = claim.jobs.length < want;
        let next = await this.#idle(line, claim, want, dry, blockingMs);
        // a wait that claimed as it ended (scripts): its jobs run; none, and it waits again
        while (typeof next === "object") {
          runner.startAll(next.claim.jobs, next.sentAt + config.leaseMs);
          if (next.waitError !== null) throw next.waitError;
          dry = next.claim.jobs.length < next.want;
          next = await this.#idle(line, next.claim, next.want, dry, blockingMs);
        }
        if (next) dry = false;
      } catch (e) {
        this.takeSettles(false);
        if (crew.stopping) break;
        // (an interrupted wait, or a line the watchdog closed, has been reported already)
        if (e !== INTERRUPTED && (line === null || line !== this.#abandoned)) crew.report(e);
        // a connection that failed is made again, soon: 50 ms, 100 ms … 500 ms
        this.line?.close();
        this.line = null;
        this.#at("waiting to reconnect");
        let timer: ReturnType<typeof setTimeout> | undefined;
        await this.#wait(new Promise<void>((wake) => (timer = setTimeout(wake, reconnectDelay(failures++))))).catch(() => {});
        clearTimeout(timer);
      }
    }
    this.takeSettles(false);
  }

  /** Makes the loop's connection (the settles go out on their own meanwhile). */
  async #connect(): Promise<ClaimLine<P>> {
    const { client, config, queue } = this.#crew;
    this.takeSettles(false);
    this.#at("connecting");
    const giveUp = new AbortController();
    const line = await this.#wait(client.dedicated(queue, config.blockMs, giveUp.signal, config.identity), (l) => l.close())
      .catch((e: unknown) => {
        if (e === INTERRUPTED) giveUp.abort(new EchoMQError("closed", "the worker no longer waits for this connection"));
        throw e;
      });
    this.line = line;
    return line;
  }

  /**
   * After a call that claimed `claim` of `want` (`dry`: fewer): when a job is due soon (a rate
   * limit's next token, a park's end) it waits on a timer here and resolves true (a job is due);
   * with the scripts backend, an empty claim waits on the queue's wake key — as function
   * libraries, with a claim pipelined behind the wait, which it resolves with (its jobs to run).
   */
  async #idle(line: ClaimLine<P>, claim: Claim<P>, want: number, dry: boolean, blockingMs: number): Promise<boolean | Woken<P>> {
    const { client, config, queue } = this.#crew;
    // nextMs is the server's time: compared with the server's clock, not this machine's
    const untilDue = claim.nextMs > 0 ? claim.nextMs - (line.serverNow?.() ?? Date.now()) : config.blockMs;
    // (not when already past by this clock: a skewed clock must not spin; the server decides)
    if (dry && untilDue >= 0 && untilDue < SOON_MS && !this.#crew.stopping) {
      // soon: a timer here, then a claim that does not wait — the server's wait ends only at its
      // next cron tick (10 per second by default)
      this.takeSettles(false);
      this.#at("waiting for a job");
      let timer: ReturnType<typeof setTimeout> | undefined;
      await this.#wait(new Promise<void>((wake) => (timer = setTimeout(wake, Math.max(1, Math.ceil(untilDue))))))
        .finally(() => clearTimeout(timer));
      return true;
    }
    if (claim.jobs.length === 0 && want > 0 && client.backend === "scripts" && !this.#crew.stopping) {
      this.takeSettles(false);
      this.#at("waiting for a job");
      const free = Math.min(MAX_BATCH, this.#free());
      if (line.wakeClaim !== undefined && free > 0) {
        // as the module's blocking CLAIM: at most half the lease, so that a job claimed at the end
        // of the wait keeps most of its lease by the lower bound the worker keeps (sent + leaseMs)
        const sentAt = performance.now();
        const sent = line.wakeClaim(queue, Math.max(10, Math.min(blockingMs, Math.ceil(untilDue))), free, config.leaseMs);
        this.claiming = sent.then(() => {}, () => {});
        const woken = await this.#wait(sent, (late) => {
          this.#runner.startAll(late.claim.jobs, sentAt + config.leaseMs);
        });
        return { ...woken, want: free, sentAt };
      }
      await this.#wait(line.wake(queue, Math.max(10, Math.min(config.blockMs, Math.ceil(untilDue)))));
    }
    return false;
  }

  /**
   * One SETTLE on `line`: `batch` settled, then up to `want` jobs claimed. The outcomes are counted
   * when the reply comes, whatever the loop does meanwhile (a stop): the settles' as the settler's
   * flush counts them, the jobs claimed run. A call without an outcome rejects (reported by the loop).
   */
  async #settleClaim(line: ClaimLine<P>, batch: Queued[], want: number, sentAt: number): Promise<Claim<P>> {
    const handled = this.#settleCall(line, batch, want);
    this.claiming = handled.then(() => {}, () => {});
    return await this.#wait(handled, (late) => {
      this.#runner.startAll(late.jobs, sentAt + this.#crew.config.leaseMs);
    });
  }

  /**
   * A call the loop does not wait for (a worker of {@link PIPELINE_FROM} slots or more keeps two
   * in flight): `batch` settled by a SETTLE that claims up to `want` (a CLAIM when there is
   * nothing to settle). Its jobs run when it answers; a claim short of `want` marks the queue dry
   * and a failure is the loop's own, at its next turn.
   */
  #sendAside(line: ClaimLine<P>, batch: Queued[], want: number, sentAt: number): void {
    const { config, queue, slots } = this.#crew;
    this.#inFlightWant += want;
    // (a batch comes only while the loop takes the settles, that is on a line with SETTLE)
    const call = batch.length > 0 ? this.#settleCall(line, batch, want) : line.claim(queue, want, config.leaseMs, 0);
    const done: Promise<void> = call.then((claim) => {
      this.#inFlightWant -= want;
      this.#runner.startAll(claim.jobs, sentAt + config.leaseMs);
      if (claim.jobs.length < want) this.#ranDry = true;
    }, (e: unknown) => {
      this.#inFlightWant -= want;
      this.#inFlightError ??= e;
    }).finally(() => {
      this.inFlight.delete(done);
      slots.freed();
    });
    this.inFlight.add(done);
  }

  /** One SETTLE on `line`; the settles' outcomes counted when it answers (as the settler's flush counts them). */
  #settleCall(line: ClaimLine<P>, batch: Queued[], want: number): Promise<Claim<P>> {
    const sent: Promise<SettleClaim<P>> = line.settle!(this.#crew.queue, batch.map((q) => q.settlement), want, this.#crew.config.leaseMs);
    return sent.then(
      (r) => {
        this.#settler.settled(batch, r.results, new Set());
        return r.claim;
      },
      (e: unknown) => {
        // no outcome: counted as neither (the jobs stay active until their leases run out); the
        // loop reports the error once
        const error = e instanceof Error ? e : new Error(String(e));
        this.#settler.settled(batch, batch.map(() => error), new Set([error]));
        throw error;
      },
    );
  }
}
