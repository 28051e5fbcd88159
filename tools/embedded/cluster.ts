/**
 * A local Valkey Cluster: cluster-enabled servers on loopback joined with
 * `valkey-cli --cluster create`.
 *
 * @module
 */
import { execFile } from "node:child_process";
import { cliBinary } from "./paths.ts";
import { LOOPBACK } from "../../lib/server/ports.ts";
import { command, infoFields, type RespValue, waitUntil } from "../../lib/server/resp.ts";
import { type ServerHandle, startServer } from "./server.ts";

/** Options for {@link startCluster}. */
export interface ClusterOptions {
  /** Number of primaries (default 3, at least 3 for `valkey-cli --cluster create`). */
  primaries?: number;
  /** Replicas per primary: 0 (default) or 1. */
  replicasPerPrimary?: 0 | 1;
  /** As for `startServer`: a module path, `false`, or omitted for the built native module. */
  module?: string | false | undefined;
  /** Extra `valkey-server` arguments for every node. */
  args?: string[] | undefined;
}

/** One node of a running cluster. */
export interface ClusterNode {
  /** The node's server. */
  readonly server: ServerHandle;
  /** `primary` or `replica`, as the cluster settled them. */
  readonly role: "primary" | "replica";
  /** The node's cluster id (`CLUSTER MYID`). */
  readonly id: string;
  /** Slot ranges `[first, last]` served by this node (empty for replicas). */
  readonly slots: ReadonlyArray<readonly [number, number]>;
}

/** A running cluster. */
export interface ClusterHandle {
  /** Every node, primaries first. */
  readonly nodes: readonly ClusterNode[];
  /** The primaries. */
  readonly primaries: readonly ClusterNode[];
  /** The replicas. */
  readonly replicas: readonly ClusterNode[];
  /** `{ host, port }` of every node, the shape glide's `addresses` option takes. */
  readonly addresses: ReadonlyArray<{ host: string; port: number }>;
  /** The node currently serving `slot` as primary. */
  primaryForSlot(slot: number): ClusterNode;
  /** Stops every node. Safe to call more than once. */
  stop(): Promise<void>;
}

function run(bin: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise<string>((done, fail) => {
    execFile(bin, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) fail(new Error(`${bin} ${args.join(" ")} failed: ${err.message}\n${stdout}\n${stderr}`));
      else done(String(stdout));
    });
  });
}

/** Reads `CLUSTER SLOTS` from `port`: ranges with the primary's port. */
async function slotMap(port: number): Promise<Array<{ first: number; last: number; port: number }>> {
  const reply = await command(port, ["CLUSTER", "SLOTS"]);
  const out: Array<{ first: number; last: number; port: number }> = [];
  if (!Array.isArray(reply)) return out;
  for (const entry of reply as RespValue[][]) {
    const primary = entry[2] as RespValue[];
    out.push({ first: entry[0] as number, last: entry[1] as number, port: primary[1] as number });
  }
  return out;
}

/** What each node says about the cluster, for the error of a cluster that did not form. */
async function formationReport(servers: readonly ServerHandle[]): Promise<string> {
  const lines: string[] = [];
  for (const s of servers) {
    const info = await command(s.port, ["CLUSTER", "INFO"], 1000).then(infoFields, (e: Error) => ({ error: e.message }));
    const fields = ["cluster_state", "cluster_slots_assigned", "cluster_known_nodes", "cluster_current_epoch", "error"]
      .filter((k) => k in info).map((k) => `${k}=${(info as Record<string, string>)[k]}`);
    lines.push(`  ${s.address}: ${fields.join(" ")}`);
  }
  return lines.join("\n");
}

/**
 * Starts the nodes and joins them; on any failure stops every node it started (so nothing is left
 * running, whatever failed) and rethrows with what each node reported.
 */
async function form(opts: ClusterOptions, total: number, perPrimary: number): Promise<ServerHandle[]> {
  const servers: ServerHandle[] = [];
  try {
    for (let i = 0; i < total; i++) {
      servers.push(await startServer({ module: opts.module, args: opts.args, cluster: true }));
    }
    await run(
      cliBinary(),
      ["--cluster", "create", ...servers.map((s) => s.address), "--cluster-replicas", String(perPrimary), "--cluster-yes"],
      60000,
    );
    for (const s of servers) {
      await waitUntil(
        `cluster_state:ok on ${s.address}`,
        async () => {
          const info = infoFields(await command(s.port, ["CLUSTER", "INFO"]));
          return info["cluster_state"] === "ok" && info["cluster_slots_assigned"] === "16384" &&
            info["cluster_known_nodes"] === String(total);
        },
        60000,
        100,
      );
    }
    if (perPrimary > 0) {
      for (const s of servers) {
        await waitUntil(
          `replica link on ${s.address}`,
          async () => {
            const r = infoFields(await command(s.port, ["INFO", "replication"]));
            if (r["role"] === "master") return true;
            return r["master_link_status"] === "up" && r["master_sync_in_progress"] === "0";
          },
          60000,
          100,
        );
      }
    }
    return servers;
  } catch (e) {
    const report = await formationReport(servers);
    await Promise.all(servers.map((s) => s.stop()));
    throw new Error(`${(e as Error).message}\nwhat the nodes said (all stopped):\n${report}`);
  }
}

/**
 * Starts `primaries × (1 + replicasPerPrimary)` cluster-enabled servers on loopback, joins them with
 * `valkey-cli --cluster create … --cluster-yes`, and waits until every node reports
 * `cluster_state:ok` with all 16384 slots assigned, knows every other node, and (with replicas)
 * every replica is linked to its primary. A cluster that does not form is stopped and formed once
 * more on fresh nodes (a busy machine can starve the cluster bus); a second failure rejects with
 * what every node reported, and leaves no node running.
 */
export async function startCluster(opts: ClusterOptions = {}): Promise<ClusterHandle> {
  const nPrimaries = opts.primaries ?? 3;
  const perPrimary = opts.replicasPerPrimary ?? 0;
  if (nPrimaries < 3) throw new Error("valkey-cli --cluster create needs at least 3 primaries");
  const total = nPrimaries * (1 + perPrimary);
  const servers = await form(opts, total, perPrimary).catch((first: Error) =>
    form(opts, total, perPrimary).catch((second: Error) => {
      throw new Error(`the cluster did not form, twice.\nfirst try: ${first.message}\nsecond try: ${second.message}`);
    })
  );
  const stopAll = (): Promise<void> => Promise.all(servers.map((s) => s.stop())).then(() => undefined);
  try {
    const map = await slotMap(servers[0]!.port);
    const nodes: ClusterNode[] = [];
    for (const s of servers) {
      const role = infoFields(await command(s.port, ["INFO", "replication"]))["role"] === "master" ? "primary" as const : "replica" as const;
      const id = String(await command(s.port, ["CLUSTER", "MYID"]));
      const slots = map.filter((m) => m.port === s.port).map((m) => [m.first, m.last] as const);
      nodes.push({ server: s, role, id, slots });
    }
    nodes.sort((a, b) => (a.role === b.role ? 0 : a.role === "primary" ? -1 : 1));
    const primaries = nodes.filter((n) => n.role === "primary");
    let stopped: Promise<void> | null = null;
    return {
      nodes,
      primaries,
      replicas: nodes.filter((n) => n.role === "replica"),
      addresses: nodes.map((n) => ({ host: LOOPBACK, port: n.server.port })),
      primaryForSlot(slot: number): ClusterNode {
        const n = primaries.find((p) => p.slots.some(([a, b]) => slot >= a && slot <= b));
        if (!n) throw new Error(`no primary serves slot ${slot}`);
        return n;
      },
      stop: () => (stopped ??= stopAll()),
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/**
 * The replicas of `c` that follow `primary` now, by each one's `INFO replication` (a failover moves
 * them: the roles `startCluster` settled are not read again).
 */
export async function replicasOf(c: ClusterHandle, primary: ClusterNode): Promise<ClusterNode[]> {
  const out: ClusterNode[] = [];
  for (const r of c.replicas) {
    const info = infoFields(await command(r.server.port, ["INFO", "replication"]));
    if (info["master_port"] === String(primary.server.port)) out.push(r);
  }
  return out;
}
