/**
 * One-job admissions made while others are in flight, sent as one command (as a DataLoader
 * batches): `enqueue`, `schedule` and `submit` each push their job on their queue's line; a line
 * sends what it holds at the next microtask, as few commands as its runs allow, at most
 * {@link LINE_IN_FLIGHT} commands in flight, the rest waiting for one of them to answer. The first
 * call of an idle line waits one microtask, no more; under load a command carries every call made
 * since the last one left. Each call is still answered for itself: its own id and outcome, its own
 * error (see `admitRun` in `batch.ts`: a refused command is sent again job by job).
 *
 * Why by hand: DataLoader batches by a tick and a key, but it caches, dedupes keys and has no
 * bound on commands in flight nor runs cut by the call's kind; what is needed here is a queue and
 * a counter.
 *
 * @module
 */

/** Commands of one line (one queue and verb) in flight at once. */
export const LINE_IN_FLIGHT = 4;

/** One waiting call: what it sends, how its run is cut, and its answer. */
interface Waiting<I, O> {
  readonly item: I;
  /** Items of one command share this (the call's kind and durability). */
  readonly run: string;
  readonly bytes: number;
  readonly resolve: (out: O) => void;
  readonly reject: (e: unknown) => void;
}

/** The calls of one key not yet sent, and its commands in flight. */
interface Line<I, O> {
  readonly waiting: Array<Waiting<I, O>>;
  inFlight: number;
  scheduled: boolean;
}

/** What a command of a run answers: one result or error per item, in order. */
export type Send<I, O> = (items: I[]) => Promise<Array<O | Error>>;

/**
 * Lines of waiting calls, one per key; `send` sends one run (items of one `run` string, at most
 * `maxItems` of them and `maxBytes` in all — an item larger alone is a command of its own).
 */
export class Coalescer<I, O> {
  readonly #lines = new Map<string, Line<I, O>>();
  readonly #send: Send<I, O>;
  readonly #maxItems: number;
  readonly #maxBytes: number;

  /** Lines that send with `send`, cut at `maxItems` items or `maxBytes` bytes per command. */
  constructor(send: Send<I, O>, maxItems: number, maxBytes: number) {
    this.#send = send;
    this.#maxItems = maxItems;
    this.#maxBytes = maxBytes;
  }

  /** Queues `item` on line `key`, in a command with the line's other items of run `run`; resolves with its own answer. */
  push(key: string, run: string, item: I, bytes: number): Promise<O> {
    let line = this.#lines.get(key);
    if (line === undefined) this.#lines.set(key, line = { waiting: [], inFlight: 0, scheduled: false });
    const answer = new Promise<O>((resolve, reject) => line.waiting.push({ item, run, bytes, resolve, reject }));
    this.#schedule(key, line);
    return answer;
  }

  #schedule(key: string, line: Line<I, O>): void {
    if (line.scheduled) return;
    line.scheduled = true;
    queueMicrotask(() => {
      line.scheduled = false;
      this.#pump(key, line);
    });
  }

  #pump(key: string, line: Line<I, O>): void {
    while (line.inFlight < LINE_IN_FLIGHT && line.waiting.length > 0) {
      const run = line.waiting[0]!.run;
      let n = 0;
      let bytes = 0;
      for (const w of line.waiting) {
        if (w.run !== run || n >= this.#maxItems || (n > 0 && bytes + w.bytes > this.#maxBytes)) break;
        n++;
        bytes += w.bytes;
      }
      const calls = line.waiting.splice(0, n);
      line.inFlight++;
      void this.#command(calls).finally(() => {
        line.inFlight--;
        if (line.waiting.length > 0) this.#pump(key, line);
        else if (line.inFlight === 0) this.#lines.delete(key);
      });
    }
  }

  async #command(calls: Array<Waiting<I, O>>): Promise<void> {
    let outs: Array<O | Error>;
    try {
      outs = await this.#send(calls.map((w) => w.item));
    } catch (e) {
      for (const w of calls) w.reject(e);
      return;
    }
    calls.forEach((w, i) => {
      const out = outs[i]!;
      if (out instanceof Error) w.reject(out);
      else w.resolve(out);
    });
  }
}
