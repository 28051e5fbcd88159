/**
 * The queue's events as the client hands them out: one item per job of an entry of the queue's
 * `events` stream (`emq:{q}:events`, lib/wire/events.ts), typed by the entry's `type` — a
 * discriminated union, {@link QueueEvent} — plus the `gap` item a reader yields when entries it
 * should have read were trimmed. Each item's `id` is the entry's id and the job's index in it
 * (`<ms>-<seq>:<i>`), so a reader started from an item's id skips exactly what was seen.
 *
 * @module
 */
import type { JobId } from "../keyspace/mod.ts";
import { type EventField, EVENTS } from "../wire/events.ts";
import { EchoMQError } from "./errors.ts";
import { jsonOrText } from "./info.ts";

/** The item property each event field becomes, and its type. */
export interface FieldItem {
  /** `jobs`: one item per job, `jobId` its id. */
  jobs: { readonly jobId: JobId };
  /** `attempts`: the job's attempt number. */
  attempts: { readonly attempts: number };
  /** `into`: the job the id folded into. */
  into: { readonly into: JobId };
  /** `reason`: the failure's reason. */
  reason: { readonly reason: string };
  /** `progress`: as the handler reported it (JSON, parsed; the text when it is not JSON). */
  progress: { readonly progress: unknown };
  /**
   * `results`: the job's result (JSON, parsed; absent when the handler returned none), or
   * `resultInRow` when it was longer than 1024 bytes: read it with `getJob` (kept while the queue
   * keeps completed jobs).
   */
  results: { readonly result?: unknown; readonly resultInRow?: true };
  /** `lane`: the lane, absent for the queue itself. */
  lane: { readonly lane?: string };
  /** `until`: a time, ms since the epoch. */
  until: { readonly until: number };
  /** `name`: the scheduler that fired. */
  name: { readonly name: string };
}

/**
 * The fields each type of event carries, as lib/wire/events.ts's `EVENTS` says (checked at compile
 * time: a type or a field added to the spec and missed here does not compile).
 */
export interface EventFieldsOf {
  /** ENQUEUE. */
  enqueued: "jobs";
  /** SCHEDULE. */
  scheduled: "jobs";
  /** TICK. */
  scheduler: "name" | "jobs";
  /** ENQUEUE, SCHEDULE, TICK. */
  deduplicated: "jobs" | "into";
  /** CLAIM, PROMOTE, RUN. */
  promoted: "jobs";
  /** CLAIM, REAP. */
  stalled: "jobs";
  /** CLAIM. */
  claimed: "jobs" | "attempts";
  /** PROGRESS. */
  progress: "jobs" | "progress";
  /** ACK. */
  completed: "jobs" | "results";
  /** RETRY. */
  retried: "jobs" | "reason" | "until";
  /** BURY; also a flow's parent a child failed, or whose deadline passed (APPLY, OUTBOX, a settle in its queue). */
  dead: "jobs" | "reason";
  /** A flow's parent made to wait for its children (`waiting-children`): FLOW's parent, a nested child APPLY makes. */
  waiting: "jobs";
  /** A flow's parent made ready (`waiting-children` → pending): APPLY, SEAL, a settle or REMOVE in its queue. */
  ready: "jobs";
  /** RELEASE. */
  released: "jobs";
  /** REMOVE. */
  removed: "jobs";
  /** REMOVE of a clean (`removeMany` with `clean`; wire 17), in place of `removed`. */
  cleaned: "jobs";
  /** CANCEL. */
  cancelled: "jobs" | "reason";
  /** REQUEUE. */
  requeued: "jobs";
  /** PAUSE. */
  paused: "lane";
  /** RESUME. */
  resumed: "lane";
  /** PENALIZE. */
  penalized: "lane" | "until";
}

/** A type of event (the spec's `EventType`). */
export type QueueEventType = keyof EventFieldsOf;

type Spec = { [T in keyof typeof EVENTS]: (typeof EVENTS)[T]["fields"][number] };
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const SPEC_MATCHES: Exactly<Spec, EventFieldsOf> = true;
void SPEC_MATCHES;

/** `U`'s members as one intersection (the properties of each of an event's fields, together). */
export type Both<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The fields an event of type `T` carries (lib/wire/events.ts). */
export type FieldsOf<T extends QueueEventType> = EventFieldsOf[T];

/**
 * One event of type `T`: its `id` (`<entry id>:<index>`), its `type`, and the properties of its
 * fields (lib/wire/events.ts): `jobId` for `jobs`, `attempts`, `into`, `reason`, `progress`,
 * `result` or `resultInRow` for `results`, `lane` (absent: the queue), `until`, `name`.
 */
export type EventOf<T extends QueueEventType> = { readonly id: string; readonly type: T } & Both<FieldItem[FieldsOf<T>]>;

/**
 * Entries a reader could not read: they were trimmed from the stream (it is bounded by the queue's
 * `events_max`, default 10,000) before it read them. `from` is where the reader was (an item's id,
 * an entry id, or `0-0` for the start), `first` the id of the oldest entry still kept (null when
 * the stream is empty), `id` the position after the gap (resuming from it reads from `first`).
 */
export interface EventGap {
  /** The position after the gap: an entry id (resume from it to read from {@link first}). */
  readonly id: string;
  /** Always `gap`. */
  readonly type: "gap";
  /** Where the reader was when the entries after it were found trimmed. */
  readonly from: string;
  /** The oldest entry still in the stream, or null when it is empty. */
  readonly first: string | null;
}

/** An event of the queue, one per job of an entry (see {@link EventOf}), discriminated by `type`. */
export type QueueEvent = { [T in QueueEventType]: EventOf<T> }[QueueEventType];

/** What an events reader yields: the queue's events, and a {@link EventGap} when some were trimmed unread. */
export type QueueEventItem = QueueEvent | EventGap;

/** Where to start reading: `now` (what comes next), `start` (the oldest entry kept) or an id. */
export type EventsFrom = "now" | "start" | string;

/** A position in the stream: an entry's id, and the last item of it seen (`Infinity`: all of it). */
export interface Position {
  /** The entry id's milliseconds. */
  readonly ms: bigint;
  /** The entry id's sequence number. */
  readonly seq: bigint;
  /** The last item of the entry already seen; `Infinity` when the whole entry was. */
  readonly index: number;
}

/** The position before every entry. */
export const START: Position = { ms: 0n, seq: 0n, index: Infinity };

const ID = /^(\d{1,20})-(\d{1,20})(?::(\d{1,9}))?$/;
const MAX_U64 = (1n << 64n) - 1n;

/**
 * A position from its text: `<ms>-<seq>` (after that whole entry) or `<ms>-<seq>:<i>` (after
 * item `i` of it); null when `text` is neither.
 */
export function parsePosition(text: string): Position | null {
  const m = ID.exec(text);
  if (m === null) return null;
  const ms = BigInt(m[1]!);
  const seq = BigInt(m[2]!);
  if (ms > MAX_U64 || seq > MAX_U64) return null;
  return { ms, seq, index: m[3] === undefined ? Infinity : Number(m[3]) };
}

/** The `from` option checked: a position, or `now` (to be read from the server). */
export function fromOption(what: string, from: unknown): Position | "now" {
  if (from === undefined || from === "now") return "now";
  if (from === "start") return START;
  const p = typeof from === "string" ? parsePosition(from) : null;
  if (p === null) {
    throw new EchoMQError(
      "options",
      `${what}: from must be "now", "start", an entry id <ms>-<seq> or an event's id <ms>-<seq>:<i>, got ${JSON.stringify(from)}`,
    );
  }
  return p;
}

/** A position's text: the entry id, with `:<index>` unless the whole entry was seen. */
export function positionText(p: Position): string {
  return `${p.ms}-${p.seq}${p.index === Infinity ? "" : `:${p.index}`}`;
}

/** The entry id of a position (its item left out). */
export function entryId(p: Position): string {
  return `${p.ms}-${p.seq}`;
}

/** Negative, 0 or positive as position `a` is before, at or after `b`. */
export function comparePositions(a: Position, b: Position): number {
  if (a.ms !== b.ms) return a.ms < b.ms ? -1 : 1;
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1;
  return a.index === b.index ? 0 : a.index < b.index ? -1 : 1;
}

/** The position after the whole entry `id` (an entry id as the server writes it). */
export function afterEntry(id: string): Position {
  const p = parsePosition(id);
  if (p === null) throw new EchoMQError("connection", `events: the server sent an entry id ${JSON.stringify(id)} that is not <ms>-<seq>`);
  return { ms: p.ms, seq: p.seq, index: Infinity };
}

/** The entry id just before `p`'s entry (`0-0` stays), for an inclusive read from a partly seen entry. */
export function previousEntry(p: Position): string {
  if (p.seq > 0n) return `${p.ms}-${p.seq - 1n}`;
  if (p.ms > 0n) return `${p.ms - 1n}-${MAX_U64}`;
  return "0-0";
}

/** One entry of the stream as read: its id and its fields (after `type`), as text. */
export interface StreamEntry {
  /** The entry id, `<ms>-<seq>`. */
  readonly id: string;
  /** The entry's field-value pairs. */
  readonly fields: ReadonlyMap<string, string>;
}

const text = (x: unknown): string => (x instanceof Uint8Array ? new TextDecoder().decode(x) : String(x));

/** The pairs of one entry's field list (glide gives `[[f, v], …]`, or `[f, v, …]`). */
function pairs(list: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (!Array.isArray(list)) return out;
  for (let i = 0; i < list.length; i++) {
    const e = list[i] as unknown;
    if (Array.isArray(e)) out.set(text(e[0]), text(e[1]));
    else {
      out.set(text(e), text(list[i + 1]));
      i++;
    }
  }
  return out;
}

/**
 * The entries of an `XRANGE` / `XREVRANGE` reply, or of one stream of an `XREAD` reply (glide
 * gives records `{ key: id, value: fields }`, or `[id, fields]` pairs).
 */
export function streamEntries(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  return reply.map((e: unknown) => {
    if (Array.isArray(e)) return { id: text(e[0]), fields: pairs(e[1]) };
    const { key, value } = e as { key: unknown; value: unknown };
    return { id: text(key), fields: pairs(value) };
  });
}

/** The entries of an `XREAD` reply of one stream (null: none before the block ran out). */
export function readEntries(reply: unknown): StreamEntry[] {
  if (reply === null || reply === undefined) return [];
  if (Array.isArray(reply)) {
    const first = reply[0] as unknown;
    if (first === undefined) return [];
    if (Array.isArray(first)) return streamEntries(first[1]);
    return streamEntries((first as { value: unknown }).value);
  }
  const values = Object.values(reply as Record<string, unknown>);
  return values.length === 0 ? [] : streamEntries(values[0]);
}

const KNOWN: ReadonlySet<string> = new Set(Object.keys(EVENTS));

/**
 * The items of one entry: one per job (`jobs` split, `attempts` and `into` parallel to it), or one
 * for an entry without jobs (`paused`, `resumed`, `penalized`). An entry of a type this client does
 * not know (a newer server) gives one item with its fields as text.
 */
export function entryItems(entry: StreamEntry): QueueEvent[] {
  const f = entry.fields;
  const type = f.get("type") ?? "";
  const common: Record<string, unknown> = {};
  const set = (field: EventField, key: string, value: (v: string) => unknown): void => {
    const v = f.get(field);
    if (v !== undefined) common[key] = value(v);
  };
  set("name", "name", (v) => v);
  set("reason", "reason", (v) => v);
  set("progress", "progress", jsonOrText);
  set("lane", "lane", (v) => v);
  set("until", "until", Number);
  if (!KNOWN.has(type)) {
    for (const [k, v] of f) if (!["type", "jobs", "attempts", "into"].includes(k) && !(k in common)) common[k] = v;
  }
  const jobs = f.get("jobs");
  if (jobs === undefined) return [{ id: `${entry.id}:0`, type, ...common } as unknown as QueueEvent];
  const ids = jobs.split(" ").filter((j) => j !== "");
  const attempts = f.get("attempts")?.split(" ");
  const into = f.get("into")?.split(" ");
  const results = f.get("results");
  const each = results === undefined ? undefined : resultsOf(results);
  return ids.map((jobId, i) => {
    const item: Record<string, unknown> = { id: `${entry.id}:${i}`, type, jobId, ...common };
    if (attempts !== undefined) item.attempts = Number(attempts[i]);
    if (into !== undefined) item.into = into[i];
    const r = each?.[i];
    if (r === null) item.resultInRow = true;
    else if (r !== undefined && r !== "") item.result = jsonOrText(r);
    return item as unknown as QueueEvent;
  });
}

/**
 * A `completed` entry's `results` (`<byte length>:<bytes>` back to back, lib/wire/events.ts): each
 * result's text, `null` for one not carried (`-1:`, longer than the bound); what cannot be read
 * ends the list.
 */
export function resultsOf(text: string): Array<string | null> {
  const bytes = new TextEncoder().encode(text);
  const out: Array<string | null> = [];
  let at = 0;
  while (at < bytes.length) {
    const colon = bytes.indexOf(58, at);
    if (colon < 0) break;
    const len = Number(new TextDecoder().decode(bytes.subarray(at, colon)));
    if (len === -1) {
      out.push(null);
      at = colon + 1;
      continue;
    }
    if (!Number.isSafeInteger(len) || len < 0 || colon + 1 + len > bytes.length) break;
    out.push(new TextDecoder().decode(bytes.subarray(colon + 1, colon + 1 + len)));
    at = colon + 1 + len;
  }
  return out;
}

/** The position of an item (its `id`). */
export function itemPosition(item: { readonly id: string }): Position {
  return parsePosition(item.id) ?? START;
}

/** The types of event a job's `result()` waits for: it finished, or it is gone. */
export const FINISHING: ReadonlySet<QueueEventType> = new Set<QueueEventType>(["completed", "dead", "removed"]);
