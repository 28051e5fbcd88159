/**
 * glide's errors in the client's taxonomy (`errors.ts`), so that no glide error reaches a caller
 * untyped: at connect, why the connection failed ({@link connectFailure}: a `ConnectionError` with
 * its `reason`, asking the server again when glide's own answer came too late to say); after
 * connect, what became of a call ({@link callError}: a server refusal, a timeout whose outcome is
 * unknown, a lost connection). glide's error stays the `cause`; no message carries the password.
 *
 * @module
 */
import {
  ClosingError,
  ConnectionError as GlideConnectionError,
  GlideClient,
  type GlideClientConfiguration,
  GlideClusterClient,
  type GlideClusterClientConfiguration,
  TimeoutError,
  ValkeyError,
} from "@valkey/valkey-glide";
import { ConnectionError, type ConnectionReason, EchoMQError, redact, RequestTimeoutError, serverRule, serverText, WireError } from "./errors.ts";

/** The first line of an error's message. */
function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split("\n")[0]!.trim();
}

/** Where a connection goes, for messages, and the password no message may show. */
export interface Site {
  /** `host:port` of every address, comma-separated. */
  readonly where: string;
  /** The password of the credentials, if any. */
  readonly secret: string | undefined;
}

/**
 * The client's error for glide's error `e` of a call of `command`: a server refusal is a
 * {@link WireError} (rule by its code: `noperm`, `oom`, …); glide's `TimeoutError` a
 * {@link RequestTimeoutError} (after `timeoutMs`); a lost connection a `ConnectionError` of reason
 * `lost`; any other glide error a `ConnectionError` of reason `other`. The client's own errors,
 * and errors that are not glide's, are returned unchanged.
 */
export function callError(e: unknown, command: string, site: Site, timeoutMs: number): unknown {
  if (e instanceof EchoMQError || !(e instanceof Error)) return e;
  const text = serverText(e);
  if (text !== null) return new WireError(command, serverRule(text), redact(text, site.secret), e);
  if (e instanceof TimeoutError) return new RequestTimeoutError(command, site.where, timeoutMs, e);
  if (!(e instanceof ValkeyError)) return e;
  const why = redact(firstLine(e), site.secret);
  if (e instanceof GlideConnectionError || e instanceof ClosingError) {
    return new ConnectionError(site.where, "lost", `the connection to ${site.where} was lost during a call (${why}): it may or may not have run`, e);
  }
  return new ConnectionError(site.where, "other", `${command}: glide failed: ${why}`, e);
}

/** A glide client config for one quick attempt, without glide's own retries. */
export type ProbeConfig = GlideClientConfiguration & GlideClusterClientConfiguration;

/** The message of a connect without an answer in time. */
function noAnswer(site: Site, tls: boolean, connectTimeout: number): string {
  return `connect: no answer from ${site.where} within ${connectTimeout} ms${tls ? " (TLS is on: does the server speak TLS there?)" : ""}`;
}

/** The reason and the text of a failure glide reported at connect, from its message. */
function classify(e: unknown, site: Site, tls: boolean, connectTimeout: number): { reason: ConnectionReason; message: string } {
  const text = redact(firstLine(e), site.secret);
  const refused = (why: string): { reason: ConnectionReason; message: string } => ({
    reason: "auth",
    message: `connect: ${site.where} refused the connection: ${why}`,
  });
  if (/\bNOAUTH\b/.test(text)) return refused("authentication required (NOAUTH); pass credentials: { password } (and username, for an ACL user)");
  if (/\bWRONGPASS\b/.test(text)) return refused("invalid username-password pair or user is disabled (WRONGPASS)");
  const noperm = /\bNOPERM\b:? ?([^)]*)/.exec(text);
  if (noperm) return refused(`the user may not run a command connecting needs (NOPERM ${noperm[1]!.trim()})`);
  const socket = /\S*glide-socket\S*/.exec(text);
  if (socket) {
    // glide's JavaScript half talks to its native core over a local socket (Deno: --allow-write=/tmp)
    const dir = socket[0].slice(0, socket[0].lastIndexOf("/") + 1) || "/tmp/";
    return {
      reason: "other",
      message: `connect: glide could not open its own socket ${socket[0]} (under Deno, grant --allow-write=${dir.replace(/\/$/, "")}): ${text}`,
    };
  }
  if (/connection refused|os error 111/i.test(text)) {
    return { reason: "refused", message: `connect: ${site.where} refused the connection: nothing listens on that port (ECONNREFUSED)` };
  }
  if (/\btls\b|certificate|handshake|rustls/i.test(text)) {
    return { reason: "tls", message: `connect: the TLS handshake with ${site.where} failed: ${text}` };
  }
  if (/\btime(d)? ?out\b/i.test(text)) return { reason: "timeout", message: noAnswer(site, tls, connectTimeout) };
  return { reason: "other", message: `connect: cannot reach ${site.where}: ${text}` };
}

/**
 * Why a connect fails, asked once more without glide's retries (a connect that takes this long is
 * failing): the `ConnectionError`, or `null` when that attempt connects (the first one is slow).
 */
export async function diagnose(site: Site, config: ProbeConfig, cluster: boolean, connectTimeout: number): Promise<ConnectionError | null> {
  const probe = await attempt(config, cluster, Math.min(connectTimeout, 2000));
  if (!(probe instanceof Error)) {
    probe.close();
    return null;
  }
  return await failure(probe, site, config, cluster, connectTimeout);
}

/**
 * The `ConnectionError` of a connect that failed with `e` — glide's error, or `null` when glide had
 * not answered within the connect timeout (`connectTimeout` ms): then {@link diagnose} says why,
 * if it can.
 */
export async function connectFailure(
  e: unknown,
  site: Site,
  config: ProbeConfig,
  cluster: boolean,
  connectTimeout: number,
): Promise<ConnectionError> {
  if (e !== null) return await failure(e, site, config, cluster, connectTimeout);
  const why = await diagnose(site, config, cluster, connectTimeout);
  return why ?? new ConnectionError(site.where, "timeout", noAnswer(site, config.useTLS === true, connectTimeout));
}

/**
 * The `ConnectionError` of glide's error `e` at connect. A cluster client that found no cluster
 * topology asks the server whether it is a cluster node at all.
 */
async function failure(e: unknown, site: Site, config: ProbeConfig, cluster: boolean, connectTimeout: number): Promise<ConnectionError> {
  if (cluster && /No topology views found/i.test(firstLine(e)) && (await clusterEnabled(config, connectTimeout)) === false) {
    return new ConnectionError(
      site.where,
      "cluster",
      `connect: ${site.where} is not a cluster node (cluster_enabled:0): connect without cluster: true`,
      e,
    );
  }
  const { reason, message } = classify(e, site, config.useTLS === true, connectTimeout);
  return new ConnectionError(site.where, reason, message, e);
}

/**
 * One connection attempt without glide's retries, given up after `timeoutMs` (and a second): the
 * client, or glide's error (a `TimeoutError` of ours when glide did not answer).
 */
async function attempt(config: ProbeConfig, cluster: boolean, timeoutMs: number): Promise<GlideClient | GlideClusterClient | Error> {
  const quick: ProbeConfig = {
    ...config,
    requestTimeout: timeoutMs,
    // one retry 10 ms later: with none (numberOfRetries 0) glide 2.2 hangs every client made after it in the process
    connectionBackoff: { numberOfRetries: 1, factor: 10, exponentBase: 2 },
    advancedConfiguration: { ...config.advancedConfiguration, connectionTimeout: timeoutMs },
  };
  const made = cluster ? GlideClusterClient.createClient(quick) : GlideClient.createClient(quick);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Error>((done) => (timer = setTimeout(() => done(new TimeoutError("Timeout")), timeoutMs + 1000)));
  try {
    const first = await Promise.race([made, late]);
    if (first instanceof Error) void made.then((c) => c.close(), () => {});
    return first;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether the server of `config` (its first address, as a standalone server) says it is a cluster
 * node: `INFO cluster` → `cluster_enabled`. `undefined` when it cannot be asked (unreachable, or
 * the user may not run INFO).
 */
export async function clusterEnabled(config: ProbeConfig, timeoutMs: number): Promise<boolean | undefined> {
  const client = await attempt(config, false, Math.min(timeoutMs, 2000));
  if (client instanceof Error) return undefined;
  try {
    return clusterEnabledOf(await client.customCommand(["INFO", "cluster"]));
  } catch {
    return undefined;
  } finally {
    client.close();
  }
}

/** `cluster_enabled` of an `INFO cluster` reply; `undefined` when the reply has none. */
export function clusterEnabledOf(info: unknown): boolean | undefined {
  const m = /cluster_enabled:(\d)/.exec(String(info));
  return m === null ? undefined : m[1] === "1";
}
