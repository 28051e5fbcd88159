/**
 * Sandboxed processors: `mq.work(queue, new URL("./processor.ts", import.meta.url), { sandbox })`
 * runs the module's default export in a pool of worker threads or child processes of the same
 * runtime, one job at a time each, reused across jobs. The worker's handler is then
 * {@link Pool.handler}: it sends the job's view (sandbox_wire.ts), forwards the view's methods
 * (`progress`, and `log` where the view has it) as calls back, and maps the sandbox's answer —
 * or its death — to the attempt's outcome. A sandbox that dies fails only its job's attempt
 * ({@link SandboxCrashError}, saying how it died) and is not reused; one whose job runs past its
 * time limit is terminated at once, its slot freed.
 *
 * @module
 */
import { Worker as Thread } from "node:worker_threads";
import { type ChildProcess, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import process from "node:process";
import { EchoMQError } from "../errors.ts";
import type { WorkerJob } from "../job.ts";
import { JobTimeoutError, SandboxCrashError } from "./worker_errors.ts";
import { type FromSandbox, fromWire, type ToSandbox, toWire, type WireError, type WireJob } from "./sandbox_wire.ts";

/** Where a sandboxed processor runs. */
export type SandboxKind = "thread" | "process";

/** The view's methods a sandboxed handler calls back (those the view has). */
const FORWARDED = ["progress", "log"] as const;

/** How often a Bun child process's resident memory is compared with its limit, in ms. */
const RSS_POLL_MS = 50;

const runtime: "bun" | "deno" | "node" = "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node";

/** The module a sandbox starts: sandbox_child, of the same kind (.ts here, .js once built) as this file. */
const CHILD = new URL(import.meta.url.endsWith(".ts") ? "./sandbox_child.ts" : "./sandbox_child.js", import.meta.url);

/** A started sandbox: its channel, whichever kind. */
interface Channel {
  post(m: ToSandbox): void;
  /** Terminates it (a thread) or kills it (SIGKILL, a process). */
  kill(): void;
}

/** What a channel reports: each message, and its death (how it died). */
/** A sandbox's answers to its worker (an exit is its channel's business). */
type Answer = Exclude<FromSandbox, { t: "exit" }>;

interface Listener {
  message(m: Answer): void;
  died(how: string): void;
}

function openThread(processor: string, memoryLimitMb: number | null, on: Listener): Channel {
  const thread = new Thread(fileURLToPath(CHILD.href), {
    workerData: { processor },
    ...(memoryLimitMb === null ? {} : { resourceLimits: { maxOldGenerationSizeMb: memoryLimitMb } }),
  });
  let cause: string | null = null;
  thread.on("message", (m: FromSandbox) => {
    if (m.t !== "exit") return on.message(m);
    // its handler called process.exit: it dies of that, whether or not the runtime says so
    cause = `exited with code ${m.code}`;
    void thread.terminate();
  });
  thread.on("error", (e: Error & { code?: string }) => {
    cause = e.code === "ERR_WORKER_OUT_OF_MEMORY" ? `ran out of memory (limit ${memoryLimitMb} MB)` : `died of an uncaught ${e.name}: ${e.message}`;
  });
  thread.on("exit", (code: number) => on.died(cause ?? `exited with code ${code}`));
  return { post: (m) => thread.postMessage(m), kill: () => void thread.terminate() };
}

function openProcess(processor: string, memoryLimitMb: number | null, on: Listener): Channel {
  const execArgv = memoryLimitMb === null || runtime === "bun"
    ? []
    : runtime === "deno"
    ? [`--v8-flags=--max-old-space-size=${memoryLimitMb}`]
    : [`--max-old-space-size=${memoryLimitMb}`];
  // Deno's IPC carries JSON only; Bun and Node clone as a thread's messages do
  const child: ChildProcess = fork(fileURLToPath(CHILD.href), [processor], {
    execArgv,
    serialization: runtime === "deno" ? "json" : "advanced",
    stdio: ["ignore", "inherit", "pipe", "ipc"],
  });
  // its stderr passes through; the tail is kept to tell an out-of-memory death from another abort
  let tail = "";
  const text = new TextDecoder();
  child.stderr?.on("data", (chunk: Uint8Array) => {
    process.stderr.write(chunk);
    tail = (tail + text.decode(chunk, { stream: true })).slice(-4096);
  });
  let cause: string | null = null;
  let poll: ReturnType<typeof setInterval> | undefined;
  if (memoryLimitMb !== null && runtime === "bun" && process.platform === "linux") {
    // Bun has no heap limit: its resident memory is watched instead
    const page = 4096;
    poll = setInterval(() => {
      try {
        const rss = Number(readFileSync(`/proc/${child.pid}/statm`, "utf8").split(" ")[1]) * page / 2 ** 20;
        if (rss > memoryLimitMb) {
          cause = `ran out of memory (resident ${Math.round(rss)} MB, limit ${memoryLimitMb} MB)`;
          child.kill("SIGKILL");
        }
      } catch {
        // gone already
      }
    }, RSS_POLL_MS);
  }
  child.on("message", (m: Answer) => on.message(m));
  child.on("exit", (code, signal) => {
    clearInterval(poll);
    if (cause === null && /out of memory/i.test(tail)) cause = `ran out of memory (limit ${memoryLimitMb ?? "the runtime's"} MB)`;
    on.died(cause ?? (signal !== null ? `was killed by ${signal}` : `exited with code ${code}`));
  });
  child.on("error", (e) => {
    cause ??= `failed: ${e.message}`;
  });
  return { post: (m) => child.send(m), kill: () => void child.kill("SIGKILL") };
}

/** The job a handler runs, as it crosses. */
function wireJob(job: WorkerJob<unknown>): WireJob {
  const w: Record<string, unknown> = {
    id: job.id,
    queue: job.queue,
    token: job.token,
    attempts: job.attempts,
    payload: job.payload,
    leaseInMs: job.leaseUntil - performance.now(),
  };
  for (const k of ["timeoutMs", "dedupKey", "traceparent", "priority", "lane"] as const) {
    if (job[k] !== undefined) w[k] = job[k];
  }
  return w as unknown as WireJob;
}

/** One sandbox: runs one job at a time. */
class Box {
  readonly #kind: SandboxKind;
  readonly #channel: Channel;
  /** Resolves once the processor module loaded (with its error, if it did not) or the sandbox died. */
  readonly #ready: Promise<WireError | undefined>;
  #readied: (error: WireError | undefined) => void = () => {};
  /** How it died (null while it lives). */
  #dead: string | null = null;
  #current: { resolve: (v: unknown) => void; reject: (e: unknown) => void; job: WorkerJob<unknown> } | null = null;
  /** Killed (or being killed): not reused. */
  #killed = false;
  readonly #gone: () => void;
  /** Resolves once it died. */
  readonly over: Promise<void>;
  #over: () => void = () => {};

  constructor(kind: SandboxKind, processor: string, memoryLimitMb: number | null, gone: () => void) {
    this.#kind = kind;
    this.#gone = gone;
    this.#ready = new Promise((r) => (this.#readied = r));
    this.over = new Promise((r) => (this.#over = r));
    const on: Listener = { message: (m) => this.#message(m), died: (how) => this.#died(how) };
    this.#channel = kind === "thread" ? openThread(processor, memoryLimitMb, on) : openProcess(processor, memoryLimitMb, on);
  }

  /** Lives and runs no job. */
  get idle(): boolean {
    return this.#dead === null && !this.#killed && this.#current === null;
  }

  kill(): void {
    this.#killed = true;
    if (this.#dead === null) this.#channel.kill();
  }

  /** Runs `job`'s handler in the sandbox: resolves with its result, rejects with its error or the sandbox's death. */
  run(job: WorkerJob<unknown>): Promise<unknown> {
    return new Promise((resolve, reject) => {
      let sent = false;
      const signal = job.signal;
      const onAbort = (): void => {
        if (signal.reason instanceof JobTimeoutError) {
          // past its time limit: the sandbox is terminated (not reused), the slot freed now
          if (sent) this.kill();
          this.#current = null;
          reject(signal.reason);
        } else if (sent) this.#channel.post({ t: "abort", reason: toWire(signal.reason) });
      };
      if (signal.aborted) return reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      const settle = (f: () => void): void => {
        signal.removeEventListener("abort", onAbort);
        f();
      };
      void this.#ready.then((loadError) => {
        if (signal.aborted) return settle(() => reject(signal.reason));
        if (this.#dead !== null) return settle(() => reject(new SandboxCrashError(this.#kind, this.#dead!)));
        if (loadError !== undefined) return settle(() => reject(fromWire(loadError)));
        this.#current = { resolve: (v) => settle(() => resolve(v)), reject: (e) => settle(() => reject(e)), job };
        const calls = FORWARDED.filter((m) => typeof (job as unknown as Record<string, unknown>)[m] === "function");
        sent = true;
        this.#channel.post({ t: "job", job: wireJob(job), calls });
      });
    });
  }

  #message(m: Answer): void {
    if (m.t === "ready") return this.#readied(m.error);
    const current = this.#current;
    if (current === null) return;
    if (m.t === "call") {
      const method = (current.job as unknown as Record<string, (...a: unknown[]) => unknown>)[m.method]!;
      Promise.resolve().then(() => method.apply(current.job, [...m.args])).then(
        (value) => this.#post({ t: "reply", n: m.n, value }),
        (e: unknown) => this.#post({ t: "reply", n: m.n, error: toWire(e) }),
      );
      return;
    }
    this.#current = null;
    if (m.unencodable !== undefined) {
      current.reject(new EchoMQError("result", `result of ${current.job.id}: no JSON form: ${m.unencodable}`));
    } else if (m.error !== undefined) current.reject(fromWire(m.error));
    else current.resolve(m.json === undefined ? undefined : JSON.parse(m.json));
  }

  #post(m: ToSandbox): void {
    if (this.#dead === null) this.#channel.post(m);
  }

  #died(how: string): void {
    this.#dead = how;
    this.#readied(undefined);
    const current = this.#current;
    this.#current = null;
    current?.reject(new SandboxCrashError(this.#kind, how));
    this.#gone();
    this.#over();
  }
}

/** A pool of sandboxes running one processor module, as many as the worker's jobs in flight. */
export class Pool {
  readonly #kind: SandboxKind;
  readonly #processor: string;
  readonly #memoryLimitMb: number | null;
  readonly #idle: Box[] = [];
  readonly #all: Set<Box> = new Set();
  #closed = false;

  constructor(processor: URL, kind: SandboxKind, memoryLimitMb: number | null) {
    if (kind === "thread" && memoryLimitMb !== null && runtime !== "node") {
      throw new EchoMQError(
        "options",
        `worker: memoryLimitMb: ${runtime === "bun" ? "Bun" : "Deno"}'s worker threads take no memory limit (sandbox "process" does)`,
      );
    }
    this.#processor = processor.href;
    this.#kind = kind;
    this.#memoryLimitMb = memoryLimitMb;
  }

  /** The worker's handler: runs the job in an idle sandbox, or a new one. */
  readonly handler = async (job: WorkerJob<unknown>): Promise<unknown> => {
    let box = this.#idle.pop();
    while (box !== undefined && !box.idle) box = this.#idle.pop();
    if (box === undefined) {
      if (this.#closed) throw new EchoMQError("closed", "worker stopped: its sandboxes are closed");
      const made: Box = new Box(this.#kind, this.#processor, this.#memoryLimitMb, () => this.#all.delete(made));
      box = made;
      this.#all.add(box);
    }
    try {
      return await box.run(job);
    } finally {
      if (box.idle && !this.#closed) this.#idle.push(box);
    }
  };

  /** Terminates every sandbox (a worker's stop, once its jobs are settled or handed back); resolves once they are gone. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#idle.length = 0;
    const boxes = [...this.#all];
    for (const box of boxes) box.kill();
    await Promise.all(boxes.map((b) => b.over));
  }
}
