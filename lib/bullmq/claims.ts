/**
 * BullMQ's worker path on EchoMQ's leases (docs/design/bullmq.md, "Locks"): `moveToActive` is a
 * CLAIM for `lockDuration`, the job held under the worker's token (`locks.ts`); completing is an
 * ACK, a final failure a BURY, a retry a RETRY (after BullMQ's backoff, or 0: ready now), a
 * rate-limited job a RELEASE; lock extensions are EXTEND, progress PROGRESS, log lines LOG — each
 * with the claim's fenced token, so a worker whose lease ran out (a stalled job claimed again)
 * writes nothing and gets BullMQ's "Missing lock" error.
 *
 * @module
 */
import type { JobJson, JobProgress } from "bullmq";
import { type Claim, claimOnce, settleMany } from "../client/batch.ts";
import { LeaseLostError, PayloadDecodeError } from "../client/errors.ts";
import type { Job, JobRef, Settlement } from "../client/job.ts";
import { extend, progress } from "../client/leases.ts";
import { appendLog, jobLogs } from "../client/logs.ts";
import { remove } from "../client/operations.ts";
import { envelopeIn, jobJson } from "./envelope.ts";
import { type Held, lockError } from "./locks.ts";
import { refuse, WHY } from "./refused.ts";
import { foreign, rowOf } from "./rows.ts";
import type { Scope } from "./scope.ts";

/** BullMQ's reply to a fetch: `[jobData, id, rateLimitDelay, delayUntil]`. */
export type NextJob = [JobJson | null, string, number, number];

/** Holds a claimed job under the worker's `token`; its `JobJson`. */
export function held(s: Scope, job: Job<unknown>, token: string): JobJson {
  const now = Date.now();
  const e = envelopeIn(job.payload, job.id, now) ?? foreign(job.id, job.name, job.payload, now);
  s.locks.hold(e.id, { ref: { id: job.id, queue: job.queue, token: job.token }, bullToken: token, at: now });
  const json = jobJson(e, { state: "active", attempts: job.attempts, priority: job.priority, createdAt: e.ts }, now);
  if (s.workerName !== undefined) json.processedBy = s.workerName;
  return json;
}

/**
 * BullMQ's reply for a claim's outcome: the job (held under `token`), or none with when to look
 * again (`delayUntil`, the server's next_ms: a delayed job due, a lease out, a limit's next slot).
 * A payload JSON cannot read is not a job BullMQ can run: it is buried with the reason.
 */
export async function nextOf(s: Scope, claim: Claim<unknown>, token: string): Promise<NextJob> {
  const job = claim.jobs[0];
  if (job === undefined) return [null, "", 0, claim.nextMs];
  if (job instanceof PayloadDecodeError) {
    const { c } = await s.on();
    await settleMany(c, [{ kind: "bury", job: job.job, reason: `not a BullMQ job: ${job.message}` }]);
    return [null, "", 0, 0];
  }
  const json = held(s, job, token);
  return [json, json.id!, 0, 0];
}

/** BullMQ's `moveToActive`: one CLAIM of one job for `lockDuration` (no wait). */
export async function moveToActive(s: Scope, token: string): Promise<NextJob> {
  const { c, ks } = await s.on();
  return await nextOf(s, await claimOnce(c, c.impl, ks, 1, s.lockMs, 0), token);
}

/**
 * The held job of `bullId` for `command`, taken out of the table; one this backend does not hold is
 * BullMQ's error for it: gone (`Missing key`), not active (`not in the active state`), or held
 * elsewhere (`Missing lock`).
 */
async function holding(s: Scope, bullId: string, token: string | undefined, command: string): Promise<Held> {
  try {
    return s.locks.take(bullId, token, command);
  } catch (e) {
    if (s.locks.peek(bullId) !== undefined) throw e; // held here under another token: BullMQ's lock mismatch
    const info = await rowOf(s, bullId);
    if (info === null) throw new Error(`Missing key for job ${bullId}. ${command}`);
    if (info.state !== "active") throw new Error(`Job ${bullId} is not in the active state. ${command}`);
    throw e;
  }
}

/** Sends one settle of a held job; a lease lost (the server refused the token) is BullMQ's "Missing lock". */
async function settle(s: Scope, bullId: string, settlement: Settlement, command: string): Promise<void> {
  const { c } = await s.on();
  const [error] = await settleMany(c, [settlement]);
  if (error instanceof LeaseLostError) throw lockError(bullId, command, false);
  if (error) throw error;
}

/** The failure a RETRY or BURY keeps: BullMQ's reason and the attempt's stack (the last of `stacktrace`). */
function failureOf(reason: string, stacktrace: unknown): Error {
  const error = new Error(reason);
  let stacks: unknown = stacktrace;
  if (typeof stacktrace === "string") {
    try {
      stacks = JSON.parse(stacktrace);
    } catch {
      stacks = [stacktrace];
    }
  }
  const last = Array.isArray(stacks) ? stacks[stacks.length - 1] : undefined;
  error.stack = typeof last === "string" ? last : undefined;
  return error;
}

/**
 * A held job finished for good (`moveToFinished`): its settle, then with `removeOnComplete` /
 * `removeOnFail` `true` a REMOVE (a count or an age keeps it under the queue's retention), then the
 * next job when `fetchNext`.
 */
async function finish(
  s: Scope,
  bullId: string,
  token: string,
  settlement: (job: JobRef) => Settlement,
  keep: unknown,
  fetchNext: boolean,
): Promise<{ result: void | NextJob; finishedOn: number }> {
  const h = await holding(s, bullId, token, "moveToFinished");
  await settle(s, bullId, settlement(h.ref), "moveToFinished");
  const finishedOn = Date.now();
  if (keep === true) {
    const { c, ks } = await s.on();
    await remove(c, ks, h.ref.id);
  }
  return { result: fetchNext ? await moveToActive(s, token) : undefined, finishedOn };
}

/** BullMQ's `moveToCompleted`: ACK with the return value. */
export function moveToCompleted(
  s: Scope,
  bullId: string,
  returnValue: unknown,
  keep: unknown,
  token: string,
  fetchNext: boolean,
): Promise<{ result: void | NextJob; finishedOn: number }> {
  const ack = (job: JobRef): Settlement => returnValue === undefined ? { kind: "ack", job } : { kind: "ack", job, result: returnValue };
  return finish(s, bullId, token, ack, keep, fetchNext);
}

/** BullMQ's `moveToFailed` (attempts spent, or not retried): BURY with the reason and the stack. */
export function moveToFailed(
  s: Scope,
  bullId: string,
  reason: string,
  keep: unknown,
  token: string,
  fetchNext: boolean,
  fields?: Record<string, unknown>,
): Promise<{ result: void | NextJob; finishedOn: number }> {
  const bury = (job: JobRef): Settlement => ({ kind: "bury", job, reason, error: failureOf(reason, fields?.stacktrace) });
  return finish(s, bullId, token, bury, keep, fetchNext);
}

/**
 * BullMQ's `moveToDelayed` of a held job (a retry after its backoff, or a processor's
 * `moveToDelayed`): RETRY due at `timestamp + delay`. A job not held is refused (no verb moves a
 * job this process does not hold).
 */
export async function moveToDelayed(
  s: Scope,
  bullId: string,
  timestamp: number,
  delay: number,
  token: string | undefined,
  opts: { fieldsToUpdate?: Record<string, unknown>; fetchNext?: boolean } | undefined,
): Promise<NextJob | []> {
  if (s.locks.peek(bullId) === undefined && !token) refuse("moveToDelayed (a job not held)", WHY.noVerb);
  const h = await holding(s, bullId, token, "moveToDelayed");
  const reason = String(opts?.fieldsToUpdate?.failedReason ?? "");
  const delayMs = Math.max(0, Math.round(timestamp + delay - Date.now()));
  const failure = reason === "" ? {} : { error: failureOf(reason, opts?.fieldsToUpdate?.stacktrace) };
  await settle(s, bullId, { kind: "retry", job: h.ref, delayMs, reason, ...failure }, "moveToDelayed");
  if (opts?.fetchNext && token) {
    const next = await moveToActive(s, token);
    if (next[0] !== null) return next;
  }
  return []; // BullMQ's answer when no job is fetched (its Worker then looks whether it drained)
}

/** BullMQ's `retryJob` of a held job: RETRY with no delay (ready now: the head of pending). */
export async function retryJob(s: Scope, bullId: string, token: string | undefined, fields?: Record<string, unknown>): Promise<void> {
  if (s.locks.peek(bullId) === undefined && !token) refuse("retryJob (a job not held)", WHY.noVerb);
  const h = await holding(s, bullId, token, "retryJob");
  const reason = String(fields?.failedReason ?? "");
  const failure = reason === "" ? {} : { error: failureOf(reason, fields?.stacktrace) };
  await settle(s, bullId, { kind: "retry", job: h.ref, delayMs: 0, reason, ...failure }, "retryJob");
}

/** BullMQ's `moveJobFromActiveToWait` (a worker's manual rate limit): RELEASE, the attempt given back. */
export async function release(s: Scope, bullId: string, token: string | undefined): Promise<number> {
  const h = s.locks.take(bullId, token, "moveJobFromActiveToWait");
  await settle(s, bullId, { kind: "release", job: h.ref }, "moveJobFromActiveToWait");
  return 0;
}

/** BullMQ's `extendLocks`: EXTEND each held job; the ids whose lease could not be extended. */
export async function extendLocks(s: Scope, bullIds: readonly string[], tokens: readonly string[], ms: number): Promise<string[]> {
  const { c } = await s.on();
  const failed: string[] = [];
  await Promise.all(bullIds.map(async (id, i) => {
    const h = s.locks.peek(id, tokens[i]);
    if (h === undefined) return failed.push(id);
    try {
      await extend(c, [h.ref], ms);
    } catch (e) {
      if (!(e instanceof LeaseLostError)) throw e;
      failed.push(id);
    }
  }));
  return failed;
}

/** The held job of `bullId` for an operation the server takes only under the lease, or the refusal. */
function underLease(s: Scope, bullId: string, operation: string): ReturnType<Scope["locks"]["peek"]> & object {
  const h = s.locks.peek(bullId);
  if (h === undefined) refuse(operation, WHY.unlocked);
  return h;
}

/** BullMQ's `updateProgress` of a held job: PROGRESS with its fenced token. */
export async function updateProgress(s: Scope, bullId: string, value: JobProgress): Promise<void> {
  const h = underLease(s, bullId, "updateProgress");
  const { c } = await s.on();
  try {
    await progress(c, h.ref, value);
  } catch (e) {
    if (e instanceof LeaseLostError) throw lockError(bullId, "updateProgress", false);
    throw e;
  }
}

/** BullMQ's `addLog` of a held job: LOG with its fenced token; the job's count of lines. */
export async function addLog(s: Scope, bullId: string, line: string): Promise<number> {
  const h = underLease(s, bullId, "addLog");
  const { c, ks } = await s.on();
  try {
    await appendLog(c, h.ref, line);
  } catch (e) {
    if (e instanceof LeaseLostError) throw lockError(bullId, "addLog", false);
    throw e;
  }
  return (await jobLogs(c, ks, h.ref.id)).total;
}
