/**
 * Which node serves a slot, read from a `CLUSTER SLOTS` reply: a list of
 * `[start, end, [host, port, id, …], replicas…]`, the first node of each range its primary.
 *
 * @module
 */

/** `host:port` of the primary serving `slot` in a `CLUSTER SLOTS` `reply`; `null` when no range holds it. */
export function ownerInSlots(reply: unknown, slot: number): string | null {
  if (!Array.isArray(reply)) return null;
  for (const range of reply) {
    if (!Array.isArray(range) || range.length < 3) continue;
    const [start, end, primary] = range as [unknown, unknown, unknown];
    if (slot < Number(start) || slot > Number(end) || !Array.isArray(primary)) continue;
    const host = String(primary[0]);
    return `${host.includes(":") ? `[${host}]` : host}:${Number(primary[1])}`;
  }
  return null;
}
