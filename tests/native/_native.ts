/**
 * Shared helpers of the native-module suites: glide clients with a sane timeout, a call wrapper that
 * turns server errors into values, queue key builders and the verbs' valid calls.
 */
import { GlideClient, GlideClusterClient, type Routes } from "@valkey/valkey-glide";
import { afterAll, beforeAll, beforeEach, expect } from "bun:test";
import { serverText as wireText } from "../../lib/client/errors.ts";
import { command, moduleBuilt, modulePath, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { type Verb, VERB_NAMES } from "../../lib/wire/mod.ts";
import type { Values } from "../_wire.ts";

/** Fails loudly when the module has not been built. */
export function requireModule(): string {
  if (!moduleBuilt()) {
    throw new Error(`native module missing at ${modulePath()}: cargo build --release --manifest-path native/Cargo.toml`);
  }
  return modulePath();
}

let registered: Promise<Verb[]> | undefined;

/**
 * The verbs of the spec (lib/wire) that the built module registers, in spec order (a throwaway
 * server asked once per process). Suites generate their per-verb tests from this list; the
 * standalone suite also asserts it is the whole spec, so that a verb the module lacks fails there,
 * loudly, and not in every suite.
 */
export function registeredVerbs(): Promise<Verb[]> {
  registered ??= (async () => {
    const server = await startServer({ module: requireModule() });
    try {
      const out: Verb[] = [];
      for (const verb of VERB_NAMES) {
        const info = await command(server.port, ["COMMAND", "INFO", `emq.${verb.toLowerCase()}`]);
        if (Array.isArray(info) && info[0] !== null) out.push(verb);
      }
      return out;
    } finally {
      await server.stop();
    }
  })();
  return registered;
}

/** Glide's default 250 ms is short for a loaded 2-core machine. */
export const REQUEST_TIMEOUT = 10_000;

/**
 * A standalone glide client. A client that sends a blocking CLAIM needs a `requestTimeout` longer
 * than the block (and a connection of its own: glide queues every other request behind it).
 */
export function standalone(
  port: number,
  credentials?: { username: string; password: string },
  requestTimeout: number = REQUEST_TIMEOUT,
): Promise<GlideClient> {
  return GlideClient.createClient({
    addresses: [{ host: "127.0.0.1", port }],
    requestTimeout,
    ...(credentials ? { credentials } : {}),
  });
}

/**
 * A standalone server with the module (`args` added) and a glide client on it as the default user,
 * started before the file's tests and stopped after them: `site.server`, `site.db`.
 */
export function useModuleServer(args: string[] = []): { readonly server: ServerHandle; readonly db: GlideClient } {
  const site = {} as { server: ServerHandle; db: GlideClient };
  beforeAll(async () => {
    site.server = await startServer({ module: requireModule(), args });
    site.db = await standalone(site.server.port);
  }, 60_000);
  afterAll(async () => {
    site.db?.close();
    await site.server?.stop();
  });
  return site;
}

/** A cluster glide client. */
export function cluster(
  addresses: ReadonlyArray<{ host: string; port: number }>,
  requestTimeout: number = REQUEST_TIMEOUT,
): Promise<GlideClusterClient> {
  return GlideClusterClient.createClient({ addresses: [...addresses], requestTimeout });
}

/** A call's outcome: a reply, or the server's error text. */
export type Outcome = { ok: unknown } | { err: string };

/**
 * The server's error text as it was on the wire (`ERR …`, `WRONGTYPE …`, `NOPERM …`, `OOM …`),
 * recovered from glide's rendering; the message itself for errors that are not server replies.
 */
export function serverText(e: unknown): string {
  return wireText(e) ?? (e instanceof Error ? e.message : String(e));
}

/** Runs a command, returning its reply or its error text. */
export async function call(
  client: GlideClient | GlideClusterClient,
  args: string[],
  route?: Routes,
): Promise<Outcome> {
  try {
    const ok = client instanceof GlideClusterClient ? await client.customCommand(args, route ? { route } : undefined) : await client.customCommand(args);
    return { ok };
  } catch (e) {
    return { err: serverText(e) };
  }
}

/** Asserts a refusal with exactly `text` (the server's bytes, code included). */
export function expectRefused(outcome: Outcome, text: string): void {
  if (!("err" in outcome)) throw new Error(`expected ${JSON.stringify(text)}, got the reply ${JSON.stringify(outcome.ok)}`);
  if (outcome.err !== text) throw new Error(`refusal text: got ${JSON.stringify(outcome.err)}, want ${JSON.stringify(text)}`);
}

/** Asserts a successful reply equal to `value`. */
export function expectOk(outcome: Outcome, value?: unknown): unknown {
  if ("err" in outcome) throw new Error(`unexpected refusal: ${outcome.err}`);
  if (value !== undefined) expect(outcome.ok).toEqual(value);
  return outcome.ok;
}

export { argv, jobId, queue, refusal, type TestQueue as QueueKeys, type Values, type VerbName, VERBS, wellFormed } from "../_wire.ts";

/** One job of a CLAIM reply. */
export interface ClaimedJob {
  readonly id: string;
  readonly payload: string;
  readonly attempts: number;
  readonly token: number;
  /** The options it was admitted with, as sent ("" when none). */
  readonly opts: string;
}

/**
 * One claimed job's bulk string (wire 12): `<attempts> <token> <id_len> <opts_len> <payload_len>\n`
 * then id, opts and payload back to back, lengths in bytes (`payload_len` -1: no payload), checked
 * for its shape. Parsed here on its own, not by the client's parser, so that the two check each other.
 */
export function claimedJob(e: unknown): ClaimedJob {
  if (typeof e !== "string" && !(e instanceof Uint8Array)) throw new Error(`not a claimed job: ${JSON.stringify(e)}`);
  const bytes = typeof e === "string" ? new TextEncoder().encode(e) : e;
  const nl = bytes.indexOf(10);
  const head = new TextDecoder().decode(bytes.subarray(0, Math.max(0, nl)));
  const m = /^(\d+) (\d+) (\d+) (\d+) (-1|\d+)$/.exec(head);
  if (nl < 0 || m === null) throw new Error(`not a claimed job: ${JSON.stringify(String(e))}`);
  const [attempts, token, idLen, optsLen, payloadLen] = m.slice(1).map(Number) as [number, number, number, number, number];
  const body = bytes.subarray(nl + 1);
  if (body.length !== idLen + optsLen + Math.max(0, payloadLen)) throw new Error(`claimed job of the wrong length: ${JSON.stringify(String(e))}`);
  const text = (from: number, to: number): string => new TextDecoder().decode(body.subarray(from, to));
  return {
    id: text(0, idLen),
    payload: payloadLen < 0 ? "" : text(idLen + optsLen, body.length),
    attempts,
    token,
    opts: text(idLen, idLen + optsLen),
  };
}

/** A claimed job as the tuple `[id, payload, attempts, token, opts]` (the reply's element until wire 11). */
export function claimedTuple(e: unknown): [string, string, number, number, string] {
  const j = claimedJob(e);
  return [j.id, j.payload, j.attempts, j.token, j.opts];
}

/** A CLAIM reply `[next_ms, job…]`, each job checked for its shape ({@link claimedJob}). */
export function claimed(reply: unknown): { nextMs: number; jobs: ClaimedJob[] } {
  if (!Array.isArray(reply) || reply.length < 1 || typeof reply[0] !== "number") {
    throw new Error(`not a CLAIM reply: ${JSON.stringify(reply)}`);
  }
  return { nextMs: reply[0], jobs: reply.slice(1).map(claimedJob) };
}

/** The settle groups `(id, token)` of claimed jobs, with extra group arguments. */
export function held(jobs: readonly ClaimedJob[], extra: Values = {}): Values[] {
  return jobs.map((j) => ({ ...extra, id: j.id, token: j.token }));
}

/** The declared keys of a well-formed call. */
export function declaredKeys(args: string[]): string[] {
  const n = Number(args[1]);
  return args.slice(2, 2 + n);
}

/** `DEBUG DIGEST` of a standalone server (or one cluster node by route). */
export async function digest(client: GlideClient | GlideClusterClient, route?: Routes): Promise<string> {
  const out = await call(client, ["DEBUG", "DIGEST"], route);
  return String(expectOk(out));
}

/** Sleeps `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** HGETALL as a plain record. */
export async function row(client: GlideClient | GlideClusterClient, key: string, route?: Routes): Promise<Record<string, string>> {
  const out = expectOk(await call(client, ["HGETALL", key], route));
  const rec: Record<string, string> = {};
  if (Array.isArray(out) && out.every((e) => e !== null && typeof e === "object" && "key" in e)) {
    for (const e of out as Array<{ key: unknown; value: unknown }>) rec[String(e.key)] = String(e.value);
  } else if (Array.isArray(out)) {
    for (let i = 0; i + 1 < out.length; i += 2) rec[String(out[i])] = String(out[i + 1]);
  } else if (out && typeof out === "object") {
    for (const [k, v] of Object.entries(out as Record<string, unknown>)) rec[k] = String(v);
  }
  return rec;
}

/** A verb-by-verb suite's server ({@link useModuleServer}, emptied before each test) and its calls. */
export interface VerbSite {
  readonly site: { readonly server: ServerHandle; readonly db: GlideClient };
  /** Runs one command. */
  run(args: string[]): Promise<Outcome>;
  /** Runs one command and asserts it answered (with `value`, when given). */
  ok(args: string[], value?: unknown): Promise<unknown>;
  /** Runs one command and asserts the refusal `text`, with the keyspace unchanged. */
  refuses(args: string[], text: string): Promise<void>;
}

/** {@link VerbSite} on a module server with the DEBUG command (digests), emptied before each test. */
export function useVerbSite(): VerbSite {
  const site = useModuleServer(["--enable-debug-command", "yes"]);
  beforeEach(async () => {
    expectOk(await call(site.db, ["FLUSHALL"]));
  });
  const run = (args: string[]): Promise<Outcome> => call(site.db, args);
  return {
    site,
    run,
    ok: async (args, value) => expectOk(await run(args), value),
    refuses: async (args, text) => {
      const before = await digest(site.db);
      expectRefused(await run(args), text);
      expect(await digest(site.db)).toBe(before);
    },
  };
}
