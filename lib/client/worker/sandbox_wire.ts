/**
 * The messages between a worker and its sandboxes (sandbox.ts, sandbox_child.ts), and how an error
 * crosses: as its name, message, stack and the numbers the worker reads (`ms` of a
 * `RateLimitedError`, `retryDelayMs`, `timeoutMs`), rebuilt on the other side as the same class
 * where the worker tells classes apart, so a sandboxed attempt fails with the reason an in-process
 * one would.
 *
 * @module
 */
import { JobTimeoutError, RateLimitedError, UnrecoverableError } from "./worker_errors.ts";

/** An error as it crosses; `thrown` when what was thrown is no `Error` (its `String`). */
export interface WireError {
  readonly name?: string;
  readonly message?: string;
  readonly stack?: string;
  readonly thrown?: string;
  readonly numbers?: Readonly<Record<string, number>>;
}

/** The job's fields a sandboxed handler sees (the claimed job's, those it lacks left out). */
export interface WireJob {
  readonly id: string;
  readonly queue: string;
  readonly token: number;
  readonly attempts: number;
  readonly payload: unknown;
  readonly timeoutMs?: number;
  readonly dedupKey?: string;
  readonly traceparent?: string;
  readonly priority?: number;
  readonly lane?: string;
  /** Its lease's end, in ms from when the job was sent (`leaseUntil` on the sandbox's clock). */
  readonly leaseInMs: number;
}

/** Worker → sandbox. */
export type ToSandbox =
  | { readonly t: "job"; readonly job: WireJob; readonly calls: readonly string[] }
  | { readonly t: "abort"; readonly reason: WireError }
  | { readonly t: "reply"; readonly n: number; readonly value?: unknown; readonly error?: WireError };

/** Sandbox → worker. */
export type FromSandbox =
  | { readonly t: "ready"; readonly error?: WireError }
  /** A thread's handler called `process.exit(code)`. */
  | { readonly t: "exit"; readonly code: number }
  | { readonly t: "call"; readonly n: number; readonly method: string; readonly args: readonly unknown[] }
  /** The handler returned (`json`: its result's JSON text, absent for none) or threw. */
  | { readonly t: "done"; readonly json?: string; readonly error?: WireError; readonly unencodable?: string };

/** The numbers of an error the worker reads. */
const NUMBERS = ["ms", "retryDelayMs", "timeoutMs"] as const;

/** `e` as it crosses. */
export function toWire(e: unknown): WireError {
  if (!(e instanceof Error)) return { thrown: String(e) };
  const numbers: Record<string, number> = {};
  for (const k of NUMBERS) {
    const v = (e as unknown as Record<string, unknown>)[k];
    if (typeof v === "number") numbers[k] = v;
  }
  return { name: e.name, message: e.message, stack: e.stack, numbers };
}

/** The error `w` describes, rebuilt (the worker's own classes as themselves). */
export function fromWire(w: WireError): unknown {
  if (w.thrown !== undefined) return w.thrown;
  const n = w.numbers ?? {};
  const message = w.message ?? "";
  let e: Error;
  if (w.name === "RateLimitedError" && n["ms"] !== undefined) e = new RateLimitedError(n["ms"], message);
  else if (w.name === "UnrecoverableError") e = new UnrecoverableError(message);
  else if (w.name === "JobTimeoutError" && n["timeoutMs"] !== undefined) e = new JobTimeoutError(n["timeoutMs"]);
  else {
    e = new Error(message);
    e.name = w.name ?? "Error";
    Object.assign(e, n);
  }
  if (w.stack !== undefined) e.stack = w.stack;
  return e;
}
