/**
 * Many jobs per round trip: `enqueueMany`, `claimMany` and `settleMany`. Each cuts its calls into
 * chunks with one helper ({@link chunk}) and sends a chunk as one non-atomic batch to the queue's
 * primary; nothing here is atomic across a chunk.
 *
 * @module
 */
import { Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import type { JobId, Keyspace } from "../keyspace/mod.ts";
import { type WireCall, wireCall } from "../wire/mod.ts";
import type { Backend, WaitFor } from "./backend.ts";
import { byteLength, toWire } from "./codec.ts";
import { DuplicateIdError, EchoMQError, type PayloadDecodeError } from "./errors.ts";
import type { Job, Settlement } from "./job.ts";
import { BATCH_BYTES, BATCH_COMMANDS, checkWait, jobRef, reasonText, wholeNumber } from "./options.ts";

/**
 * Cuts `items` into runs of at most `max` items and (with `size`) at most `bytes` in all; an item
 * larger than `bytes` alone is a run of its own.
 */
export function chunk<T>(items: readonly T[], max: number, size?: (item: T) => number, bytes = Infinity): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  let total = 0;
  for (const item of items) {
    const n = size ? size(item) : 0;
    if (run.length > 0 && (run.length >= max || total + n > bytes)) {
      out.push(run);
      run = [];
      total = 0;
    }
    run.push(item);
    total += n;
  }
  if (run.length > 0) out.push(run);
  return out;
}

/** Runs `work` over `items` with at most `width` at once, in order of start. */
async function pool<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const run = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, items.length)) }, run));
}

/** What the batch verbs need of the client. */
export interface BatchContext<P> {
  /** The backend sending the calls. */
  readonly impl: Backend;
  /** Requests this client may have in flight. */
  readonly inflightLimit: number;
  /** A fresh, checked job id. */
  id(): JobId;
  /** The keyspace of a queue name, checked. */
  keyspace(queue: string): Keyspace;
  /** Sends one admission call (with `WAIT` when asked). */
  send(what: string, queue: string, call: WireCall, wait: WaitFor | undefined): Promise<void>;
  /** A CLAIM reply as a job (null: nothing ready). */
  claimed(ks: Keyspace, reply: GlideReturnType): Job<P> | PayloadDecodeError | null;
  /** Encodes a payload for the wire. */
  encode(payload: P): string | Uint8Array;
}

/** See `EchoMQ.enqueueMany`. */
export async function enqueueMany<P>(
  c: BatchContext<P>,
  ks: Keyspace,
  payloads: readonly P[],
  wait: WaitFor | undefined,
): Promise<JobId[]> {
  const calls = payloads.map((p) => wireCall("ENQUEUE", ks, { id: c.id(), payload: toWire(c.encode(p)) }));
  const indexed = calls.map((call, at) => ({ call, at }));
  const chunks = chunk(indexed, BATCH_COMMANDS, (x) => byteLength(x.call.args[1] as string | Uint8Array), BATCH_BYTES);
  const ids = calls.map((call) => call.args[0] as JobId);
  await pool(chunks, Math.min(8, c.inflightLimit - 1), async (run) => {
    const replies = await c.impl.callMany(run.map((x) => x.call), wait);
    for (let j = 0; j < run.length; j++) {
      const r = replies[j];
      if (r === 1) continue;
      if (r instanceof DuplicateIdError) {
        const id = c.id(); // an id collision: retried once with a fresh id
        await c.send("enqueueMany", ks.name, wireCall("ENQUEUE", ks, { id, payload: run[j]!.call.args[1]! }), wait);
        ids[run[j]!.at] = id;
        continue;
      }
      if (r instanceof Error) throw r;
      expectOne("ENQUEUE", r!);
    }
    if (wait !== undefined) {
      checkWait("enqueueMany", ks.name, run.map((x) => x.call.args[0] as string), replies[run.length], wait);
    }
  });
  return ids;
}

/** See `EchoMQ.claimMany`. */
export async function claimMany<P>(
  c: BatchContext<P>,
  ks: Keyspace,
  count: number,
  leaseMs: number,
): Promise<Array<Job<P> | PayloadDecodeError>> {
  const out: Array<Job<P> | PayloadDecodeError> = [];
  let refused: unknown = null;
  const call = wireCall("CLAIM", ks, { lease_ms: leaseMs });
  for (const run of chunk(Array.from({ length: count }, () => call), BATCH_COMMANDS)) {
    const replies = await c.impl.callMany(run, undefined, Decoder.Bytes);
    let empty = false;
    // Every reply is read, not only those before the first null: another client's enqueue can
    // land between two CLAIMs of the batch, and a job claimed after a null holds a lease too.
    for (const reply of replies) {
      if (reply === null) {
        empty = true;
        continue;
      }
      if (reply instanceof Error) {
        refused ??= reply;
        continue;
      }
      try {
        const job = c.claimed(ks, reply);
        if (job !== null) out.push(job);
      } catch (e) {
        refused ??= e;
      }
    }
    if (empty || refused !== null) break;
  }
  if (refused !== null && out.length === 0) throw refused;
  return out;
}

/** The wire call of one settlement, with the same checks as ack / retry / bury. */
export function settleCall(s: Settlement, keyspace: (queue: string) => Keyspace): WireCall {
  if (s === null || typeof s !== "object") throw new EchoMQError("job", `settleMany: expected a settlement, got ${String(s)}`);
  switch (s.kind) {
    case "ack":
      return wireCall("ACK", jobRef("ack", s.job, keyspace), { id: s.job.id });
    case "retry": {
      const ks = jobRef("retry", s.job, keyspace);
      const delay = wholeNumber("retry: delayMs", "delay-ms", s.delayMs, 1);
      return wireCall("RETRY", ks, { id: s.job.id, delay_ms: delay, reason: reasonText("retry", s.reason ?? "") });
    }
    case "bury":
      return wireCall("BURY", jobRef("bury", s.job, keyspace), { id: s.job.id, reason: reasonText("bury", s.reason) });
    default:
      throw new EchoMQError("options", `settleMany: kind must be ack, retry or bury, got ${String((s as { kind: unknown }).kind)}`);
  }
}

/** See `EchoMQ.settleMany`. */
export async function settleMany<P>(c: BatchContext<P>, settlements: readonly Settlement[]): Promise<Array<Error | null>> {
  const out: Array<Error | null> = new Array(settlements.length).fill(null);
  const byQueue = new Map<string, Array<{ at: number; call: WireCall }>>();
  settlements.forEach((s, at) => {
    try {
      const call = settleCall(s, (q) => c.keyspace(q));
      const list = byQueue.get(call.keys[1]!);
      if (list) list.push({ at, call });
      else byQueue.set(call.keys[1]!, [{ at, call }]);
    } catch (e) {
      out[at] = e instanceof Error ? e : new Error(String(e));
    }
  });
  const runs = [...byQueue.values()].flatMap((list) => chunk(list, BATCH_COMMANDS));
  await Promise.all(runs.map(async (run) => {
    const replies = await c.impl.callMany(run.map((x) => x.call));
    run.forEach(({ at, call }, i) => {
      const r = replies[i];
      if (r instanceof Error) out[at] = r;
      else if (r !== 1) out[at] = new Error(`EMQ.${call.verb}: unexpected reply ${String(r)}`);
    });
  }));
  return out;
}

/** A reply that must be integer 1. */
export function expectOne(verb: string, reply: GlideReturnType): void {
  if (reply !== 1) throw new Error(`EMQ.${verb}: unexpected reply ${String(reply)}`);
}
