/**
 * Server URLs: `valkey://[user:password@]host:port` (or `redis://`), and `valkeys://` (or
 * `rediss://`) for TLS; a bare `host:port` too. The user and password are percent-decoded; an IPv6
 * host goes in brackets. No message built here shows the password ({@link redactUrl}). Imports
 * nothing, so a command line that only reads an address loads no client.
 *
 * @module
 */

/** What a server URL says: where, whether over TLS, and with which credentials. */
export interface ServerUrl {
  /** Host name or address. */
  readonly host: string;
  /** TCP port (default 6379). */
  readonly port: number;
  /** True for `valkeys://` and `rediss://`. */
  readonly tls: boolean;
  /** `user:password@` (an ACL user) or `:password@` (the default user), percent-decoded. */
  readonly credentials?: { readonly username?: string; readonly password: string };
}

/** The shape a server URL must have, for messages. */
export const URL_SHAPE = "valkey://[user:password@]host:port (valkeys:// for TLS)";

/** `url` with its password, if any, replaced by `***`. */
export function redactUrl(url: string): string {
  return url.replace(/^((?:[a-z]+:\/\/)?[^:@/]*:)[^/]*@/i, "$1***@");
}

const SHAPE = /^(?:(valkeys?|rediss?):\/\/)?(?:([^:@/]*):([^/]*)@)?(?:\[([^\]]+)\]|([^:/@[\]]+))(?::(\d+))?\/?$/i;

/** Reads `url`; `null` when it is not a server URL (see {@link URL_SHAPE}), or a part of it is not percent-encoded. */
export function parseServerUrl(url: string): ServerUrl | null {
  const m = SHAPE.exec(url);
  if (!m) return null;
  const port = m[6] === undefined ? 6379 : Number(m[6]);
  if (port < 1 || port > 65535) return null;
  const base = { host: (m[4] ?? m[5])!, port, tls: /^(valkeys|rediss)$/i.test(m[1] ?? "") };
  if (m[3] === undefined) return base;
  try {
    const username = decodeURIComponent(m[2]!);
    return { ...base, credentials: { ...(username === "" ? {} : { username }), password: decodeURIComponent(m[3]) } };
  } catch {
    return null;
  }
}
