/**
 * The workers a queue page lists (`GET /api/workers`): `EchoMQ.workers()` — one `CLIENT LIST` per
 * primary — read at most once per `maxAgeMs` for every queue and page at once, so a page polling
 * each second costs the server one list a second however many pages are open. A dashboard user
 * without `+client|list` gets the reason instead of an error: the rest of the page works.
 *
 * @module
 */
import type { EchoMQ, WorkerInfo } from "../client/mod.ts";
import { WireError } from "../client/errors.ts";
import type { WorkerRow, WorkersReply } from "./json_api.ts";

/** What the page says when the server refuses `CLIENT LIST` to the dashboard's user. */
export const WORKERS_NEED_PERMISSION = "The worker list needs the CLIENT LIST permission: grant the dashboard's user +client|list.";

function row(w: WorkerInfo): WorkerRow {
  return {
    id: w.id,
    host: w.host,
    pid: w.pid,
    concurrency: w.concurrency,
    app: w.app,
    startedAt: w.startedAt,
    connectedMs: w.connectedMs,
    idleMs: w.idleMs,
    addr: w.addr,
  };
}

/** Every worker connected to `mq`'s server, read at most once per `maxAgeMs`. */
export class WorkerList {
  readonly #mq: EchoMQ<unknown>;
  readonly #maxAgeMs: number;
  #last: { at: number; list: Promise<WorkerInfo[]> } | null = null;

  /** Nothing is read until the first {@link reply}. */
  constructor(mq: EchoMQ<unknown>, maxAgeMs = 1000) {
    this.#mq = mq;
    this.#maxAgeMs = maxAgeMs;
  }

  /** Queue `name`'s workers, oldest first, or why they cannot be listed. */
  async reply(name: string, now: number = Date.now()): Promise<WorkersReply> {
    if (this.#last === null || now - this.#last.at >= this.#maxAgeMs) {
      // a refusal is kept as long as a list: a page that polls does not hammer a refusing server
      this.#last = { at: now, list: this.#mq.workers() };
    }
    try {
      return { name, workers: (await this.#last.list).filter((w) => w.queue === name).map(row) };
    } catch (e) {
      if (e instanceof WireError && e.rule === "noperm") return { name, workers: [], unavailable: WORKERS_NEED_PERMISSION };
      throw e;
    }
  }
}
