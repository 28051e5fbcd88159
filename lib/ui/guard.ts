/**
 * Who the dashboard answers: the checks every request passes before a route sees it.
 * - `Host` must be the configured public origin's host, or — without one — a loopback name
 *   (`127.0.0.1`, `localhost`, `[::1]`, any port: an SSH tunnel on another local port works), so
 *   a page elsewhere cannot reach it through DNS rebinding. With a token and no public origin any
 *   `Host` is answered (the token is what a rebinding page cannot have).
 * - With a token, `Authorization: Bearer <token>` or Basic with the token as the password (any
 *   user name: the browser's own login prompt); else 401 with a Basic challenge.
 * - A POST (an action) must carry the `Origin` of the page itself (the public origin, or
 *   `http://<Host>`); in read-only mode no action is answered at all.
 * The comparisons of secrets take the same time whatever the input.
 *
 * @module
 */

/** What the guard enforces (the dashboard's options, resolved). */
export interface GuardOptions {
  /** The token, or null for loopback-only access without one. */
  readonly token: string | null;
  /** The origin users reach the dashboard at (`https://ops.example.com`), or null. */
  readonly publicOrigin: string | null;
  /** No action (POST) is answered. */
  readonly readOnly: boolean;
}

/** A refusal: its status, text and headers. */
export interface Refusal {
  readonly status: number;
  readonly text: string;
  readonly headers?: Readonly<Record<string, string>>;
}

const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

/** Whether `host` (a `Host` header) names this machine's loopback interface. */
export function loopbackHost(host: string): boolean {
  return LOOPBACK_HOST.test(host);
}

/** True when `a` and `b` are equal, in a time that depends on their lengths only. */
function sameSecret(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/** Whether `authorization` carries `token` (Bearer, or Basic with it as the password). */
function authorized(authorization: string | null, token: string): boolean {
  if (authorization === null) return false;
  const [scheme, value = ""] = authorization.trim().split(/\s+/, 2) as [string, string?];
  if (/^bearer$/i.test(scheme)) return sameSecret(value, token);
  if (!/^basic$/i.test(scheme)) return false;
  let decoded: string;
  try {
    decoded = new TextDecoder().decode(Uint8Array.from(atob(value), (c) => c.charCodeAt(0)));
  } catch {
    return false;
  }
  return sameSecret(decoded.slice(decoded.indexOf(":") + 1), token);
}

/** Why `request` is refused, or null when it may go on to its route. */
export function refusal(request: Request, options: GuardOptions): Refusal | null {
  const host = request.headers.get("host") ?? new URL(request.url).host;
  const publicHost = options.publicOrigin === null ? null : new URL(options.publicOrigin).host;
  if (publicHost !== null ? host.toLowerCase() !== publicHost.toLowerCase() : options.token === null && !loopbackHost(host)) {
    const allowed = publicHost ?? "a loopback address (127.0.0.1, localhost, [::1])";
    return { status: 421, text: `this dashboard answers only to ${allowed}, not ${JSON.stringify(host)}` };
  }
  if (options.token !== null && !authorized(request.headers.get("authorization"), options.token)) {
    return {
      status: 401,
      text: "a token is required (Authorization: Bearer <token>, or Basic with the token as the password)",
      headers: { "www-authenticate": 'Basic realm="EchoMQ", charset="UTF-8"' },
    };
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    if (options.readOnly) return { status: 403, text: "this dashboard is read-only: no action is answered" };
    const origin = options.publicOrigin ?? `${new URL(request.url).protocol}//${host}`;
    // A browser sends Origin with every POST; only the dashboard's own pages may act.
    if (request.headers.get("origin") !== origin) return { status: 403, text: `${request.method} is answered only from ${origin}` };
  }
  return null;
}
