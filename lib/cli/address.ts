/**
 * Server addresses on the command line: `--url valkey://[user:password@]host:port` (`valkeys://`
 * for TLS; or `redis://`, `rediss://`, or `host:port`), read by the client's own parser
 * (`lib/client/url.ts`, which imports nothing, so commands that only parse an address load no
 * client). A password never appears in a message: {@link redactUrl}.
 *
 * @module
 */
import { parseServerUrl, redactUrl, type ServerUrl, URL_SHAPE } from "../client/url.ts";
import { UsageError } from "./usage.ts";

export { redactUrl };

/** A server's host and port, whether over TLS, and the credentials the URL gave. */
export type ServerAddress = ServerUrl;

/** Parses `--url`; a one-line {@link UsageError} (password redacted) when it is not a server URL. */
export function parseUrl(url: string): ServerAddress {
  const address = parseServerUrl(url);
  if (address === null) {
    throw new UsageError(`cannot read the address ${JSON.stringify(redactUrl(url))}: expected ${URL_SHAPE}`);
  }
  return address;
}
