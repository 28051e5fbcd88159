/**
 * Shared helpers of the native-module suites: glide clients with a sane timeout, a call wrapper that
 * turns server errors into values, queue key builders and the verbs' valid calls.
 */
import { GlideClient, GlideClusterClient, type Routes } from "@valkey/valkey-glide";
import { expect } from "bun:test";
import { modulePath, moduleBuilt } from "../../tools/embedded/mod.ts";


/** Fails loudly when the module has not been built. */
export function requireModule(): string {
  if (!moduleBuilt()) {
    throw new Error(`native module missing at ${modulePath()}: cargo build --release --manifest-path native/Cargo.toml`);
  }
  return modulePath();
}

/** Glide's default 250 ms is short for a loaded 2-core machine. */
export const REQUEST_TIMEOUT = 10_000;

/** A standalone glide client. */
export function standalone(port: number, credentials?: { username: string; password: string }): Promise<GlideClient> {
  return GlideClient.createClient({
    addresses: [{ host: "127.0.0.1", port }],
    requestTimeout: REQUEST_TIMEOUT,
    ...(credentials ? { credentials } : {}),
  });
}

/** A cluster glide client. */
export function cluster(addresses: ReadonlyArray<{ host: string; port: number }>): Promise<GlideClusterClient> {
  return GlideClusterClient.createClient({ addresses: [...addresses], requestTimeout: REQUEST_TIMEOUT });
}

/** A call's outcome: a reply, or the server's error text. */
export type Outcome = { ok: unknown } | { err: string };

/** Strips glide's wrapper ("An error was signalled by the server: - ResponseError: …"). */
export function serverText(e: unknown): string {
  const m = e instanceof Error ? e.message : String(e);
  return m.replace(/^An error was signalled by the server: - \w+: /, "").trim();
}

/** Runs a command, returning its reply or its error text. */
export async function call(
  client: GlideClient | GlideClusterClient,
  args: string[],
  route?: Routes,
): Promise<Outcome> {
  try {
    const ok = client instanceof GlideClusterClient
      ? await client.customCommand(args, route ? { route } : undefined)
      : await client.customCommand(args);
    return { ok };
  } catch (e) {
    return { err: serverText(e) };
  }
}

/** Asserts a refusal with the exact text of docs/WIRE.md (glide drops a leading `ERR `). */
export function expectRefused(outcome: Outcome, text: string): void {
  expect(outcome).toHaveProperty("err");
  // glide renders coded errors as "CODE: text"; put them back as the server sent them
  const got = (outcome as { err: string }).err.replace(/^([A-Z]+): /, "$1 ");
  // glide drops the code of some errors (ERR, CROSSSLOT): the rest must still match exactly
  const want = text.replace(/^[A-Z]+ /, "");
  if (!(got === text || got === want)) {
    throw new Error(`refusal text: got ${JSON.stringify(got)}, want ${JSON.stringify(text)}`);
  }
}

/** Asserts a successful reply equal to `value`. */
export function expectOk(outcome: Outcome, value?: unknown): unknown {
  if ("err" in outcome) throw new Error(`unexpected refusal: ${outcome.err}`);
  if (value !== undefined) expect(outcome.ok).toEqual(value);
  return outcome.ok;
}

export { jobId, queue, type TestQueue as QueueKeys, VERBS, type VerbName, wellFormed } from "../_wire.ts";

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
