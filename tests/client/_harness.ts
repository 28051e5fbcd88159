/**
 * Shared pieces of the client suites: servers per topology, raw wire calls for either backend,
 * keyspace dumps with time fields normalised, and DEBUG DIGEST.
 */
import { afterAll, beforeAll } from "bun:test";
import { type JobId, keyspace } from "../../mod.ts";
import { EchoMQ, type EchoMQOptions, type Settlement, type WorkerClient } from "../../client.ts";
import { Connection } from "../../lib/client/connection.ts";
import { serverText } from "../../lib/client/errors.ts";
import { SCRIPTS } from "../../lib/lua/mod.ts";
import type { Verb } from "../../lib/wire/mod.ts";
import { type ClusterHandle, moduleBuilt, modulePath, type ServerHandle, startCluster, startServer, waitUntil } from "../../tools/embedded/mod.ts";

/** Which backend a combo runs. */
export type BackendKind = "scripts" | "module";
/** Which topology a combo runs on. */
export type Topology = "standalone" | "cluster";

/** True when libemq.so is built and, loaded into a server, registers the EMQ.* commands. */
async function moduleWorks(): Promise<boolean> {
  if (!moduleBuilt()) return false;
  let server: ServerHandle | undefined;
  try {
    server = await startServer({ module: modulePath() });
    const conn = await Connection.open({ addresses: [{ host: server.host, port: server.port }] });
    try {
      const info = (await conn.command(["COMMAND", "INFO", "emq.enqueue"], "x")) as unknown[];
      return Array.isArray(info) && info[0] !== null;
    } finally {
      conn.close();
    }
  } catch {
    return false;
  } finally {
    await server?.stop();
  }
}

/** Whether the module backend is tested in this run (see {@link moduleWorks}). */
export const MODULE_WORKS: boolean = await moduleWorks();
if (!MODULE_WORKS) {
  console.warn(
    moduleBuilt()
      ? "[tests/client] libemq.so registers no EMQ.* commands yet: module backend skipped"
      : "[tests/client] libemq.so not built: module backend skipped",
  );
}

/**
 * The backends to test: scripts always, the module when it is built and registers its commands;
 * `EMQ_BACKENDS=scripts` (or `module`) keeps one of them (a run while the other is rebuilt).
 */
export const BACKENDS: BackendKind[] = (MODULE_WORKS ? ["scripts", "module"] as BackendKind[] : ["scripts" as BackendKind]).filter((b) =>
  (process.env["EMQ_BACKENDS"] ?? "scripts,module").split(",").map((s) => s.trim()).includes(b)
);
/**
 * The topologies to test: both, or those listed in `EMQ_TOPOLOGIES` (comma-separated, e.g.
 * `standalone` for the shorter run under Deno).
 */
export const TOPOLOGIES: Topology[] = (["standalone", "cluster"] as const).filter((t) =>
  (process.env["EMQ_TOPOLOGIES"] ?? "standalone,cluster").split(",").map((s) => s.trim()).includes(t)
);

/** Running servers of one topology and how to reach them. */
export interface Site {
  readonly topology: Topology;
  readonly addresses: Array<{ host: string; port: number }>;
  readonly cluster: boolean;
  stop(): Promise<void>;
}

/** Starts a standalone server or a 3-primary cluster, with the module loaded when it is built. */
export async function startSite(topology: Topology, withModule: boolean = MODULE_WORKS): Promise<Site> {
  const module = withModule ? modulePath() : false;
  if (topology === "standalone") {
    const s: ServerHandle = await startServer({ module });
    return { topology, addresses: [{ host: s.host, port: s.port }], cluster: false, stop: () => s.stop() };
  }
  const c: ClusterHandle = await startCluster({ primaries: 3, module });
  return { topology, addresses: [...c.addresses], cluster: true, stop: () => c.stop() };
}

/** One standalone server for a file's tests: started before them, stopped after; the function reads it. */
export function useStandalone(): () => Site {
  let site: Site | undefined;
  beforeAll(async () => {
    site = await startSite("standalone");
  }, 60_000);
  afterAll(async () => {
    await site?.stop();
  });
  return () => site!;
}

/** A raw connection to a site (routing by key in cluster mode). */
export function rawConnection(site: Site): Promise<Connection> {
  return Connection.open({ addresses: site.addresses, cluster: site.cluster, requestTimeout: 10000 });
}

/** The sites {@link useSites} starts, by topology, and a raw connection to each. */
export interface Sites {
  readonly sites: Map<Topology, Site>;
  readonly raws: Map<Topology, Connection>;
}

/**
 * Starts one site per topology (and a raw connection to each) before the enclosing suite's tests,
 * and stops them after. Call at the top level of a test file or inside a `describe`.
 */
export function useSites(): Sites {
  const sites = new Map<Topology, Site>();
  const raws = new Map<Topology, Connection>();
  beforeAll(async () => {
    const started = await Promise.all(TOPOLOGIES.map((t) => startSite(t)));
    for (const s of started) {
      sites.set(s.topology, s);
      raws.set(s.topology, await rawConnection(s));
    }
  }, 120_000);
  afterAll(async () => {
    for (const c of raws.values()) c.close();
    await Promise.all([...sites.values()].map((s) => s.stop()));
  });
  return { sites, raws };
}

/** One backend on one topology: what one `describe` of a client suite runs on. */
export interface Combo {
  readonly backend: BackendKind;
  readonly topology: Topology;
  /** How the combo prints, e.g. `scripts/cluster` (see {@link comboName}). */
  readonly name: string;
}

/** Every combo of this run, topology by topology: the suites' `describe`s, in their order. */
export const COMBOS: readonly Combo[] = TOPOLOGIES.flatMap((topology) =>
  BACKENDS.map((backend) => ({ backend, topology, name: comboName(backend, topology) }))
);

/** Connects clients of `combo`'s backend to its site; the caller closes each. */
export function connector(
  { sites }: Sites,
  combo: Combo,
): <P>(extra?: Partial<EchoMQOptions<P>>) => Promise<EchoMQ<P>> {
  return <P>(extra: Partial<EchoMQOptions<P>> = {}) => {
    const site = sites.get(combo.topology)!;
    return EchoMQ.connect<P>({ addresses: site.addresses, cluster: site.cluster, backend: combo.backend, ...extra });
  };
}

/** What {@link useClient} hands a suite; `mq` and `raw` are set before its first test. */
export interface SuiteClient<P> {
  /** The suite's client: `options` on the combo's backend and site. */
  readonly mq: EchoMQ<P>;
  /** The site's raw connection, to read and write the keyspace behind the client's back. */
  readonly raw: Connection;
  /** Another client of the combo's backend on its site; the caller closes it. */
  connect<Q>(extra?: Partial<EchoMQOptions<Q>>): Promise<EchoMQ<Q>>;
  /** Fields of job `id`'s row in queue `q`, each as a string (`"null"` for a missing one). */
  row(q: string, id: string, ...fields: string[]): Promise<string[]>;
}

/**
 * Connects one client for the enclosing `describe` (before its tests; closed after them) with
 * `options` on `combo`. Call inside the combo's `describe`, so that each combo gets its own client
 * (and its own `newId` source, when `options` make one there).
 */
export function useClient<P>(sites: Sites, combo: Combo, options: Partial<EchoMQOptions<P>> = {}): SuiteClient<P> {
  const connect = connector(sites, combo);
  const suite = {
    connect,
    async row(q: string, id: string, ...fields: string[]): Promise<string[]> {
      const K = keyspace(q);
      return ((await suite.raw.command(["HMGET", K.job(id as never), ...fields], K.meta)) as unknown[]).map(String);
    },
  } as { mq: EchoMQ<P>; raw: Connection } & Pick<SuiteClient<P>, "connect" | "row">;
  beforeAll(async () => {
    suite.raw = sites.raws.get(combo.topology)!;
    suite.mq = await connect<P>(options);
  });
  afterAll(async () => {
    await suite.mq.close();
  });
  return suite;
}

/** A reply, or the server's error text. */
export type Outcome = { ok: unknown } | { err: string };

export function plain(x: unknown): unknown {
  if (x instanceof Uint8Array) return new TextDecoder().decode(x);
  if (Array.isArray(x)) return x.map(plain);
  return x;
}

/** Runs `cmd` and returns its reply or the server's error text (glide's wording undone). */
export async function outcome(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: plain(await run()) };
  } catch (e) {
    const text = serverText(e);
    if (text === null) throw e;
    return { err: text };
  }
}

/**
 * A raw wire call: `EMQ.<verb> numkeys keys… args…` (module) or `EVAL <lua> numkeys keys… args…`
 * (scripts), routed by the first key. `numkeys` defaults to the number of keys.
 */
export function wire(
  conn: Connection,
  backend: BackendKind,
  verb: Verb,
  keys: string[],
  args: Array<string | Uint8Array>,
  numkeys: number = keys.length,
): Promise<Outcome> {
  return outcome(() => conn.command(wireArgv(backend, verb, keys, args, numkeys), keys[0] ?? "emq"));
}

/** The argv of a raw wire call: `EMQ.<verb> …` (module) or `EVAL <lua> …` (scripts). */
export function wireArgv(
  backend: BackendKind,
  verb: Verb,
  keys: string[],
  args: Array<string | Uint8Array>,
  numkeys: number = keys.length,
): Array<string | Buffer> {
  const head = backend === "module" ? [`EMQ.${verb}`] : ["EVAL", SCRIPTS[verb]];
  return [...head, String(numkeys), ...keys, ...args].map((a) => (typeof a === "string" ? a : Buffer.from(a)));
}

/**
 * Raw wire calls of one slot sent back to back in one non-atomic batch: the server runs them
 * microseconds apart (twins then see the same clock boundary). `atomic`: one MULTI/EXEC, nothing
 * else between them, and the server's TIME (the scripts' clock) the same ms for all of them.
 * Each reply or error text.
 */
export async function wireBatch(conn: Connection, route: string, calls: Array<Array<string | Buffer>>, atomic = false): Promise<Outcome[]> {
  const replies = await conn.batch(calls, route, atomic);
  return replies.map((r) => {
    if (!(r instanceof Error)) return { ok: plain(r) };
    const text = serverText(r);
    if (text === null) throw r;
    return { err: text };
  });
}

/** DEBUG DIGEST of the node that owns `key`'s slot (the whole server when standalone). */
export async function digest(conn: Connection, key: string): Promise<string> {
  return String(await conn.command(["DEBUG", "DIGEST"], key));
}

/**
 * Fields derived from now: the times, and the tokens (each claim's start above now × 1000); `until`
 * is an event's time (lib/wire/events.ts).
 */
const TIME_FIELDS = new Set(["created_ms", "due_ms", "deadline_ms", "buried_ms", "cancelled_ms", "finished_ms", "token", "tokens", "parked", "until"]);
const NOW_FLOOR = 1e12; // times derived from now are past 2001; test constants stay below

function normaliseTime(x: string): string {
  return Number(x) >= NOW_FLOOR ? "<now>" : x;
}

/** Pairs from a RESP3 map / WITHSCORES reply as glide returns it ({key, value} list, pairs or flat). */
export function entries(reply: unknown): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (!Array.isArray(reply)) {
    if (reply && typeof reply === "object") {
      for (const [k, v] of Object.entries(reply as Record<string, unknown>)) out.push([k, String(v)]);
    }
    return out;
  }
  for (let i = 0; i < reply.length; i++) {
    const x = reply[i] as unknown;
    if (Array.isArray(x)) out.push([String(plain(x[0])), String(plain(x[1]))]);
    else if (x && typeof x === "object" && "key" in x) {
      const e = x as { key: unknown; value: unknown };
      out.push([String(plain(e.key)), String(plain(e.value))]);
    } else {
      out.push([String(plain(x)), String(plain(reply[i + 1]))]);
      i++;
    }
  }
  return out;
}

/**
 * Every key of queue `queue` (one slot) with its contents: hashes as sorted field lists, lists in
 * order, sorted sets in order with now-derived scores and time fields normalised. The queue name
 * is replaced by `Q` so that dumps of differently named queues compare.
 */
/** Runs one command routed by a key: a Connection, or any function (e.g. a raw RESP helper). */
/**
 * A history hash (`metrics`) with its minutes (now ÷ 60000) written relative to its `last` (`m0`,
 * `m-1`, …) and its latency histograms as their job counts (their buckets and sums come from the
 * clock and the tokens).
 */
function history(pairs: string[][]): Record<string, string> {
  const last = Number(pairs.find(([f]) => f === "last")?.[1]);
  const rel = (m: string): string => (/^\d+$/.test(m) && Number.isFinite(last) ? `m${Number(m) - last}` : m);
  const jobs = (v: string): string => `${v.split(" ").slice(0, -1).reduce((n, x) => n + Number(x), 0)} jobs`;
  const field = ([f, v]: string[]): string[] =>
    f === "last" ? [f, "m0"] : f === "first" ? [f, rel(v!)] : f === "run" || f === "wait" ? [f, jobs(v!)] : [rel(f!), v!];
  return Object.fromEntries(pairs.map(field).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)));
}

export type Runner = Connection | ((args: string[], routeKey: string) => Promise<unknown>);

export async function dump(via: Runner, queue: string, normalise = true): Promise<Record<string, unknown>> {
  const time = normalise ? normaliseTime : (x: string): string => x;
  // a flow's fields and outbox entries name queues between NULs, a failed parent's reason between
  // spaces (`child <queue> <id> failed: …`): the twin's own name as {Q}
  const named = (v: string): string =>
    normalise
      ? (v.startsWith(`${queue}\0`) ? `{Q}${v.slice(queue.length)}` : v).split(`\0${queue}\0`).join("\0{Q}\0").split(`child ${queue} `).join("child {Q} ")
      : v;
  const conn = { command: typeof via === "function" ? via : (a: string[], k: string) => via.command(a, k) };
  const route = `emq:{${queue}}:meta`;
  const keys: string[] = [];
  let cursor = "0";
  do {
    const reply = (await conn.command(["SCAN", cursor, "MATCH", `emq:{${queue}}:*`, "COUNT", "1000"], route)) as [
      string,
      string[],
    ];
    cursor = String(reply[0]);
    keys.push(...reply[1].map(String));
  } while (cursor !== "0");
  keys.sort();
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const type = String(await conn.command(["TYPE", key], key));
    let value: unknown;
    if (type === "hash") {
      const pairs = entries(await conn.command(["HGETALL", key], key));
      // a dedup entry is "<id> <until_ms>", its window's end derived from now
      const entry = key.endsWith(":dedup") ? (v: string) => v.replace(/ (\d+)$/, (_, t: string) => ` ${time(t)}`) : null;
      // a rate limit's state is "<q> <r>", q derived from now
      const tat = (v: string): string => v.replace(/^(\d+) /, (_, t: string) => `${time(t)} `);
      value = key.endsWith(":metrics") && normalise ? history(pairs) : Object.fromEntries(
        pairs.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([f, v]) => [f, TIME_FIELDS.has(f) ? time(v) : f === "tat" ? tat(v) : entry ? entry(v) : named(v)]),
      );
    } else if (type === "list") {
      value = ((await conn.command(["LRANGE", key, "0", "-1"], key)) as unknown[]).map(String);
    } else if (type === "zset") {
      // Scores derived from now differ between twins by a millisecond or so, and so may the order
      // of members that shared one: past normalisation, those compare by member.
      const zset = entries(await conn.command(["ZRANGE", key, "0", "-1", "WITHSCORES"], key)).map(([m, s]) => [named(m!), time(s)]);
      const fixed = zset.filter(([, s]) => s !== "<now>");
      const now = zset.filter(([, s]) => s === "<now>").sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0));
      value = [...fixed, ...now];
    } else if (type === "stream") {
      // the events stream: each entry's fields in order, not its id (the server's time, which
      // differs between twins and runs), its time fields normalised
      value = streamEntries(await conn.command(["XRANGE", key, "-", "+"], key)).map((fields) =>
        fields.map((f, i) => (i % 2 === 1 && TIME_FIELDS.has(fields[i - 1]!) ? time(f) : f))
      );
    } else {
      value = `<${type}> ${String(await conn.command(["DUMP", key], key))}`;
    }
    out[key.split(`{${queue}}`).join("{Q}")] = { type, value };
  }
  return out;
}

/**
 * An XRANGE reply's entries, each as its flat field list (`[field, value, …]`), in order: glide's
 * `[{key: id, value: [[field, value]…]}…]` or RESP's `[[id, [field, value, …]]…]`.
 */
export function streamEntries(reply: unknown): string[][] {
  const items: unknown[] = Array.isArray(reply) ? reply : Object.entries((reply ?? {}) as Record<string, unknown>).map(([key, value]) => ({ key, value }));
  return items.map((x) => {
    const fields = Array.isArray(x) ? x[1] : (x as { value: unknown }).value;
    return (fields as unknown[]).flat().map((f) => String(plain(f)));
  });
}

/** A deterministic id source: JOB + an 11-digit counter, so two runs produce the same ids. */
export function counterIds(start = 1): () => JobId {
  let n = start;
  return () => `JOB${String(n++).padStart(11, "0")}` as JobId;
}

/** The pair a combo's name prints as. */
export function comboName(backend: BackendKind, topology: Topology): string {
  return `${backend}/${topology}`;
}

/** Sleeps `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** The rejection of `p` (fails when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    const v = await p;
    throw new Error(`resolved with ${JSON.stringify(v)}`);
  } catch (e) {
    return e;
  }
}

/** Polls `check` every 10 ms until it is true; throws when `ms` pass first. */
export function eventually(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  return waitUntil("the condition", check, ms, 10);
}

/** The payloads' `n` of `count` claims of one job each (`none` for a claim that found nothing): the order claims serve. */
export async function claimOrder(mq: EchoMQ<{ n: string }>, q: string, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const j = await mq.claim(q, { leaseMs: 60_000 });
    out.push(j === null ? "none" : j.payload.n);
  }
  return out;
}

/** Every key of queue `q` (one SCAN of its slot's node), sorted: what a REMOVE or DROP left behind. */
export async function queueKeys(raw: Connection, q: string): Promise<string[]> {
  const reply = (await raw.command(["SCAN", "0", "MATCH", `emq:{${q}}:*`, "COUNT", "10000"], keyspace(q).meta)) as [string, string[]];
  return reply[1].map(String).sort();
}

/**
 * `base` recording the kinds of each batch of settles it sends (sorted), in order: alone
 * (`settleMany`) or in a SETTLE with the claim of the slots they free.
 */
export function recordingSettles<P>(base: WorkerClient<P>, batches: string[][]): WorkerClient<P> {
  const kinds = (s: readonly Settlement[]): void => void batches.push(s.map((x) => x.kind).sort());
  return {
    ...base,
    async dedicated(queue, blockMs, signal, who) {
      const line = await base.dedicated(queue, blockMs, signal, who);
      return line.settle === undefined ? line : {
        ...line,
        settle(queue, settlements, want, leaseMs) {
          kinds(settlements);
          return line.settle!(queue, settlements, want, leaseMs);
        },
      };
    },
    settleMany(settlements) {
      kinds(settlements);
      return base.settleMany(settlements);
    },
  };
}
