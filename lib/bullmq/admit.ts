/**
 * BullMQ's `addJob` and `addJobs` on EchoMQ's ENQUEUE and SCHEDULE (docs/design/bullmq.md,
 * "Adding"): a job without a `jobId` takes the queue's next counter id, its EchoMQ id follows by
 * the identity rule (`ids.ts`), its payload is the envelope (`envelope.ts`); a delay makes it a
 * SCHEDULE at BullMQ's `timestamp + delay`, a priority, a name and a deduplication id ride as
 * EchoMQ's options. A `jobId` that exists answers its id and writes nothing, as BullMQ does.
 *
 * @module
 */
import type { JobJson, ParentKeyOpts } from "bullmq";
import { admitOne } from "../client/batch.ts";
import { DuplicateIdError } from "../client/errors.ts";
import type { EnqueueOptions } from "../client/options.ts";
import { META, WIRE } from "../wire/mod.ts";
import { envelopeOf } from "./envelope.ts";
import { emqIdOf, IdCollisionError } from "./ids.ts";
import { refuse, WHY } from "./refused.ts";
import { bullIds } from "./rows.ts";
import type { Scope } from "./scope.ts";

/**
 * The field of `meta` that counts BullMQ's ids (BullMQ's `<prefix>:<queue>:id` key): in the queue's
 * own hash, so a DROP (BullMQ's `obliterate`) starts it again, as BullMQ's does.
 */
export const COUNTER_FIELD = "bullmq_id";
/** EchoMQ's highest priority number (the wire's gate); BullMQ allows one more (2²¹), read as this. */
const MAX_PRIORITY = 2_097_151;
const NAME_BYTES = 1024;

/** Whether `name` passes EchoMQ's name rule (1 to 1024 bytes, no `{`, `}` or NUL), so it can ride as the row's name. */
function nameRule(name: string): boolean {
  return name.length > 0 && !/[{}\0]/.test(name) && new TextEncoder().encode(name).length <= NAME_BYTES;
}

/**
 * Takes `n` ids of the queue's BullMQ counter (one HINCRBY). When the counter makes the queue's
 * `meta`, it gets the first-use fields a verb would give it (`wire`, `created_ms`, server time).
 */
export async function nextIds(s: Scope, n: number): Promise<string[]> {
  const last = await bump(s, n);
  return Array.from({ length: n }, (_, i) => String(last - n + 1 + i));
}

/** Adds `n` to the counter (with `meta`'s first-use fields); answers its new value. */
async function bump(s: Scope, n: number): Promise<number> {
  const { c, ks } = await s.on();
  const time = (await c.conn.command(["TIME"], ks.meta)) as unknown[];
  const now = String(Number(time[0]) * 1000 + Math.floor(Number(time[1]) / 1000));
  const replies = await c.conn.batch(
    [["HSETNX", ks.meta, META.wire, String(WIRE)], ["HSETNX", ks.meta, META.created_ms, now], ["HINCRBY", ks.meta, COUNTER_FIELD, String(n)]],
    ks.meta,
    true,
  );
  for (const r of replies) if (r instanceof Error) throw r;
  return Number(replies[2]);
}

/**
 * Raises the queue's BullMQ counter to `to` when it is below (never lowers it): `emq import bullmq`
 * carries the source's counter over, so the next `add` takes an id the source never gave.
 */
export async function raiseCounter(s: Scope, to: number): Promise<void> {
  const { c, ks } = await s.on();
  const now = Number((await c.conn.command(["HGET", ks.meta, COUNTER_FIELD], ks.meta)) ?? 0);
  if (to > now) await bump(s, to - now);
}

/** The EchoMQ options of a BullMQ job (checked here: what EchoMQ cannot carry is refused before any write). */
function optionsOf(job: JobJson, emqId: string): EnqueueOptions {
  const o = job.opts ?? {};
  if (o.lifo) refuse("addJob (opts.lifo)", WHY.lifo);
  if (job.parent !== undefined || o.parent !== undefined) refuse("addJob (opts.parent)", WHY.flows);
  if ((o as { repeat?: unknown }).repeat !== undefined) refuse("addJob (opts.repeat)", WHY.repeat);
  const out: { -readonly [K in keyof EnqueueOptions]: EnqueueOptions[K] } = { id: emqId as EnqueueOptions["id"] };
  if (nameRule(job.name)) out.name = job.name;
  const priority = job.priority ?? o.priority ?? 0;
  if (priority > 0) out.priority = Math.min(priority, MAX_PRIORITY);
  const d = o.deduplication;
  if (d?.id !== undefined) {
    if (d.extend) refuse("addJob (opts.deduplication.extend)", "EchoMQ's deduplication window starts at the admission and is not extended");
    if ((d as { keepLastIfActive?: boolean }).keepLastIfActive) refuse("addJob (opts.deduplication.keepLastIfActive)", WHY.keepLast);
    out.dedup = { key: d.id, ...(d.ttl ? { ttlMs: d.ttl } : {}), ...(d.replace ? { mode: "debounce" as const } : {}) };
  }
  return out;
}

/** BullMQ's `addJob`: the job's id (a `jobId` that exists: its id, nothing written; deduplicated: the holder's). */
export async function addJob(s: Scope, job: JobJson, jobId: string, parent?: ParentKeyOpts): Promise<string> {
  if (parent?.parentKey || parent?.addToWaitingChildren) refuse("addJob (parent)", WHY.flows);
  const given = jobId || job.id;
  // checked before the counter moves: a refused job takes no id
  optionsOf(job, "JOB00000000000");
  const id = given || (await nextIds(s, 1))[0]!;
  return await admitAs(s, job, id);
}

/** BullMQ's `addJobs`: the jobs admitted together (their one-job admissions go as one command while in flight). */
export async function addJobs(s: Scope, entries: Array<{ job: JobJson; jobId: string; parentKeyOpts?: ParentKeyOpts }>): Promise<string[]> {
  for (const e of entries) {
    if (e.parentKeyOpts?.parentKey) refuse("addJobs (parent)", WHY.flows);
    optionsOf(e.job, "JOB00000000000");
  }
  const missing = entries.filter((e) => !(e.jobId || e.job.id)).length;
  const fresh = missing === 0 ? [] : await nextIds(s, missing);
  const ids = entries.map((e) => e.jobId || e.job.id || fresh.shift()!);
  return await Promise.all(entries.map((e, i) => admitAs(s, e.job, ids[i]!)));
}

/** What one admission did: admitted; the id's row held this very job already; or a held deduplication key. */
export type Admission = { readonly kind: "admitted" } | { readonly kind: "present" } | { readonly kind: "deduplicated"; readonly holder: string };

/** Admits `job` as BullMQ id `id`. */
async function admitAs(s: Scope, job: JobJson, id: string): Promise<string> {
  const delay = job.opts?.delay ?? job.delay ?? 0;
  const due = delay > 0 ? (job.timestamp ?? Date.now()) + delay : undefined;
  const a = await admitAt(s, job, id, due);
  return a.kind === "deduplicated" ? a.holder : id;
}

/**
 * Admits `job` as BullMQ id `id`, due at `due` (ms, server's epoch; undefined: now), and says what
 * became of it: `emq import bullmq` gives a delayed job its due time as BullMQ's delayed set holds it.
 */
export async function admitAt(s: Scope, job: JobJson, id: string, due: number | undefined): Promise<Admission> {
  const { c, ks } = await s.on();
  const emqId = emqIdOf(id);
  const opts = optionsOf(job, emqId);
  try {
    const admitted = await admitOne(c, ks, envelopeOf(job, id), due, opts, due === undefined ? "addJob" : "addJob (delayed)");
    if (admitted.outcome === "admitted") return { kind: "admitted" };
    return { kind: "deduplicated", holder: (await bullIds(s, [admitted.id])).get(admitted.id) ?? admitted.id };
  } catch (e) {
    if (!(e instanceof DuplicateIdError)) throw e;
    // the id's row exists: this job (BullMQ answers its id), or another that met it on one id
    const holder = (await bullIds(s, [emqId])).get(emqId);
    if (holder === id) return { kind: "present" };
    throw new IdCollisionError(emqId, holder ?? emqId, id);
  }
}
