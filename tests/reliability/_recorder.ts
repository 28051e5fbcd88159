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
 * The client is `mq`'s own worker client with recording around its calls, so a worker built on it
 * behaves as `mq.work` does.
 */
import { type EchoMQ, type JobRef, LeaseLostError, PayloadDecodeError, type Settlement, type WorkerClient } from "../../client.ts";
import type { Claim } from "../../lib/client/batch.ts";

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
  outcome: "ack" | "retry" | "bury" | "release" | "refused" | "error" | "none";
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
   * `mq`'s own worker client ({@link EchoMQ.workerClient}), recording every handling as worker
   * number `worker`: its claims (on the worker's connection of its own, as `mq.work` does), settles
   * and extensions.
   */
  client(mq: EchoMQ<P>, worker: number, record: RecordOptions = {}): WorkerClient<P> {
    const base = mq.workerClient();
    const recorder = this;
    /** The jobs of a claim that left at `claimStart` and came back at `claimEnd`. */
    const claimed = (claim: Claim<P>, claimStart: number, claimEnd: number, leaseMs: number): void => {
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
    };
    /** `send`'s settles of `settlements`, recorded: when they left and came back, and each outcome. */
    const settling = async <R>(
      settlements: readonly Settlement[],
      send: () => Promise<R>,
      results: (r: R) => ReadonlyArray<Error | null>,
    ): Promise<R> => {
      const hs = settlements.map((s) => recorder.#get(s.job));
      const settleStart = Date.now();
      for (const h of hs) if (h) h.settleStart = settleStart;
      try {
        const r = await send();
        results(r).forEach((e, i) => {
          const h = hs[i];
          if (h) h.outcome = e === null ? settlements[i]!.kind : e instanceof LeaseLostError ? "refused" : "error";
        });
        return r;
      } catch (e) {
        for (const h of hs) if (h) h.outcome = "error";
        throw e;
      } finally {
        const settleEnd = Date.now();
        for (const h of hs) if (h) h.settleEnd = settleEnd;
      }
    };
    return {
      ...base,
      async dedicated(queue: string, blockMs: number) {
        const inner = await base.dedicated(queue, blockMs);
        const line = {
          ...inner,
          async claim(queue: string, count: number, leaseMs: number, waitMs: number) {
            const claimStart = Date.now();
            const claim = await inner.claim(queue, count, leaseMs, waitMs);
            claimed(claim, claimStart, Date.now(), leaseMs);
            return claim;
          },
          // the scripts' wait with its claim pipelined behind it: its claim is recorded as a claim
          ...(inner.wakeClaim === undefined ? {} : {
            async wakeClaim(queue: string, timeoutMs: number, count: number, leaseMs: number) {
              const claimStart = Date.now();
              const r = await inner.wakeClaim!(queue, timeoutMs, count, leaseMs);
              claimed(r.claim, claimStart, Date.now(), leaseMs);
              return r;
            },
          }),
          async settle(queue: string, settlements: readonly Settlement[], want: number, leaseMs: number) {
            const claimStart = Date.now();
            const r = await settling(settlements, () => inner.settle!(queue, settlements, want, leaseMs), (r) => r.results);
            claimed(r.claim, claimStart, Date.now(), leaseMs);
            return r;
          },
          close() {
            recorder.#lines.delete(line);
            inner.close();
          },
        };
        recorder.#lines.add(line);
        return line;
      },
      settleMany: (settlements: readonly Settlement[]): Promise<Array<Error | null>> => settling(settlements, () => base.settleMany(settlements), (r) => r),
      async extend(jobs: readonly JobRef[], leaseMs: number): Promise<void> {
        const keep = record.dropExtend ? jobs.filter((j) => !record.dropExtend!(j)) : jobs;
        if (keep.length === 0) return;
        const start = Date.now();
        await base.extend(keep, leaseMs);
        for (const j of keep) {
          const h = recorder.#get(j);
          if (h) {
            h.leaseEnd = Math.max(h.leaseEnd, start + leaseMs);
            h.lastExtend = start;
          }
        }
      },
    };
  }

  /**
   * True when every id an EXTEND of `worker` was refused for had been settled (accepted) by that
   * same worker: the heartbeat extended jobs whose settle was already on its way — the race of the
   * worker's heartbeat with its own settles (see contention.test.ts), not a lease lost.
   */
  raced(worker: number, ids: readonly string[]): boolean {
    return ids.every((id) =>
      this.handlings.some((h) =>
        h.id === id && h.worker === worker && (h.outcome === "ack" || h.outcome === "retry" || h.outcome === "bury" || h.outcome === "release")
      )
    );
  }

  /** Closes dedicated connections a worker left open (after a failed stop). */
  close(): void {
    for (const line of [...this.#lines]) line.close();
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
          const settled = a.outcome === "ack" || a.outcome === "retry" || a.outcome === "bury" || a.outcome === "release";
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
