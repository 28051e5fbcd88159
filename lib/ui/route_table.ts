/**
 * The dashboard's routes: each a method and a path (under the base path) with a web-standard
 * `Request → Response` handler.
 * A route answers one exact path, or (`prefix`) every path under one (the dashboard's
 * `/queues/<name>`); an exact route wins, then the longest prefix.
 *
 * @module
 */

/** One route: a method and an exact path, and what answers it. */
export interface Route {
  /** The HTTP method (default `GET`; a `GET` route answers `HEAD` too). */
  readonly method?: "GET" | "POST";
  /** The exact path, e.g. `/` or `/panel.js` (the query string is not part of it). */
  readonly path: string;
  /**
   * When true, `path` (ending in `/`) is a prefix: the route answers every path that starts with
   * it and is longer (`/queues/` answers `/queues/orders`, not `/queues/`). An exact route wins.
   */
  readonly prefix?: boolean;
  /** Answers one request; `path` is its path under the dashboard's base path. */
  handle(request: Request, path: string): Response | Promise<Response>;
}

/** Routes looked up by method and path. */
export class RouteTable {
  readonly #exact = new Map<string, Route>();
  readonly #prefixed: Route[] = [];

  /** The table of `routes`; two routes for one method and exact path, or a prefix not ending in `/`, are refused. */
  constructor(routes: readonly Route[]) {
    for (const r of routes) {
      if (r.prefix) {
        if (!r.path.endsWith("/")) throw new Error(`a prefix route's path ends with /: ${r.path}`);
        this.#prefixed.push(r);
        continue;
      }
      const id = `${r.method ?? "GET"} ${r.path}`;
      if (this.#exact.has(id)) throw new Error(`two routes for ${id}`);
      this.#exact.set(id, r);
    }
    this.#prefixed.sort((a, b) => b.path.length - a.path.length); // the longest prefix first
  }

  /** The route for `method` on `path`: the exact one, else the longest prefix under which it is. */
  find(method: string, path: string): Route | undefined {
    return this.#exact.get(`${method} ${path}`) ?? this.#prefixed.find((r) => (r.method ?? "GET") === method && under(r, path));
  }

  /** Whether any route, of any method, answers `path` (another method is a 405, not a 404). */
  answers(path: string): boolean {
    return [...this.#exact.values()].some((r) => r.path === path) || this.#prefixed.some((r) => under(r, path));
  }
}

/** Whether `path` is under the prefix route `r` (and longer than its prefix). */
function under(r: Route, path: string): boolean {
  return r.prefix === true && path.startsWith(r.path) && path.length > r.path.length;
}
