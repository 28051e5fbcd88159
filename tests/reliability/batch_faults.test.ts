/**
 * `enqueueMany` under a fault, with nothing forgotten: 50,000 jobs (payload: the input index) from
 * an async generator and from an array, and a fault once the server holds 40 % of them — the
 * queue's server SIGKILLed (AOF `always`) and restarted on the same port with its data, every
 * normal client killed (`CLIENT KILL TYPE normal`), or every client paused past the request timeout
 * (`CLIENT PAUSE 7000 ALL`) — each while a `CLIENT PAUSE … WRITE` holds a command of the call, so
 * that the fault always finds some out (the generator holds input 30,000 until the writes are
 * held, so that it never runs out first) — on the module and the scripts (standalone) and on a
 * 3-primary cluster (module when built). The call rejects with a `BatchError` whose lists and
 * `unreadFrom` account for every input exactly once: |landed| + |unsent| + |unconfirmed| +
 * (total − unreadFrom) = total, each input index below `unreadFrom` in exactly one list, no id
 * twice. Then the recipe its documentation gives — unconfirmed and unsent again with their ids and
 * payloads (a `DuplicateIdError` means it was there), then the rest of the input from `unreadFrom`
 * (the array sliced, the same generator resumed) — leaves every input on the server exactly once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BatchError, DuplicateIdError, EchoMQ } from "../../client.ts";
import { type JobId, keyspace, slot } from "../../mod.ts";
import { Connection } from "../../lib/client/connection.ts";
import { type ClusterHandle, command, infoFields, moduleIfBuilt, type ServerHandle, startCluster, startServer, waitUntil } from "../../tools/embedded/mod.ts";

const TOTAL = 50_000;
const FAULT_AT = 20_000; // jobs on the server when the fault strikes (40 %)
const AOF = ["--appendonly", "yes", "--appendfsync", "always"];
const MODULE = moduleIfBuilt();

type Fault = "restart" | "client-kill" | "pause";
type Source = "generator" | "array";

interface Site {
  readonly name: string;
  readonly backend: "module" | "scripts";
  readonly addresses: Array<{ host: string; port: number }>;
  readonly cluster: boolean;
  /** The server holding queue `q`. */
  serverOf(q: string): ServerHandle;
}

const servers: ServerHandle[] = [];
let cluster: ClusterHandle | undefined;
const sites: Site[] = [];

beforeAll(async () => {
  const standalone = await startServer({ module: MODULE, args: AOF });
  servers.push(standalone);
  const one = { addresses: [{ host: standalone.host, port: standalone.port }], cluster: false, serverOf: () => standalone };
  if (MODULE) sites.push({ name: "module", backend: "module", ...one });
  sites.push({ name: "scripts", backend: "scripts", ...one });
  cluster = await startCluster({ primaries: 3, module: MODULE, args: AOF });
  const c = cluster;
  sites.push({
    name: `cluster (${MODULE ? "module" : "scripts"})`,
    backend: MODULE ? "module" : "scripts",
    addresses: [...c.addresses],
    cluster: true,
    serverOf: (q) => c.primaryForSlot(slot(keyspace(q).meta)).server,
  });
}, 180_000);

afterAll(async () => {
  await Promise.all([...servers.map((s) => s.stop()), cluster?.stop()]);
});

/**
 * Strikes `fault` on `server` once it holds {@link FAULT_AT} jobs of `q`; resolves once the server
 * serves again. First the client's writes are held (`CLIENT PAUSE … WRITE`; `held` is called then)
 * until one is waiting, so that the fault always finds commands of the call out.
 */
async function strike(fault: Fault, server: ServerHandle, q: string, held: () => void): Promise<void> {
  await waitUntil(`${FAULT_AT} jobs on the server`, async () => Number(await command(server.port, ["LLEN", keyspace(q).pending])) >= FAULT_AT, 120_000, 2);
  await command(server.port, ["CLIENT", "PAUSE", "7000", "WRITE"]);
  held();
  await waitUntil(
    "a write held by the pause",
    async () => Number(infoFields(await command(server.port, ["INFO", "clients"]))["blocked_clients"]) > 0,
    10_000,
    5,
  );
  if (fault === "restart") {
    await server.kill();
    await server.restart();
    return;
  }
  if (fault === "client-kill") {
    await command(server.port, ["CLIENT", "KILL", "TYPE", "normal"]);
    await command(server.port, ["CLIENT", "UNPAUSE"]);
    return;
  }
  await command(server.port, ["CLIENT", "PAUSE", "7000", "ALL"]);
  // the pause ends: a command answers at once again
  await waitUntil(
    "the pause to end",
    async () => {
      const t0 = Date.now();
      await command(server.port, ["PING"], 10_000);
      return Date.now() - t0 < 100;
    },
    30_000,
    50,
  );
}

/** Every payload stored in `q` (each job's input index), through `conn`. */
async function stored(conn: Connection, q: string): Promise<number[]> {
  const ks = keyspace(q);
  const ids = ((await conn.command(["LRANGE", ks.pending, "0", "-1"], ks.meta)) as unknown[]).map(String);
  const out: number[] = [];
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await conn.batch(ids.slice(i, i + 1000).map((id) => ["HGET", ks.job(id), "payload"]), ks.meta);
    out.push(...rows.map((r) => Number(String(r))));
  }
  return out;
}

describe("enqueueMany under a fault", () => {
  for (const fault of ["restart", "client-kill", "pause"] as const) {
    for (const source of ["generator", "array"] as const satisfies readonly Source[]) {
      for (const which of ["module", "scripts", "cluster"] as const) {
        test.skipIf(which === "module" && !MODULE)(
          `${which}, ${fault}, ${source}: every input landed, unsent, unconfirmed or not read, and the recipe lands each once`,
          async () => {
            const site = sites.find((s) => s.name.startsWith(which))!;
            const q = `faults-${which}-${fault}-${source}`;
            const mq = await EchoMQ.connect<number>({ addresses: site.addresses, cluster: site.cluster, backend: site.backend });
            const raw = await Connection.open({ addresses: site.addresses, cluster: site.cluster, requestTimeout: 20_000 });
            try {
              let held!: () => void;
              const holding = new Promise<void>((done) => (held = done));
              let next = 0; // the generator's next input
              async function* generate(): AsyncGenerator<number> {
                while (next < TOTAL) {
                  if (next === 30_000) await holding; // the writes are held before the input runs out
                  yield next++;
                }
              }
              const inputs = Array.from({ length: TOTAL }, (_, i) => i);
              const gen = generate();
              const striking = strike(fault, site.serverOf(q), q, held);
              const e = await mq.enqueueMany(q, source === "array" ? inputs : gen).catch((x: unknown) => x);
              await striking;
              expect(e).toBeInstanceOf(BatchError);
              const b = e as BatchError<number>;
              const listed = b.landed.length + b.unsent.length + b.unconfirmed.length;
              const unread = b.unreadFrom === undefined ? 0 : TOTAL - b.unreadFrom;
              const missing = TOTAL - listed - unread;
              console.log(
                `[batch faults] ${site.name}, ${fault}, ${source}: landed ${b.landed.length}, unsent ${b.unsent.length}, ` +
                  `unconfirmed ${b.unconfirmed.length}, not read ${unread} (unreadFrom ${b.unreadFrom}), in none ${missing} ` +
                  `(first failure: ${(b.cause as Error)?.name}: ${(b.cause as Error)?.message?.split("\n")[0]})`,
              );
              expect(missing).toBe(0);
              const ids = [...b.landed, ...b.unsent, ...b.unconfirmed];
              expect(new Set(ids).size).toBe(ids.length);
              // each input below unreadFrom in exactly one list, at its index
              const indexes = [...b.landedAt, ...b.unsentAt, ...b.unconfirmedAt].sort((x, y) => x - y);
              expect(indexes).toEqual(Array.from({ length: b.unreadFrom }, (_, i) => i));
              if (source === "generator") expect(next).toBe(b.unreadFrom); // nothing read past it, and not closed

              // the recipe: unconfirmed and unsent again with their ids, then the rest of the input
              let duplicates = 0;
              for (const [list, at] of [[b.unconfirmed, b.unconfirmedAt], [b.unsent, b.unsentAt]] as const) {
                await Promise.all(list.map(async (id, i) => {
                  expect(b.payloads.get(id)).toBe(at[i]!);
                  try {
                    await mq.enqueue(q, b.payloads.get(id)!, { id: id as JobId });
                  } catch (x) {
                    // only an unconfirmed job may be there already: an unsent one certainly is not
                    if (!(x instanceof DuplicateIdError) || list === b.unsent) throw x;
                    duplicates++;
                  }
                }));
              }
              const rest = await mq.enqueueMany(q, source === "array" ? inputs.slice(b.unreadFrom) : gen);
              expect(rest.length).toBe(TOTAL - b.unreadFrom);
              const onServer = (await stored(raw, q)).sort((x, y) => x - y);
              console.log(
                `[batch faults] ${site.name}, ${fault}, ${source}: after the recipe ${onServer.length} jobs on the server ` +
                  `(${duplicates} unconfirmed were there already)`,
              );
              expect(onServer).toEqual(inputs);
            } finally {
              raw.close();
              await mq.close();
            }
          },
          180_000,
        );
      }
    }
  }
});
