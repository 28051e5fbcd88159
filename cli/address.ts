/**
 * Server addresses on the command line: `valkey://[user:password@]host:port` (or `redis://`, or
 * `host:port`). No client import, so commands that only parse an address (`emq ui`) load no
 * client. A password never appears in a message: {@link redactUrl}.
 *
 * @module
 */
import { UsageError } from "./usage.ts";

/** A server's host and port, and the credentials the URL gave. */
export interface ServerAddress {
  /** Host name or address. */
  host: string;
  /** TCP port. */
  port: number;
  /** `user:password@` (an ACL user) or `:password@` (the default user), percent-decoded. */
  credentials?: { username?: string; password: string };
}

/** `url` with its password, if any, replaced by `***`. */
export function redactUrl(url: string): string {
  return url.replace(/^((?:[a-z]+:\/\/)?[^:@/]*:)[^/]*@/i, "$1***@");
}

/** Parses `valkey://[user:password@]host:port` (or `redis://`, or `host:port`). */
export function parseUrl(url: string): ServerAddress {
  const m = /^(?:(?:valkey|redis):\/\/)?(?:([^:@/]*):([^/]*)@)?(?:\[([^\]]+)\]|([^:/@[\]]+))(?::(\d+))?\/?$/.exec(url);
  if (!m) {
    throw new UsageError(`cannot read the address ${JSON.stringify(redactUrl(url))}: expected valkey://[user:password@]host:port`);
  }
  const address: ServerAddress = { host: (m[3] ?? m[4])!, port: m[5] === undefined ? 6379 : Number(m[5]) };
  if (m[2] !== undefined) {
    const username = decodeURIComponent(m[1]!);
    address.credentials = { ...(username === "" ? {} : { username }), password: decodeURIComponent(m[2]) };
  }
  return address;
}
