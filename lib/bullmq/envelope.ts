/**
 * What a BullMQ job's EchoMQ row carries (docs/design/bullmq.md, "Rows"): the payload is a JSON
 * envelope `{ bullmq: 1, id, name, data, opts, ts }` — BullMQ's id (the collision check), name,
 * data (parsed), options (attempts, backoff, … as BullMQ keeps them) and its timestamp — and the
 * row's own fields carry the rest (state, attempts, progress, result, failures, logs). This file
 * turns a row ({@link JobInfo}) or a claimed job into BullMQ's `JobJson`.
 *
 * @module
 */
import type { JobJson, JobsOptions } from "bullmq";
import type { JobInfo } from "../client/info.ts";

/** A BullMQ job's payload on EchoMQ. */
export interface Envelope {
  /** Marks the payload as BullMQ's (format 1). */
  readonly bullmq: 1;
  /** BullMQ's id of the job (its counter id or custom `jobId`). */
  readonly id: string;
  /** BullMQ's job name. */
  readonly name: string;
  /** The job's data, as `JSON.parse` of BullMQ's `data` gives it. */
  readonly data: unknown;
  /** BullMQ's job options, as the `Job` keeps them. */
  readonly opts: JobsOptions;
  /** BullMQ's `timestamp` (ms since the epoch, the producer's clock). */
  readonly ts: number;
}

/** The envelope of a BullMQ `JobJson` with id `id`. */
export function envelopeOf(job: JobJson, id: string): Envelope {
  const opts = { ...(job.opts ?? {}) } as JobsOptions & { jobId?: string };
  delete opts.jobId; // the id is the envelope's own
  return { bullmq: 1, id, name: job.name, data: JSON.parse(job.data || "{}"), opts, ts: job.timestamp ?? Date.now() };
}

/**
 * The envelope in the decoded payload of job `emqId` (admitted at `ts`), or null when the payload
 * is not BullMQ's. A job scheduler's envelope (`schedulers.ts`) is every run's payload, so it
 * carries no id and no timestamp: each run is BullMQ job `emqId` (its EchoMQ id, one to one by the
 * identity rule), admitted at `ts`.
 */
export function envelopeIn(payload: unknown, emqId: string, ts: number): Envelope | null {
  if (payload === null || typeof payload !== "object") return null;
  const e = payload as Partial<Envelope>;
  if (e.bullmq !== 1) return null;
  if (typeof e.id === "string") return e as Envelope;
  if (typeof e.opts !== "object" || e.opts === null || typeof e.name !== "string") return null;
  return { ...(e as Omit<Envelope, "id" | "ts">), id: emqId, ts: typeof e.ts === "number" ? e.ts : ts };
}

/** What a row adds to its envelope: the facts `JobInfo` reads. */
export type RowFacts = Pick<
  JobInfo<unknown>,
  | "state"
  | "attempts"
  | "progress"
  | "reason"
  | "failures"
  | "finishedAt"
  | "buriedAt"
  | "result"
  | "priority"
  | "createdAt"
  | "claimedAt"
  | "retryDelayMs"
  | "stalls"
>;

/**
 * BullMQ's `JobJson` of a job: its envelope and what its row says. `processedOn` is the claim time
 * the claiming backend saw; else, for a finished or scheduled job, the row's (its token's, kept
 * after the settle: wire 17).
 */
export function jobJson(e: Envelope, row: RowFacts, processedOn?: number): JobJson {
  // EchoMQ counts claims; BullMQ counts attempts made (finished) and started
  const made = row.state === "active" ? Math.max(0, row.attempts - 1) : row.attempts;
  const stacks = (row.failures ?? []).map((f) => f.stack ?? `${f.name}: ${f.message}`);
  const json: JobJson = {
    id: e.id,
    name: e.name,
    data: JSON.stringify(e.data === undefined ? {} : e.data),
    opts: e.opts,
    progress: (row.progress ?? 0) as JobJson["progress"],
    attemptsMade: made,
    attemptsStarted: row.attempts,
    timestamp: e.ts,
    failedReason: row.reason ?? "",
    stacktrace: JSON.stringify(stacks),
    returnvalue: row.result === undefined ? "null" : JSON.stringify(row.result),
    stalledCounter: row.stalls ?? 0, // leases that ran out (wire 17)
  };
  const finished = row.finishedAt ?? row.buriedAt;
  if (finished !== undefined) json.finishedOn = finished;
  // the row's claim time once the job left its claim (finished, or a retry waiting on its backoff);
  // a held job's is its holder's (a paused Worker's waiting claim may hold a job BullMQ would call waiting)
  const claimed = processedOn ?? (row.state === "active" || row.state === "pending" ? undefined : row.claimedAt);
  if (claimed !== undefined) json.processedOn = claimed;
  // BullMQ's hash always has it (0 for a job added without one); a retry waiting on its backoff:
  // the backoff, as BullMQ's moveToDelayed writes it (the row's delay_ms, wire 17)
  json.delay = row.state === "scheduled" && row.retryDelayMs !== undefined ? row.retryDelayMs : e.opts.delay ?? 0;
  json.priority = row.priority ?? e.opts.priority ?? 0;
  if (e.opts.deduplication?.id !== undefined) json.deduplicationId = e.opts.deduplication.id;
  if (e.opts.repeatJobKey !== undefined) json.repeatJobKey = e.opts.repeatJobKey;
  const parent = e.opts.parent as { id?: string; queue?: string } | undefined;
  if (parent?.id !== undefined && parent.queue !== undefined) {
    // a flow's child: BullMQ's parent reference (`<prefix>:<queue>:<id>`), as its Job keeps it
    json.parentKey = `${parent.queue}:${parent.id}`;
    json.parent = { id: parent.id, queueKey: parent.queue };
  }
  return json;
}
