/**
 * The workers connected to the server, read from `CLIENT LIST` (on a cluster, every primary's):
 * each worker names its claim connection after itself (worker_name.ts), so the list costs no key
 * and is right after a crash — a dead worker's connection, and with it its name, is gone. The
 * user needs `+client|list`; without it the call is refused (`WireError`, rule `noperm`).
 *
 * @module
 */
import type { ClientContext } from "./context.ts";
import { parseWorkerName, type WorkerIdentity } from "./worker/worker_name.ts";

/** A worker connected to the server, as its claim connection shows in `CLIENT LIST`. */
export interface WorkerInfo extends WorkerIdentity {
  /** How long its claim connection has been open, ms (the server's `age`: whole seconds). */
  readonly connectedMs: number;
  /**
   * Since its claim connection's last command — a claim, or an idle worker's wait — ms (the
   * server's `idle`: whole seconds). A worker whose every slot is busy claims nothing, so this
   * grows while it works.
   */
  readonly idleMs: number;
  /** Where the server sees it connect from (`addr`: ip:port). */
  readonly addr: string;
}

/** One `CLIENT LIST` line's fields (`id=3 addr=… name=… age=12 idle=0 …`; a name holds no space). */
function fields(line: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of line.split(" ")) {
    const eq = part.indexOf("=");
    if (eq > 0) out.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return out;
}

/** The workers in `CLIENT LIST` replies (one per node): on a cluster a worker's client shows on every primary, once each. */
export function workersOf(replies: readonly unknown[]): WorkerInfo[] {
  const byId = new Map<string, WorkerInfo>();
  for (const reply of replies) {
    const text = reply instanceof Uint8Array ? new TextDecoder().decode(reply) : String(reply ?? "");
    for (const line of text.split("\n")) {
      const f = fields(line.trim());
      const w = parseWorkerName(f.get("name") ?? "");
      if (w === null) continue;
      const info: WorkerInfo = {
        ...w,
        connectedMs: Number(f.get("age") ?? 0) * 1000,
        idleMs: Number(f.get("idle") ?? 0) * 1000,
        addr: f.get("addr") ?? "",
      };
      const seen = byId.get(w.id);
      // over the nodes: the longest-open connection, and the most recent command
      byId.set(
        w.id,
        seen === undefined ? info : {
          ...seen,
          connectedMs: Math.max(seen.connectedMs, info.connectedMs),
          idleMs: Math.min(seen.idleMs, info.idleMs),
        },
      );
    }
  }
  return [...byId.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : a.startedAt - b.startedAt || (a.id < b.id ? -1 : 1)));
}

/** The workers connected to `c`'s server (every primary of a cluster), by queue then start; only `queue`'s if given. */
export async function workers(c: ClientContext<unknown>, queue?: string): Promise<WorkerInfo[]> {
  const all = workersOf(await c.conn.everyPrimary(["CLIENT", "LIST", "TYPE", "normal"]));
  return queue === undefined ? all : all.filter((w) => w.queue === queue);
}
