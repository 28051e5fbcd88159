/**
 * Graceful shutdown on SIGINT and SIGTERM for workers started with `handleSignals` (Bun, Deno and
 * Node, through `node:process`). One listener pair serves every such worker of the process: the
 * first signal stops them all (each with its own deadline), then the process exits with the code
 * the signal would have given it (130 for SIGINT, 143 for SIGTERM) — an open client would
 * otherwise keep it alive, and Ctrl-C would seem to do nothing. A second signal exits at once.
 *
 * @module
 */
import process from "node:process";

const CODES = { SIGINT: 130, SIGTERM: 143 } as const;
type Signal = keyof typeof CODES;

/** The stops to run on a signal, one per worker that asked. */
const stops = new Set<() => Promise<void>>();
let stopping = false;

function onSignal(signal: Signal): void {
  if (stopping) process.exit(CODES[signal]);
  stopping = true;
  void Promise.allSettled([...stops].map((stop) => stop())).then(() => process.exit(CODES[signal]));
}
const listeners = { SIGINT: () => onSignal("SIGINT"), SIGTERM: () => onSignal("SIGTERM") };

/**
 * Runs `stop` on the process's first SIGINT or SIGTERM, then exits. Returns the function that
 * takes it back (a worker stopped otherwise no longer needs it).
 */
export function stopOnSignals(stop: () => Promise<void>): () => void {
  if (stops.size === 0) { for (const s of Object.keys(listeners) as Signal[]) process.on(s, listeners[s]); }
  stops.add(stop);
  return () => {
    if (!stops.delete(stop) || stops.size > 0 || stopping) return;
    for (const s of Object.keys(listeners) as Signal[]) process.off(s, listeners[s]);
  };
}
