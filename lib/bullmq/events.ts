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

/** BullMQ's events of one EchoMQ entry, with EchoMQ's job ids. */
export function translate(entry: StreamEntry, now: number): BullEvent[] {
  const f = entry.fields;
  const type = f.get("type") ?? "";
  const jobs = (f.get("jobs") ?? "").split(" ").filter((j) => j !== "");
  const each = (make: (jobId: string, i: number) => BullEvent[]): BullEvent[] => jobs.flatMap(make);
  switch (type) {
    case "enqueued":
      return each((jobId) => [{ event: "waiting", jobId }]);
    case "scheduled":
      return each((jobId) => [{ event: "delayed", jobId, delay: "0" }]);
    case "promoted":
      return each((jobId) => [{ event: "waiting", jobId, prev: "delayed" }]);
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
        until > now ? { event: "delayed", jobId, delay: String(until) } : { event: "waiting", jobId, prev: "failed" },
      ]);
    }
    case "dead":
      return each((jobId) => [{ event: "failed", jobId, failedReason: f.get("reason") ?? "", prev: "active" }]);
    case "stalled":
      return each((jobId): BullEvent[] => [{ event: "stalled", jobId }, { event: "waiting", jobId, prev: "active" }]);
    case "released":
      return each((jobId) => [{ event: "waiting", jobId, prev: "active" }]);
    case "requeued":
      return each((jobId) => [{ event: "waiting", jobId, prev: "failed" }]);
    case "removed":
      return each((jobId) => [{ event: "removed", jobId, prev: "" }]);
    case "paused":
    case "resumed":
      return f.get("lane") === undefined ? [{ event: type }] : [];
    default:
      return [];
  }
}

/**
 * BullMQ's reply to a stream read: the events of `entries`, each job id named by `bullId` (its
 * BullMQ id), under the stream's name.
 */
export async function bullEvents(
  stream: string,
  entries: readonly StreamEntry[],
  bullId: (emqIds: readonly string[]) => Promise<Map<string, string>>,
  now: number,
): Promise<StreamReadRaw> {
  const events = entries.map((e) => ({ id: e.id, list: translate(e, now) }));
  const ids = [...new Set(events.flatMap((e) => e.list.flatMap((ev) => ev.jobId === undefined ? [] : [ev.jobId])))];
  const names = await bullId(ids);
  const raw: Array<[string, string[]]> = [];
  for (const { id, list } of events) {
    for (const ev of list) {
      if (ev.jobId !== undefined) ev.jobId = names.get(ev.jobId) ?? ev.jobId;
      raw.push([id, Object.entries(ev).flat()]);
    }
  }
  // nothing BullMQ reads (only transitions it has no name for): the last id still moves it on
  if (raw.length === 0 && entries.length > 0) raw.push([entries[entries.length - 1]!.id, ["event", "echomq"]]);
  return raw.length === 0 ? null : [[stream, raw]];
}
