/**
 * Where the repository's commands run: a server given by `--url` (lib/cli/target.ts, what the
 * package's CLI has too), or an embedded one this checkout starts (a standalone server, or a
 * local 3-primary cluster, with tools/embedded) and stops afterwards.
 *
 * @module
 */
import { type Address, EchoMQ, type EchoMQOptions } from "../client.ts";
import { moduleBuilt, startCluster, startServer } from "../tools/embedded/mod.ts";
import { connectError, openUrlTarget, type Target, type TargetOptions } from "../lib/cli/target.ts";
import { UsageError } from "../lib/cli/usage.ts";

export type { Target, TargetOptions } from "../lib/cli/target.ts";

/** Connects to `--url`, or starts an embedded server or cluster and connects to it. */
export async function openTarget<P>(opts: TargetOptions, extra: Partial<EchoMQOptions<P>> = {}): Promise<Target<P>> {
  if (opts.url !== undefined) return await openUrlTarget<P>({ ...opts, url: opts.url }, extra);
  const base = { cluster: opts.cluster, backend: opts.backend, requestTimeout: 5000, ...extra };
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
