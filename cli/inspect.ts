/**
 * `emq inspect <queue> --url valkey://host:port [--cluster]`: a queue's counts, the age of its
 * oldest pending job, and its keys with their slot and owning node. Read-only.
 *
 * @module
 */
import { GlideClient, GlideClusterClient, type GlideReturnType } from "@valkey/valkey-glide";
import { assertValidQueue, keyspace } from "../mod.ts";
import { parseUrl } from "./target.ts";
import { parseFlags, UsageError } from "./usage.ts";

/** Finds the `host:port` of the primary serving `slot` in a `CLUSTER SLOTS` reply. */
function ownerIn(slots: GlideReturnType, slot: number): string {
  for (const range of slots as unknown as [number, number, [string, number]][]) {
    if (range[0] <= slot && slot <= range[1]) return `${String(range[2][0])}:${range[2][1]}`;
  }
  return "(no node serves it)";
}

/** Runs `emq inspect`; resolves with the exit code. */
export async function inspect(argv: string[]): Promise<number> {
  const parsed = parseFlags({
    args: argv,
    allowPositionals: true,
    options: { url: { type: "string" }, cluster: { type: "boolean", default: false } },
  });
  const [queue] = parsed.positionals;
  if (parsed.positionals.length !== 1 || parsed.values.url === undefined) {
    throw new UsageError("emq inspect takes a queue name and --url, e.g. emq inspect orders --url valkey://127.0.0.1:6379");
  }
  assertValidQueue(queue);
  const ks = keyspace(queue);
  const address = parseUrl(parsed.values.url);
  const config = { addresses: [address], requestTimeout: 5000 };
  let client: GlideClient | GlideClusterClient;
  try {
    client = parsed.values.cluster ? await GlideClusterClient.createClient(config) : await GlideClient.createClient(config);
  } catch (e) {
    throw new UsageError(`cannot reach ${address.host}:${address.port}: ${(e as Error).message.split("\n")[0]}`);
  }
  try {
    // Every read goes to the primary of the queue's slot (glide cannot route unknown commands).
    const route = { route: { type: "primarySlotKey", key: ks.pending } } as const;
    const call = (args: string[]): Promise<GlideReturnType> =>
      client instanceof GlideClusterClient ? client.customCommand(args, route) : client.customCommand(args);
    const [pending, active, schedule, dead, tail, time] = await Promise.all([
      call(["LLEN", ks.pending]),
      call(["ZCARD", ks.active]),
      call(["ZCARD", ks.schedule]),
      call(["ZCARD", ks.dead]),
      call(["LINDEX", ks.pending, "-1"]),
      call(["TIME"]),
    ]);
    const now = Number((time as string[])[0]) * 1000 + Math.floor(Number((time as string[])[1]) / 1000);
    let oldest = "none pending";
    if (tail !== null) {
      const created = await call(["HGET", `${ks.base}job:${String(tail)}`, "created_ms"]);
      oldest = created === null ? `${String(tail)} (row missing)` : `${String(tail)}, ${((now - Number(created)) / 1000).toFixed(1)}s old`;
    }
    const owner = client instanceof GlideClusterClient
      ? ownerIn(await client.customCommand(["CLUSTER", "SLOTS"], { route: "randomNode" }), ks.slot)
      : `${address.host}:${address.port}`;
    console.log(`queue "${ks.name}": pending ${pending}, active ${active}, schedule ${schedule}, dead ${dead}`);
    console.log(`oldest pending: ${oldest}`);
    console.log(`keys (slot ${ks.slot}, served by ${owner}):`);
    for (const k of [ks.pending, ks.active, ks.schedule, ks.dead, ks.meta, `${ks.base}job:<id>`]) console.log(`  ${k}`);
    return 0;
  } finally {
    client.close();
  }
}
