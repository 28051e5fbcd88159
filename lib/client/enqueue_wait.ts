/**
 * Enqueueing and waiting for the result in one call (`mq.enqueue(queue, payload, { wait })`). The
 * job may finish before a waiter could start listening — a fast worker, and a queue that keeps no
 * completed jobs (`completedMax` 0) deletes its row at the ack — so the stream's position is taken
 * *before* the job is sent ({@link withTail}: the stream's last id and `events_max` in one MULTI),
 * and the wait starts from there: every event of the new job comes after it. A call that admitted
 * nothing (`dedup`: the key's holder answers) waits as `result()` does for the holder, which
 * existed before. A queue whose events are off is polled, as `result()` polls it.
 *
 * @module
 */
import type { JobId, Keyspace } from "../keyspace/mod.ts";
import { admitOne } from "./batch.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import type { EnqueueOptions } from "./options.ts";
import { awaitResult, result, type ResultOptions, waitLimits, withTail } from "./result.ts";

/** `enqueue`'s `wait` option: `true`, or how long and until what to wait ({@link ResultOptions}). */
export type EnqueueWait = true | ResultOptions;

/**
 * What `enqueue(…, { wait })` resolves with: the job's id and its result, of type `R` (`unknown`
 * on the client; a typed queue handle's `DecodedResult`).
 */
export interface Enqueued<R = unknown> {
  /** The job's id (with `dedup`, the holder's when the key was held). */
  readonly id: JobId;
  /** What its handler returned (JSON, parsed; `undefined` when nothing, or when the queue keeps no completed jobs). */
  readonly result: R;
}

/** `enqueue`'s options with a `wait`: the job's own options, and the wait's. */
export type EnqueueWaitOptions<L extends string = string> = EnqueueOptions<L> & { readonly wait: EnqueueWait };

/**
 * What `enqueue` resolves with for a `wait` of type `W`: the job's id without one (absent, or
 * `false`), `{ id, result }` ({@link Enqueued}, its result of type `R`) with one; either when `W`
 * may be both (a `boolean`).
 */
export type EnqueueReply<W, R = unknown> = W extends EnqueueWait ? Enqueued<R> : JobId;

/**
 * The `wait` of `enqueue`'s options, typed so that its return type can follow it: absent (or
 * `undefined`), or `W` — inferred with `undefined` kept, so a `wait` that may be undefined types
 * the reply as either.
 */
export type WaitOption<W> = { readonly wait?: undefined } | { readonly wait: W };

/** True when `opts` asks to wait (`wait` set and not `false`). */
export function waits(opts: unknown): opts is EnqueueWaitOptions {
  return opts !== null && typeof opts === "object" && "wait" in opts && opts.wait !== undefined && opts.wait !== false;
}

/**
 * See `EchoMQ.enqueue` with `wait`: the options checked (an aborted signal admits nothing), the
 * stream's tail read, the job admitted, then its result waited for from that tail.
 */
export async function enqueueAndWait<P, L extends string>(
  c: ClientContext<P>,
  ks: Keyspace,
  payload: P,
  opts: EnqueueWaitOptions<L>,
): Promise<Enqueued> {
  const given: ResultOptions = opts.wait === true ? {} : opts.wait;
  if (given === null || typeof given !== "object") {
    throw new EchoMQError("options", `enqueue: wait must be true, false or { timeoutMs?, signal? }, got ${String(opts.wait)}`);
  }
  const limits = waitLimits("enqueue: wait", given);
  const { tail } = await withTail(c, ks, []);
  const admitted = await admitOne(c, ks, payload, undefined, opts, "enqueue");
  if (admitted.outcome !== "admitted") return { id: admitted.id, result: await result(c, ks, admitted.id, given) };
  return { id: admitted.id, result: await awaitResult(c, ks, admitted.id, tail, limits) };
}
