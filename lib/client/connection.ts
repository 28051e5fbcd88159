/**
 * The connection: options, the glide client (standalone or cluster) behind them, and the three
 * ways the client talks to a server — one command, one script, one batch — each routed to the
 * primary that owns the queue's slot and kept under the in-flight limit. Every glide error comes
 * out in the client's taxonomy (`glide_errors.ts`), at connect and on every call.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import {
  Batch,
  ClusterBatch,
  ClusterScanCursor,
  Decoder,
  GlideClient,
  GlideClusterClient,
  type GlideReturnType,
  type GlideString,
  Logger,
  type Script,
} from "@valkey/valkey-glide";
import { ConnectionError, EchoMQError, serverText } from "./errors.ts";
import { callError, clusterEnabledOf, connectFailure, diagnose, type ProbeConfig, type Site } from "./glide_errors.ts";
import { Limiter } from "./limiter.ts";
import { parseServerUrl, redactUrl, URL_SHAPE } from "./url.ts";

/** One server address. */
export interface Address {
  /** Host name or IP address. */
  host: string;
  /** Port (default 6379). */
  port?: number;
}

/** Which implementation of the verbs to use. */
export type BackendChoice = "module" | "scripts" | "auto";

/** TLS options: which certificate authorities to trust, or no certificate check at all. */
export interface TlsOptions {
  /**
   * PEM text (or bytes) of the certificate authorities the server's certificate must chain to,
   * instead of the system's (a private CA). Read a file yourself: `readFileSync("ca.pem", "utf8")`.
   */
  ca?: string | Uint8Array;
  /** Skip the certificate check entirely (tests only: anyone in the middle is trusted). */
  insecure?: boolean;
}

/** How to reach the server(s). */
export interface ConnectionOptions {
  /**
   * The server as a URL: `valkey://[user:password@]host:port`, `valkeys://…` for TLS (or
   * `redis://`, `rediss://`), the user and password percent-encoded. For a cluster, any one node
   * (with `cluster: true`): the others are discovered. `addresses`, `tls` and `credentials`, when
   * given too, win over what the URL says. A URL that cannot be read is refused (`options`), its
   * password not shown.
   */
  url?: string;
  /** Standalone: the server (and optionally its replicas). Cluster: any seed nodes. Required without `url`. */
  addresses?: Address[];
  /**
   * True for a Valkey Cluster (default false). Refused at connect when it does not match the
   * server: a cluster node (`cluster_enabled:1`) without it, a standalone server with it.
   */
  cluster?: boolean;
  /**
   * `module` (the native `EMQ.*` commands, refused at connect if absent), `scripts` (the Lua twin,
   * for managed services that refuse modules) or `auto` (default: the module when every primary
   * has it, else the scripts).
   */
  backend?: BackendChoice;
  /** Milliseconds before a request fails (default 5000; glide's own default of 250 is short). */
  requestTimeout?: number;
  /**
   * TLS: `true` (the system's certificate authorities), or {@link TlsOptions} (`{ ca }` for a
   * private CA, `{ insecure: true }` to skip the check). A handshake that fails is a
   * `ConnectionError` of reason `tls` at connect.
   */
  tls?: boolean | TlsOptions;
  /**
   * Credentials: `{ password }` for a server's `requirepass` (the `default` user), `{ username,
   * password }` for an ACL user. Refused ones fail `connect` with a `ConnectionError` of reason
   * `auth`; no message or log line shows the password.
   */
  credentials?: { username?: string; password: string };
  /** Requests in flight at once (default 1000, glide's default); extra calls wait their turn. */
  inflightRequestsLimit?: number;
  /** Client name shown by `CLIENT LIST`. */
  clientName?: string;
  /**
   * Milliseconds to reach the server before `connect` fails with {@link ConnectionError}
   * (default 5000).
   */
  connectTimeout?: number;
  /**
   * glide's own log level (`error`, `warn`, `info`, `debug`, `trace` or `off`). Unset: glide is
   * quiet (`off`) unless the application configured glide's `Logger` itself first.
   */
  logLevel?: "error" | "warn" | "info" | "debug" | "trace" | "off";
  /**
   * Milliseconds during which a call refused with a redirection that guarantees it did not run
   * (TRYAGAIN, ASK, MOVED, CLUSTERDOWN, LOADING, READONLY, MASTERDOWN: a resharding or a failover)
   * is sent again, with backoff (default 60000).
   */
  retryWindowMs?: number;
  /** How long a call refused by an unavailable node (CLUSTERDOWN …) is sent again; default `retryWindowMs`. */
  unavailableWindowMs?: number;
}

/** Options with the URL read into them: the addresses always there. */
export type ResolvedOptions = Omit<ConnectionOptions, "url" | "addresses"> & { addresses: Address[] };

/**
 * `options` with its `url` read: the URL's host and port, TLS (`valkeys://`) and credentials,
 * unless `addresses`, `tls` or `credentials` say otherwise. Refused (`options`) without either.
 */
export function resolveOptions(options: ConnectionOptions): ResolvedOptions {
  if (!options || typeof options !== "object") throw new EchoMQError("options", "connect: options must be an object");
  const { url, ...rest } = options;
  if (url === undefined) {
    if (!Array.isArray(rest.addresses) || rest.addresses.length === 0) {
      throw new EchoMQError("options", "connect: options.addresses must list at least one { host, port } (or give url)");
    }
    rest.addresses.forEach(checkAddress);
    return rest as ResolvedOptions;
  }
  const parsed = typeof url === "string" ? parseServerUrl(url) : null;
  if (parsed === null) {
    throw new EchoMQError("options", `connect: cannot read the url ${JSON.stringify(redactUrl(String(url)))}: expected ${URL_SHAPE}`);
  }
  rest.addresses?.forEach(checkAddress);
  return {
    ...rest,
    addresses: rest.addresses?.length ? rest.addresses : [{ host: parsed.host, port: parsed.port }],
    ...(rest.tls === undefined && parsed.tls ? { tls: true } : {}),
    ...(rest.credentials === undefined && parsed.credentials ? { credentials: { ...parsed.credentials } } : {}),
  };
}

/**
 * Refuses an address glide would misread: a host that is not a non-empty string, a host with a port
 * in it (`"127.0.0.1:6379"` would become `127.0.0.1:6379:6379` and fail to resolve), a port that is
 * not 1–65535. An IPv6 literal (`::1`, `[::1]`) keeps its colons.
 */
function checkAddress(a: unknown, i: number): void {
  const at = `connect: addresses[${i}]`;
  if (a === null || typeof a !== "object") throw new EchoMQError("options", `${at} must be { host, port? }`);
  const { host, port } = a as { host?: unknown; port?: unknown };
  if (typeof host !== "string" || host === "") throw new EchoMQError("options", `${at}.host must be a non-empty string`);
  const withPort = /^([^:\[\]]+|\[[0-9A-Fa-f:.]+\]):(\d+)$/.exec(host);
  if (withPort !== null) {
    throw new EchoMQError("options", `${at}.host ${JSON.stringify(host)} holds a port: pass { host: ${JSON.stringify(withPort[1])}, port: ${withPort[2]} }`);
  }
  if (port !== undefined && !(Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535)) {
    throw new EchoMQError("options", `${at}.port must be an integer from 1 to 65535, got ${JSON.stringify(port)}`);
  }
}

/** After this long without a connection, `open` asks once more, quickly, why (see {@link diagnose}). */
const DIAGNOSE_AFTER_MS = 500;

/**
 * Connect failures that waiting for glide's retries cannot mend, or should not wait for: `open`
 * reports them at once. A refused connection (nothing listens on the port, checked twice: glide's
 * attempt and the probe {@link DIAGNOSE_AFTER_MS} later) is one: waiting out `connectTimeout` for a
 * server that is not there only delays the answer.
 */
const PERMANENT: ReadonlySet<string> = new Set(["auth", "tls", "cluster", "refused"]);

/**
 * How long a dedicated connection's call is sent again while its node refuses to serve it at all
 * (CLUSTERDOWN, LOADING, READONLY, MASTERDOWN: a failover in progress, or a slot map gone stale).
 */
export const DEDICATED_UNAVAILABLE_WINDOW_MS = 2000;

/** Server refusals after which a call certainly did not run, so sending it again is safe. */
const RETRYABLE = /^(TRYAGAIN|ASK|MOVED|CLUSTERDOWN|LOADING|READONLY|MASTERDOWN) /;
/** Of those, the ones of a node that does not serve the slot now (not a slot on the move). */
const UNAVAILABLE = /^(CLUSTERDOWN|LOADING|READONLY|MASTERDOWN) /;

/** True when `e` is a server refusal after which the call did not run (a redirection, a failover). */
export function retryable(e: unknown): boolean {
  const text = serverText(e);
  return text !== null && RETRYABLE.test(`${text} `);
}

/**
 * True when a failed call may succeed if sent again: a redirection or a failover (see
 * {@link retryable}), a timeout, a lost connection — anything but a server's refusal of the call
 * itself (NOPERM, WRONGTYPE, an unknown command…), which the same call meets again.
 */
export function mayHeal(e: unknown): boolean {
  return serverText(e) === null || retryable(e);
}

/** The wait before retry `attempt` (0-based): 2, 4, 8 … ms, at most 250 ms. */
export function retryDelay(attempt: number): number {
  return Math.min(250, 2 ** (attempt + 1));
}

/** The CA option as glide takes it (a string or a Buffer). */
function caOf(ca: string | Uint8Array): string | Buffer {
  if (typeof ca === "string") return ca;
  if (ca instanceof Uint8Array) return Buffer.from(ca);
  throw new EchoMQError("options", "connect: tls.ca must be PEM text or bytes");
}

const sleep = (ms: number): Promise<void> => new Promise((wake) => setTimeout(wake, ms));

/** Where a SCAN walk is: the server's cursor (standalone), or glide's cluster scan cursor. */
export type ScanCursor = string | ClusterScanCursor;

/** A non-atomic or atomic batch's outcome: one reply or error per command. */
export type BatchReply = Array<GlideReturnType | Error>;

/** A glide client with the EchoMQ routing rules. */
export class Connection {
  /** True when connected to a cluster. */
  readonly cluster: boolean;
  /** The in-flight limit in force. */
  readonly inflightLimit: number;
  /** Milliseconds before a request fails (the `requestTimeout` in force). */
  readonly requestTimeout: number;
  /** How long a call refused with a redirection is retried. */
  readonly retryWindowMs: number;
  /** How long a call refused by an unavailable node is retried (at most {@link retryWindowMs}). */
  readonly unavailableWindowMs: number;
  /** The options this connection was opened with, its URL read (a dedicated connection reuses them). */
  readonly options: ResolvedOptions;
  readonly #client: GlideClient | GlideClusterClient;
  readonly #limiter: Limiter;
  readonly #site: Site;
  #closed = false;

  private constructor(client: GlideClient | GlideClusterClient, options: ResolvedOptions, limit: number, timeout: number, site: Site) {
    this.#client = client;
    this.options = options;
    this.cluster = options.cluster === true;
    this.inflightLimit = limit;
    this.requestTimeout = timeout;
    this.retryWindowMs = options.retryWindowMs ?? 60_000;
    this.unavailableWindowMs = Math.min(this.retryWindowMs, options.unavailableWindowMs ?? this.retryWindowMs);
    this.#site = site;
    // One permit stays free for glide's own bookkeeping requests.
    this.#limiter = new Limiter(Math.max(1, limit - 1));
  }

  /**
   * Connects with `options` (validated first). A server that cannot be reached within
   * `connectTimeout`, or refuses the connection, is a {@link ConnectionError} naming the address
   * and why (`reason`); so is a `cluster` option that does not match the server (checked with
   * `INFO cluster`, unless the user may not run it). A `dedicated` connection (to servers already
   * checked) skips that check.
   */
  static async open(given: ConnectionOptions, dedicated = false): Promise<Connection> {
    const options = resolveOptions(given);
    const limit = options.inflightRequestsLimit ?? 1000;
    if (!Number.isInteger(limit) || limit < 2) {
      throw new EchoMQError("options", "connect: inflightRequestsLimit must be an integer ≥ 2");
    }
    const timeout = options.requestTimeout ?? 5000;
    const connectTimeout = options.connectTimeout ?? 5000;
    for (const [name, v] of [["requestTimeout", timeout], ["connectTimeout", connectTimeout]] as const) {
      if (!Number.isSafeInteger(v) || v < 1) {
        throw new EchoMQError("options", `connect: ${name} must be a positive integer of milliseconds, got ${String(v)}`);
      }
    }
    if (options.logLevel !== undefined) Logger.setLoggerConfig(options.logLevel);
    else Logger.init("off");
    const addresses = options.addresses.map((a) => ({ host: a.host, port: a.port ?? 6379 }));
    const site: Site = { where: addresses.map((a) => `${a.host}:${a.port}`).join(", "), secret: options.credentials?.password };
    const tls = typeof options.tls === "object" ? options.tls : {};
    const insecure = tls.insecure === true;
    const base: ProbeConfig = {
      addresses,
      requestTimeout: timeout,
      inflightRequestsLimit: limit,
      ...(options.tls ? { useTLS: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...(options.clientName ? { clientName: options.clientName } : {}),
      advancedConfiguration: {
        connectionTimeout: connectTimeout,
        ...(insecure || tls.ca !== undefined
          ? { tlsAdvancedConfiguration: { ...(insecure ? { insecure: true } : {}), ...(tls.ca === undefined ? {} : { rootCertificates: caOf(tls.ca) }) } }
          : {}),
      },
    };
    const cluster = options.cluster === true;
    const timers: Array<ReturnType<typeof setTimeout>> = [];
    const late = new Promise<null>((done) => timers.push(setTimeout(() => done(null), connectTimeout + 1000)));
    // A connect still out after DIAGNOSE_AFTER_MS is failing or slow: one quick attempt says which.
    // A failure that waiting cannot mend (credentials, TLS, the cluster option) ends the connect
    // at once; glide's own retries would take seconds to say so.
    let settled = false;
    const early = new Promise<never>((_, fail) =>
      timers.push(setTimeout(() => {
        void diagnose(site, base, cluster, connectTimeout).then((why) => {
          if (!settled && why !== null && PERMANENT.has(why.reason)) fail(why);
        });
      }, Math.min(DIAGNOSE_AFTER_MS, connectTimeout)))
    );
    const made = cluster ? GlideClusterClient.createClient(base) : GlideClient.createClient(base);
    let client: GlideClient | GlideClusterClient;
    try {
      const first = await Promise.race([made, late, early]);
      // glide has not answered in time: connectFailure(null) asks once more, quickly, why
      if (first === null) throw null;
      client = first;
    } catch (e) {
      // a client made after the deadline is closed when it arrives
      void made.then((c) => c.close(), () => {});
      throw e instanceof ConnectionError ? e : await connectFailure(e, site, base, cluster, connectTimeout);
    } finally {
      settled = true;
      for (const t of timers) clearTimeout(t);
    }
    if (!cluster && !dedicated) {
      const enabled = await client.customCommand(["INFO", "cluster"]).then(clusterEnabledOf, () => undefined);
      if (enabled === true) {
        client.close();
        throw new ConnectionError(
          site.where,
          "cluster",
          `connect: ${site.where} is a cluster node (cluster_enabled:1): pass cluster: true to connect to a cluster`,
        );
      }
    }
    return new Connection(client, options, limit, timeout, site);
  }

  /** glide's error `e` of a call of `command` in the client's taxonomy, for a request timeout of `timeoutMs`. */
  #fail(e: unknown, command: GlideString | undefined, timeoutMs = this.requestTimeout): unknown {
    return callError(e, String(command ?? "").toUpperCase(), this.#site, timeoutMs);
  }

  /** Runs `task` under the in-flight limit; its glide error comes out typed. */
  async #run<T>(command: GlideString | undefined, task: () => Promise<T>, timeoutMs?: number): Promise<T> {
    try {
      return await this.#limiter.run(task);
    } catch (e) {
      throw this.#fail(e, command, timeoutMs);
    }
  }

  /**
   * A connection of its own to the same servers, for calls that block (a waiting CLAIM, BZPOPMIN):
   * a blocked call holds its connection, so it must not share the one other calls pipeline on.
   * Its request timeout is `blockMs` longer. `clientName` names it instead of the options' own (a
   * worker's claim line carries the worker's identity, worker_name.ts).
   */
  dedicated(blockMs: number, clientName?: string): Promise<Connection> {
    // One call at a time goes out on it, but glide 2.5 counts more than our calls against the
    // limit: at 2, a script's first claim after an empty script cache failed with "Reached
    // maximum inflight requests", again and again (tests/package caught it; glide 2.2 did not).
    // A call on it refused by an unavailable node is sent again briefly only: past that it fails,
    // and its owner makes a new connection, which reads the topology afresh — under load, one
    // claim line sent again for the whole 60 s window kept a worker from claiming for 65 s after a
    // failover. A slot on the move (TRYAGAIN, ASK) keeps the whole window.
    return Connection.open({
      ...this.options,
      requestTimeout: this.requestTimeout + blockMs,
      inflightRequestsLimit: 8,
      unavailableWindowMs: Math.min(this.unavailableWindowMs, DEDICATED_UNAVAILABLE_WINDOW_MS),
      ...(clientName === undefined ? {} : { clientName }),
    }, true);
  }

  #check(): void {
    if (this.#closed) throw new EchoMQError("closed", "the EchoMQ client is closed");
  }

  /**
   * One command, routed (cluster) to the primary that owns `routeKey`'s slot; sent again, with
   * backoff, while it is refused with a redirection that guarantees it did not run
   * ({@link retryable}), for at most `retryWindowMs`.
   */
  async command(args: GlideString[], routeKey: string, decoder?: Decoder): Promise<GlideReturnType> {
    const since = Date.now();
    for (let attempt = 0;; attempt++) {
      try {
        return await this.#once(args, routeKey, decoder);
      } catch (e) {
        if (!this.#retries(e, since)) throw e;
        await sleep(retryDelay(attempt));
      }
    }
  }

  /** Whether a call first sent at `since` and refused with `e` is sent again (its window is open). */
  #retries(e: unknown, since: number): boolean {
    if (!retryable(e) || this.#closed) return false;
    const window = UNAVAILABLE.test(`${serverText(e)} `) ? this.unavailableWindowMs : this.retryWindowMs;
    return Date.now() - since <= window;
  }

  #once(args: GlideString[], routeKey: string, decoder?: Decoder): Promise<GlideReturnType> {
    this.#check();
    const client = this.#client;
    if (client instanceof GlideClusterClient) {
      const options = { route: { type: "primarySlotKey", key: routeKey }, ...(decoder === undefined ? {} : { decoder }) } as const;
      return this.#run(args[0], () => client.customCommand(args, options) as Promise<GlideReturnType>);
    }
    const options = decoder === undefined ? {} : { decoder };
    return this.#run(args[0], () => client.customCommand(args, options));
  }

  /**
   * One command on every primary (cluster) or the server (standalone): the replies in a list.
   * Used to detect the module.
   */
  async everyPrimary(args: GlideString[]): Promise<GlideReturnType[]> {
    this.#check();
    const client = this.#client;
    if (client instanceof GlideClusterClient) {
      const reply = await this.#run(args[0], () => client.customCommand(args, { route: "allPrimaries" }));
      // A multi-node reply: a record by node address, as an object or a list of { key, value }.
      if (Array.isArray(reply) && reply.every((e) => e !== null && typeof e === "object" && "key" in e && "value" in e)) {
        return (reply as Array<{ value: GlideReturnType }>).map((e) => e.value);
      }
      if (reply !== null && typeof reply === "object" && !Array.isArray(reply) && !(reply instanceof Uint8Array)) {
        return Object.values(reply as Record<string, GlideReturnType>);
      }
      return [reply as GlideReturnType];
    }
    return [await this.#run(args[0], () => client.customCommand(args))];
  }

  /**
   * A script by EVALSHA, with glide's fallback to EVAL on NOSCRIPT; glide routes it (cluster) by
   * its first key, which carries the queue's hashtag. Retried as {@link Connection.command} is.
   */
  async script(script: Script, keys: GlideString[], args: GlideString[], decoder?: Decoder): Promise<GlideReturnType> {
    const since = Date.now();
    for (let attempt = 0;; attempt++) {
      this.#check();
      const client = this.#client;
      try {
        return await this.#run("EVALSHA", () => client.invokeScript(script, { keys, args, ...(decoder === undefined ? {} : { decoder }) }));
      } catch (e) {
        if (!this.#retries(e, since)) throw e;
        await sleep(retryDelay(attempt));
      }
    }
  }

  /**
   * Commands in one batch (one in-flight request), all on the primary of `routeKey`'s slot.
   * Non-atomic unless `atomic`; each command's error is returned in its place, not thrown.
   * `extraMs` lengthens the request timeout (a batch ending in a blocking `WAIT`); `decoder`
   * decodes every reply of the batch (e.g. `Decoder.Bytes` for payloads).
   */
  batch(commands: GlideString[][], routeKey: string, atomic = false, extraMs = 0, decoder?: Decoder): Promise<BatchReply> {
    this.#check();
    const client = this.#client;
    const timeout = {
      ...(extraMs > 0 ? { timeout: this.requestTimeout + extraMs } : {}),
      ...(decoder === undefined ? {} : { decoder }),
    };
    const timeoutMs = this.requestTimeout + Math.max(0, extraMs);
    return this.#run(commands[0]?.[0], async () => {
      let reply: GlideReturnType[] | null;
      if (client instanceof GlideClusterClient) {
        const batch = new ClusterBatch(atomic);
        for (const c of commands) batch.customCommand(c);
        reply = await client.exec(batch, false, { route: { type: "primarySlotKey", key: routeKey }, ...timeout });
      } else {
        const batch = new Batch(atomic);
        for (const c of commands) batch.customCommand(c);
        reply = await client.exec(batch, false, timeout);
      }
      if (reply === null) throw new Error("batch aborted (WATCH)");
      // each command's own error, typed as a call's
      return reply.map((r, i) => (r instanceof Error ? this.#fail(r, commands[i]?.[0], timeoutMs) : r)) as BatchReply;
    }, timeoutMs);
  }

  /**
   * One SCAN step: up to about `count` keys matching `match` (of Valkey type `type`) from where
   * `cursor` left off (`null`: the start), on the server or — glide's cluster scan — on every
   * primary in turn; `cursor` of the reply is `null` once the walk is done. Keys come as bytes
   * (`Decoder.Bytes`), so a key that is not UTF-8 cannot fail the step.
   */
  async scanStep(
    cursor: ScanCursor | null,
    match: string,
    type: "hash" | "list" | "zset",
    count = 1000,
  ): Promise<{ cursor: ScanCursor | null; keys: Uint8Array[] }> {
    this.#check();
    const client = this.#client;
    const options = { match, count, type: type as never, decoder: Decoder.Bytes };
    if (client instanceof GlideClusterClient) {
      const from = cursor instanceof ClusterScanCursor ? cursor : new ClusterScanCursor();
      const [next, keys] = await this.#run("SCAN", () => client.scan(from, options));
      return { cursor: next.isFinished() ? null : next, keys: keys as Uint8Array[] };
    }
    const [next, keys] = await this.#run("SCAN", () => client.scan(typeof cursor === "string" ? cursor : "0", options));
    const text = String(next);
    return { cursor: text === "0" ? null : text, keys: keys as Uint8Array[] };
  }

  /** Closes the glide client. Safe to call more than once. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client.close();
  }
}
