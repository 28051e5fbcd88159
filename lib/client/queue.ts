/**
 * A typed queue handle: `mq.queue<P>("name")` gives the client's calls on one queue, typed by that
 * queue's payload `P` — so one client serves queues of different payload types, each checked by
 * the compiler (with the JSON codec: {@link JsonPayload} in, {@link Decoded} out). A second type,
 * `mq.queue<P, R>("name")`, types its results as BullMQ's `Job<Data, Return>` does: `work`'s handler
 * must return an `R` ({@link JsonResult}), and `result` and `enqueue` with `wait` give it back as
 * JSON does ({@link DecodedResult}). A third, `mq.queue<P, R, C>("name")`, types a flow parent's
 * children's results `C` (`job.children()`, `children`, `getJob`'s `children`) the same way. The
 * handle holds no state of its own: each method is the client's, with the queue filled in.
 *
 * @example
 * ```ts
 * import { EchoMQ } from "../../client.ts";
 *
 * const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: 6379 }] });
 * const mail = mq.queue<{ to: string }>("mail");
 * const thumbs = mq.queue<{ url: string; width: number }>("thumbs");
 * await mail.enqueue({ to: "ada@example.com" });
 * await thumbs.enqueueMany([{ url: "a.png", width: 64 }, { url: "b.png", width: 128 }]);
 * const worker = thumbs.work((job) => console.log(job.payload.url, job.payload.width));
 * console.log(await mail.counts(), await thumbs.getJob("JOB0000000000a"));
 * const sizes = mq.queue<{ path: string }, { bytes: number; at: Date }>("sizes");
 * const sizer = sizes.work((job) => ({ bytes: job.payload.path.length, at: new Date() }));
 * const { result } = await sizes.enqueue({ path: "a.png" }, { wait: true });
 * console.log(result.bytes, result.at.slice(0, 10)); // a Date comes back a string
 * const albums = mq.queue<{ name: string }, { bytes: number }, { bytes: number; at: Date }>("albums");
 * const summer = albums.work(async (job) => ({ bytes: (await job.children()).reduce((n, k) => n + (k.result?.bytes ?? 0), 0) }));
 * const album = await mq.flow({ queue: "albums", payload: { name: "x" }, children: [{ queue: "sizes", payload: { path: "a.png" } }] });
 * console.log((await albums.children(album.id))[0]?.result?.at.slice(0, 10));
 * await worker.stop();
 * await sizer.stop();
 * await summer.stop();
 * await mq.close();
 * ```
 *
 * @module
 */
import type { CheckLane, CheckName, JobId } from "../keyspace/mod.ts";
import type { Admitted } from "./batch.ts";
import type { EchoMQ } from "./echomq.ts";
import type { PayloadDecodeError } from "./errors.ts";
import type { JobInfo, JobState, QueueStats } from "./info.ts";
import type { Counts, Job } from "./job.ts";
import type { LanePage } from "./lanes.ts";
import type { LimitOptions, LimitTarget, QueueLimits } from "./limits.ts";
import type { RemoveOptions, RequeueOptions, Retention } from "./operations.ts";
import type { ClaimManyOptions, ClaimOptions, EnqueueManyOptions, EnqueueOptions, When } from "./options.ts";
import type { Decoded, DecodedResult, JsonPayload, JsonResult, Payload, PayloadKind } from "./payload.ts";
import type { Handler, Worker, WorkerOptions } from "./worker/worker.ts";
import type { RepeatSpec } from "./repeat.ts";
import type { SchedulerInfo, SchedulerOptions } from "./schedulers.ts";
import type { EventsOptions } from "./event_reader.ts";
import type { QueueEventItem } from "./events.ts";
import type { ResultOptions } from "./result.ts";
import type { EnqueueReply, EnqueueWait, WaitOption } from "./enqueue_wait.ts";
import type { ChildState } from "./flows.ts";

/** A job of a typed queue handle as `getJob` and `jobs` read it: payload, result and children's results as JSON gives them back. */
export type TypedJobInfo<P, K extends PayloadKind, R, C> = JobInfo<Decoded<P, K>, DecodedResult<R>, DecodedResult<C>>;

/**
 * One queue of a client, typed by its payload `P`, its results `R` and, for a flow's parent, its
 * children's results `C` (see `EchoMQ.queue`).
 */
export class Queue<P, K extends PayloadKind = "json", R = unknown, C = unknown> {
  /** The queue's name. */
  readonly name: string;
  readonly #mq: EchoMQ<P, K>;

  /** The handle of queue `name` on `mq`; use `mq.queue(name)` rather than this. */
  constructor(mq: EchoMQ<P, K>, name: string) {
    this.#mq = mq;
    this.name = name;
  }

  /** See `EchoMQ.enqueue` (with `wait`: `{ id, result }` once the job completed, `result` typed by `R`). */
  enqueue<const L extends string = string, W extends EnqueueWait | false | undefined = undefined, const D extends string = string>(
    payload: Payload<P, K>,
    opts?: EnqueueOptions<L, D> & WaitOption<W>,
  ): Promise<EnqueueReply<W, DecodedResult<R>>> {
    // the result is what this queue's handler returned: the handle's type, as JSON gives it back
    return this.#mq.enqueue<string, L, W, D>(this.name, payload, opts) as Promise<EnqueueReply<W, DecodedResult<R>>>;
  }

  /** See `EchoMQ.submit`. */
  submit<const L extends string = string, const D extends string = string>(
    payload: Payload<P, K>,
    opts?: EnqueueOptions<L, D> & Partial<When>,
  ): Promise<Admitted> {
    return this.#mq.submit(this.name, payload, opts);
  }

  /** See `EchoMQ.enqueueMany`. */
  enqueueMany<const L extends string = string>(
    payloads: Iterable<Payload<P, K>> | AsyncIterable<Payload<P, K>>,
    opts?: EnqueueManyOptions<Payload<P, K>, L>,
  ): Promise<JobId[]> {
    return this.#mq.enqueueMany(this.name, payloads, opts);
  }

  /** See `EchoMQ.schedule`. */
  schedule<const L extends string = string, const D extends string = string>(
    payload: Payload<P, K>,
    when: When,
    opts?: EnqueueOptions<L, D>,
  ): Promise<JobId> {
    return this.#mq.schedule(this.name, payload, when, opts);
  }

  /** See `EchoMQ.claim`. */
  claim(opts: ClaimOptions): Promise<Job<Decoded<P, K>> | null> {
    return this.#mq.claim(this.name, opts);
  }

  /** See `EchoMQ.claimMany`. */
  claimMany(n: number, opts: ClaimManyOptions): Promise<Array<Job<Decoded<P, K>> | PayloadDecodeError>> {
    return this.#mq.claimMany(this.name, n, opts);
  }

  /**
   * See `EchoMQ.work`: the handler returns an `R` (checked as JSON: {@link JsonResult}), and its
   * `job.children()` gives the children's results typed by `C` ({@link DecodedResult}).
   */
  work(handler: Handler<Decoded<P, K>, JsonResult<R>, DecodedResult<C>> | URL, opts?: WorkerOptions): Worker<Decoded<P, K>> {
    // the children's result type is the handle's claim about this queue's flows: erased at run time
    return this.#mq.work(this.name, handler as Handler<Decoded<P, K>, JsonResult<R>> | URL, opts);
  }

  /** See `EchoMQ.counts`. */
  counts(): Promise<Counts> {
    return this.#mq.counts(this.name);
  }

  /** See `EchoMQ.stats`. */
  stats(): Promise<QueueStats> {
    return this.#mq.stats(this.name);
  }

  /** See `EchoMQ.getJob`: its `result` typed by `R`, its `children`' results by `C`, as JSON gives them back. */
  getJob(id: string): Promise<TypedJobInfo<P, K, R, C> | null> {
    return this.#mq.getJob(this.name, id) as Promise<TypedJobInfo<P, K, R, C> | null>;
  }

  /** See `EchoMQ.jobs`: each `result` typed by `R`, as JSON gives it back. */
  jobs(state: JobState, page?: { offset?: number; limit?: number }): Promise<Array<TypedJobInfo<P, K, R, C>>> {
    return this.#mq.jobs(this.name, state, page) as Promise<Array<TypedJobInfo<P, K, R, C>>>;
  }

  /** See `EchoMQ.children`: a flow parent's children, their results typed by `C` as JSON gives them back. */
  children(id: string): Promise<ChildState<DecodedResult<C>>[]> {
    return this.#mq.children(this.name, id) as Promise<ChildState<DecodedResult<C>>[]>;
  }

  /** See `EchoMQ.remove`. */
  remove(id: string): Promise<boolean> {
    return this.#mq.remove(this.name, id);
  }

  /** See `EchoMQ.removeMany`. */
  removeMany(ids: readonly string[], opts?: RemoveOptions): Promise<number> {
    return this.#mq.removeMany(this.name, ids, opts);
  }

  /** See `EchoMQ.runNow`. */
  runNow(ids: readonly string[]): Promise<number> {
    return this.#mq.runNow(this.name, ids);
  }

  /** See `EchoMQ.requeueDead`. */
  requeueDead(opts?: RequeueOptions): Promise<number> {
    return this.#mq.requeueDead(this.name, opts);
  }

  /** See `EchoMQ.promote`. */
  promote(limit?: number): Promise<number> {
    return this.#mq.promote(this.name, limit);
  }

  /** See `EchoMQ.reap`. */
  reap(limit?: number): Promise<number> {
    return this.#mq.reap(this.name, limit);
  }

  /** See `EchoMQ.pause`. */
  pause<const L extends string = string>(opts?: { lane?: CheckLane<L> }): Promise<boolean> {
    return this.#mq.pause(this.name, opts);
  }

  /** See `EchoMQ.resume`. */
  resume<const L extends string = string>(opts?: { lane?: CheckLane<L> }): Promise<boolean> {
    return this.#mq.resume(this.name, opts);
  }

  /** See `EchoMQ.lanes`. */
  lanes(page?: { offset?: number; limit?: number }): Promise<LanePage> {
    return this.#mq.lanes(this.name, page);
  }

  /** See `EchoMQ.isPaused`. */
  isPaused(): Promise<boolean> {
    return this.#mq.isPaused(this.name);
  }

  /** See `EchoMQ.events`. */
  events(opts?: EventsOptions): AsyncIterable<QueueEventItem> {
    return this.#mq.events(this.name, opts);
  }

  /** See `EchoMQ.result`: the result typed by `R`, as JSON gives it back ({@link DecodedResult}). */
  result(id: string, opts?: ResultOptions): Promise<DecodedResult<R>> {
    return this.#mq.result(this.name, id, opts) as Promise<DecodedResult<R>>;
  }

  /** See `EchoMQ.limit`. */
  limit<const L extends string = string>(opts: LimitOptions, target?: LimitTarget<L>): Promise<QueueLimits> {
    return this.#mq.limit(this.name, opts, target);
  }

  /** See `EchoMQ.limits`. */
  limits<const L extends string = string>(target?: LimitTarget<L>): Promise<QueueLimits> {
    return this.#mq.limits(this.name, target);
  }

  /** See `EchoMQ.penalize`. */
  penalize<const L extends string = string>(ms: number, opts?: { lane?: CheckLane<L> }): Promise<number> {
    return this.#mq.penalize(this.name, ms, opts);
  }

  /** See `EchoMQ.retain`. */
  retain(opts: Partial<Retention>): Promise<number> {
    return this.#mq.retain(this.name, opts);
  }

  /** See `EchoMQ.retention`. */
  retention(): Promise<Retention> {
    return this.#mq.retention(this.name);
  }

  /** See `EchoMQ.drop`. */
  drop(): Promise<number> {
    return this.#mq.drop(this.name);
  }

  /** See `EchoMQ.upsertScheduler`. */
  upsertScheduler<const L extends string = string, const N extends string = string>(
    name: CheckName<N, "scheduler name">,
    spec: RepeatSpec,
    opts: SchedulerOptions<Payload<P, K>, L>,
  ): Promise<Date> {
    return this.#mq.upsertScheduler(this.name, name, spec, opts);
  }

  /** See `EchoMQ.schedulers`. */
  schedulers(): Promise<Array<SchedulerInfo<Decoded<P, K>>>> {
    return this.#mq.schedulers(this.name);
  }

  /** See `EchoMQ.removeScheduler`. */
  removeScheduler<const N extends string = string>(name: CheckName<N, "scheduler name">): Promise<boolean> {
    return this.#mq.removeScheduler(this.name, name);
  }
}
