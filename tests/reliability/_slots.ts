/**
 * Moving a slot of a cluster (the live migrations of migration.test.ts and events.test.ts): who
 * owns a slot now, and a move from one primary to another — key by key as `valkey-cli --cluster
 * reshard` does (`legacy`, every version), or with one `CLUSTER MIGRATESLOTS` (`atomic`, Valkey 9+).
 */
import { type ClusterHandle, type ClusterNode, command, hasAtomicSlotMigration, RespError, waitUntil } from "../../tools/embedded/mod.ts";

/** How a slot moves: key by key (every version), or atomically (Valkey 9+). */
export type Mover = "legacy" | "atomic";
/** The ways this server can move a slot. */
export const MOVERS: readonly Mover[] = hasAtomicSlotMigration() ? ["legacy", "atomic"] : ["legacy"];
/** Keys per MIGRATE, valkey-cli's default --cluster-pipeline. */
const BATCH = 10;

/** Runs `args` on `port`; a server error throws, naming the command and the node. */
export async function ok(port: number, args: string[]): Promise<unknown> {
  const r = await command(port, args, 30_000);
  if (r instanceof RespError) throw new Error(`${args.slice(0, 4).join(" ")} on ${port}: ${r.message}`);
  return r;
}

/** The primary of `c` owning slot `s` now, as the cluster's own map says (the handle's is from the start). */
export async function owner(c: ClusterHandle, s: number): Promise<ClusterNode> {
  const reply = (await ok(c.primaries[0]!.server.port, ["CLUSTER", "SLOTS"])) as unknown[][];
  for (const e of reply) {
    if ((e[0] as number) <= s && s <= (e[1] as number)) {
      const port = (e[2] as unknown[])[1] as number;
      return c.primaries.find((p) => p.server.port === port)!;
    }
  }
  throw new Error(`slot ${s} unassigned`);
}

/**
 * Moves slot `s` of `c` from `from` to `to` by `mover`, and waits until every primary maps it to
 * `to`. Returns the keys moved and the server calls it took: MIGRATE calls (legacy), or polls of
 * the migration's status (atomic).
 */
export async function migrate(c: ClusterHandle, mover: Mover, s: number, from: ClusterNode, to: ClusterNode): Promise<{ keys: number; calls: number }> {
  const moved = mover === "legacy" ? await migrateLegacy(c, s, from, to) : await migrateAtomic(s, from, to);
  for (const p of c.primaries) {
    await waitUntil(
      `node ${p.server.port} to map slot ${s} to ${to.server.port}`,
      async () => {
        const reply = (await ok(p.server.port, ["CLUSTER", "SLOTS"])) as unknown[][];
        return reply.some((e) => (e[0] as number) <= s && s <= (e[1] as number) && (e[2] as unknown[])[1] === to.server.port);
      },
      30_000,
      10,
    );
  }
  return moved;
}

/**
 * Moves slot `s` with one `CLUSTER MIGRATESLOTS` and waits for the source to report the export
 * done (`state success`); the keys are counted before.
 */
async function migrateAtomic(s: number, from: ClusterNode, to: ClusterNode): Promise<{ keys: number; calls: number }> {
  const keys = Number(await ok(from.server.port, ["CLUSTER", "COUNTKEYSINSLOT", String(s)]));
  await ok(from.server.port, ["CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", String(s), String(s), "NODE", to.id]);
  let polls = 0;
  await waitUntil(
    `the atomic migration of slot ${s} to finish`,
    async () => {
      polls++;
      const jobs = (await ok(from.server.port, ["CLUSTER", "GETSLOTMIGRATIONS"])) as unknown[][];
      const mine = jobs.map((j) => {
        const f = new Map<string, unknown>();
        for (let i = 0; i + 1 < j.length; i += 2) f.set(String(j[i]), j[i + 1]);
        return f;
      }).filter((f) => String(f.get("slot_ranges")) === `${s}-${s}` && String(f.get("target_node")) === to.id);
      const last = mine.at(-1);
      if (last !== undefined && String(last.get("state")) === "failed") {
        throw new Error(`CLUSTER MIGRATESLOTS of slot ${s} failed: ${String(last.get("message"))}`);
      }
      return last !== undefined && String(last.get("state")) === "success";
    },
    60_000,
    10,
  );
  return { keys, calls: polls };
}

/** Moves slot `s` from `from` to `to` the way valkey-cli does; returns keys moved and MIGRATE calls. */
async function migrateLegacy(c: ClusterHandle, s: number, from: ClusterNode, to: ClusterNode): Promise<{ keys: number; calls: number }> {
  await ok(to.server.port, ["CLUSTER", "SETSLOT", String(s), "IMPORTING", from.id]);
  await ok(from.server.port, ["CLUSTER", "SETSLOT", String(s), "MIGRATING", to.id]);
  let keys = 0;
  let calls = 0;
  for (;;) {
    const batch = (await ok(from.server.port, ["CLUSTER", "GETKEYSINSLOT", String(s), String(BATCH)])) as string[];
    if (batch.length === 0) break;
    await ok(from.server.port, ["MIGRATE", "127.0.0.1", String(to.server.port), "", "0", "10000", "KEYS", ...batch]);
    keys += batch.length;
    calls++;
  }
  await ok(to.server.port, ["CLUSTER", "SETSLOT", String(s), "NODE", to.id]);
  await ok(from.server.port, ["CLUSTER", "SETSLOT", String(s), "NODE", to.id]);
  for (const p of c.primaries) {
    if (p.id !== from.id && p.id !== to.id) await ok(p.server.port, ["CLUSTER", "SETSLOT", String(s), "NODE", to.id]);
  }
  return { keys, calls };
}
