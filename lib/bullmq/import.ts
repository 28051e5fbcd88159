/**
 * `emq import bullmq`: copies a BullMQ queue's jobs in flight from a server holding BullMQ's own
 * Redis keys (`<prefix>:<name>:*`) into the EchoMQ backend's keyspace (docs/design/bullmq.md,
 * "Importing"). The source is read through BullMQ's own `Queue` on its Redis backend (its getters,
 * not its key layout), nothing written there; each job is admitted as `createEchoMQBackend`'s
 * `addJob` admits it (the identity rule, the envelope), so a second run finds every job's id taken
 * by itself and copies nothing twice.
 *
 * - waiting and prioritized jobs → pending (with their priority); delayed → scheduled at the due
 *   time BullMQ's delayed set holds (a retry's backoff too); failed → dead (SCHEDULE far ahead, then
 *   CANCEL with BullMQ's reason: no verb admits a dead job; its reason reads `cancelled: <reason>`);
 * - job schedulers → EchoMQ schedulers through a BullMQ `Queue` on the EchoMQ backend (an `every`
 *   scheduler keeps its next run); a scheduler's runs not yet started are not copied, the copied
 *   scheduler makes them;
 * - not copied, and said why: active jobs (stop or drain BullMQ's workers first), completed ones,
 *   flows' parents and children, jobs whose options the backend refuses, a hash collision;
 * - BullMQ's id counter is carried over, so the next `Queue.add` takes the id after the source's.
 *
 * @module
 */
import type { Job, JobJson, JobSchedulerJson, Queue as BullQueue, RepeatOptions } from "bullmq";
import { cancel } from "../client/cancel.ts";
import { redactUrl } from "../client/url.ts";
import { MAX_REASON_BYTES } from "../wire/mod.ts";
import { admitAt, raiseCounter } from "./admit.ts";
import { emqIdOf } from "./ids.ts";
import { createEchoMQBackend, type EchoMQBackendOptions, echoQueueName } from "./factory.ts";
import { Locks } from "./locks.ts";
import { rowOf } from "./rows.ts";
import { DEFAULT_LOCK_MS, type Scope } from "./scope.ts";
import { SharedClient } from "./shared.ts";

/** A BullMQ `Queue` on either backend. */
// deno-lint-ignore no-explicit-any
type AnyQueue = BullQueue<any, any, string, any, any, string, any, any>;

/** What `importBullmq` reads and where it writes. */
export interface ImportOptions {
  /** The BullMQ server: `redis://`, `rediss://`, `valkey://` or `valkeys://` `[user:password@]host:port[/db]`. */
  readonly from: string;
  /** BullMQ's queue name. */
  readonly queue: string;
  /** BullMQ's key prefix (default `bull`). */
  readonly prefix?: string;
  /** The EchoMQ server, as `createEchoMQBackend` takes it. */
  readonly target: EchoMQBackendOptions;
  /** Jobs read from the source per page (default 500). */
  readonly pageSize?: number;
}

/** The states whose jobs are copied. */
export const COPIED_STATES = ["waiting", "prioritized", "delayed", "failed"] as const;
/** A state whose jobs are copied. */
export type CopiedState = typeof COPIED_STATES[number];

/** One job or scheduler not copied, and why. */
export interface NotCopied {
  /** BullMQ's job id (or scheduler id). */
  readonly id: string;
  /** Why it was not copied. */
  readonly reason: string;
}

/** What became of one state's jobs. */
export interface StateFigures {
  /** Jobs the source holds in the state. */
  found: number;
  /** Jobs copied by this run. */
  copied: number;
  /** Jobs an earlier run copied already (their id's row holds them): not copied again. */
  present: number;
  /** Scheduler runs not yet started: the copied scheduler makes them. */
  runs: number;
  /** Jobs not copied, each with its reason. */
  readonly notCopied: NotCopied[];
}

/** What one import did. */
export interface ImportReport {
  /** BullMQ's queue (`<prefix>:<name>`). */
  readonly source: string;
  /** The EchoMQ queue it maps to. */
  readonly queue: string;
  /** Per copied state. */
  readonly states: Record<CopiedState, StateFigures>;
  /** The job schedulers. */
  readonly schedulers: { found: number; copied: number; present: number; readonly notCopied: NotCopied[] };
  /** Jobs of the states never copied, counted: `active`, `completed`, `waiting-children`. */
  left: { active: number; completed: number; "waiting-children": number };
  /** BullMQ's id counter on the source (the target's counter is raised to it). */
  counter: number;
}

/** Far ahead: a failed job is scheduled here, then buried by CANCEL before any worker could see it. */
const PARKED_MS = 8_000_000_000_000;

/** BullMQ's connection options of a `redis://`/`valkey://` URL (the source is read by BullMQ's own Redis backend). */
export function redisOptions(url: string): Record<string, unknown> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`--from must be a URL such as redis://127.0.0.1:6379, not ${JSON.stringify(redactUrl(url))}`);
  }
  if (!["redis:", "rediss:", "valkey:", "valkeys:"].includes(u.protocol)) {
    throw new Error(`--from takes redis://, rediss://, valkey:// or valkeys://, not ${u.protocol}//`);
  }
  const db = u.pathname.replace(/^\//, "");
  return {
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port === "" ? 6379 : Number(u.port),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(u.protocol === "rediss:" || u.protocol === "valkeys:" ? { tls: {} } : {}),
    maxRetriesPerRequest: null,
    // a server that cannot be reached is said so, not retried for ever
    retryStrategy: (times: number) => (times > 3 ? null : 200),
  };
}

/** Copies BullMQ queue `opts.queue` into the EchoMQ backend's keyspace; see the module. */
export async function importBullmq(opts: ImportOptions): Promise<ImportReport> {
  const bullmq = await loadBullmq();
  const prefix = opts.prefix ?? "bull";
  const page = opts.pageSize ?? 500;
  const source = new bullmq.Queue(opts.queue, { connection: redisOptions(opts.from), prefix, skipMetasUpdate: true }, bullmq.createRedisBackend);
  source.on("error", () => undefined); // a failed read rejects the call that made it
  const factory = createEchoMQBackend(opts.target);
  const target = new bullmq.Queue(opts.queue, { connection: {}, prefix, skipMetasUpdate: true }, factory);
  target.on("error", () => undefined);
  const shared = new SharedClient(opts.target);
  shared.acquire();
  const queue = echoQueueName(opts.queue, prefix);
  const s: Scope = {
    queue,
    lockMs: DEFAULT_LOCK_MS,
    locks: new Locks(),
    on: () => shared.get().then((c) => ({ c, ks: c.keyspace(queue) })),
  };
  const report: ImportReport = {
    source: `${prefix}:${opts.queue}`,
    queue,
    states: Object.fromEntries(COPIED_STATES.map((st) => [st, { found: 0, copied: 0, present: 0, runs: 0, notCopied: [] }])) as never,
    schedulers: { found: 0, copied: 0, present: 0, notCopied: [] },
    left: { active: 0, completed: 0, "waiting-children": 0 },
    counter: 0,
  };
  try {
    await source.waitUntilReady();
    const counts = await source.getJobCounts("active", "completed", "waiting-children");
    report.left = { active: counts.active ?? 0, completed: counts.completed ?? 0, "waiting-children": counts["waiting-children"] ?? 0 };
    const schedulerIds = await copySchedulers(source, target, report);
    for (const state of COPIED_STATES) await copyState(s, source, state, page, schedulerIds, report.states[state]);
    const client = await (source.getBackend() as unknown as { client: Promise<{ get(k: string): Promise<string | null> }> }).client;
    report.counter = Number((await client.get(source.keys.id)) ?? 0);
    if (report.counter > 0) await raiseCounter(s, report.counter);
    return report;
  } finally {
    await Promise.allSettled([source.close(), target.close(), shared.release()]);
  }
}

/** BullMQ itself (an optional peer dependency of this package): the import needs it installed. */
async function loadBullmq(): Promise<typeof import("bullmq")> {
  try {
    return await import("bullmq");
  } catch {
    throw new Error("emq import bullmq needs the bullmq package (npm install bullmq@6): it reads the source queue through BullMQ's own Redis backend");
  }
}

/** Copies the source's job schedulers; answers the ids of those the target now has (their runs are its own). */
async function copySchedulers(source: AnyQueue, target: AnyQueue, report: ImportReport): Promise<Set<string>> {
  const all = await source.getJobSchedulers(0, -1, true);
  const kept = new Set<string>();
  report.schedulers.found = all.length;
  for (const j of all) {
    try {
      if (await target.getJobScheduler(j.key)) {
        report.schedulers.present++;
        kept.add(j.key);
        continue;
      }
      await target.upsertJobScheduler(j.key, repeatOf(j), { name: j.name, data: j.template?.data, opts: j.template?.opts ?? {} });
      report.schedulers.copied++;
      kept.add(j.key);
    } catch (e) {
      report.schedulers.notCopied.push({ id: j.key, reason: (e as Error).message });
    }
  }
  return kept;
}

/** A scheduler's repeat options: an `every` scheduler's first run is its next run on the source, so no run is added or lost. */
function repeatOf(j: JobSchedulerJson): Omit<RepeatOptions, "key"> {
  const r: Record<string, unknown> = {};
  if (j.every) r.every = j.every;
  if (j.pattern) r.pattern = j.pattern;
  if (j.tz) r.tz = j.tz;
  if (j.limit) r.limit = j.limit;
  if (j.endDate) r.endDate = j.endDate;
  // the source's next run (its job, waiting or delayed there, is not copied): now when past
  if (j.every && j.next !== undefined) r.startDate = j.next;
  else if (j.offset) r.offset = j.offset;
  if (j.pattern && j.startDate) r.startDate = j.startDate;
  return r as Omit<RepeatOptions, "key">;
}

/** Copies the source's jobs of `state`, a page at a time (oldest first). */
async function copyState(s: Scope, source: AnyQueue, state: CopiedState, page: number, schedulers: Set<string>, f: StateFigures): Promise<void> {
  const scores = state === "delayed" ? await delayedScores(source) : new Map<string, number>();
  for (let start = 0;; start += page) {
    const jobs = (await source.getJobs([state], start, start + page - 1, true)).filter((j): j is Job => !!j?.id);
    for (const job of jobs) {
      f.found++;
      const why = notCopiable(job, schedulers);
      if (why === "run") {
        f.runs++;
        continue;
      }
      if (why !== null) {
        f.notCopied.push({ id: job.id!, reason: why });
        continue;
      }
      try {
        await copyJob(s, job, state, scores.get(job.id!));
        f.copied++;
      } catch (e) {
        if (e instanceof Present) f.present++;
        else f.notCopied.push({ id: job.id!, reason: (e as Error).message });
      }
    }
    if (jobs.length < page) return;
  }
}

/** The due time (ms) of each delayed job: its score in BullMQ's delayed set is `due × 0x1000 + a counter`. */
async function delayedScores(source: AnyQueue): Promise<Map<string, number>> {
  const client = await (source.getBackend() as unknown as { client: Promise<{ zrange(...a: string[]): Promise<string[]> }> }).client;
  const flat = await client.zrange(source.keys.delayed, "0", "-1", "WITHSCORES");
  const out = new Map<string, number>();
  for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i]!, Math.floor(Number(flat[i + 1]) / 0x1000));
  return out;
}

/** Why `job` is not copied (`run`: a scheduler's run the copied scheduler makes), or null. */
function notCopiable(job: Job, schedulers: Set<string>): string | null {
  if (job.repeatJobKey !== undefined) {
    return schedulers.has(job.repeatJobKey) ? "run" : `a run of job scheduler ${job.repeatJobKey}, which is not copied (its reason is the scheduler's)`;
  }
  if (job.parentKey || job.opts.parent) {
    return "a flow's child: EchoMQ makes a flow whole with FLOW, and no verb adds a job under an existing parent";
  }
  return null;
}

/** The row held this job already (an earlier run copied it). */
class Present extends Error {}

/** Admits one job of `state` (a failed one then buried with its reason). */
async function copyJob(s: Scope, job: Job, state: CopiedState, dueMs: number | undefined): Promise<void> {
  const json = job.asJSON() as JobJson;
  if (state === "failed") {
    // BullMQ let a failed job's deduplication key go: the dead copy holds none
    const { deduplication: _d, ...opts } = json.opts ?? {};
    const a = await admitAt(s, { ...json, opts }, job.id!, PARKED_MS);
    if (a.kind === "present") {
      // an earlier run cut short between the two steps left it scheduled: bury it now
      if ((await rowOf(s, job.id!))?.state === "scheduled") await bury(s, job);
      throw new Present();
    }
    await bury(s, job);
    return;
  }
  const due = state === "delayed" ? dueMs ?? (job.timestamp + (job.delay ?? 0)) : undefined;
  const a = await admitAt(s, json, job.id!, due);
  if (a.kind === "present") throw new Present();
  if (a.kind === "deduplicated") throw new Error(`deduplicated: its deduplication id is held by job ${a.holder}`);
}

/** CANCEL of the parked copy of failed job `job`, with BullMQ's reason. */
async function bury(s: Scope, job: Job): Promise<void> {
  const { c, ks } = await s.on();
  const enc = new TextEncoder();
  let reason = job.failedReason || "failed in BullMQ";
  while (enc.encode(reason).length > MAX_REASON_BYTES - 16) reason = reason.slice(0, -64);
  await cancel(c, ks, emqIdOf(job.id!), { reason });
}
