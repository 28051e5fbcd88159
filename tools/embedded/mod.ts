/**
 * Embedded Valkey servers for tests and benchmarks: real `valkey-server` processes on free
 * loopback ports in temporary directories — one server, a primary with a replica, or a cluster —
 * each with an idempotent `stop()`. Servers are also killed when the host process exits.
 * Runs under Bun, Deno and Node (only `node:` built-ins).
 *
 * @example
 * ```ts
 * import { startServer } from "./tools/embedded/mod.ts";
 * const server = await startServer({ module: false });
 * // connect to server.port …
 * await server.stop();
 * ```
 *
 * @module
 */
export { cliBinary, moduleBuilt, moduleIfBuilt, modulePath, repoRoot, serverBinary } from "./paths.ts";
export { freePort, LOOPBACK, portFree } from "../../lib/server/ports.ts";
export { command, commandCalls, infoFields, RespError, type RespValue, waitUntil } from "../../lib/server/resp.ts";
export { baseArgs, type ReplicatedHandle, type ServerHandle, type ServerOptions, startReplicated, startServer, waitForSync } from "./server.ts";
export { type ClusterHandle, type ClusterNode, type ClusterOptions, replicasOf, startCluster } from "./cluster.ts";
export { deferSignals, killAll } from "../../lib/server/cleanup.ts";
export { type Orphan, sweepOrphans } from "../../lib/server/orphans.ts";
export { hasAtomicSlotMigration, type ServerVersion, serverVersion } from "./version.ts";
