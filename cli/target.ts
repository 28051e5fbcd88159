/**
 * Where the CLI's commands run: a server given by `--url`, or an embedded one it starts (a
 * standalone server, or a local 3-primary cluster) and stops afterwards.
 *
 * @module
 */
import { type Address, EchoMQ, type EchoMQOptions } from "../client.ts";
import { moduleBuilt, startCluster, startServer } from "../tools/embedded/mod.ts";
import { parseUrl } from "./address.ts";
import { UsageError } from "./usage.ts";

/** A connected client and how to release what was started for it. */
export interface Target<P> {
  /** The client. */
  readonly mq: EchoMQ<P>;
  /** Every address the client was given. */
  readonly addresses: Address[];
  /** Human description: `embedded standalone on 127.0.0.1:41234`, … */
  readonly description: string;
  /** The address of the primary serving `slot` (cluster), or the one server. */
  ownerOf(slot: number): string;
  /** Closes the client and stops any embedded server. */
  close(): Promise<void>;
}

/** Options shared by commands that reach a server. */
export interface TargetOptions {
  /** `valkey://host:port` of a running server; none = start an embedded one. */
  url?: string | undefined;
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

/** Connects to `--url`, or starts an embedded server or cluster and connects to it. */
export async function openTarget<P>(opts: TargetOptions, extra: Partial<EchoMQOptions<P>> = {}): Promise<Target<P>> {
  const connect = async (addresses: Address[], credentials?: EchoMQOptions<P>["credentials"]): Promise<EchoMQ<P>> =>
    await EchoMQ.connect<P>({
      addresses,
      cluster: opts.cluster,
      backend: opts.backend,
      requestTimeout: 5000,
      ...(credentials ? { credentials } : {}),
      ...extra,
    });
  if (opts.url !== undefined) {
    const { host, port, credentials } = parseUrl(opts.url);
    const where = `${host}:${port}`;
    let mq: EchoMQ<P>;
    try {
      mq = await connect([{ host, port }], credentials);
    } catch (e) {
      throw connectError(e, where);
    }
    return { mq, addresses: [{ host, port }], description: where, ownerOf: () => where, close: () => mq.close() };
  }
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
      ownerOf: (slot) => cluster.primaryForSlot(slot).server.address,
      stop: () => cluster.stop(),
    });
  }
  const server = await startServer({ module });
  return await onEmbedded(connect, {
    what: "the embedded server",
    addresses: () => [{ host: server.host, port: server.port }],
    description: `embedded valkey-server on ${server.address}`,
    ownerOf: () => server.address,
    stop: () => server.stop(),
  });
}

/** A server or cluster started for a target, and what the target says of it. */
interface Embedded {
  /** What it is, for a refusal: `the embedded server`. */
  readonly what: string;
  /** Its addresses, a fresh copy each call. */
  addresses(): Address[];
  readonly description: string;
  ownerOf(slot: number): string;
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
