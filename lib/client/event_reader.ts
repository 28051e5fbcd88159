/**
 * The events reader: one `XREAD BLOCK` loop per queue per client, on a connection of its own,
 * shared by every events iterator and `result()` waiter of that queue (each a {@link Subscriber}).
 * It starts on first use, and closes a second after its last user leaves ({@link LINGER_MS}: a
 * `result()` per job, one after the other, does not open a connection per job) and on
 * `mq.close()`.
 *
 * The reader only follows the tail: it takes the stream's last id when it starts, reads on from
 * there, and hands each entry to the subscribers that are *live* (caught up with it). A subscriber
 * that starts further back — `from: "start"`, an id, a `result()` whose job moved before the
 * reader started — first *catches up* on its own: pages of `XRANGE` on the client's main
 * connection, each read atomically with `XINFO STREAM`, which tells whether entries after it were
 * trimmed (then it yields a gap), until it reaches the reader's position and goes live. A live
 * subscriber's buffer is bounded ({@link BUFFER_MAX} items): one that overflows (its consumer is
 * slow) drops its buffer and catches up again from the last item it handed out, at its own pace
 * — from the stream, so nothing is lost unless the stream trimmed it meanwhile, and then a gap
 * says so. After a failure of its connection (a reconnect, a failover) the reader opens another
 * and reads on from its last id; its subscribers catch up again (so that entries trimmed during
 * the outage are reported as a gap). A full page (the reader is behind) is followed by one `XINFO
 * STREAM`: when entries after where it was were trimmed, its subscribers catch up too, each
 * reporting its own gap. A blocked read is cut short by closing its connection, so
 * closing and aborting are noticed at once; its block lasts {@link BLOCK_MS}. Only a failure that
 * may heal (a failover, a redirection, a timeout: `mayHeal`) is tried again; a refusal that will
 * not (NOPERM: the user may not read the stream) ends every user of the reader with that error.
 *
 * @module
 */
import type { Keyspace } from "../keyspace/mod.ts";
import { type Connection, mayHeal, retryDelay } from "./connection.ts";
import type { ClientContext } from "./context.ts";
import { EchoMQError } from "./errors.ts";
import {
  afterEntry,
  comparePositions,
  entryId,
  entryItems,
  type EventsFrom,
  fromOption,
  itemPosition,
  type Position,
  positionText,
  previousEntry,
  type QueueEventItem,
  readEntries,
  START,
  streamEntries,
  type StreamEntry,
} from "./events.ts";

/** How long one `XREAD` blocks on the server, ms (closing cuts it short). */
export const BLOCK_MS = 5000;
/** Most entries one `XREAD` returns. */
export const READ_COUNT = 1000;
/** Most entries one catch-up page (`XRANGE`) returns. */
export const CATCH_UP_COUNT = 100;
/** Most items a live subscriber holds unread before it falls back to catching up from the stream. */
export const BUFFER_MAX = 10_000;
/** How long a reader without users stays open, ms. */
export const LINGER_MS = 1000;
/** The prefix of a reader connection's client name (`CLIENT LIST`): `emq-events:1:<queue>`. */
export const READER_NAME_PREFIX = "emq-events:1:";

const sleep = (ms: number): Promise<void> => new Promise((wake) => setTimeout(wake, ms));

/** One user of a reader: an iterator, or a `result()` waiter. */
export class Subscriber {
  /** The last item given to it (buffered or handed out). */
  cursor: Position;
  /** The last item handed out. */
  yielded: Position;
  /** Items read for it, not yet handed out. */
  readonly buffer: QueueEventItem[] = [];
  /** True while the reader hands it every entry it reads (it is caught up). */
  live = false;
  /** True when its next catch-up must read the stream even at the reader's position (after a reconnect). */
  verify = false;
  /** True once it ended (aborted, broken off, the client closed, or it failed). */
  stopped = false;
  /** Why it ended, when a read was refused for good (its consumer rethrows it); else undefined. */
  failure: unknown = undefined;
  #wake: (() => void) | null = null;
  #stop!: () => void;
  /** Resolves when it ends. */
  readonly ended: Promise<void> = new Promise((done) => (this.#stop = done));

  /** A subscriber that has seen everything up to `from`. */
  constructor(from: Position) {
    this.cursor = from;
    this.yielded = from;
  }

  /** Wakes its consumer (new items, a change of mode, its end). */
  notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** Resolves at the next {@link notify}. */
  waitForNews(): Promise<void> {
    return new Promise((wake) => (this.#wake = wake));
  }

  /** Ends it with `e`: its consumer's iteration throws it. */
  fail(e: unknown): void {
    if (this.stopped) return;
    this.failure = e;
    this.stop();
  }

  /** Ends it. */
  stop(): void {
    this.stopped = true;
    this.#stop();
    this.notify();
  }

  /** Hands it the items of `entries` after its cursor; overflowing drops them and makes it catch up. */
  take(entries: readonly StreamEntry[]): void {
    for (const entry of entries) {
      for (const item of entryItems(entry)) {
        const at = itemPosition(item);
        if (comparePositions(at, this.cursor) <= 0) continue;
        this.buffer.push(item);
        this.cursor = at;
      }
    }
    // (a page of a catch-up is read only once the buffer is empty: bounded by its size)
    if (this.live && this.buffer.length > BUFFER_MAX) this.fallBehind();
    this.notify();
  }

  /** Stops taking the reader's entries: it catches up from the stream, from the last item handed out. */
  fallBehind(): void {
    this.buffer.length = 0;
    this.cursor = this.yielded;
    this.live = false;
  }
}

/** The readers of each client, by queue. */
const READERS = new WeakMap<object, Map<string, EventReader>>();

/** The reader of `ks`'s queue for client `c`, started when there is none. */
export function readerOf<P>(c: ClientContext<P>, ks: Keyspace): EventReader {
  let byQueue = READERS.get(c);
  if (byQueue === undefined) READERS.set(c, byQueue = new Map());
  let reader = byQueue.get(ks.name);
  if (reader === undefined || reader.closed) {
    reader = new EventReader(c as ClientContext<unknown>, ks, () => {
      if (byQueue.get(ks.name) === reader) byQueue.delete(ks.name);
    });
    byQueue.set(ks.name, reader);
  }
  return reader;
}

/** Closes every reader of client `c` (its subscribers end); resolves once their connections are closed. */
export async function closeReaders<P>(c: ClientContext<P>): Promise<void> {
  const byQueue = READERS.get(c);
  if (byQueue === undefined) return;
  READERS.delete(c);
  await Promise.all([...byQueue.values()].map((r) => r.close()));
}

/** The readers of client `c` open now, by queue (tests). */
export function openReaders<P>(c: ClientContext<P>): number {
  return READERS.get(c)?.size ?? 0;
}

/** The last entry's id of `ks`'s stream, as a position (the start when it is empty). */
export async function lastPosition(conn: Connection, ks: Keyspace): Promise<Position> {
  const [last] = streamEntries(await conn.command(["XREVRANGE", ks.events, "+", "-", "COUNT", "1"], ks.meta));
  return last === undefined ? START : afterEntry(last.id);
}

/** A field of an `XINFO STREAM` reply (records, pairs or an object). */
function infoField(reply: unknown, name: string): unknown {
  if (Array.isArray(reply)) {
    for (let i = 0; i < reply.length; i++) {
      const e = reply[i] as unknown;
      if (e !== null && typeof e === "object" && !Array.isArray(e) && "key" in e) {
        if (String((e as { key: unknown }).key) === name) return (e as unknown as { value: unknown }).value;
      } else if (String(e) === name) return reply[i + 1];
      else i++;
    }
    return undefined;
  }
  return reply !== null && typeof reply === "object" ? (reply as Record<string, unknown>)[name] : undefined;
}

/**
 * Whether entries after position `p` were trimmed, from an `XINFO STREAM` reply: trimming takes the
 * oldest entries, so some may follow `p` when something was trimmed (`entries-added` above
 * `length`) and `p` lies before the oldest entry kept. Then the position just before that entry
 * (`after`) and its id (`first`; null when the stream is empty: `after` is then its last id); else
 * null.
 */
export function trimmedAfter(info: unknown, p: Position): { after: Position; first: string | null } | null {
  const added = Number(infoField(info, "entries-added"));
  const length = Number(infoField(info, "length"));
  if (!(added > length)) return null;
  const firstEntry = infoField(info, "first-entry");
  const first = Array.isArray(firstEntry) && firstEntry.length > 0 ? String(firstEntry[0]) : null;
  const after = first !== null ? afterEntry(previousEntry(afterEntry(first))) : afterEntry(String(infoField(info, "last-generated-id")));
  return comparePositions({ ...p, index: Infinity }, after) < 0 ? { after, first } : null;
}

/** A queue's reader: see the module's doc. */
export class EventReader {
  /** Its users. */
  readonly subscribers: Set<Subscriber> = new Set();
  readonly #c: ClientContext<unknown>;
  readonly #ks: Keyspace;
  readonly #gone: () => void;
  #last: Position | null = null;
  #positioned: Promise<Position>;
  #setPositioned!: (p: Position) => void;
  #conn: Connection | null = null;
  #connId: string | null = null;
  #closing: Promise<void> = Promise.resolve();
  #closed = false;
  #linger: ReturnType<typeof setTimeout> | undefined;
  #running = false;

  /** A reader of `ks`'s stream for client `c`; `gone` runs once it closed. */
  constructor(c: ClientContext<unknown>, ks: Keyspace, gone: () => void) {
    this.#c = c;
    this.#ks = ks;
    this.#gone = gone;
    this.#positioned = new Promise((done) => (this.#setPositioned = done));
    this.#positioned.catch(() => {});
  }

  /** True once it closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The position it has read up to (null until it took the stream's last id). */
  get last(): Position | null {
    return this.#last;
  }

  /** Adds a user; the reader starts with its first. */
  add(sub: Subscriber): void {
    clearTimeout(this.#linger);
    this.#linger = undefined;
    this.subscribers.add(sub);
    if (!this.#running) {
      this.#running = true;
      void this.#run();
    }
  }

  /** Removes a user; without users the reader closes {@link LINGER_MS} later (unless one comes). */
  remove(sub: Subscriber): void {
    this.subscribers.delete(sub);
    if (this.subscribers.size > 0 || this.#closed) return;
    clearTimeout(this.#linger);
    this.#linger = setTimeout(() => {
      if (this.subscribers.size === 0) void this.close();
    }, LINGER_MS);
  }

  /**
   * Ends its users and closes its connection: a blocked read is ended first (`CLIENT UNBLOCK` from
   * the client's main connection: glide keeps a connection until its call returns). Resolves once
   * that is done.
   */
  close(): Promise<void> {
    if (this.#closed) return this.#closing;
    this.#closed = true;
    clearTimeout(this.#linger);
    for (const sub of this.subscribers) sub.stop();
    this.subscribers.clear();
    this.#gone();
    const conn = this.#conn;
    const id = this.#connId;
    this.#conn = null;
    if (conn === null) return this.#closing;
    this.#closing =
      (id === null || this.#c.closed ? Promise.resolve() : this.#c.conn.command(["CLIENT", "UNBLOCK", id], this.#ks.meta).then(() => {}, () => {})).finally(
        () => conn.close(),
      );
    return this.#closing;
  }

  /** Whether the reader should stop: closed, or its client closed. */
  #over(): boolean {
    if (!this.#closed && this.#c.closed) void this.close();
    return this.#closed;
  }

  async #run(): Promise<void> {
    const ks = this.#ks;
    // the tail: the stream's last id now (on the main connection, while the reader's own opens)
    for (let attempt = 0; this.#last === null; attempt++) {
      if (this.#over()) return;
      try {
        this.#last = await lastPosition(this.#c.conn, ks);
      } catch (e) {
        if (this.#over()) return;
        if (!mayHeal(e)) return this.#fail(e);
        await sleep(retryDelay(attempt));
      }
    }
    let last: Position = this.#last;
    this.#setPositioned(last);
    for (const sub of this.subscribers) sub.notify();
    let failures = 0;
    while (!this.#over()) {
      try {
        if (this.#conn === null) {
          const conn = await this.#c.conn.dedicated(BLOCK_MS, `${READER_NAME_PREFIX}${encodeURIComponent(ks.name)}`);
          let id: string | null = null;
          try {
            // its server id, for CLIENT UNBLOCK (a user that may not ask: closing waits for the block's end)
            id = String(await conn.command(["CLIENT", "ID"], ks.meta));
          } catch {
            id = null;
          }
          if (this.#over()) {
            conn.close();
            return;
          }
          this.#conn = conn;
          this.#connId = id;
        }
        const reply = await this.#conn.command(
          ["XREAD", "BLOCK", String(BLOCK_MS), "COUNT", String(READ_COUNT), "STREAMS", ks.events, entryId(last)],
          ks.meta,
        );
        failures = 0;
        const entries = readEntries(reply);
        if (entries.length === 0) continue;
        const before = last;
        this.#last = last = afterEntry(entries[entries.length - 1]!.id);
        // a full page: the reader is behind; were entries after where it was trimmed before it read them?
        const lagging = entries.length === READ_COUNT && await this.#trimmedSince(before);
        for (const sub of this.subscribers) {
          if (!sub.live) continue;
          if (lagging) {
            // each user checks from its own position, and reports its gap
            sub.live = false;
            sub.verify = true;
            sub.notify();
          } else sub.take(entries);
        }
      } catch (e) {
        if (this.#over()) return;
        if (!mayHeal(e)) return this.#fail(e);
        // a reconnect or a failover: a new connection (a fresh view of the topology), read on from
        // the last id; the users catch up, to report what the stream trimmed meanwhile
        this.#conn?.close();
        this.#conn = null;
        this.#connId = null;
        for (const sub of this.subscribers) {
          if (sub.live) {
            sub.live = false;
            sub.verify = true;
            sub.notify();
          }
        }
        await sleep(retryDelay(failures++));
      }
    }
  }

  /** Ends every user with `e` (a refusal that sending again cannot mend) and closes. */
  #fail(e: unknown): void {
    for (const sub of this.subscribers) sub.fail(e);
    void this.close();
  }

  /** Whether entries after `p` were trimmed (one `XINFO STREAM`; false when it cannot be asked). */
  async #trimmedSince(p: Position): Promise<boolean> {
    try {
      return trimmedAfter(await this.#c.conn.command(["XINFO", "STREAM", this.#ks.events], this.#ks.meta), p) !== null;
    } catch {
      return false;
    }
  }

  /**
   * One step of `sub`'s catch-up: once the reader has its position, a subscriber at or past it goes
   * live; else one page of the stream after its cursor (`XINFO STREAM` and `XRANGE`, atomically), a
   * gap first when entries after its cursor were trimmed. A short page that reaches the reader's
   * position makes it live. A failed read is tried again after a short wait.
   */
  async catchUp(sub: Subscriber): Promise<void> {
    const last = await Promise.race([this.#positioned, sub.ended]);
    if (sub.stopped || last === undefined) return;
    if (!sub.verify && comparePositions(sub.cursor, this.#last!) >= 0) {
      sub.live = true;
      return;
    }
    sub.verify = false;
    const ks = this.#ks;
    const from = sub.cursor;
    const start = from.index === Infinity ? `(${entryId(from)}` : entryId(from);
    let replies;
    for (let attempt = 0;; attempt++) {
      if (sub.stopped || this.#over()) return;
      try {
        replies = await this.#c.conn.batch(
          [["XINFO", "STREAM", ks.events], ["XRANGE", ks.events, start, "+", "COUNT", String(CATCH_UP_COUNT)]],
          ks.meta,
          true,
        );
        if (replies[1] instanceof Error) throw replies[1];
        break;
      } catch (e) {
        if (sub.stopped || this.#over()) return;
        if (!mayHeal(e)) return sub.fail(e);
        await sleep(retryDelay(attempt));
      }
    }
    if (sub.stopped) return;
    const [info, range] = replies;
    const entries = streamEntries(range);
    const bound = info instanceof Error ? null : trimmedAfter(info, from);
    if (bound !== null) {
      sub.buffer.push({ id: positionText(bound.after), type: "gap", from: positionText(from), first: bound.first });
      sub.cursor = bound.after;
    }
    if (entries.length > 0) {
      sub.take(entries);
      const end = afterEntry(entries[entries.length - 1]!.id);
      if (comparePositions(end, sub.cursor) > 0) sub.cursor = end;
    }
    // a short page read the stream to its end; the reader may have read further meanwhile (then
    // the next page takes that too)
    if (entries.length < CATCH_UP_COUNT && comparePositions(sub.cursor, this.#last!) >= 0) sub.live = true;
    sub.notify();
  }
}

/**
 * Follows `ks`'s events from `from` (a position, or one being read): every item after it, in order,
 * until `signal` aborts, the consumer breaks off or the client closes (then the iteration ends).
 * Its `return()` ends it at once, even while a `next()` waits (an async generator's own would wait
 * for that `next()`).
 */
export function follow<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  from: Position | Promise<Position>,
  signal?: AbortSignal,
): AsyncIterableIterator<QueueEventItem> {
  const ended = new AbortController();
  const gen = following(c, ks, from, [ended.signal, ...(signal === undefined ? [] : [signal])]);
  const it: AsyncIterableIterator<QueueEventItem> = {
    next: () => gen.next(),
    return: (value?: unknown) => {
      ended.abort();
      return gen.return(value as undefined);
    },
    throw: (e?: unknown) => {
      ended.abort();
      return gen.throw(e);
    },
    [Symbol.asyncIterator]: () => it,
  };
  return it;
}

async function* following<P>(
  c: ClientContext<P>,
  ks: Keyspace,
  from: Position | Promise<Position>,
  signals: AbortSignal[],
): AsyncGenerator<QueueEventItem, void, undefined> {
  const start = await from;
  if (signals.some((s) => s.aborted) || c.closed) return;
  const reader = readerOf(c, ks);
  const sub = new Subscriber(start);
  const onAbort = (): void => sub.stop();
  for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
  reader.add(sub);
  try {
    while (!sub.stopped) {
      const item = sub.buffer.shift();
      if (item !== undefined) {
        sub.yielded = itemPosition(item);
        yield item;
        continue;
      }
      if (!sub.live) await reader.catchUp(sub);
      else await Promise.race([sub.waitForNews(), sub.ended]);
    }
  } finally {
    for (const s of signals) s.removeEventListener("abort", onAbort);
    reader.remove(sub);
  }
  if (sub.failure !== undefined) throw sub.failure;
}

/** `events()`'s options. */
export interface EventsOptions {
  /**
   * Where to start: `"now"` (default: what happens after the call), `"start"` (the oldest entry
   * the stream keeps), an entry id `<ms>-<seq>` (after that entry) or an event's `id`
   * `<ms>-<seq>:<i>` (after that event: what was seen is skipped exactly).
   */
  from?: EventsFrom;
  /** Ends the iteration when it aborts (the iterator returns; its reader is released). */
  signal?: AbortSignal;
}

/**
 * See `EchoMQ.events`: checks the options, and for `"now"` reads the stream's last id at once (so
 * "now" is the call, not the first `next()`); each iteration follows from there.
 */
export function events<P>(c: ClientContext<P>, ks: Keyspace, opts: EventsOptions = {}): AsyncIterable<QueueEventItem> {
  if (opts === null || typeof opts !== "object") throw new EchoMQError("options", "events: options must be an object");
  const signal = opts.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new EchoMQError("options", "events: signal must be an AbortSignal");
  const from = fromOption("events", opts.from);
  let start: Position | Promise<Position>;
  if (from === "now") {
    const now = lastPosition(c.conn, ks);
    now.catch(() => {}); // (an iterable never iterated: its read's failure is nobody's)
    start = now;
  } else start = from;
  return { [Symbol.asyncIterator]: () => follow(c, ks, start, signal) };
}
