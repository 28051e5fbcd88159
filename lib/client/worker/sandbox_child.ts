/**
 * What runs inside a sandbox (a worker thread, or a child process of the same runtime): loads the
 * processor module (its default export is the handler), says it is ready, then runs one job per
 * `job` message with a view of it as an in-process handler gets (`payload`, `signal`, `progress`,
 * `rateLimited`, … — the methods the worker forwards are calls back to it) and answers with the
 * handler's result as JSON, or its error.
 *
 * @module
 */
import { parentPort, workerData } from "node:worker_threads";
import process from "node:process";
import { RateLimitedError } from "./worker_errors.ts";
import { type FromSandbox, fromWire, type ToSandbox, toWire, type WireJob } from "./sandbox_wire.ts";

/** Sends to the worker: the thread's port, or the process's IPC channel. */
const send: (m: FromSandbox) => void = parentPort !== null ? (m) => parentPort!.postMessage(m) : (m) => void process.send!(m);
const processorHref: string = parentPort !== null ? (workerData as { processor: string }).processor : process.argv[2]!;

/** Calls back to the worker in flight, by number. */
const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
let calls = 0;
let controller: AbortController | null = null;
/**
 * A thread's `process.exit` may end it only after the current task (Bun), or end it without an
 * exit code the worker sees (Deno): the worker is told first, and a handler that called it does
 * not answer as if it had returned.
 */
let exiting = false;
if (parentPort !== null) {
  const exit = process.exit.bind(process);
  process.exit = ((code?: number) => {
    exiting = true;
    send({ t: "exit", code: code ?? (typeof process.exitCode === "number" ? process.exitCode : 0) });
    return exit(code);
  }) as typeof process.exit;
}

function call(method: string, args: unknown[]): Promise<unknown> {
  const n = ++calls;
  return new Promise((resolve, reject) => {
    pending.set(n, { resolve, reject });
    send({ t: "call", n, method, args });
  });
}

/** The job a sandboxed handler gets. */
function view(job: WireJob, forwarded: readonly string[], signal: AbortSignal): Record<string, unknown> {
  const { leaseInMs, ...fields } = job;
  const v: Record<string, unknown> = {
    ...fields,
    signal,
    leaseUntil: performance.now() + leaseInMs,
    rateLimited(ms: number): never {
      throw new RateLimitedError(ms);
    },
  };
  for (const method of forwarded) v[method] = (...args: unknown[]) => call(method, args);
  return v;
}

async function run(handler: (job: unknown) => unknown, m: Extract<ToSandbox, { t: "job" }>): Promise<void> {
  controller = new AbortController();
  let done: FromSandbox;
  try {
    const result = await handler(view(m.job, m.calls, controller.signal));
    try {
      const json = result === undefined ? undefined : JSON.stringify(result);
      done = json === undefined ? { t: "done" } : { t: "done", json };
    } catch (e) {
      done = { t: "done", unencodable: e instanceof Error ? e.message : String(e) };
    }
  } catch (e) {
    done = { t: "done", error: toWire(e) };
  }
  controller = null;
  if (!exiting) send(done);
}

let handler: ((job: unknown) => unknown) | null = null;
const onMessage = (m: ToSandbox): void => {
  if (m.t === "job") void run(handler!, m);
  else if (m.t === "abort") controller?.abort(fromWire(m.reason));
  else {
    const p = pending.get(m.n);
    pending.delete(m.n);
    if (m.error !== undefined) p?.reject(fromWire(m.error));
    else p?.resolve(m.value);
  }
};
if (parentPort !== null) parentPort.on("message", onMessage);
else {
  process.on("message", onMessage as (m: unknown) => void);
  process.on("disconnect", () => process.exit(0)); // the worker's process is gone
}

try {
  const mod = await import(processorHref) as { default?: unknown };
  if (typeof mod.default !== "function") throw new TypeError(`sandbox: ${processorHref} has no default export that is a function`);
  handler = mod.default as (job: unknown) => unknown;
  send({ t: "ready" });
} catch (e) {
  send({ t: "ready", error: toWire(e) });
}
