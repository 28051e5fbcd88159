/**
 * Server addresses on the command line: `valkey://host:port` (or `redis://`, or `host:port`).
 * No client import, so commands that only parse an address (`emq ui`) load no client.
 *
 * @module
 */
import { UsageError } from "./usage.ts";

/** A server's host and port. */
export interface ServerAddress {
  /** Host name or address. */
  host: string;
  /** TCP port. */
  port: number;
}

/** Parses `valkey://host:port` (or `redis://`, or `host:port`). */
export function parseUrl(url: string): ServerAddress {
  const m = /^(?:(?:valkey|redis):\/\/)?\[?([^\]\/]+?)\]?(?::(\d+))?\/?$/.exec(url);
  if (!m) throw new UsageError(`cannot read the address ${JSON.stringify(url)}: expected valkey://host:port`);
  return { host: m[1], port: m[2] === undefined ? 6379 : Number(m[2]) };
}
