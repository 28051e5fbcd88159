/**
 * One `valkey-server` process on a free loopback port in its own temporary directory, and a
 * primary + replica pair: what `emq server` runs (lib/cli/server.ts) and, through the repository's
 * tools/embedded (which loads its built module by default), every test, demo and benchmark.
 *
 * @module
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { register, unregister } from "./cleanup.ts";
import { freePort, LOOPBACK } from "./ports.ts";
import { command, infoFields, waitUntil } from "./resp.ts";

/** Options for {@link startServer}. */
export interface ServerOptions {
  /** The module to load with `--loadmodule`: a path, or `false` or omitted for none. */
  module?: string | false | undefined;
  /** The port to listen on (default: a free one, {@link freePort}); taken, the start fails. */
  port?: number;
  /** Start as a replica of the server on this loopback port. */
  replicaOf?: number;
  /** Extra `valkey-server` arguments, appended last (e.g. `["--emq.wire", "3"]`). */
  args?: string[] | undefined;
  /** Start in cluster mode (`--cluster-enabled yes`); used by the cluster launcher. */
  cluster?: boolean;
  /** Milliseconds to wait for the server to answer PING (default 20000). */
  readyTimeoutMs?: number;
  /**
   * A command the server runs under, its arguments before the server's binary (e.g.
   * `["valgrind", "--tool=callgrind"]`: bench/claim_instructions.ts). It must run the server in
   * its own process (the handle's `pid`).
   */
  launcher?: string[];
  /** The `valkey-server` binary (default: {@link serverBinary}, `VALKEY_SERVER` or the one on `PATH`). */
  binary?: string;
}

/** A running server. */
export interface ServerHandle {
  /** Always `127.0.0.1`. */
  readonly host: string;
  /** The client port. */
  readonly port: number;
  /** `127.0.0.1:<port>`. */
  readonly address: string;
  /** The server's process id (a new one after {@link ServerHandle.restart}). */
  readonly pid: number;
  /** Its temporary working directory (log file `valkey.log`, cluster `nodes.conf`). */
  readonly dir: string;
  /** The module path loaded, or null. */
  readonly module: string | null;
  /** The contents of the server's log file so far. */
  log(): string;
  /**
   * SIGKILLs the server (a crash: nothing is flushed that the server had not written yet) and
   * keeps its directory, so that {@link ServerHandle.restart} starts it again with its data.
   */
  kill(): Promise<void>;
  /**
   * Starts the server again (killing it first if it runs) with the same arguments, on the same
   * port, in the same directory — its AOF or RDB, its cluster `nodes.conf` — and waits until it
   * answers PING (a server still loading its data answers LOADING: not yet).
   */
  restart(): Promise<void>;
  /** Kills the server and removes its directory. Safe to call more than once. */
  stop(): Promise<void>;
}

/** The `valkey-server` binary: `VALKEY_SERVER` or the one on `PATH`. */
export function serverBinary(): string {
  return process.env["VALKEY_SERVER"] ?? "valkey-server";
}

/** Resolves the module option to a path or null. */
function resolveModule(option: string | false | undefined): string | null {
  if (option === false || option === undefined) return null;
  if (!existsSync(option)) throw new Error(`module not found: ${option}`);
  return option;
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, "valkey.log"), "utf8");
  } catch {
    return "";
  }
}

/**
 * Resolves once `child` has exited: its exit event, or — when the runtime misses it (Bun 1.3.5,
 * after Chromium ran in the same process, left a server a test SIGKILLed unreaped, and its stop
 * waited forever) — `/proc` showing the process gone or a zombie.
 */
function exited(child: ChildProcess): Promise<void> {
  return new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const poll = setInterval(() => {
      if (gone(child.pid)) {
        clearInterval(poll);
        done();
      }
    }, 100);
    child.once("exit", () => {
      clearInterval(poll);
      done();
    });
  });
}

/** Whether process `pid` is gone or a zombie (Linux `/proc`; elsewhere: never known). */
function gone(pid: number | undefined): boolean {
  if (pid === undefined) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) === "Z";
  } catch {
    return existsSync("/proc/self");
  }
}

/**
 * The arguments every launched server starts with, before its options' own: its port, address and
 * directory (log inside), no persistence, DEBUG and MODULE from loopback, replicas synced at once.
 * A test that restarts a server passes them again (valkey-server rewrites its own `/proc` command
 * line, so they cannot be read back).
 */
export function baseArgs(port: number, host: string, dir: string): string[] {
  return [
    "--port",
    String(port),
    "--bind",
    host,
    "--dir",
    dir,
    "--logfile",
    join(dir, "valkey.log"),
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--protected-mode",
    "no",
    "--enable-debug-command",
    "local",
    "--enable-module-command",
    "local",
    "--repl-diskless-sync-delay",
    "0",
  ];
}

async function startOnce(opts: ServerOptions, mod: string | null): Promise<ServerHandle | "port-in-use"> {
  const port = opts.port ?? await freePort();
  const dir = mkdtempSync(join(tmpdir(), "emq-valkey-"));
  const argv: string[] = baseArgs(port, LOOPBACK, dir);
  if (opts.cluster) {
    argv.push(
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      join(dir, "nodes.conf"),
      "--cluster-node-timeout",
      "5000",
    );
  }
  if (mod) argv.push("--loadmodule", mod);
  if (opts.replicaOf !== undefined) argv.push("--replicaof", LOOPBACK, String(opts.replicaOf));
  if (opts.args) argv.push(...opts.args);

  const first = launch(argv, dir, opts.launcher, opts.binary);
  if (first instanceof Error) {
    rmSync(dir, { recursive: true, force: true });
    throw first;
  }
  let proc = first;
  let stopped: Promise<void> | null = null;
  const kill = async (): Promise<void> => {
    const { child } = proc;
    if (child.exitCode === null && child.signalCode === null) {
      child.ref?.(); // keep the host alive until the server is really gone
      child.kill("SIGKILL");
      await exited(child);
    }
    unregister(proc.pid);
  };
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };
  const handle: ServerHandle = {
    host: LOOPBACK,
    port,
    address: `${LOOPBACK}:${port}`,
    get pid(): number {
      return proc.pid;
    },
    dir,
    module: mod,
    log: () => readLog(dir),
    kill,
    restart: async () => {
      if (stopped !== null) throw new Error(`valkey-server on port ${port} was stopped: it cannot restart`);
      await kill();
      const next = launch(argv, dir, opts.launcher, opts.binary);
      if (next instanceof Error) throw next;
      proc = next;
      const outcome = await ready(proc, port, opts.readyTimeoutMs ?? 20000);
      if (outcome !== "ready") {
        throw new Error(`${outcome}\n--- valkey-server ${argv.join(" ")} (restart)\n${readLog(dir).split("\n").slice(-30).join("\n")}`);
      }
    },
    stop,
  };

  const outcome = await ready(proc, port, opts.readyTimeoutMs ?? 20000);
  if (outcome === "ready") return handle;
  const text = readLog(dir) + proc.stderr();
  await stop();
  if (/address already in use/i.test(text)) return "port-in-use";
  throw new Error(`${outcome}\n--- valkey-server ${argv.join(" ")}\n${text.split("\n").slice(-30).join("\n")}`);
}

/** A running `valkey-server` process and what it printed on stderr. */
interface Launched {
  readonly child: ChildProcess;
  readonly pid: number;
  stderr(): string;
}

/**
 * Spawns `valkey-server` with `argv` in `dir` (under `launcher` when given) and registers it for
 * the exit hooks; a spawn failure is returned.
 */
function launch(argv: string[], dir: string, launcher: string[] = [], binary: string = serverBinary()): Launched | Error {
  const [command, ...args] = [...launcher, binary, ...argv];
  // In a process group of its own: a terminal's Ctrl-C (SIGINT to the foreground group) reaches the
  // program, which stops in order (emq ui: its traffic, then its servers), not the server under it
  // first (the traffic then waited on a server already gone: 5 s). The exit hooks and the watchdog
  // still kill it when the program ends.
  const child = spawn(command!, args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"], detached: true });
  let stderr = "";
  child.stderr?.on("data", (c: Uint8Array) => {
    stderr += new TextDecoder().decode(c);
  });
  const pid = child.pid;
  if (pid === undefined) return new Error(`could not spawn ${command}`);
  register(pid, dir);
  return { child, pid, stderr: () => stderr };
}

/**
 * Waits until the server of `proc` answers PING on `port` (`ready`: then it no longer keeps the
 * host alive), or says why not (it exited, or the wait timed out).
 */
async function ready(proc: Launched, port: number, timeoutMs: number): Promise<string> {
  const died = exited(proc.child).then(() => "valkey-server exited");
  const up = waitUntil(
    `valkey-server on port ${port} to answer PING`,
    async () => (await command(port, ["PING"], 1000)) === "PONG",
    timeoutMs,
    25,
  ).then(() => "ready");
  const outcome = await Promise.race([died, up]).catch((e: Error) => e.message);
  if (outcome === "ready") {
    // A forgotten server must not keep the host alive: the exit hooks kill it when the host ends.
    proc.child.unref?.();
    (proc.child.stderr as { unref?: () => void } | null)?.unref?.();
  }
  return outcome;
}

/**
 * Starts one `valkey-server` on a free loopback port in a fresh temporary directory, without
 * persistence, with `DEBUG` and `MODULE` commands enabled for local clients, and waits until it
 * answers PING, with the module `module` names loaded (none by default).
 */
export async function startServer(opts: ServerOptions = {}): Promise<ServerHandle> {
  const mod = resolveModule(opts.module);
  for (let attempt = 0; attempt < 5; attempt++) {
    const h = await startOnce(opts, mod);
    if (h !== "port-in-use") return h;
    if (opts.port !== undefined) throw new Error(`port ${opts.port} is in use on ${LOOPBACK}`);
  }
  throw new Error("could not bind a free loopback port after 5 attempts");
}

/** A primary with one replica, in sync. */
export interface ReplicatedHandle {
  /** The primary. */
  readonly primary: ServerHandle;
  /** The replica (`replicaof` the primary). */
  readonly replica: ServerHandle;
  /** Stops both servers. Safe to call more than once. */
  stop(): Promise<void>;
}

/**
 * Waits until the replica on `replicaPort` is linked to its primary and has applied everything the
 * primary on `primaryPort` has sent so far (equal replication offsets).
 */
export async function waitForSync(primaryPort: number, replicaPort: number, timeoutMs = 30000): Promise<void> {
  await waitUntil(`replica ${replicaPort} in sync with ${primaryPort}`, async () => {
    const r = infoFields(await command(replicaPort, ["INFO", "replication"]));
    if (r["master_link_status"] !== "up" || r["master_sync_in_progress"] !== "0") return false;
    const p = infoFields(await command(primaryPort, ["INFO", "replication"]));
    const off = p["master_repl_offset"];
    return off !== undefined && r["slave_repl_offset"] === off;
  }, timeoutMs);
}

/**
 * Starts a primary and one replica of it (both with the same options) and waits until the replica
 * has completed its initial sync.
 */
export async function startReplicated(opts: Omit<ServerOptions, "replicaOf"> = {}): Promise<ReplicatedHandle> {
  const primary = await startServer(opts);
  let replica: ServerHandle | undefined;
  try {
    replica = await startServer({ ...opts, replicaOf: primary.port });
    await waitForSync(primary.port, replica.port);
  } catch (e) {
    await Promise.all([replica?.stop(), primary.stop()]);
    throw e;
  }
  const r = replica;
  let stopped: Promise<void> | null = null;
  return {
    primary,
    replica: r,
    stop: () => (stopped ??= Promise.all([r.stop(), primary.stop()]).then(() => undefined)),
  };
}
