/**
 * The eviction warning at connect: a primary whose `maxmemory-policy` may evict keys can lose
 * acknowledged jobs silently (an evicted row or set), so the client says so, once per server.
 *
 * @module
 */
import type { Connection } from "./connection.ts";

/** Addresses already warned about, so that a process warns once per server. */
const warned = new Set<string>();

/** The `maxmemory-policy` of a `CONFIG GET` reply: a list of { key, value } (glide's record), pairs, or a plain object. */
function policy(reply: unknown): string | undefined {
  const pairs: Array<[string, string]> = Array.isArray(reply)
    ? reply.every((e) => e !== null && typeof e === "object" && "key" in e)
      ? (reply as Array<{ key: unknown; value: unknown }>).map((e) => [String(e.key), String(e.value)])
      : reply.flatMap((x, i) => (i % 2 === 0 ? [[String(x), String(reply[i + 1])] as [string, string]] : []))
    : reply && typeof reply === "object"
    ? Object.entries(reply).map(([k, v]) => [k, String(v)])
    : [];
  return pairs.find(([k]) => k === "maxmemory-policy")?.[1];
}

/**
 * Warns (once per server and process) when a primary's `maxmemory-policy` may evict keys: an
 * evicted row or set loses acknowledged jobs silently. Servers that refuse `CONFIG GET` (managed
 * services, restricted users) are not warned about.
 */
export async function warnEviction(conn: Connection, warn: (message: string) => void): Promise<void> {
  const where = conn.options.addresses.map((a) => `${a.host}:${a.port ?? 6379}`).join(",");
  if (warned.has(where)) return;
  let policies: unknown[];
  try {
    policies = await conn.everyPrimary(["CONFIG", "GET", "maxmemory-policy"]);
  } catch {
    return;
  }
  const evicting = policies.map(policy).filter((p): p is string => p !== undefined && p !== "noeviction");
  if (evicting.length === 0) return;
  warned.add(where);
  warn(
    `[echomq] ${where}: maxmemory-policy is ${[...new Set(evicting)].join(", ")}, not noeviction: ` +
      "when memory fills the server may evict job rows and queues, and acknowledged jobs vanish " +
      "silently; set maxmemory-policy noeviction (admissions are then refused while workers drain)",
  );
}
