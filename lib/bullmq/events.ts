/**
 * EchoMQ's events stream as BullMQ's `QueueEvents` reads it (docs/design/bullmq.md, "Events"): each
 * entry of `emq:{q}:events` (one per transition, written by the verb itself) becomes one BullMQ
 * event per job, under the entry's own id — so `lastEventId` resumes exactly after it.
 *
 * @module
 */
import type { StreamReadRaw } from "bullmq";
import { resultsOf, type StreamEntry } from "../client/events.ts";

/** One BullMQ event: its name and fields (`jobId` an EchoMQ id until {@link bullEvents} names it). */
type BullEvent = Record<string, string>;

/**
 * Fields of an event read from a job's row by {@link bullEvents}: `name` ← the job's name (`added`),
 * `deduplicationId` ← its deduplication id (`deduplicated`, from the holder's row), `attemptsMade` ←
 * its attempts (`retries-exhausted`, kept only when they reached the job's `attempts`). Keyed by
 * this marker, the value the EchoMQ id whose row answers.
 */
const FROM_ROW = { name: "\0name", deduplicationId: "\0dedup", attemptsMade: "\0attempts" } as const;

/** Entry types after which BullMQ's finishing scripts look whether the queue drained. */
const FINISHING = new Set(["completed", "dead"]);

/** BullMQ's events of one EchoMQ entry, with EchoMQ's job ids. */
export function translate(entry: StreamEntry, now: number): BullEvent[] {
  const f = entry.fields;
  const type = f.get("type") ?? "";
  const jobs = (f.get("jobs") ?? "").split(" ").filter((j) => j !== "");
  const each = (make: (jobId: string, i: number) => BullEvent[]): BullEvent[] => jobs.flatMap(make);
  // BullMQ's `added` (its storeJob) comes before the state the job enters
  const added = (jobId: string): BullEvent => ({ event: "added", jobId, [FROM_ROW.name]: jobId });
  switch (type) {
    case "enqueued":
    case "scheduler":
      return each((jobId) => [added(jobId), { event: "waiting", jobId }]);
    case "scheduled":
      return each((jobId) => [added(jobId), { event: "delayed", jobId, delay: "0" }]);
    case "deduplicated": {
      // BullMQ's scripts: `jobId` the job that holds the key, `deduplicatedJobId` the one not admitted
      const into = (f.get("into") ?? "").split(" ");
      return each((jobId, i) => {
        const holder = into[i] ?? "";
        return [{ event: "deduplicated", jobId: holder, [FROM_ROW.deduplicationId]: holder, deduplicatedJobId: jobId }];
      });
    }
    case "promoted":
      return each((jobId) => [{ event: "waiting", jobId, prev: "delayed" }]);
    case "waiting":
      // a flow's parent (FLOW's, or a nested middle node APPLY made): BullMQ's addParentJob writes both
      return each((jobId) => [added(jobId), { event: "waiting-children", jobId }]);
    case "ready":
      return each((jobId) => [{ event: "waiting", jobId, prev: "waiting-children" }]);
    case "claimed":
      return each((jobId) => [{ event: "active", jobId, prev: "waiting" }]);
    case "progress":
      return each((jobId) => [{ event: "progress", jobId, data: f.get("progress") ?? "null" }]);
    case "completed": {
      const results = f.get("results");
      const values = results === undefined ? [] : resultsOf(results);
      // a result not carried (longer than the event's bound) or empty reads as null
      return each((jobId, i) => [{ event: "completed", jobId, returnvalue: values[i] || "null", prev: "active" }]);
    }
    case "retried": {
      const until = Number(f.get("until") ?? 0);
      return each((jobId): BullEvent[] => [
        until > now ? { event: "delayed", jobId, delay: String(until) } : { event: "waiting", jobId, prev: "active" },
      ]);
    }
    case "dead":
      // BullMQ's moveToFinished writes retries-exhausted after failed when the attempts are spent
      return each((jobId): BullEvent[] => [
        { event: "failed", jobId, failedReason: f.get("reason") ?? "", prev: "active" },
        { event: "retries-exhausted", jobId, [FROM_ROW.attemptsMade]: jobId },
      ]);
    case "stalled":
      return each((jobId): BullEvent[] => [{ event: "stalled", jobId }, { event: "waiting", jobId, prev: "active" }]);
    case "released":
      return each((jobId) => [{ event: "waiting", jobId, prev: "active" }]);
    case "requeued":
      return each((jobId) => [{ event: "waiting", jobId, prev: "failed" }]);
    case "removed":
      return each((jobId) => [{ event: "removed", jobId, prev: "" }]);
    case "cleaned":
      // a clean's ids, one entry: BullMQ's cleanJobsInSet writes one `cleaned` with the count
      return [{ event: "cleaned", count: String(jobs.length) }];
    case "paused":
    case "resumed":
      return f.get("lane") === undefined ? [{ event: type }] : [];
    default:
      return [];
  }
}

/** What an event reads of a job: its BullMQ id, and from its row (when asked) its name and deduplication id. */
export interface JobRef {
  /** Its BullMQ id (a row gone: its EchoMQ id, unless a counter id). */
  readonly id: string;
  /** Its BullMQ name (`""` when its row is gone). */
  readonly name?: string;
  /** The deduplication id it holds (`""` when none or its row is gone). */
  readonly dedup?: string;
  /** Its attempts so far and the attempts BullMQ gives it (`opts.attempts`, 1 when none), when its row was read. */
  readonly attempts?: { readonly made: number; readonly max: number };
}

/** How {@link bullEvents} reads the jobs and the queue. */
export interface EventReads {
  /** The jobs of `emqIds`, their rows read for those in `rows`. */
  readonly jobs: (emqIds: readonly string[], rows: ReadonlySet<string>) => Promise<Map<string, JobRef>>;
  /** Whether the queue holds nothing waiting, prioritized or active (BullMQ's `drained`) with `lastId` its stream's newest entry. */
  readonly drained: (lastId: string) => Promise<boolean>;
}

/**
 * BullMQ's reply to a stream read: the events of `entries`, each job id named by its BullMQ id, the
 * fields BullMQ's events carry read from rows (`added`'s name, `deduplicated`'s deduplication id),
 * under the stream's name. `drained` is derived: after the last completion or failure of a read that
 * reached the stream's end, when the queue holds nothing waiting, prioritized or active at the read
 * (BullMQ's finishing script checks the same lists when it finishes a job; a job admitted between
 * the finish and the read hides it here).
 */
export async function bullEvents(stream: string, entries: readonly StreamEntry[], reads: EventReads, now: number): Promise<StreamReadRaw> {
  const events = entries.map((e) => ({ id: e.id, list: translate(e, now) }));
  let lastFinish = -1;
  entries.forEach((e, i) => void (FINISHING.has(e.fields.get("type") ?? "") && (lastFinish = i)));
  if (lastFinish >= 0 && (await reads.drained(entries[entries.length - 1]!.id))) events[lastFinish]!.list.push({ event: "drained" });
  const all = events.flatMap((e) => e.list);
  const ids = [...new Set(all.flatMap((ev) => [ev.jobId, ev.deduplicatedJobId].filter((j): j is string => j !== undefined && j !== "")))];
  const rows = new Set(
    all.flatMap((ev) => [ev[FROM_ROW.name], ev[FROM_ROW.deduplicationId], ev[FROM_ROW.attemptsMade]].filter((j): j is string => j !== undefined)),
  );
  const refs = ids.length === 0 ? new Map<string, JobRef>() : await reads.jobs(ids, rows);
  const raw: Array<[string, string[]]> = [];
  for (const { id, list } of events) {
    for (const ev of list) {
      const name = ev[FROM_ROW.name];
      const dedup = ev[FROM_ROW.deduplicationId];
      const exhausted = ev[FROM_ROW.attemptsMade];
      delete ev[FROM_ROW.name];
      delete ev[FROM_ROW.deduplicationId];
      delete ev[FROM_ROW.attemptsMade];
      if (exhausted !== undefined) {
        // a failure before the attempts were spent (an unrecoverable error), or a row gone: none
        const a = refs.get(exhausted)?.attempts;
        if (a === undefined || a.made < a.max) continue;
        ev.attemptsMade = String(a.made);
      }
      if (name !== undefined) ev.name = refs.get(name)?.name ?? "";
      if (dedup !== undefined) ev.deduplicationId = refs.get(dedup)?.dedup ?? "";
      if (ev.jobId !== undefined) ev.jobId = refs.get(ev.jobId)?.id ?? ev.jobId;
      if (ev.deduplicatedJobId !== undefined) ev.deduplicatedJobId = refs.get(ev.deduplicatedJobId)?.id ?? ev.deduplicatedJobId;
      raw.push([id, Object.entries(ev).flat()]);
    }
  }
  // nothing BullMQ reads (only transitions it has no name for): the last id still moves it on
  if (raw.length === 0 && entries.length > 0) raw.push([entries[entries.length - 1]!.id, ["event", "echomq"]]);
  return raw.length === 0 ? null : [[stream, raw]];
}
