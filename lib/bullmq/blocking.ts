/**
 * The backend's blocking waits, each on a connection of its own (a blocked call holds its
 * connection): a worker's `waitForJob` — on the module a CLAIM that waits on the server, its job
 * kept for the `moveToActive` that follows; on the scripts a wait on the queue's `wake` key — and
 * `QueueEvents`' `readEvents`, an `XREAD BLOCK` of the queue's events stream.
 *
 * @module
 */
import type { StreamReadRaw } from "bullmq";
import type { Claim } from "../client/batch.ts";
import type { Connection } from "../client/connection.ts";
import { readEntries, streamEntries } from "../client/events.ts";
import { workerClient } from "../client/worker/worker_client.ts";
import type { ClaimLine } from "../client/worker/worker_client.ts";
import { bullEvents } from "./events.ts";
import { drainedAt } from "./reads.ts";
import { jobRefs } from "./rows.ts";
import type { Scope } from "./scope.ts";

/** Entries one stream read returns at most. */
const READ_COUNT = 100;

/** A worker's wait for a job, and the job a module's waiting claim took meanwhile. */
export class JobWait {
  readonly #s: Scope;
  #line: Promise<ClaimLine<unknown>> | null = null;
  #closed = false;
  /** A claim a wait made (module): handed to the next `moveToActive`. */
  kept: Claim<unknown> | null = null;

  /** The wait of backend scope `s`. */
  constructor(s: Scope) {
    this.#s = s;
  }

  #open(blockMs: number): Promise<ClaimLine<unknown>> {
    if (this.#line === null) {
      const opening = (async (): Promise<ClaimLine<unknown>> => {
        const { c } = await this.#s.on();
        // the worker calls of a client: the backend settles through its own functions, so none is used here
        const never = (): never => {
          throw new Error("EchoMQ backend: the wait line settles nothing");
        };
        return await workerClient(c, { settleMany: never, extend: never, progress: never, reap: never })
          .dedicated(this.#s.queue, blockMs);
      })();
      this.#line = opening;
      opening.catch(() => {
        if (this.#line === opening) this.#line = null;
      });
    }
    return this.#line;
  }

  /**
   * BullMQ's `waitForJob`: waits up to `timeoutS` seconds for a job. Resolves BullMQ's marker
   * (score 0: fetch now) when one may be ready, null when the time ran out.
   */
  async wait(timeoutS: number): Promise<{ member: string; score: number } | null> {
    try {
      return await this.#wait(timeoutS);
    } catch (e) {
      if (this.#closed) return null; // the wait a close cut short
      throw e;
    }
  }

  async #wait(timeoutS: number): Promise<{ member: string; score: number } | null> {
    if (this.kept !== null) return { member: "0", score: 0 }; // a job is waiting for its fetch already
    const { c } = await this.#s.on();
    const ms = Math.max(1, Math.round(timeoutS * 1000));
    const line = await this.#open(ms);
    if (c.impl.kind === "module") {
      const claim = await line.claim(this.#s.queue, 1, this.#s.lockMs, ms);
      if (claim.jobs.length === 0) return claim.nextMs > 0 ? { member: "0", score: claim.nextMs } : null;
      this.kept = claim;
      return { member: "0", score: 0 };
    }
    await line.wake(this.#s.queue, ms);
    return { member: "0", score: 0 };
  }

  /** Ends a wait in progress (BullMQ's `disconnectBlocking`). */
  async interrupt(): Promise<void> {
    const line = this.#line;
    if (line === null) return;
    await (await line.catch(() => null))?.unblock().catch(() => undefined);
  }

  /** Closes the line. */
  async close(): Promise<void> {
    this.#closed = true;
    const line = this.#line;
    this.#line = null;
    if (line !== null) (await line.catch(() => null))?.close();
  }
}

/** `QueueEvents`' reads of the queue's events stream, on a connection of its own. */
export class EventsWait {
  readonly #s: Scope;
  readonly #stream: string;
  #conn: Promise<Connection> | null = null;
  #closed = false;
  /** Where `$` (BullMQ's "from now") starts: the stream's last entry when the reader was made ready. */
  #start: Promise<string> | null = null;

  /** The reads of backend scope `s`, answered under BullMQ's stream name `stream`. */
  constructor(s: Scope, stream: string) {
    this.#s = s;
    this.#stream = stream;
  }

  /**
   * Fixes where `$` starts: the stream's last entry now. `QueueEvents` is ready before its first
   * read is on the server; an `XREAD $` would start later, and miss what happened between.
   */
  mark(): Promise<string> {
    return this.#start ??= (async () => {
      const { c, ks } = await this.#s.on();
      const last = await c.conn.command(["XREVRANGE", ks.events, "+", "-", "COUNT", "1"], ks.meta);
      const ids = Array.isArray(last) ? streamEntries(last).map((e) => e.id) : Object.keys((last ?? {}) as object);
      return ids[0] ?? "0-0";
    })();
  }

  /** BullMQ's `readEvents`: the entries after `id` (`$`: from when it was made ready), waiting up to `blockMs`. */
  async read(id: string, blockMs: number): Promise<StreamReadRaw> {
    if (this.#closed) return null;
    const { c, ks } = await this.#s.on();
    if (id === "$") id = await this.mark();
    if (this.#conn === null) this.#conn = c.conn.dedicated(blockMs, `bullmq:qe:${encodeURIComponent(this.#s.queue)}`);
    const conn = await this.#conn;
    let reply;
    try {
      reply = await conn.command(
        ["XREAD", "BLOCK", String(Math.max(1, Math.round(blockMs))), "COUNT", String(READ_COUNT), "STREAMS", ks.events, id],
        ks.meta,
      );
    } catch (e) {
      if (this.#closed) return null; // the read a close cut short: nothing more to read
      throw e;
    }
    const entries = readEntries(reply);
    if (entries.length === 0) return null;
    const reads = {
      jobs: (ids: readonly string[], rows: ReadonlySet<string>) => jobRefs(this.#s, ids, rows),
      drained: (lastId: string) => drainedAt(this.#s, lastId),
    };
    return await bullEvents(this.#stream, entries, reads, Date.now());
  }

  /** Closes the connection (a read waiting on it fails, which `QueueEvents` takes as its close). */
  async close(): Promise<void> {
    this.#closed = true;
    const conn = this.#conn;
    this.#conn = null;
    if (conn !== null) (await conn.catch(() => null))?.close();
  }
}
