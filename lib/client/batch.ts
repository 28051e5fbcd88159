/**
 * Many jobs per command: `enqueueMany` (ENQUEUE with one group per job), `claimMany` (CLAIM with a
 * count) and `settleMany` (one ACK, RETRY and BURY command per queue, each with one group per
 * job). Each cuts its jobs into commands of at most {@link BATCH_COMMANDS} with one helper
 * ({@link chunk}). A command is atomic (all of its jobs, or none); across commands nothing is.
 * `enqueue`, `schedule` and `claim` are the same calls with one job ({@link admitOne},
 * {@link claimOne}).
 *
 * @module
 */
import { Decoder, type GlideReturnType } from "@valkey/valkey-glide";
import { assertJobId, type JobId, type Keyspace } from "../keyspace/mod.ts";
import { decodeOptions, type GroupArgs, MAX_BATCH, MAX_PAYLOAD_BYTES, renderRefusal, type Verb, type WireCall, wireCall } from "../wire/mod.ts";
import type { Backend, WaitFor } from "./backend.ts";
import { claimedEntry } from "./claimed_entry.ts";
import { Coalescer } from "./coalesce.ts";
import { byteLength, encodePayload, toWire } from "./codec.ts";
import type { ClientContext } from "./context.ts";
import { failureText } from "./failure.ts";
import {
  BatchError,
  ConnectionError,
  DuplicateIdError,
  DurabilityError,
  EchoMQError,
  LeaseLostError,
  PayloadDecodeError,
  RequestTimeoutError,
  ResultTooLargeError,
  serverText,
  WireError,
  wireError,
} from "./errors.ts";
import type { Job, JobRef, Settlement } from "./job.ts";
import {
  BATCH_BYTES,
  BATCH_COMMANDS,
  checkWait,
  type ClaimManyOptions,
  type ClaimOptions,
  type EnqueueManyOptions,
  type EnqueueOptions,
  jobOptions,
  jobRef,
  manyOptions,
  reasonText,
  waitFor,
  wholeNumber,
} from "./options.ts";

/**
 * Cuts `items` into runs of at most `max` items and (with `size`) at most `bytes` in all; an item
 * larger than `bytes` alone is a run of its own.
 */
export function chunk<T>(items: Iterable<T>, max: number, size?: (item: T) => number, bytes = Infinity): T[][] {
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

/** Commands of `enqueueMany` in flight at once. */
const IN_FLIGHT = 8;

/**
 * What became of one job of an admission: admitted under its own id, or not admitted because its
 * `dedup` key is held — `deduplicated` (dropped), `debounced` (its payload, and from `schedule` its
 * due time, given to the waiting holder) — with `id` the holder's.
 */
export interface Admitted {
  /** The job's id, or the holder's when it was not admitted. */
  readonly id: JobId;
  /** `admitted`, `deduplicated` or `debounced`. */
  readonly outcome: "admitted" | "deduplicated" | "debounced";
}

/**
 * Sends one admission call (ENQUEUE or SCHEDULE), with `WAIT` when asked; a duplicate of an id the
 * client made up (a collision) is sent again with a fresh id in its place. Returns each job's
 * {@link Admitted}, in call order.
 */
export async function admit<P>(
  c: ClientContext<P>,
  what: string,
  ks: Keyspace,
  verb: "ENQUEUE" | "SCHEDULE",
  jobs: Array<GroupArgs<"ENQUEUE"> | GroupArgs<"SCHEDULE">>,
  wait: WaitFor | undefined,
  fresh: boolean | readonly boolean[],
): Promise<Admitted[]> {
  const refreshed = new Set<number>(); // each job gets one fresh id at most
  for (;;) {
    const call = wireCall(verb, ks, {}, jobs as never);
    const ids = jobs.map((j) => j.id as JobId);
    try {
      if (wait === undefined) return admissions(call, ids, await c.impl.call(call));
      const [reply, acknowledged] = await c.impl.callMany([call], wait);
      if (reply instanceof Error) throw reply;
      const out = admissions(call, ids, reply!);
      checkWait(what, ks.name, jobs.map((j) => String(j.id)), acknowledged, wait);
      return out;
    } catch (e) {
      // the last job with that id (a repeated id: its second use)
      const at = e instanceof DuplicateIdError ? jobs.map((j) => j.id).lastIndexOf(e.id) : -1;
      if (at < 0 || !(typeof fresh === "boolean" ? fresh : fresh[at]) || refreshed.has(at)) throw e;
      refreshed.add(at);
      jobs[at] = { ...jobs[at]!, id: c.id() }; // an id collision: that job again with a fresh id
    }
  }
}

/** One job of a one-job admission, waiting on its queue's line (see `coalesce.ts`). */
interface OneJob {
  readonly what: string;
  readonly ks: Keyspace;
  readonly verb: "ENQUEUE" | "SCHEDULE";
  readonly job: GroupArgs<"ENQUEUE"> | GroupArgs<"SCHEDULE">;
  readonly wait: WaitFor | undefined;
  /** True when the id is the client's own (a collision gets a fresh one). */
  readonly fresh: boolean;
}

/** Each client's lines of one-job admissions. */
const lines = new WeakMap<object, Coalescer<OneJob, Admitted>>();

/**
 * Sends one run of one-job admissions as one command. A refused command wrote nothing: its jobs
 * are sent again one by one, so that only a refused job's call fails. An error without a reply
 * (the command may have landed) is every call's, as it would have been alone.
 */
async function admitRun<P>(c: ClientContext<P>, items: OneJob[]): Promise<Array<Admitted | Error>> {
  const { what, ks, verb, wait } = items[0]!;
  try {
    return await admit(c, what, ks, verb, items.map((i) => i.job), wait, items.map((i) => i.fresh));
  } catch (e) {
    if (items.length === 1 || !(e instanceof WireError)) throw e;
    const out: Array<Admitted | Error> = [];
    for (const i of items) {
      out.push(await admit(c, what, ks, verb, [i.job], wait, i.fresh).then(([a]) => a!, (e) => e instanceof Error ? e : new Error(String(e))));
    }
    return out;
  }
}

/**
 * See `EchoMQ.enqueue` (`due` undefined) and `EchoMQ.schedule` (`due` in ms since the epoch): one
 * job, its id the caller's (`opts.id`) or a fresh one, sent with the other one-job admissions of
 * its queue made meanwhile (see `coalesce.ts`).
 */
export async function admitOne<P, L extends string>(
  c: ClientContext<P>,
  ks: Keyspace,
  payload: P,
  due: number | undefined,
  opts: EnqueueOptions<L> | undefined,
  what: string = due === undefined ? "enqueue" : "schedule",
): Promise<Admitted> {
  const wait = waitFor(what, opts?.durable);
  const given = opts?.id;
  if (given !== undefined) assertJobId(given);
  let line = lines.get(c);
  if (line === undefined) lines.set(c, line = new Coalescer<OneJob, Admitted>((items) => admitRun(c, items), BATCH_COMMANDS, BATCH_BYTES));
  const once = (traceparent?: string): Promise<Admitted> => {
    const options = jobOptions(what, opts, traceparent);
    const id = given ?? c.id();
    const data = toWire(encodePayload(c.codec, payload, what));
    const verb = due === undefined ? "ENQUEUE" : "SCHEDULE";
    const job = due === undefined ? { id, opts: options, payload: data } : { id, due_ms: due, opts: options, payload: data };
    const run = `${what}\0${wait?.replicas ?? 0}\0${wait?.timeoutMs ?? 0}`;
    return line.push(`${verb}\0${ks.name}`, run, { what, ks, verb, job, wait, fresh: given === undefined }, byteLength(data));
  };
  if (c.tracing === null) return await once();
  return await c.tracing.send(ks.name, what, async (span) => {
    const written = await once(span.traceparent);
    span.set("messaging.message.id", written.id);
    if (written.outcome !== "admitted") span.set("echomq.outcome", written.outcome);
    return written;
  });
}

/** One command of `enqueueMany`: its jobs' ids and payloads, where they were in the input, and what became of them. */
interface Sent<P> {
  /** The input index of its first job (its jobs are consecutive inputs). */
  readonly first: number;
  /** The ids, in input order (with any fresh id a collision gave). */
  ids: JobId[];
  /** The payloads as read, until the command lands (a retry of a failed one needs them). */
  payloads: P[] | null;
  outcome: Outcome;
}

/**
 * See `EchoMQ.enqueueMany`: input read as it is sent, a few commands in flight. The input is read
 * with `next()` alone, each job's id drawn before its input is read: after the first failure
 * nothing more is read or sent, the input is not closed (`return()` is never called, so a
 * generator resumes where reading stopped), and the {@link BatchError} accounts for every input
 * read.
 */
export async function enqueueMany<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  payloads: Iterable<P> | AsyncIterable<P>,
  wait: WaitFor | undefined,
  opts: EnqueueManyOptions<P> | undefined,
): Promise<JobId[]> {
  if (c.tracing === null) return await enqueueRuns(c, ks, payloads, wait, manyOptions(opts));
  return await c.tracing.send(ks.name, "enqueueMany", async (span) => {
    let count = 0;
    try {
      const ids = await enqueueRuns(c, ks, payloads, wait, manyOptions(opts, span.traceparent));
      count = ids.length;
      return ids;
    } catch (e) {
      // the jobs read: landed, unsent or unconfirmed
      if (e instanceof BatchError) count = e.landed.length + e.unsent.length + e.unconfirmed.length;
      throw e;
    } finally {
      span.set("messaging.batch.message_count", count);
    }
  });
}

/** {@link enqueueMany}'s work, each job with the options `options` gives it. */
async function enqueueRuns<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  payloads: Iterable<P> | AsyncIterable<P>,
  wait: WaitFor | undefined,
  options: (payload: P, index: number) => string,
): Promise<JobId[]> {
  const inFlight = new Set<Promise<void>>();
  let failure: { error: unknown } | null = null;
  const sent: Array<Sent<P>> = [];
  let run: Array<GroupArgs<"ENQUEUE">> = [];
  let read: P[] = []; // the run's payloads
  let bytes = 0;
  let next = 0; // the index of the next input
  const fail = (error: unknown): void => void (failure ??= { error });
  /** The run so far as a command that was not sent. */
  const keep = (): Sent<P> => {
    const s: Sent<P> = { first: next - run.length, ids: run.map((j) => j.id as JobId), payloads: read, outcome: "unsent" };
    sent.push(s);
    run = [];
    read = [];
    bytes = 0;
    return s;
  };
  const flush = async (): Promise<void> => {
    const jobs = run;
    const s = keep();
    const sending = (async () => {
      try {
        s.ids = (await admit(c, "enqueueMany", ks, "ENQUEUE", jobs, wait, true)).map((a) => a.id);
        s.outcome = "landed";
        s.payloads = null;
      } catch (e) {
        s.outcome = written(e);
        s.ids = jobs.map((j) => j.id as JobId); // with any fresh id admit gave a colliding one
        fail(e);
      }
    })();
    inFlight.add(sending);
    void sending.finally(() => inFlight.delete(sending));
    // the first command goes alone: its reply has loaded the script (scripts backend) and learnt
    // the route, so the commands after it are not resent (a resent command lands after the ones
    // sent behind it, and the jobs of one call would not be admitted in input order)
    if (sent.length === 1) await sending;
    else if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
  };
  let exhausted = false;
  try {
    const async = typeof (payloads as Partial<AsyncIterable<P>>)[Symbol.asyncIterator] === "function";
    const input = async ? (payloads as AsyncIterable<P>)[Symbol.asyncIterator]() : (payloads as Iterable<P>)[Symbol.iterator]();
    while (failure === null) {
      const id = c.id(); // before the read: an id source that throws leaves the input unread
      let step: IteratorResult<P>;
      try {
        step = async ? await (input as AsyncIterator<P>).next() : (input as Iterator<P>).next();
      } catch (e) {
        c.unused(id);
        throw e;
      }
      if (step.done) {
        c.unused(id);
        exhausted = true;
        break;
      }
      const payload = step.value;
      let data: string | ReturnType<typeof toWire>;
      let opts: string;
      try {
        opts = options(payload, next);
        data = toWire(encodePayload(c.codec, payload, "enqueueMany"));
      } catch (e) {
        // read but refused by its options or the codec: unsent, with the run before it
        if (run.length > 0) keep();
        sent.push({ first: next++, ids: [id], payloads: [payload], outcome: "unsent" });
        throw e;
      }
      const size = byteLength(data);
      if (run.length > 0 && (run.length >= BATCH_COMMANDS || bytes + size > BATCH_BYTES)) await flush();
      run.push({ id, opts, payload: data });
      read.push(payload);
      bytes += size;
      next++;
    }
  } catch (e) {
    fail(e); // the input, the codec or the id source: nothing more is read
  }
  if (run.length > 0) {
    if (failure === null) await flush();
    else keep(); // read, never sent
  }
  await Promise.all(inFlight);
  if (failure === null) return sent.flatMap((s) => s.ids);
  const lists = { landed: [] as JobId[], unsent: [] as JobId[], unconfirmed: [] as JobId[] };
  const at = { landed: [] as number[], unsent: [] as number[], unconfirmed: [] as number[] };
  const kept = new Map<string, P>();
  for (const s of sent) {
    s.ids.forEach((id, k) => {
      lists[s.outcome].push(id);
      at[s.outcome].push(s.first + k);
      if (s.payloads !== null) kept.set(id, s.payloads[k]!);
    });
  }
  throw new BatchError<P>("enqueueMany", {
    landed: lists.landed,
    landedAt: at.landed,
    unsent: lists.unsent,
    unsentAt: at.unsent,
    unconfirmed: lists.unconfirmed,
    unconfirmedAt: at.unconfirmed,
    unreadFrom: next,
    exhausted,
    payloads: kept,
  }, (failure as { error: unknown }).error);
}

/** What became of one command's jobs. */
type Outcome = "landed" | "unsent" | "unconfirmed";

/**
 * Whether a failed admission wrote its jobs: a durable shortfall did (on the primary); a call
 * without a reply in time or whose connection broke may have; a refusal by the server (every verb
 * refuses before it writes, as do OOM, NOPERM and redirections) or by the client's checks did not;
 * anything else may have.
 */
function written(e: unknown): Outcome {
  if (e instanceof DurabilityError || e instanceof RequestTimeoutError || e instanceof ConnectionError) return "unconfirmed";
  if (e instanceof EchoMQError || serverText(e) !== null) return "unsent";
  return "unconfirmed";
}

/**
 * The reply of an admission: the count (every job admitted), or — when a job carried a `dedup`
 * key — `[admitted, (place, holder, outcome)…]`; each job's {@link Admitted} in call order.
 */
function admissions(call: WireCall, ids: readonly JobId[], reply: GlideReturnType): Admitted[] {
  const out: Admitted[] = ids.map((id) => ({ id, outcome: "admitted" }));
  if (typeof reply === "number" && reply === ids.length) return out;
  if (!Array.isArray(reply) || (reply.length - 1) % 3 !== 0) throw new Error(`EMQ.${call.verb}: unexpected reply ${String(reply)}`);
  for (let k = 1; k < reply.length; k += 3) {
    const place = Number(reply[k]);
    const outcome = String(reply[k + 2]);
    if (!(place >= 0 && place < ids.length) || (outcome !== "deduplicated" && outcome !== "debounced")) {
      throw new Error(`EMQ.${call.verb}: unexpected reply ${String(reply)}`);
    }
    out[place] = { id: String(reply[k + 1]) as JobId, outcome };
  }
  if (out.filter((a) => a.outcome === "admitted").length !== Number(reply[0])) {
    throw new Error(`EMQ.${call.verb}: unexpected reply ${String(reply)}`);
  }
  return out;
}

/** A CLAIM's reply: when something next falls due (0: nothing), and the jobs. */
export interface Claim<P> {
  /** ms since the epoch when a scheduled job falls due or a lease runs out; 0 when none. */
  readonly nextMs: number;
  /** The claimed jobs, in claim order (an undecodable one as the error naming it). */
  readonly jobs: Array<Job<P> | PayloadDecodeError>;
}

/** One CLAIM of up to `count` jobs (≤ {@link BATCH_COMMANDS}…{@link MAX_BATCH}) on `backend`, waiting up to `blockMs`. */
export async function claimOnce<P>(
  c: ClientContext<P>,
  backend: Backend,
  ks: Keyspace,
  count: number,
  leaseMs: number,
  blockMs: number,
): Promise<Claim<P>> {
  const reply = await backend.call(
    wireCall("CLAIM", ks, { lease_ms: leaseMs, count, block_ms: blockMs }),
    Decoder.Bytes,
  );
  return claimReply(c, ks, reply);
}

/**
 * The scripts' wait and claim in one round trip: `BZPOPMIN` on the queue's `wake` key for up to
 * `waitMs`, and right behind it, pipelined, a CLAIM of up to `count` jobs that runs on the server
 * as soon as the wait ends (a marker, or the timeout). The claim, and the wait's error if it
 * failed (its claim ran all the same: its jobs are the caller's).
 */
export async function wakeClaim<P>(
  c: ClientContext<P>,
  backend: Backend,
  ks: Keyspace,
  waitMs: number,
  count: number,
  leaseMs: number,
): Promise<{ claim: Claim<P>; waitError: Error | null }> {
  const { before, reply } = await backend.callAfter!(
    [["BZPOPMIN", ks.wake, String(waitMs / 1000)]],
    wireCall("CLAIM", ks, { lease_ms: leaseMs, count, block_ms: 0 }),
    waitMs,
    Decoder.Bytes,
  );
  const waited = before[0];
  return { claim: claimReply(c, ks, reply), waitError: waited instanceof Error ? waited : null };
}

/** A CLAIM reply's wait hint and jobs. */
function claimReply<P>(c: ClientContext<P>, ks: Keyspace, reply: GlideReturnType): Claim<P> {
  if (!Array.isArray(reply) || reply.length < 1) throw new Error(`EMQ.CLAIM: unexpected reply ${String(reply)}`);
  return { nextMs: Number(reply[0]), jobs: reply.slice(1).map((entry) => claimed(c, ks, entry)) };
}

const UTF8 = new TextDecoder();
const UTF8_OUT = new TextEncoder();
const NO_BYTES = new Uint8Array(0);

/**
 * A CLAIM (or SETTLE) reply's job entry (lib/client/claimed_entry.ts); a payload the codec cannot
 * decode as the error naming the job.
 */
export function claimed<P>(c: ClientContext<P>, ks: Keyspace, entry: GlideReturnType): Job<P> | PayloadDecodeError {
  const bytes = entry instanceof Uint8Array ? entry : typeof entry === "string" ? UTF8_OUT.encode(entry) : null;
  const parts = bytes === null ? null : claimedEntry(bytes);
  if (parts === null) throw new Error(`EMQ.CLAIM: unexpected job ${String(entry)}`);
  const id = UTF8.decode(parts.id) as JobId;
  const { attempts, token } = parts;
  // fields set one by one (no spreads): this runs once per claimed job; payload last, as before
  const job: { -readonly [K in keyof Job<P>]: Job<P>[K] } = { id, queue: ks.name, token, attempts } as Job<P>;
  if (parts.opts.length > 0) {
    const o = decodeOptions(UTF8.decode(parts.opts));
    if (o.timeout_ms !== undefined) job.timeoutMs = Number(o.timeout_ms);
    if (o.dedup !== undefined) job.dedupKey = o.dedup;
    if (o.traceparent !== undefined) job.traceparent = o.traceparent;
    if (o.priority !== undefined && Number(o.priority) !== 0) job.priority = Number(o.priority);
    if (o.lane !== undefined) job.lane = o.lane;
    if (o.name !== undefined) job.name = o.name;
    if (o.attempts !== undefined) job.maxAttempts = Number(o.attempts);
  }
  try {
    job.payload = c.codec.decode(parts.payload ?? NO_BYTES);
    return job;
  } catch (e) {
    return new PayloadDecodeError(c.codec.name, { id, queue: ks.name, attempts, token }, e);
  }
}

/** See `EchoMQ.claim`: one CLAIM of one job; an undecodable payload is thrown. */
export async function claimOne<P>(c: ClientContext<P>, ks: Keyspace, opts: ClaimOptions): Promise<Job<P> | null> {
  const leaseMs = wholeNumber("claim: leaseMs", "lease-ms", opts?.leaseMs, 1);
  const { jobs } = await claimOnce(c, c.impl, ks, 1, leaseMs, 0);
  const job = jobs[0] ?? null;
  if (job instanceof PayloadDecodeError) throw job;
  return job;
}

/** See `EchoMQ.claimMany`: one CLAIM of up to `n` jobs ({@link MAX_BATCH} at most). */
export async function claimMany<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  n: number,
  opts: ClaimManyOptions,
): Promise<Array<Job<P> | PayloadDecodeError>> {
  const count = wholeNumber("claimMany: n", "count", n, 1);
  if (count > MAX_BATCH) throw new EchoMQError("count", `claimMany: n must be at most ${MAX_BATCH}, got ${n}`);
  const leaseMs = wholeNumber("claimMany: leaseMs", "lease-ms", opts?.leaseMs, 1);
  const blockMs = opts?.blockMs === undefined ? 0 : wholeNumber("claimMany: blockMs", "options", opts.blockMs, 0);
  return (await claimOnce(c, c.impl, ks, count, leaseMs, blockMs)).jobs;
}

/**
 * A result encoded already (a worker's: it checked the size when the handler returned, and failed
 * the attempt with {@link ResultTooLargeError} instead of settling it): sent as it is.
 */
export class EncodedResult {
  /** Builds it from ACK's `result` text (JSON, or empty for none). */
  constructor(readonly text: string) {}
}

/**
 * `value` as ACK's `result`: its JSON — `undefined` (or a value JSON has no text for, such as a
 * function) is the empty result, none kept. A JSON longer than `MAX_PAYLOAD_BYTES` is a
 * {@link ResultTooLargeError}; a value JSON cannot encode (a BigInt, a cycle) an `EchoMQError` of
 * rule `result`. Both before the wire.
 */
export function encodeResult(id: string, value: unknown): string {
  if (value instanceof EncodedResult) return value.text;
  if (value === undefined) return "";
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new EchoMQError("result", `result of ${id}: no JSON form: ${e instanceof Error ? e.message : String(e)}`, e);
  }
  if (text === undefined) return "";
  const bytes = byteLength(text);
  if (bytes > MAX_PAYLOAD_BYTES) throw new ResultTooLargeError(id, bytes, MAX_PAYLOAD_BYTES);
  return text;
}

/** A failure's `error` as its row keeps it (lib/client/failure.ts), with the attempt when the job says it; none: empty. */
function failureOf(s: { readonly job: JobRef; readonly error?: unknown }): string {
  return s.error === undefined ? "" : failureText(s.error, (s.job as { attempts?: number }).attempts);
}

/** The verb of a settlement and its group of that verb, checked before the wire (a bad value throws). */
export function settleGroup(s: Settlement): { verb: Verb; group: Record<string, string | number> } {
  const job = s.job;
  switch (s.kind) {
    case "ack":
      return { verb: "ACK", group: { id: job.id, token: job.token, result: encodeResult(job.id, s.result) } };
    case "retry": {
      const delay = wholeNumber("retry: delayMs", "delay-ms", s.delayMs, 0);
      return {
        verb: "RETRY",
        group: { id: job.id, token: job.token, delay_ms: delay, reason: reasonText("retry", s.reason ?? ""), failure: failureOf(s) },
      };
    }
    case "bury":
      return { verb: "BURY", group: { id: job.id, token: job.token, reason: reasonText("bury", s.reason), failure: failureOf(s) } };
    case "release":
      return { verb: "RELEASE", group: { id: job.id, token: job.token } };
    default:
      throw new EchoMQError("options", `settleMany: kind must be ack, retry, bury or release, got ${String((s as { kind: unknown }).kind)}`);
  }
}

/** One queue's settles of one kind, with where each came from. */
interface Run {
  readonly ks: Keyspace;
  readonly verb: Verb;
  readonly items: Array<{ at: number; job: JobRef; group: Record<string, string | number> }>;
}

/** One round of settles: a run per queue and kind, and the token of each job id in it. */
type Round = Map<string, { run: Run; tokens: Map<string, number> }>;

/**
 * See `EchoMQ.settleMany`: one command per queue and kind (ACK, RETRY, BURY, RELEASE), in one batch per
 * queue. A settlement given twice (same job, same token, same kind) is refused alone before the
 * wire with the {@link DuplicateIdError} the server would give (`repeated`): one command must not
 * name a job twice, and the first is settled. The same job under another token (a stale claim
 * beside the current one) goes in a later round, so each is answered on its own. A command
 * refused because some of its jobs' leases were lost changed nothing: those jobs get a
 * {@link LeaseLostError} each, and the command is sent again without them. A command without an
 * outcome (a timeout, a lost connection) gives each of its settlements that error: nothing
 * rejects.
 */
export async function settleMany<P>(c: ClientContext<P>, settlements: readonly Settlement[]): Promise<Array<Error | null>> {
  const out: Array<Error | null> = new Array(settlements.length).fill(null);
  const rounds: Round[] = [];
  settlements.forEach((s, at) => {
    try {
      if (s === null || typeof s !== "object") throw new EchoMQError("job", `settleMany: expected a settlement, got ${String(s)}`);
      const ks = jobRef(s.kind ?? "settle", s.job, (q) => c.keyspace(q));
      const g = settleGroup(s);
      const key = `${g.verb} ${ks.name}`;
      for (let r = 0;; r++) {
        const round = rounds[r] ?? (rounds[r] = new Map());
        const entry = round.get(key) ?? { run: { ks, verb: g.verb, items: [] }, tokens: new Map<string, number>() };
        round.set(key, entry);
        const token = entry.tokens.get(s.job.id);
        if (token === s.job.token) {
          const verb = `EMQ.${g.verb}`;
          out[at] = new DuplicateIdError(verb, renderRefusal("repeated", verb, { id: s.job.id }), s.job.id);
          return;
        }
        if (token !== undefined) continue; // the job under another token: the next round
        entry.tokens.set(s.job.id, s.job.token);
        entry.run.items.push({ at, job: s.job, group: g.group });
        return;
      }
    } catch (e) {
      out[at] = e instanceof Error ? e : new Error(String(e));
    }
  });
  for (const round of rounds) {
    const byQueue = new Map<string, Run[]>();
    for (const { run } of round.values()) {
      for (const items of chunk(run.items, BATCH_COMMANDS)) {
        const list = byQueue.get(run.ks.name) ?? [];
        list.push({ ...run, items });
        byQueue.set(run.ks.name, list);
      }
    }
    await Promise.all([...byQueue.values()].map((list) => settleQueue(c, list, out)));
  }
  return out;
}

async function settleQueue<P>(c: ClientContext<P>, list: Run[], out: Array<Error | null>): Promise<void> {
  let pending = list.filter((r) => r.items.length > 0);
  while (pending.length > 0) {
    const calls = pending.map((r) => wireCall(r.verb, r.ks, {} as never, r.items.map((i) => i.group) as never));
    let replies: Array<GlideReturnType | Error>;
    try {
      replies = await c.impl.callMany(calls);
    } catch (e) {
      // the batch has no outcome (a timeout, a lost connection): each settlement gets the error
      for (const run of pending) {
        const error = wireError(`EMQ.${run.verb}`, e);
        for (const item of run.items) out[item.at] = error instanceof Error ? error : new Error(String(error));
      }
      return;
    }
    const again: Run[] = [];
    pending.forEach((run, i) => {
      const r = replies[i];
      if (r instanceof LeaseLostError) {
        const lost = new Set(r.ids);
        const rest = run.items.filter((item) => {
          if (!lost.has(item.job.id)) return true;
          out[item.at] = new LeaseLostError(r.verb, r.text, [item.job.id]);
          return false;
        });
        // a refusal that names none of the call's ids would loop: give up on the call
        if (rest.length === run.items.length) { for (const item of rest) out[item.at] = r; }
        else if (rest.length > 0) again.push({ ...run, items: rest });
        return;
      }
      if (r instanceof Error) { for (const item of run.items) out[item.at] = r; }
      else if (r !== run.items.length) {
        for (const item of run.items) out[item.at] = new Error(`EMQ.${run.verb}: unexpected reply ${String(r)}`);
      }
    });
    pending = again;
  }
}
