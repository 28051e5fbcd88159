/**
 * The settler: turns a handler's outcome into its job's settle — ack with the result, retry with
 * backoff, bury after the last attempt (or at once on an `UnrecoverableError`), hand back after a
 * rate limit's park — queues it, and sends the queue: with the claim loop's next call (one SETTLE)
 * while the loop takes them, else on its own (one command per kind, `settleMany`). Counts each
 * settle the server applied, reports each distinct error once.
 *
 * @module
 */
import { MAX_REASON_BYTES, MAX_WIRE_NUMBER } from "../../wire/mod.ts";
import { LeaseLostError } from "../errors.ts";
import type { Settlement } from "../job.ts";
import { EncodedResult, encodeResult } from "../batch.ts";
import type { ProcessSpan } from "../tracing.ts";
import { askedDelay, JobTimeoutError, RateLimitedError, UnrecoverableError } from "./worker_errors.ts";
import type { Held, Why } from "./held.ts";
import type { Crew } from "./worker.ts";
import { nextMacrotask } from "./timing.ts";

/** A settle the worker queued, and why (a hand-back is not a failed attempt). */
export interface Queued {
  readonly settlement: Settlement;
  readonly why: "done" | "failed" | "hand-back";
  /** The claim it settles. */
  readonly held: Held<unknown>;
}

/** A settle command in flight: when it left and what it carries. */
export interface Flushing {
  since: number;
  readonly batch: readonly Queued[];
  /** It has been out for the worker's `stallMs`: its jobs' slots are free again (it still counts). */
  freed: boolean;
  /** The watchdog gave it up: nobody waits for it any more (a stop does not). */
  givenUp: boolean;
  /** Resolves once it came back or was given up. */
  readonly over: Promise<void>;
  readonly end: () => void;
}

/** Cuts `text` to at most `max` UTF-8 bytes without splitting a character. */
export function truncateUtf8(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** An error as one line: its name and message. */
export function describe(e: unknown): string {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/** The worker's settles: queued, sent, counted. */
export class Settler<P> {
  /** Settles waiting to be sent. */
  queued: Queued[] = [];
  /** A flush is due on the next macrotask. */
  flushPending = false;
  /**
   * The claim loop takes the queued settles into its next call (one SETTLE: settle and claim in
   * one round trip): it is idle, or its call in flight answers at once. Off while it waits (a
   * blocking claim, a timer, a wake), connects or stops: then settles go out on their own.
   */
  loopSettles = false;
  /** Settle commands in flight (the watchdog times them). */
  readonly flushing: Set<Flushing> = new Set();
  readonly #crew: Crew<P>;

  constructor(crew: Crew<P>) {
    this.#crew = crew;
  }

  /**
   * The outcome of `held`'s handler (`failure` null: it returned `result`). A job past its time
   * limit frees the slot its handler kept; one no longer running (lost, its own, handed back at a
   * stop) leaves; a running one is settled ({@link settle}).
   */
  finished(held: Held<P>, failure: unknown, result?: unknown): void {
    const slots = this.#crew.slots;
    if (held.why === "timed out") {
      // failed at its timeout already: its handler returned at last, its slot frees
      slots.overdue.delete(held);
      slots.freed();
      return;
    }
    if (held.state !== "running") {
      if (failure !== null) held.span?.failed(failure);
      slots.release(held);
      return;
    }
    this.settle(held, failure, result);
  }

  /**
   * Queues the settle of `held` (running): ack (`failure` null) with the handler's `result`, else
   * retry or bury (`why`: "timed out" for the time limit's failure). A result that cannot be sent
   * (no JSON form, or too large) fails the attempt instead, as a throw of the handler would.
   */
  settle(held: Held<P>, failure: unknown, result?: unknown, why: Why = "failed"): void {
    let encoded = "";
    if (failure === null) {
      try {
        encoded = encodeResult(held.job.id, result);
      } catch (e) {
        failure = e;
      }
    }
    if (failure !== null) held.span?.failed(failure);
    const job = held.job;
    if (failure === null) {
      this.#crew.slots.settling(held, "done");
      const settlement: Settlement = encoded === "" ? { kind: "ack", job } : { kind: "ack", job, result: new EncodedResult(encoded) };
      this.queue({ settlement, why: "done", held }, held.span);
      return;
    }
    if (failure instanceof RateLimitedError) {
      // its lane (the queue, for the default lane) parked first, then the job handed back: no other
      // worker takes it before the park
      this.#crew.slots.settling(held, "rate limited");
      const handBack = (): void => this.queue({ settlement: { kind: "release", job }, why: "hand-back", held }, held.span);
      const park = this.#crew.client.penalize?.(this.#crew.queue, failure.ms, job.lane);
      if (park === undefined) handBack();
      else {park.then(handBack, (e: unknown) => {
          this.#crew.report(e);
          handBack();
        });}
      return;
    }
    this.#crew.slots.settling(held, why);
    const reason = truncateUtf8(failure instanceof JobTimeoutError ? failure.message : describe(failure), MAX_REASON_BYTES);
    const config = this.#crew.config;
    // the job's own attempts (admitted with `attempts`) in place of the worker's
    if (failure instanceof UnrecoverableError || job.attempts >= (job.maxAttempts ?? config.maxAttempts)) {
      this.queue({ settlement: { kind: "bury", job, reason, error: failure }, why: "failed", held }, held.span);
      return;
    }
    let settlement: Settlement;
    try {
      const b = config.backoff;
      const raw = askedDelay(failure) ?? (typeof b === "function" ? b(job.attempts, failure) : b);
      const delayMs = Math.max(0, Math.min(MAX_WIRE_NUMBER, Math.floor(Number.isFinite(raw) ? raw : 1)));
      settlement = { kind: "retry", job, delayMs, reason, error: failure };
    } catch (e) {
      // a throwing backoff: reported; the job is retried after a second
      this.#crew.report(e);
      settlement = { kind: "retry", job, delayMs: 1000, reason: truncateUtf8(describe(e), MAX_REASON_BYTES), error: failure };
    }
    this.queue({ settlement, why: "failed", held }, held.span);
  }

  /** Queues a settle for the next flush (`span`: the job's process span, told what is sent). */
  queue(q: Queued, span: ProcessSpan | null = null): void {
    span?.settling(q.settlement.kind);
    this.queued.push(q);
    if (this.loopSettles && !this.#crew.stopping) {
      // the claim loop takes it into its next call (it stops taking them only by flushing them)
      this.#crew.slots.freed();
      return;
    }
    if (!this.flushPending) {
      this.flushPending = true;
      nextMacrotask(() => this.flush());
    }
  }

  /** One applied settle, counted. */
  #count(why: Queued["why"], kind: Settlement["kind"]): void {
    const counts = this.#crew.counts;
    if (why === "hand-back") counts.handedBack++;
    else if (kind === "ack") counts.completed++;
    else {
      counts.failed++;
      if (kind === "bury") counts.buried++;
    }
  }

  /** A handler settled its own job: counted as the worker's own settles are (only when applied). */
  ownSettled(kind: Settlement["kind"], error: unknown): void {
    if (error === null || error === undefined) {
      this.#count(kind === "ack" ? "done" : kind === "release" ? "hand-back" : "failed", kind);
    } else if (error instanceof LeaseLostError) this.#crew.counts.lost++;
  }

  /**
   * Sends every queued settle: one command per kind; each outcome counted (only when the server
   * applied it) or reported (each distinct error once). While the claim loop takes the settles
   * into its SETTLE, they wait for it instead (it is woken).
   */
  flush(now = false): void {
    this.flushPending = false;
    if (!now && this.loopSettles && !this.#crew.stopping) {
      this.#crew.slots.freed();
      return;
    }
    const batch = this.queued;
    if (batch.length === 0) return;
    this.queued = [];
    let end!: () => void;
    const over = new Promise<void>((done) => (end = done));
    const flushing: Flushing = { since: performance.now(), batch, freed: false, givenUp: false, over, end };
    this.flushing.add(flushing);
    void (async () => {
      let results: Array<Error | null>;
      try {
        results = await this.#crew.client.settleMany(batch.map((q) => q.settlement));
      } catch (e) {
        // the whole command failed: applied or not, nobody knows; counted as neither (the jobs
        // stay active until their leases run out, then are claimed again)
        const error = e instanceof Error ? e : new Error(String(e));
        results = batch.map(() => error);
      }
      this.settled(batch, results, new Set());
    })().finally(() => {
      this.flushing.delete(flushing);
      end();
    });
  }

  /**
   * The outcomes of settles sent: each applied one counted, each error reported once (but those
   * in `reported`), and the jobs leave the worker.
   */
  settled(batch: readonly Queued[], results: ReadonlyArray<Error | null>, reported: Set<Error>): void {
    const slots = this.#crew.slots;
    batch.forEach((q, i) => {
      const r = results[i] ?? null;
      const held = slots.has(q.held) ? q.held as Held<P> : undefined;
      if (r !== null) held?.span?.settleFailed(q.settlement.kind, r);
      if (r === null) this.#count(q.why, q.settlement.kind);
      else {
        if (r instanceof LeaseLostError) this.#crew.counts.lost++;
        if (!reported.has(r)) {
          reported.add(r);
          this.#crew.report(r);
        }
      }
      if (held !== undefined) slots.release(held);
    });
  }
}
