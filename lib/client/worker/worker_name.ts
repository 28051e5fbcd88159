/**
 * A worker's identity, written as the client name of its claim connection (`CLIENT SETNAME`,
 * which glide sends on every connect and reconnect): so an operator's `CLIENT LIST` tells which
 * workers serve which queue, with no key of its own to write, expire or clean up after a crash —
 * the name leaves with the connection. `+client|setname` is already in what a worker's ACL user
 * needs to connect (docs/PACKAGE.md).
 *
 * The name is `emq-worker:1:<id>:<concurrency>:<started>:<pid>:<host>:<app>:<queue>`: `1` the
 * format's version, `started` ms since the epoch in base 36, the text fields percent-encoded
 * (a client name may hold only the printable ASCII from `!` to `~`; encodeURIComponent gives
 * nothing else, and no `:`), `app` the client's own `clientName` (empty without one).
 *
 * @module
 */
import { hostname } from "node:os";
import process from "node:process";

/** What a worker tells about itself on its claim connection. */
export interface WorkerIdentity {
  /** A random id of the worker, for its lifetime (8 Base62 characters). */
  readonly id: string;
  /** The queue it works. */
  readonly queue: string;
  /** Its `concurrency` option: handlers it runs at once. */
  readonly concurrency: number;
  /** When it started, ms since the epoch (its machine's clock). */
  readonly startedAt: number;
  /** Its process's id. */
  readonly pid: number;
  /** Its machine's host name (empty when the runtime may not read it). */
  readonly host: string;
  /** The client's `clientName` option (empty without one): which application runs it. */
  readonly app: string;
}

/** The prefix every worker's connection name starts with (and the format's version). */
export const WORKER_NAME_PREFIX = "emq-worker:1:";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A new worker id: 8 random Base62 characters (47 bits; collisions only matter for display). */
export function newWorkerId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => BASE62[b % 62]).join("");
}

/** This machine's host name, or "" where the runtime may not read it (Deno without --allow-sys). */
function thisHost(): string {
  try {
    return hostname();
  } catch {
    return "";
  }
}

/** The identity of a worker of this process starting now; `app` is the client's `clientName`. */
export function workerIdentity(queue: string, concurrency: number, app = ""): WorkerIdentity {
  return { id: newWorkerId(), queue, concurrency, startedAt: Date.now(), pid: process.pid, host: thisHost(), app };
}

/** The claim connection's client name for `w`. */
export function workerName(w: WorkerIdentity): string {
  const e = encodeURIComponent;
  return `${WORKER_NAME_PREFIX}${e(w.id)}:${w.concurrency}:${w.startedAt.toString(36)}:${w.pid}:${e(w.host)}:${e(w.app)}:${e(w.queue)}`;
}

function decoded(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** The identity in a client name, or null when it is not a worker's name of this format. */
export function parseWorkerName(name: string): WorkerIdentity | null {
  if (!name.startsWith(WORKER_NAME_PREFIX)) return null;
  const f = name.slice(WORKER_NAME_PREFIX.length).split(":");
  if (f.length !== 7 || !/^\d{1,9}$/.test(f[1]!) || !/^[0-9a-z]{1,11}$/.test(f[2]!) || !/^\d{1,10}$/.test(f[3]!)) return null;
  const [id, host, app, queue] = [f[0]!, f[4]!, f[5]!, f[6]!].map(decoded);
  if (id == null || host == null || app == null || queue == null) return null;
  return { id, queue, concurrency: Number(f[1]), startedAt: parseInt(f[2]!, 36), pid: Number(f[3]), host, app };
}
