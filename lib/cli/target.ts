/**
 * Where a command of the CLI runs: a server given by `--url` (`valkey://`, or `valkeys://` for TLS,
 * with `user:password@` when it asks for them), reached with the client. This is all the package's
 * CLI can reach; a repository checkout adds embedded servers (dev/target.ts) on the same
 * {@link Target} shape.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { type Address, ConnectionError, EchoMQ, type EchoMQOptions, type TlsOptions } from "../client/mod.ts";
import { Connection } from "../client/connection.ts";
import { parseUrl } from "./address.ts";
import { ownerInSlots } from "./slots.ts";
import { type ServerFlags, UsageError } from "./usage.ts";

/** A connected client and how to release what was started for it. */
export interface Target<P> {
  /** The client. */
  readonly mq: EchoMQ<P>;
  /** Every address the client was given. */
  readonly addresses: Address[];
  /** Human description: `127.0.0.1:6379`, `embedded standalone on 127.0.0.1:41234`, … */
  readonly description: string;
  /** The address of the primary serving `slot` (cluster: as the cluster says now), or the one server. */
  ownerOf(slot: number): Promise<string>;
  /** Closes the client (and stops any server started for it). */
  close(): Promise<void>;
}

/** Options shared by commands that reach a server: the server flags and the backend. */
export interface TargetOptions extends Partial<ServerFlags> {
  /** A cluster. */
  cluster: boolean;
  /** The backend to force, or auto. */
  backend: "module" | "scripts" | "auto";
}

/** A refusal to connect, as one line naming where. */
export function connectError(e: unknown, where: string): UsageError {
  let text = (e instanceof Error ? e.message : String(e)).split("\n")[0]!;
  // the client's advice names its option; on the command line it is the flag
  if (e instanceof ConnectionError && e.reason === "cluster") {
    text = text.replace("pass cluster: true to connect to a cluster", "add --cluster").replace("connect without cluster: true", "leave out --cluster");
  }
  return new UsageError(`cannot use ${where}: ${text}`);
}

/** The client's `tls` option for `--tls-ca` and `--insecure`; both need a `valkeys://` URL. */
export function tlsOption(flags: Partial<ServerFlags>, tls: boolean): boolean | TlsOptions | undefined {
  if (!tls) {
    if (flags.tlsCa !== undefined || flags.insecure) throw new UsageError("--tls-ca and --insecure go with a valkeys:// (TLS) --url");
    return undefined;
  }
  if (flags.tlsCa === undefined && !flags.insecure) return true;
  let ca: string | undefined;
  if (flags.tlsCa !== undefined) {
    try {
      ca = readFileSync(flags.tlsCa, "utf8");
    } catch (e) {
      throw new UsageError(`cannot read --tls-ca ${flags.tlsCa}: ${(e as Error).message.split("\n")[0]}`);
    }
  }
  return { ...(ca === undefined ? {} : { ca }), ...(flags.insecure ? { insecure: true } : {}) };
}

/** The connection options of `--url` and its flags (TLS from the scheme, credentials from the URL). */
export function urlOptions(flags: Partial<ServerFlags> & { url: string }): { url: string; tls?: boolean | TlsOptions } {
  const tls = tlsOption(flags, parseUrl(flags.url).tls);
  return { url: flags.url, ...(tls === undefined ? {} : { tls }) };
}

/** Connects to the server `--url` names. */
export async function openUrlTarget<P>(opts: TargetOptions & { url: string }, extra: Partial<EchoMQOptions<P>> = {}): Promise<Target<P>> {
  const base = { cluster: opts.cluster, backend: opts.backend, requestTimeout: 5000, ...extra };
  const address = parseUrl(opts.url);
  const where = `${address.host}:${address.port}`;
  const reach = urlOptions(opts);
  let mq: EchoMQ<P>;
  try {
    mq = await EchoMQ.connect<P>({ ...base, ...reach });
  } catch (e) {
    throw connectError(e, where);
  }
  const slots = opts.cluster ? clusterSlots({ ...reach, cluster: true, requestTimeout: 5000 }) : null;
  return {
    mq,
    addresses: [{ host: address.host, port: address.port }],
    description: where,
    ownerOf: async (slot) => (slots === null ? where : await slots.ownerOf(slot)),
    close: async () => {
      slots?.close();
      await mq.close();
    },
  };
}

/**
 * A cluster's slot owners, asked when first needed: `CLUSTER SLOTS` on a connection of its own
 * (the client does not expose raw commands), answered by whichever node the seed reaches.
 */
function clusterSlots(options: Parameters<typeof Connection.open>[0]): { ownerOf(slot: number): Promise<string>; close(): void } {
  let conn: Promise<Connection> | null = null;
  return {
    async ownerOf(slot) {
      conn ??= Connection.open(options, true);
      const reply = await (await conn).command(["CLUSTER", "SLOTS"], "emq");
      return ownerInSlots(reply, slot) ?? `no node (slot ${slot} is not served)`;
    },
    close() {
      void conn?.then((c) => c.close(), () => {});
    },
  };
}
