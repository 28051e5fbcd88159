/**
 * `emq server [--port N] [--valkey-server PATH]`: a local Valkey for development with the native
 * module loaded (lib/module/find.ts: the installed platform package, else a local build), started
 * by the launcher the repository's demo and tests use (lib/server): loopback only, a temporary
 * directory, no persistence. Prints where it listens and runs until Ctrl-C (or SIGTERM), then
 * stops the server and removes its directory.
 *
 * @module
 */
import process from "node:process";
import { findModule, noModule } from "../module/find.ts";
import { deferSignals } from "../server/cleanup.ts";
import { command, infoFields } from "../server/resp.ts";
import { serverBinary, startServer } from "../server/server.ts";
import { pageFlag, parseFlags, UsageError } from "./usage.ts";

/** Runs `emq server`; resolves with the exit code once it is stopped. */
export async function serverCommand(argv: string[]): Promise<number> {
  const parsed = parseFlags({
    args: argv,
    allowPositionals: false,
    options: { port: { type: "string" }, "valkey-server": { type: "string" } },
  });
  const port = pageFlag("--port", parsed.values.port, 1, 65535, 6379);
  const binary = parsed.values["valkey-server"] ?? serverBinary();
  const found = findModule();
  if (found === null) throw new Error(noModule());
  let stopping: ((signal: string) => void) | null = null;
  const stopped = new Promise<string>((done) => (stopping = done));
  // Ctrl-C stops the server in order (its directory removed) and ends with 0, not the launcher's 130.
  deferSignals((signal) => stopping?.(signal));
  let server;
  try {
    server = await startServer({ module: found.path, port, binary });
  } catch (e) {
    deferSignals(null);
    const text = (e as Error).message;
    if (/ENOENT|could not spawn/.test(text)) throw new UsageError(`cannot run ${binary}: install Valkey ≥ 8.0 or give --valkey-server PATH`);
    throw new Error(`valkey-server did not start: ${text.split("\n").slice(0, 12).join("\n")}`);
  }
  const info = infoFields(await command(server.port, ["INFO", "server"]));
  console.log(`valkey-server ${info["valkey_version"] ?? info["redis_version"] ?? "?"} on ${server.address} with the emq module ${found.path}`);
  console.log(`  (${found.from === "package" ? `from ${found.source}` : `built in ${found.source}`}; no persistence: its data goes when it stops)`);
  console.log(`connect with --url valkey://${server.address} or { addresses: [{ host: "${server.host}", port: ${server.port} }] }; Ctrl-C stops it`);
  // The server may end by itself (killed, crashed): say so, with its log's tail.
  const watch = setInterval(() => {
    try {
      process.kill(server.pid, 0);
    } catch {
      stopping?.("exit");
    }
  }, 1000);
  const why = await stopped;
  clearInterval(watch);
  deferSignals(null);
  const log = server.log();
  await server.stop();
  if (why !== "exit") return 0;
  console.error(`emq: valkey-server on ${server.address} exited\n${log.split("\n").slice(-10).join("\n")}`);
  return 1;
}
