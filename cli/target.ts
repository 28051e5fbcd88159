/**
 * Where the CLI's commands run: a server given by `--url` (`valkey://`, or `valkeys://` for TLS,
 * with `user:password@` when it asks for them), or an embedded one it starts (a standalone server,
 * or a local 3-primary cluster) and stops afterwards.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { type Address, EchoMQ, type EchoMQOptions, type TlsOptions } from "../client.ts";
import { Connection } from "../lib/client/connection.ts";
import { moduleBuilt, startCluster, startServer } from "../tools/embedded/mod.ts";
import { parseUrl } from "./address.ts";
import { ownerInSlots } from "./slots.ts";
import { type ServerFlags, UsageError } from "./usage.ts";

/** A connected client and how to release what was started for it. */
export interface Target<P> {
  /** The client. */
  readonly mq: EchoMQ<P>;
  /** Every address the client was given. */
  readonly addresses: Address[];
  /** Human description: `embedded standalone on 127.0.0.1:41234`, … */
  readonly description: string;
  /** The address of the primary serving `slot` (cluster: as the cluster says now), or the one server. */
  ownerOf(slot: number): Promise<string>;
  /** Closes the client and stops any embedded server. */
  close(): Promise<void>;
}

/** Options shared by commands that reach a server: the server flags and the backend. */
export interface TargetOptions extends Partial<ServerFlags> {
  /** A cluster (embedded: 3 primaries on loopback). */
  cluster: boolean;
  /** The backend to force, or auto. */
  backend: "module" | "scripts" | "auto";
}

export { parseUrl } from "./address.ts";

function connectError(e: unknown, where: string): Error {
  const text = e instanceof Error ? e.message : String(e);
  return new UsageError(`cannot use ${where}: ${text.split("\n")[0]}`);
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

/** Connects to `--url`, or starts an embedded server or cluster and connects to it. */
export async function openTarget<P>(opts: TargetOptions, extra: Partial<EchoMQOptions<P>> = {}): Promise<Target<P>> {
  const base = { cluster: opts.cluster, backend: opts.backend, requestTimeout: 5000, ...extra };
  if (opts.url !== undefined) {
    const address = parseUrl(opts.url);
    const where = `${address.host}:${address.port}`;
    const reach = urlOptions({ ...opts, url: opts.url });
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
  if (opts.tlsCa !== undefined || opts.insecure) throw new UsageError("--tls-ca and --insecure go with a valkeys:// (TLS) --url");
  const connect = (addresses: Address[]): Promise<EchoMQ<P>> => EchoMQ.connect<P>({ ...base, addresses });
  // Embedded: load the module unless the scripts are asked for (then prove they run without it).
  const module = opts.backend === "scripts" ? false : undefined;
  if (opts.backend === "module" && !moduleBuilt()) {
    throw new UsageError("--backend module needs the native module: cargo build --release --manifest-path native/Cargo.toml");
  }
  if (opts.cluster) {
    const cluster = await startCluster({ primaries: 3, replicasPerPrimary: 0, module });
    return await onEmbedded(connect, {
      what: "the embedded cluster",
      addresses: () => cluster.addresses.map((a) => ({ ...a })),
      description: `embedded 3-primary cluster on ${cluster.primaries.map((n) => n.server.address).join(", ")}`,
      ownerOf: (slot) => Promise.resolve(cluster.primaryForSlot(slot).server.address),
      stop: () => cluster.stop(),
    });
  }
  const server = await startServer({ module });
  return await onEmbedded(connect, {
    what: "the embedded server",
    addresses: () => [{ host: server.host, port: server.port }],
    description: `embedded valkey-server on ${server.address}`,
    ownerOf: () => Promise.resolve(server.address),
    stop: () => server.stop(),
  });
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

/** A server or cluster started for a target, and what the target says of it. */
interface Embedded {
  /** What it is, for a refusal: `the embedded server`. */
  readonly what: string;
  /** Its addresses, a fresh copy each call. */
  addresses(): Address[];
  readonly description: string;
  ownerOf(slot: number): Promise<string>;
  stop(): Promise<void>;
}

/** Connects to a started server or cluster; stops it when the client cannot connect. */
async function onEmbedded<P>(connect: (addresses: Address[]) => Promise<EchoMQ<P>>, started: Embedded): Promise<Target<P>> {
  try {
    const mq = await connect(started.addresses());
    return {
      mq,
      addresses: started.addresses(),
      description: started.description,
      ownerOf: started.ownerOf,
      close: async () => {
        await mq.close();
        await started.stop();
      },
    };
  } catch (e) {
    await started.stop();
    throw connectError(e, started.what);
  }
}
