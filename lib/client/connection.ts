/**
 * The connection: options, the glide client (standalone or cluster) behind them, and the three
 * ways the client talks to a server — one command, one script, one batch — each routed to the
 * primary that owns the queue's slot and kept under the in-flight limit.
 *
 * @module
 */
import {
  Batch,
  ClusterBatch,
  type Decoder,
  GlideClient,
  type GlideClientConfiguration,
  GlideClusterClient,
  type GlideClusterClientConfiguration,
  type GlideReturnType,
  type GlideString,
  type Script,
} from "@valkey/valkey-glide";
import { EchoMQError } from "./errors.ts";
import { Limiter } from "./limiter.ts";

/** One server address. */
export interface Address {
  /** Host name or IP address. */
  host: string;
  /** Port (default 6379). */
  port?: number;
}

/** Which implementation of the verbs to use. */
export type BackendChoice = "module" | "scripts" | "auto";

/** How to reach the server(s). */
export interface ConnectionOptions {
  /** Standalone: the server (and optionally its replicas). Cluster: any seed nodes. */
  addresses: Address[];
  /** True for a Valkey Cluster (default false). */
  cluster?: boolean;
  /**
   * `module` (the native `EMQ.*` commands, refused at connect if absent), `scripts` (the Lua twin,
   * for managed services that refuse modules) or `auto` (default: the module when every primary
   * has it, else the scripts).
   */
  backend?: BackendChoice;
  /** Milliseconds before a request fails (default 5000; glide's own default of 250 is short). */
  requestTimeout?: number;
  /** TLS: `true`, or `{ insecure: true }` to skip certificate checks (tests only). */
  tls?: boolean | { insecure?: boolean };
  /** ACL credentials. */
  credentials?: { username?: string; password: string };
  /** Requests in flight at once (default 1000, glide's default); extra calls wait their turn. */
  inflightRequestsLimit?: number;
  /** Client name shown by `CLIENT LIST`. */
  clientName?: string;
}

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
  readonly #client: GlideClient | GlideClusterClient;
  readonly #limiter: Limiter;
  #closed = false;

  private constructor(client: GlideClient | GlideClusterClient, cluster: boolean, limit: number, timeout: number) {
    this.#client = client;
    this.cluster = cluster;
    this.inflightLimit = limit;
    this.requestTimeout = timeout;
    // One permit stays free for glide's own bookkeeping requests.
    this.#limiter = new Limiter(Math.max(1, limit - 1));
  }

  /** Connects with `options` (validated first). */
  static async open(options: ConnectionOptions): Promise<Connection> {
    if (!options || !Array.isArray(options.addresses) || options.addresses.length === 0) {
      throw new EchoMQError("options", "connect: options.addresses must list at least one { host, port }");
    }
    const limit = options.inflightRequestsLimit ?? 1000;
    if (!Number.isInteger(limit) || limit < 2) {
      throw new EchoMQError("options", "connect: inflightRequestsLimit must be an integer ≥ 2");
    }
    const base = {
      addresses: options.addresses.map((a) => ({ host: a.host, port: a.port ?? 6379 })),
      requestTimeout: options.requestTimeout ?? 5000,
      inflightRequestsLimit: limit,
      ...(options.tls ? { useTLS: true } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...(options.clientName ? { clientName: options.clientName } : {}),
    };
    const insecure = typeof options.tls === "object" && options.tls.insecure === true;
    const advanced = insecure ? { advancedConfiguration: { tlsAdvancedConfiguration: { insecure: true } } } : {};
    if (options.cluster) {
      const config: GlideClusterClientConfiguration = { ...base, ...advanced };
      return new Connection(await GlideClusterClient.createClient(config), true, limit, base.requestTimeout);
    }
    const config: GlideClientConfiguration = { ...base, ...advanced };
    return new Connection(await GlideClient.createClient(config), false, limit, base.requestTimeout);
  }

  #check(): void {
    if (this.#closed) throw new EchoMQError("closed", "the EchoMQ client is closed");
  }

  /** One command, routed (cluster) to the primary that owns `routeKey`'s slot. */
  command(args: GlideString[], routeKey: string, decoder?: Decoder): Promise<GlideReturnType> {
    this.#check();
    const client = this.#client;
    if (client instanceof GlideClusterClient) {
      const options = { route: { type: "primarySlotKey", key: routeKey }, ...(decoder === undefined ? {} : { decoder }) } as const;
      return this.#limiter.run(() => client.customCommand(args, options) as Promise<GlideReturnType>);
    }
    const options = decoder === undefined ? {} : { decoder };
    return this.#limiter.run(() => client.customCommand(args, options));
  }

  /**
   * One command on every primary (cluster) or the server (standalone): the replies in a list.
   * Used to detect the module.
   */
  async everyPrimary(args: GlideString[]): Promise<GlideReturnType[]> {
    this.#check();
    const client = this.#client;
    if (client instanceof GlideClusterClient) {
      const reply = await this.#limiter.run(() => client.customCommand(args, { route: "allPrimaries" }));
      // A multi-node reply: a record by node address, as an object or a list of { key, value }.
      if (Array.isArray(reply) && reply.every((e) => e !== null && typeof e === "object" && "key" in e && "value" in e)) {
        return (reply as Array<{ value: GlideReturnType }>).map((e) => e.value);
      }
      if (reply !== null && typeof reply === "object" && !Array.isArray(reply) && !(reply instanceof Uint8Array)) {
        return Object.values(reply as Record<string, GlideReturnType>);
      }
      return [reply as GlideReturnType];
    }
    return [await this.#limiter.run(() => client.customCommand(args))];
  }

  /**
   * A script by EVALSHA, with glide's fallback to EVAL on NOSCRIPT; glide routes it (cluster) by
   * its first key, which carries the queue's hashtag.
   */
  script(script: Script, keys: GlideString[], args: GlideString[], decoder?: Decoder): Promise<GlideReturnType> {
    this.#check();
    const client = this.#client;
    return this.#limiter.run(() =>
      client.invokeScript(script, { keys, args, ...(decoder === undefined ? {} : { decoder }) })
    );
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
    return this.#limiter.run(async () => {
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
      return reply as BatchReply;
    });
  }

  /** Closes the glide client. Safe to call more than once. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#client.close();
  }
}
