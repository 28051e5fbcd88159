/**
 * The repository's servers: lib/server's launcher (what the package's `emq server` runs), loading
 * the repository's built native module ({@link moduleIfBuilt}) when `module` is omitted.
 *
 * @module
 */
import * as launcher from "../../lib/server/server.ts";
import type { ReplicatedHandle, ServerHandle, ServerOptions } from "../../lib/server/server.ts";
import { moduleIfBuilt } from "./paths.ts";

export { baseArgs, type ReplicatedHandle, type ServerHandle, type ServerOptions, waitForSync } from "../../lib/server/server.ts";

/** The options with `module` omitted read as the built module, if any. */
function withModule<O extends ServerOptions>(opts: O): O {
  return opts.module === undefined ? { ...opts, module: moduleIfBuilt() } : opts;
}

/**
 * Starts one `valkey-server` on a free loopback port in a fresh temporary directory (lib/server's
 * {@link launcher.startServer}); loads the built native module unless `module: false`.
 */
export function startServer(opts: ServerOptions = {}): Promise<ServerHandle> {
  return launcher.startServer(withModule(opts));
}

/** A primary and one replica of it, in sync ({@link launcher.startReplicated}), the built module loaded unless `module: false`. */
export function startReplicated(opts: Omit<ServerOptions, "replicaOf"> = {}): Promise<ReplicatedHandle> {
  return launcher.startReplicated(withModule(opts));
}
