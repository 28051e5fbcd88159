/**
 * The dashboard of a connected client served over HTTP (http.ts): what `emq ui` runs, in the
 * package and in a repository checkout, which mounts its key panel beside it (`routes`, `links`).
 *
 * @module
 */
import type { EchoMQ } from "../client/mod.ts";
import { dashboard, type DashboardOptions } from "../ui/dashboard.ts";
import { serve, type UiServer } from "./http.ts";

/** What {@link serveDashboard} serves, where, and to whom. */
export interface DashboardServerOptions
  extends Pick<DashboardOptions, "token" | "publicOrigin" | "readOnly" | "pollMs" | "sampleMs" | "discovery" | "snapshot" | "links" | "routes"> {
  /** The connected client whose server the dashboard shows. */
  readonly mq: EchoMQ<unknown>;
  /** The port; absent or 0 = a free one. */
  readonly port?: number;
  /** The address to listen on (default 127.0.0.1). */
  readonly bind?: string;
}

/** Serves the dashboard; resolves once the server listens. `close()` stops its reads and the server. */
export async function serveDashboard(options: DashboardServerOptions): Promise<UiServer> {
  const { mq, port, bind, ...rest } = options;
  const board = dashboard(mq, rest);
  try {
    const server = await serve(board, { ...(port === undefined ? {} : { port }), ...(bind ? { hostname: bind } : {}) });
    return {
      ...server,
      close: async () => {
        board.close();
        await server.close();
      },
    };
  } catch (e) {
    board.close();
    throw e;
  }
}
