/**
 * Waiting for a job's result (`mq.result`): one round trip reads the job's row, the stream's last
 * id and the queue's `events_max` atomically (a MULTI: one slot); a finished job answers at once —
 * `completed` resolves with its result (JSON, parsed; `undefined` when it returned nothing), `dead`
 * rejects with {@link JobFailedError} (its reason), no row rejects with {@link JobNotFoundError}.
 * Otherwise it waits on the server: the queue's shared events reader (event_reader.ts), from that
 * last id, so no transition between the read and the wait is missed, for a `completed`, `dead` or
 * `removed` entry naming the job; then it reads the row again for the result (a queue that keeps
 * no completed jobs has deleted it: `undefined`). A queue whose events are off (`events_max` 0)
 * is polled instead: the row every {@link POLL_FIRST_MS} ms at first, backing off to once every
 * {@link POLL_MAX_MS} ms.
 *
 * @module
 */
import { assertJobId, type Keyspace } from "../keyspace/mod.ts";
import { META, ROW } from "../wire/mod.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError, JobFailedError, JobNotFoundError, ResultTimeoutError } from "./errors.ts";
import { follow } from "./event_reader.ts";
import { afterEntry, FINISHING, type Position, START, streamEntries } from "./events.ts";
import { fields, jsonOrText, text } from "./info.ts";
import { integerIn, refuse } from "./options.ts";

/** The first wait between two reads of the row when the queue's events are off, ms. */
export const POLL_FIRST_MS = 50;
/** The longest wait between two reads of the row when the queue's events are off, ms. */
export const POLL_MAX_MS = 1000;
/** The longest `timeoutMs` (about 24 days: a timer's limit). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** `result()`'s options. */
export interface ResultOptions {
  /** Give up after this many ms with a {@link ResultTimeoutError} (default: wait as long as it takes). */
  timeoutMs?: number;
  /** Give up when it aborts: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** What a row says: done (a result or an error), or not yet. */
type Verdict = { done: true; value: unknown } | { done: true; error: Error } | { done: false };

/** The job's result text, parsed (JSON; the text itself when it is not JSON); undefined when empty. */
const parsedResult = (raw: string | undefined): unknown => (raw === "" ? undefined : jsonOrText(raw));

/** The verdict of a row read with HGETALL. */
function verdict(queue: string, id: string, reply: unknown): Verdict {
  const row = fields(reply as never);
  const state = text(row, ROW.state);
  if (state === undefined) return { done: true, error: new JobNotFoundError(queue, id, `result: no job ${id} in queue ${JSON.stringify(queue)}`) };
  if (state === "completed") return { done: true, value: parsedResult(text(row, ROW.result)) };
  if (state === "dead") return { done: true, error: new JobFailedError(queue, id, text(row, ROW.reason) ?? "") };
  return { done: false };
}

/** The value of a verdict that is done, or its error thrown. */
function settled(v: Verdict & { done: true }): unknown {
  if ("error" in v) throw v.error;
  return v.value;
}

/** Wait options checked: how long, and what ends the wait. */
export interface WaitLimits {
  /** Give up after this many ms (undefined: no limit). */
  readonly timeoutMs: number | undefined;
  /** Give up when it aborts. */
  readonly signal: AbortSignal | undefined;
}

/**
 * `opts` checked as `what`'s wait options (`result`, `enqueue`'s `wait`): an object, a `timeoutMs`
 * from 0 to about 24 days, an `AbortSignal` not already aborted (else its reason is thrown).
 */
export function waitLimits(what: string, opts: ResultOptions): WaitLimits {
  if (opts === null || typeof opts !== "object") throw new EchoMQError("options", `${what}: options must be an object`);
  const timeoutMs = opts.timeoutMs === undefined ? undefined : integerIn(`${what}: timeoutMs`, opts.timeoutMs, 0, MAX_TIMEOUT_MS, refuse("options"));
  const signal = opts.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new EchoMQError("options", `${what}: signal must be an AbortSignal`);
  signal?.throwIfAborted();
  return { timeoutMs, signal };
}

/** Where a wait starts: after the stream's last entry when it was read, and whether the queue writes events. */
export interface Tail {
  /** The position after the stream's last entry (the start when it was empty). */
  readonly from: Position;
  /** True when the queue's `events_max` is 0: no event will come, the row is polled. */
  readonly eventsOff: boolean;
}

/**
 * `commands` (reads of the queue's slot), then the stream's last id and the queue's `events_max`,
 * in one MULTI: the replies of `commands`, and the {@link Tail} a wait starts from — nothing that
 * happens after those reads can be missed by a wait from it.
 */
export async function withTail<P>(c: ClientContext<P>, ks: Keyspace, commands: string[][]): Promise<{ replies: unknown[]; tail: Tail }> {
  const n = commands.length;
  const replies = await c.conn.batch(
    [...commands, ["XREVRANGE", ks.events, "+", "-", "COUNT", "1"], ["HGET", ks.meta, META.events_max]],
    ks.meta,
    true,
  );
  for (const r of replies) if (r instanceof Error) throw r;
  const [last] = streamEntries(replies[n]);
  const max = replies[n + 1];
  return {
    replies: replies.slice(0, n),
    tail: { from: last === undefined ? START : afterEntry(last.id), eventsOff: max !== null && max !== undefined && Number(max) === 0 },
  };
}

/** See `EchoMQ.result`. */
export async function result<P>(c: ClientContext<P>, ks: Keyspace, id: string, opts: ResultOptions = {}): Promise<unknown> {
  assertJobId(id);
  const limits = waitLimits("result", opts);
  const { replies: [row], tail } = await withTail(c, ks, [["HGETALL", ks.job(id)]]);
  const first = verdict(ks.name, id, row);
  if (first.done) return settled(first);
  return await awaitResult(c, ks, id, tail, limits);
}

/**
 * Waits for job `id`'s result from `tail` on: the queue's events reader from `tail.from` (a
 * `completed`, `dead` or `removed` entry naming the job; a gap reads the row), or — events off —
 * the row polled with backoff. Resolves or rejects as `result()` does; `limits` end the wait.
 */
export async function awaitResult<P>(c: ClientContext<P>, ks: Keyspace, id: string, tail: Tail, limits: WaitLimits): Promise<unknown> {
  const { timeoutMs, signal } = limits;
  const row = ks.job(id);
  // from here on: a timer and the caller's signal end the wait
  const stop = new AbortController();
  let timedOut = false;
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => {
    timedOut = true;
    stop.abort();
  }, timeoutMs);
  const onAbort = (): void => stop.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) stop.abort();
  const ended = (): Error => {
    if (timedOut) return new ResultTimeoutError(ks.name, id, timeoutMs!);
    if (signal?.aborted) return signal.reason;
    return new EchoMQError("closed", "the EchoMQ client is closed");
  };
  const readRow = async (): Promise<Verdict> => verdict(ks.name, id, await c.conn.command(["HGETALL", row], ks.meta));
  try {
    if (tail.eventsOff) {
      // events off: the row, polled with backoff
      for (let wait = POLL_FIRST_MS; !stop.signal.aborted; wait = Math.min(POLL_MAX_MS, wait * 2)) {
        await new Promise<void>((wake) => {
          const t = setTimeout(wake, wait);
          stop.signal.addEventListener("abort", () => {
            clearTimeout(t);
            wake();
          }, { once: true });
        });
        if (stop.signal.aborted || c.closed) break;
        const v = await readRow();
        if (v.done) return settled(v);
      }
      throw ended();
    }
    for await (const event of follow(c, ks, tail.from, stop.signal)) {
      if (event.type === "gap") {
        // entries were trimmed unread: the job's may be among them
        const v = await readRow();
        if (v.done) return settled(v);
        continue;
      }
      if (!("jobId" in event) || event.jobId !== id || !FINISHING.has(event.type)) continue;
      if (event.type === "removed") throw new JobNotFoundError(ks.name, id, `result: job ${id} of queue ${JSON.stringify(ks.name)} was removed`);
      if (event.type === "dead") throw new JobFailedError(ks.name, id, event.reason);
      const v = await readRow();
      // completed, and the row gone: the queue keeps no completed jobs (or one retention took it)
      if (v.done && "error" in v && v.error instanceof JobNotFoundError) return undefined;
      return v.done ? settled(v) : undefined;
    }
    throw ended();
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}
