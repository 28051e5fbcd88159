/**
 * Leak protection: every server the launcher starts is registered here and killed when the host
 * process exits, and each one also gets a small `sh` watchdog that kills it (and removes its
 * directory) if the host process dies without running exit handlers (SIGKILL, crash). Should
 * both fail, `orphans.ts` finds the server by its owner record: the first launcher of every process
 * sweeps what hosts that are gone left behind.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { recordOwner, sweepOrphans } from "./orphans.ts";

interface Live {
  pid: number;
  dir: string;
}

const live = new Map<number, Live>();
let hooked = false;
let deferred: ((signal: string) => void) | null = null;

type Proc = {
  pid?: number;
  on?: (event: string, fn: (...a: unknown[]) => void) => unknown;
  once?: (event: string, fn: (...a: unknown[]) => void) => unknown;
  exit?: (code?: number) => never;
  kill?: (pid: number, sig?: string) => unknown;
};

function proc(): Proc | undefined {
  return (globalThis as { process?: Proc }).process;
}

/** Kills every registered server now, synchronously, and removes its directory. */
export function killAll(): void {
  for (const { pid, dir } of live.values()) {
    try {
      proc()?.kill?.(pid, "SIGKILL");
    } catch {
      // already gone
    }
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
  live.clear();
}

function hook(): void {
  if (hooked) return;
  hooked = true;
  sweepOrphans();
  const p = proc();
  p?.on?.("exit", () => killAll());
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    try {
      p?.once?.(sig, () => {
        if (deferred !== null && sig !== "SIGHUP") return deferred(sig);
        killAll();
        p.exit?.(sig === "SIGINT" ? 130 : 143);
      });
    } catch {
      // signal listeners unsupported here
    }
  }
}

/**
 * Hands SIGINT and SIGTERM to `handler` instead of killing every server and exiting at once: for
 * a host that stops in its own order and stops its servers itself (`emq ui`). `null` restores the
 * default. The exit hook and the watchdogs still kill the servers of a host that dies without.
 */
export function deferSignals(handler: ((signal: string) => void) | null): void {
  deferred = handler;
}

/**
 * Registers a started server so that exit handlers and a watchdog kill it. The watchdog is a
 * detached `sh` loop that polls the host pid once a second.
 */
export function register(pid: number, dir: string): void {
  hook();
  live.set(pid, { pid, dir });
  const host = proc()?.pid;
  if (!host) return;
  recordOwner(pid, dir, host);
  try {
    const dog = spawn(
      "sh",
      [
        "-c",
        'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done; ' +
        'if kill -0 "$2" 2>/dev/null; then kill -9 "$2"; sleep 0.2; rm -rf "$3"; fi',
        "emq-watchdog",
        String(host),
        String(pid),
        dir,
      ],
      { detached: true, stdio: "ignore" },
    );
    dog.unref();
  } catch {
    // no sh: exit handlers remain
  }
}

/** Forgets a server that was stopped normally. */
export function unregister(pid: number): void {
  live.delete(pid);
}
