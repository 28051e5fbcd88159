/**
 * Kill and restart a server the launcher started, on the same port and in the same directory (a
 * cluster node keeps its `nodes.conf`, so it rejoins as itself; a server with AOF keeps its data).
 * The launcher's handle still removes the directory on `stop()`; the processes started here are
 * killed by {@link killRestarted} (call it before the handles' `stop()`) and when the host exits.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import process from "node:process";
import { join } from "node:path";
import { baseArgs, command, serverBinary, type ServerHandle, waitUntil } from "../../tools/embedded/mod.ts";

/** A server that can be killed and started again. */
export interface Restartable {
  readonly port: number;
  /** The live process id. */
  pid: number;
  /** SIGKILLs the live process; resolves once it is gone. */
  kill(): Promise<void>;
  /** Starts the server again with the argv it was first started with; resolves once it answers PING. */
  start(): Promise<void>;
}

const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return true;
  }
}

/**
 * `server` as a {@link Restartable}, started again with the launcher's arguments
 * ({@link baseArgs}; valkey-server rewrites its own `/proc` command line) and the `args` it was
 * started with.
 */
export function restartable(server: ServerHandle, opts: { cluster: boolean; args: readonly string[] }): Restartable {
  const argv = [
    serverBinary(),
    ...baseArgs(server.port, server.host, server.dir),
    ...(opts.cluster ? ["--cluster-enabled", "yes", "--cluster-config-file", join(server.dir, "nodes.conf")] : []),
    ...(server.module ? ["--loadmodule", server.module] : []),
    ...opts.args,
  ];
  let child: ChildProcess | null = null;
  const node: Restartable = {
    port: server.port,
    pid: server.pid,
    async kill() {
      process.kill(node.pid, "SIGKILL");
      await waitUntil(`server ${node.port} to die`, () => gone(node.pid), 10_000, 5);
      if (child !== null) children.delete(child);
    },
    async start() {
      child = spawn(argv[0]!, argv.slice(1), { cwd: server.dir, stdio: "ignore" });
      child.unref();
      children.add(child);
      node.pid = child.pid!;
      await waitUntil(
        `server ${node.port} to answer PING again`,
        async () => {
          try {
            return (await command(node.port, ["PING"], 500)) === "PONG";
          } catch {
            return false;
          }
        },
        20_000,
        10,
      );
    },
  };
  return node;
}

/** Kills every process {@link Restartable.start} started. */
export function killRestarted(): void {
  for (const c of children) c.kill("SIGKILL");
  children.clear();
}
