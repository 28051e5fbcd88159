/**
 * The {@link WorkerClient} of an `EchoMQ` client: what a worker needs of it. Claims and waits go
 * on a dedicated connection of the worker's own (the queue's node), with its server id kept so
 * that `CLIENT UNBLOCK` can end a wait from the main connection, and the server's clock offset
 * (`TIME`) so that server times compare with the server's clock; settles, extensions, progress and
 * reaps go through the client's own methods.
 *
 * A dedicated line is made to answer quickly or not at all. Both measured on this machine's
 * failovers and restarts (tests/reliability/failover_loop.test.ts): a glide cluster client made
 * while a primary is dead sends its first call to the dead node and fails only ~3.9 s later, even
 * when the replica was promoted meanwhile (a new client, made then, is right at once); and a
 * standalone `createClient` started while the server is down retries on glide's own backoff, so
 * it connected up to 2.8 s after the server was back. So a line is probed (`CLIENT ID`, and for
 * the scripts `TIME`, in one round trip) within {@link PROBE_MS}, else closed and made again; and a connection that is
 * slow to open gets another attempt beside it every {@link PROBE_MS} (at most
 * {@link OPENING_AT_ONCE} at once, the first to open wins, the others are closed when they do).
 *
 * @module
 */
import { type Claim, claimOnce, wakeClaim } from "../batch.ts";
import { type SettleClaim, settleClaim } from "../settle_claim.ts";
import { fireDue } from "../schedulers.ts";
import type { Connection } from "../connection.ts";
import type { ClientContext } from "../context.ts";
import { EchoMQError } from "../errors.ts";
import type { JobRef, Settlement } from "../job.ts";
import { penalize } from "../limits.ts";
import { appendLog } from "../logs.ts";
import { children, type ChildState } from "../flows.ts";
import { joinRelay, type RelayOptions } from "../relay.ts";
import type { Tracing } from "../tracing.ts";
import { type WorkerIdentity, workerName } from "./worker_name.ts";

/** The dedicated connection a worker claims and waits on. */
export interface ClaimLine<P> {
  /** One CLAIM of up to `count` jobs, waiting up to `blockMs` (module) when none is ready. */
  claim(queue: string, count: number, leaseMs: number, blockMs: number): Promise<Claim<P>>;
  /**
   * One SETTLE (wire 11): `settlements` (jobs of `queue`) applied, then up to `want` jobs claimed
   * without waiting, in one call. Absent: the worker settles with `settleMany` beside its claims.
   */
  settle?(queue: string, settlements: readonly Settlement[], want: number, leaseMs: number): Promise<SettleClaim<P>>;
  /** Scripts backend: wait up to `timeoutMs` for a marker on the queue's wake key. */
  wake(queue: string, timeoutMs: number): Promise<void>;
  /**
   * Scripts backend, as function libraries: {@link ClaimLine.wake}, then at once on the server a
   * CLAIM of up to `count` jobs (one round trip from a job's arrival to its claim). Absent: wake,
   * then claim. `waitError`: the wait failed (its claim ran all the same).
   */
  wakeClaim?(queue: string, timeoutMs: number, count: number, leaseMs: number): Promise<{ claim: Claim<P>; waitError: Error | null }>;
  /**
   * The server's clock now, in ms since the epoch, as this line last measured it (`TIME`): what a
   * server time such as `Claim.nextMs` is compared with. Absent: this machine's clock.
   */
  serverNow?(): number;
  /**
   * Ends a call waiting on this connection at once, on the server (`CLIENT UNBLOCK`): it answers
   * as on a timeout, so no job is claimed for a connection about to close.
   */
  unblock(): Promise<void>;
  /** Closes the connection (a call waiting on it fails). */
  close(): void;
}

/** What a worker needs of the client (the `EchoMQ` class provides it). */
export interface WorkerClient<P> {
  /** Which backend the client uses. */
  readonly backend: "module" | "scripts";
  /**
   * A connection of its own for claims on `queue` that wait. `signal` aborts when the worker no
   * longer waits for it (a stop, or the watchdog): no attempt should start after that. `worker`
   * is who asks: the connection is named after it (worker_name.ts), so `CLIENT LIST` shows it.
   */
  dedicated(queue: string, blockMs: number, signal?: AbortSignal, worker?: WorkerIdentity): Promise<ClaimLine<P>>;
  /** Settles many jobs; per settlement `null` (applied) or the error that refused it. */
  settleMany(settlements: readonly Settlement[]): Promise<Array<Error | null>>;
  /** Extends leases (refused whole, with `LeaseLostError`, when one is lost). */
  extend(jobs: readonly JobRef[], leaseMs: number): Promise<void>;
  /** Records a job's progress (token-checked). */
  progress(job: JobRef, value: unknown): Promise<void>;
  /** Reaps expired leases of the queue. */
  reap(queue: string): Promise<number>;
  /**
   * Parks the queue — or `lane`, when given — for `ms` (`mq.penalize`): a handler's
   * `RateLimitedError`, for the lane of its job.
   */
  penalize?(queue: string, ms: number, lane?: string): Promise<number>;
  /**
   * Fires the queue's due schedulers once; resolves with the ms to wait before looking again
   * (`idleMs` when the queue has none).
   */
  fireSchedulers?(queue: string, idleMs: number): Promise<number>;
  /** Appends a line to a held job's log (token-checked: `LeaseLostError` when lost). */
  log?(job: JobRef, line: string): Promise<void>;
  /** Starts relaying `queue`'s outbox (flows' entries to other queues) until the returned relay stops. */
  relay?(queue: string, opts: RelayOptions): { stop(): Promise<void> };
  /** The children of flow parent `id` of `queue`, with their states (`job.children()`). */
  children?(queue: string, id: string): Promise<ChildState[]>;
  /**
   * How long one call may take beyond its own wait and still be making progress, in ms: the
   * connection's request timeout plus the window in which it sends again a call refused by a
   * redirection (a resharding, a failover). The watchdog waits this much longer for a claim or a
   * settle than for the claim loop's other steps. Default 0.
   */
  readonly patienceMs?: number;
  /**
   * OpenTelemetry tracing (the client's `tracing`): each handler runs inside a `process <queue>`
   * span linked to the job's producer. Absent or null: no span.
   */
  readonly tracing?: Tracing | null;
}

/** The client's methods a worker calls as they are (the `EchoMQ` facade has them). */
export type WorkerCalls<P> = Pick<WorkerClient<P>, "settleMany" | "extend" | "progress" | "reap">;

/** How long a new line may take to answer its probe, and between two attempts to open one. */
export const PROBE_MS = 1000;
/** Attempts to open a line that may be pending at once. */
export const OPENING_AT_ONCE = 3;
/** How often a line measures the server's clock again (`TIME`, before a claim). */
export const CLOCK_REFRESH_MS = 60_000;

/**
 * Opens a connection with `open`; while one is slow, another attempt starts beside it every
 * `everyMs` (at most `most` pending). Resolves with the first to open (the others are closed as
 * they arrive); rejects with the last error once every attempt has failed, or when `signal`
 * aborts (no attempt starts after that, and those that open are closed).
 */
export function hedged(open: () => Promise<Connection>, everyMs: number, most: number, signal?: AbortSignal): Promise<Connection> {
  return new Promise<Connection>((resolve, reject) => {
    let pending = 0;
    let won = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    signal?.addEventListener("abort", () => {
      if (won) return;
      won = true; // nobody's: whatever opens now is closed
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
    const attempt = (): void => {
      pending++;
      const started = performance.now();
      open().then((conn) => {
        pending--;
        if (won) return conn.close();
        won = true;
        clearTimeout(timer);
        resolve(conn);
      }, (e: unknown) => {
        pending--;
        if (won) return;
        if (pending > 0) {
          // a slow failure gets a fresh attempt in its place (the others are older); a quick one
          // waits for the next tick
          if (performance.now() - started >= everyMs) attempt();
          return;
        }
        clearTimeout(timer);
        reject(e);
      });
    };
    const tick = (): void => {
      if (pending < most) attempt();
      timer = setTimeout(tick, everyMs);
    };
    if (signal?.aborted) return reject(signal.reason);
    attempt();
    timer = setTimeout(tick, everyMs);
  });
}

/** The server's time in ms from a `TIME` reply (`[seconds, microseconds]`). */
function timeMs(reply: unknown): number {
  if (!Array.isArray(reply) || reply.length !== 2) throw new Error(`TIME: unexpected reply ${String(reply)}`);
  return Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
}

/** See `EchoMQ.workerClient`. */
export function workerClient<P>(c: ClientContext<P>, calls: WorkerCalls<P>): WorkerClient<P> {
  return {
    backend: c.impl.kind,
    dedicated: async (queue, blockMs, signal, worker) => {
      // named after the worker (the client's own clientName rides along as its app), for CLIENT LIST
      const name = worker === undefined ? undefined : workerName({ ...worker, app: c.conn.options.clientName ?? "" });
      const conn = await hedged(() => c.conn.dedicated(blockMs, name), PROBE_MS, OPENING_AT_ONCE, signal);
      const impl = c.impl.on(conn);
      const route = c.keyspace(queue).meta;
      // the server's id of the connection this line waits on (the queue's node), and the server's
      // clock (the worker compares the server's times, a claim's next_ms, with it)
      let id = "";
      let offset = 0; // server clock − this machine's
      let measured = 0;
      let timeRefused = false; // a user without TIME (ACL): this machine's clock, as before
      const probe = async (commands: string[][]): Promise<unknown[]> => {
        const sent = Date.now();
        const replies = await conn.batch(commands, route);
        const time = replies.at(-1);
        measured = performance.now();
        if (commands.at(-1)![0] === "TIME") {
          if (time instanceof Error) timeRefused = true;
          else offset = timeMs(time) - (sent + Date.now()) / 2;
        }
        return replies;
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const late = new Promise<never>((_, fail) => {
          timer = setTimeout(() => {
            conn.close(); // the call on it fails now, not when glide gives up
            fail(new EchoMQError("connection", `worker ${JSON.stringify(queue)}: a new claim connection did not answer within ${PROBE_MS} ms`));
          }, PROBE_MS);
        });
        const [clientId] = await Promise.race([probe([["CLIENT", "ID"], ["TIME"]]), late]);
        if (clientId instanceof Error) throw clientId;
        id = String(clientId);
      } catch (e) {
        conn.close();
        throw e;
      } finally {
        clearTimeout(timer);
      }
      return {
        unblock: async () => {
          await c.conn.command(["CLIENT", "UNBLOCK", id], route);
        },
        claim: async (queue, count, leaseMs, waitMs): Promise<Claim<P>> => {
          if (!timeRefused && performance.now() - measured > CLOCK_REFRESH_MS) await probe([["TIME"]]);
          return await claimOnce(c, impl, c.keyspace(queue), count, leaseMs, waitMs);
        },
        settle: async (queue, settlements, want, leaseMs): Promise<SettleClaim<P>> => {
          if (!timeRefused && performance.now() - measured > CLOCK_REFRESH_MS) await probe([["TIME"]]);
          return await settleClaim(c, c.impl, c.keyspace(queue), settlements, want, leaseMs);
        },
        wake: async (queue, timeoutMs) => {
          const ks = c.keyspace(queue);
          await conn.command(["BZPOPMIN", ks.wake, String(timeoutMs / 1000)], ks.meta);
        },
        ...(impl.callAfter === undefined ? {} : {
          wakeClaim: (queue: string, timeoutMs: number, count: number, leaseMs: number) => wakeClaim(c, impl, c.keyspace(queue), timeoutMs, count, leaseMs),
        }),
        serverNow: () => Date.now() + offset,
        close: () => {
          impl.close();
          conn.close();
        },
      };
    },
    // a call may retry a redirection for the whole retry window, each try up to the request timeout
    patienceMs: c.conn.requestTimeout + c.conn.retryWindowMs,
    settleMany: (settlements) => calls.settleMany(settlements),
    extend: (jobs, leaseMs) => calls.extend(jobs, leaseMs),
    progress: (job, value) => calls.progress(job, value),
    reap: (queue) => calls.reap(queue),
    penalize: (queue, ms, lane) => penalize(c, c.keyspace(queue), ms, lane),
    fireSchedulers: (queue, idleMs) => fireDue(c, c.keyspace(queue), idleMs),
    log: (job, line) => appendLog(c, job, line),
    relay: (queue, opts) => joinRelay(c, queue, opts),
    children: (queue, id) => children(c, c.keyspace(queue), id),
    tracing: c.tracing,
  };
}
