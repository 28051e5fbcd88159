/**
 * Shared by the reliability suites: a worker client that records every handling of every job —
 * (id, token, worker, claim time, lower bound of the server's lease deadline, extensions, settle
 * time, outcome) in client time — and the checks that read those records:
 *
 * - no id handed out while an earlier claim of it held a valid lease (the server claimed it, under
 *   a higher token, before the earlier holder's lease could have run out or it settled);
 * - no settle or extension of a superseded claim accepted (applied after a later claim of the job);
 * - tokens unique per queue, each acked id acked exactly once.
 *
 * The client claims on a connection of its own (as `EchoMQ.work` does), through the same backend
 * classes and CLAIM decoding as the client, so a worker built on it behaves as `mq.work` does.
 */
import type { GlideReturnType } from "@valkey/valkey-glide";
import {
  type EchoMQ,
  type EchoMQOptions,
  type JobRef,
  LeaseLostError,
  PayloadDecodeError,
  type Settlement,
  type WorkerClient,
} from "../../client.ts";
import { type JobId, Keyspace } from "../../mod.ts";
import { ModuleBackend, ScriptBackend } from "../../lib/client/backend.ts";
import { type BatchContext, claimOnce } from "../../lib/client/batch.ts";
import { Connection } from "../../lib/client/connection.ts";

/** Client and server read the same host clock, each truncated to ms. */
export const CLOCK_SLACK_MS = 2;

/** One handling of one job by one worker, in client time (ms since epoch). */
export interface Handling {
  readonly id: string;
  readonly token: number;
  readonly worker: number;
  readonly attempts: number;
  /** Before the CLAIM was sent: the server's lease deadline is at least this + leaseMs. */
  readonly claimStart: number;
  /** The CLAIM reply arrived: the server claimed it no later than this. */
  readonly claimEnd: number;
  /** Lower bound of the server's lease deadline (raised by each accepted extension). */
  leaseEnd: number;
  /** Start of the last accepted extension (0: none). */
  lastExtend: number;
  /** Before the ack / retry / bury was sent (the server settled it no earlier). */
  settleStart: number;
  settleEnd: number;
  outcome: "ack" | "retry" | "bury" | "refused" | "error" | "none";
}

const UTF8 = new TextDecoder();

function asBytes(x: GlideReturnType): Uint8Array {
  if (x instanceof Uint8Array) return x;
  if (typeof x === "string") return new TextEncoder().encode(x);
  return new Uint8Array(0);
}

/** The CLAIM entry decoding of the client (`EchoMQ.#job`), JSON payloads. */
function context<P>(): BatchContext<P> {
  return {
    impl: undefined as never,
    id: () => {
      throw new Error("not used");
    },
    keyspace: (queue) => new Keyspace(queue),
    encode: (payload) => JSON.stringify(payload),
    job: (ks, entry) => {
      if (!Array.isArray(entry) || entry.length !== 4) throw new Error(`EMQ.CLAIM: unexpected job ${String(entry)}`);
      const id = UTF8.decode(asBytes(entry[0]!)) as JobId;
      const attempts = Number(entry[2]);
      const token = Number(entry[3]);
      try {
        return { id, queue: ks.name, token, attempts, payload: JSON.parse(UTF8.decode(asBytes(entry[1]!))) as P };
      } catch (e) {
        return new PayloadDecodeError("json", { id, queue: ks.name, attempts, token }, e);
      }
    },
  };
}

/** Options of {@link Recorder.client}. */
export interface RecordOptions {
  /** Extensions of these jobs are silently dropped (a stalled heartbeat): their leases run out. */
  dropExtend?: (job: JobRef & { attempts?: number; payload?: unknown }) => boolean;
}

/** Records handlings; builds recording worker clients; checks the records. */
export class Recorder<P> {
  readonly handlings: Handling[] = [];
  readonly #byClaim = new Map<string, Handling>();
  /** Dedicated connections opened, closed by {@link close}. */
  readonly #lines = new Set<{ close(): void }>();

  #get(job: JobRef): Handling | undefined {
    return this.#byClaim.get(`${job.id} ${job.token}`);
  }

  /**
   * A worker client over `mq` (settles, extensions, reaps) that claims on connections of its own
   * opened with `options` (as `mq` was), recording every handling as worker number `worker`.
   */
  client(mq: EchoMQ<P>, worker: number, options: EchoMQOptions<P>, record: RecordOptions = {}): WorkerClient<P> {
    const ctx = context<P>();
    const recorder = this;
    return {
      backend: mq.backend,
      async dedicated(queue: string, blockMs: number) {
        const conn = await Connection.open({
          ...options,
          requestTimeout: (options.requestTimeout ?? 5000) + blockMs,
          inflightRequestsLimit: 2,
        });
        const route = new Keyspace(queue).meta;
        let id: string;
        try {
          id = String(await conn.command(["CLIENT", "ID"], route));
        } catch (e) {
          conn.close();
          throw e;
        }
        const impl = mq.backend === "module" ? new ModuleBackend(conn) : new ScriptBackend(conn);
        const line = {
          async unblock() {
            await (await recorder.#control(options)).command(["CLIENT", "UNBLOCK", id], route);
          },
          async claim(queue: string, count: number, leaseMs: number, waitMs: number) {
            const claimStart = Date.now();
            const claim = await claimOnce(ctx, impl, new Keyspace(queue), count, leaseMs, waitMs);
            const claimEnd = Date.now();
            for (const job of claim.jobs) {
              const j = job instanceof PayloadDecodeError ? job.job : job;
              const h: Handling = {
                id: j.id,
                token: j.token,
                worker,
                attempts: j.attempts,
                claimStart,
                claimEnd,
                leaseEnd: claimStart + leaseMs,
                lastExtend: 0,
                settleStart: Infinity,
                settleEnd: Infinity,
                outcome: "none",
              };
              recorder.handlings.push(h);
              recorder.#byClaim.set(`${j.id} ${j.token}`, h);
            }
            return claim;
          },
          async wake(queue: string, timeoutMs: number) {
            const ks = new Keyspace(queue);
            await conn.command(["BZPOPMIN", ks.wake, String(timeoutMs / 1000)], ks.meta);
          },
          close() {
            recorder.#lines.delete(line);
            impl.close();
            conn.close();
          },
        };
        recorder.#lines.add(line);
        return line;
      },
      async settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>> {
        const hs = settlements.map((s) => recorder.#get(s.job));
        const settleStart = Date.now();
        for (const h of hs) if (h) h.settleStart = settleStart;
        try {
          const results = await mq.settleMany(settlements);
          results.forEach((r, i) => {
            const h = hs[i];
            if (h) h.outcome = r === null ? settlements[i]!.kind : r instanceof LeaseLostError ? "refused" : "error";
          });
          return results;
        } catch (e) {
          for (const h of hs) if (h) h.outcome = "error";
          throw e;
        } finally {
          const settleEnd = Date.now();
          for (const h of hs) if (h) h.settleEnd = settleEnd;
        }
      },
      async extend(jobs: readonly JobRef[], leaseMs: number): Promise<void> {
        const keep = record.dropExtend ? jobs.filter((j) => !record.dropExtend!(j)) : jobs;
        if (keep.length === 0) return;
        const start = Date.now();
        await mq.extend(keep, leaseMs);
        for (const j of keep) {
          const h = recorder.#get(j);
          if (h) {
            h.leaseEnd = Math.max(h.leaseEnd, start + leaseMs);
            h.lastExtend = start;
          }
        }
      },
      progress: (job: JobRef, value: unknown) => mq.progress(job, value),
      reap: (queue: string) => mq.reap(queue),
    };
  }

  #controlConn: Promise<Connection> | null = null;

  /** A connection for CLIENT UNBLOCK (as the client sends it on its own connection). */
  #control(options: EchoMQOptions<P>): Promise<Connection> {
    return (this.#controlConn ??= Connection.open(options));
  }

  /**
   * True when every id an EXTEND of `worker` was refused for had been settled (accepted) by that
   * same worker: the heartbeat extended jobs whose settle was already on its way — the race of the
   * worker's heartbeat with its own settles (see contention.test.ts), not a lease lost.
   */
  raced(worker: number, ids: readonly string[]): boolean {
    return ids.every((id) =>
      this.handlings.some((h) => h.id === id && h.worker === worker && (h.outcome === "ack" || h.outcome === "retry" || h.outcome === "bury"))
    );
  }

  /** Closes dedicated connections a worker left open (after a failed stop). */
  close(): void {
    for (const line of [...this.#lines]) line.close();
    void this.#controlConn?.then((c) => c.close(), () => {});
    this.#controlConn = null;
  }

  /** The handlings per id, in token order (the server's claim order). */
  perId(): Map<string, Handling[]> {
    const out = new Map<string, Handling[]>();
    for (const h of this.handlings) {
      const list = out.get(h.id);
      if (list) list.push(h);
      else out.set(h.id, [h]);
    }
    for (const list of out.values()) list.sort((a, b) => a.token - b.token);
    return out;
  }

  /**
   * The checks. `overlaps`: a later claim of an id made while an earlier claim held a valid lease
   * on it. `staleAccepted`: a settle or extension of a claim accepted although a later claim of
   * the job had been made before it was sent. `ackedTwice`: ids acked more than once.
   * `tokensRepeated`: tokens handed out twice. `reclaimed`: ids handed out again while an earlier
   * holder had not settled yet (its lease had run out).
   */
  check(): {
    overlaps: string[];
    staleAccepted: string[];
    ackedTwice: string[];
    tokensRepeated: number;
    reclaimed: number;
    acked: Set<string>;
  } {
    const overlaps: string[] = [];
    const staleAccepted: string[] = [];
    let reclaimed = 0;
    for (const list of this.perId().values()) {
      for (let i = 0; i < list.length; i++) {
        const a = list[i]!;
        for (let j = i + 1; j < list.length; j++) {
          const b = list[j]!;
          const heldUntil = Math.min(a.leaseEnd, a.settleStart);
          if (b.claimEnd + CLOCK_SLACK_MS < heldUntil) {
            overlaps.push(
              `${a.id}: worker ${b.worker} claimed it (token ${b.token}) at ≤${b.claimEnd} while worker ${a.worker} ` +
                `held it (token ${a.token}) until ≥${heldUntil}`,
            );
          }
          if (b.claimEnd < a.settleStart) reclaimed++;
          const settled = a.outcome === "ack" || a.outcome === "retry" || a.outcome === "bury";
          if (settled && a.settleStart > b.claimEnd + CLOCK_SLACK_MS) {
            staleAccepted.push(`${a.id}: ${a.outcome} of token ${a.token} sent at ${a.settleStart}, after token ${b.token} was claimed (≤${b.claimEnd})`);
          }
          if (a.lastExtend > b.claimEnd + CLOCK_SLACK_MS) {
            staleAccepted.push(`${a.id}: extension of token ${a.token} sent at ${a.lastExtend}, after token ${b.token} was claimed (≤${b.claimEnd})`);
          }
          if (a.outcome === "ack" || a.outcome === "bury") {
            staleAccepted.push(`${a.id}: claimed again (token ${b.token}) after an accepted ${a.outcome} of token ${a.token}`);
          }
        }
      }
    }
    const acks = new Map<string, number>();
    for (const h of this.handlings) if (h.outcome === "ack") acks.set(h.id, (acks.get(h.id) ?? 0) + 1);
    const tokens = new Set(this.handlings.map((h) => h.token));
    return {
      overlaps,
      staleAccepted,
      ackedTwice: [...acks.entries()].filter(([, n]) => n > 1).map(([id]) => id),
      tokensRepeated: this.handlings.length - tokens.size,
      reclaimed,
      acked: new Set(acks.keys()),
    };
  }
}

/** Lists every key of a queue matching `emq:{q}:job:*` through `scan` (a SCAN runner). */
export async function countRows(
  run: (args: string[]) => Promise<unknown>,
  queue: string,
): Promise<number> {
  let cursor = "0";
  let n = 0;
  do {
    const [next, keys] = (await run(["SCAN", cursor, "MATCH", `emq:{${queue}}:job:*`, "COUNT", "1000"])) as [
      unknown,
      unknown[],
    ];
    cursor = String(next);
    n += keys.length;
  } while (cursor !== "0");
  return n;
}

/** Sleeps `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
