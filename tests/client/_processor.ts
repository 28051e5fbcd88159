/**
 * A sandboxed processor for tests/client/sandbox.test.ts: what it does is the job's payload `do`.
 */
import process from "node:process";
import { UnrecoverableError } from "../../lib/client/worker/worker_errors.ts";

interface Job {
  payload: { do: string; n?: number };
  attempts: number;
  signal: AbortSignal;
  progress(value: unknown): Promise<void>;
  rateLimited(ms: number): never;
}

/** Keeps `memory` reachable so the allocations are not collected. */
const memory: unknown[] = [];

export default async function (job: Job): Promise<unknown> {
  switch (job.payload.do) {
    case "ok":
      return { doubled: (job.payload.n ?? 0) * 2, pid: process.pid };
    case "progress":
      await job.progress({ done: 50 });
      return "progressed";
    case "throw":
      throw new Error("boom");
    case "unrecoverable":
      throw new UnrecoverableError("never");
    case "exit":
      process.exit(3);
      break;
    case "abort":
      process.abort();
      break;
    case "oom":
      // about 1 MB a step, a pause every 8 steps: a leak, not a single allocation
      for (let i = 0;; i++) {
        memory.push(new Array(2 ** 17).fill(i));
        if (i % 8 === 0) await new Promise((r) => setTimeout(r, 1));
      }
    case "hang":
      // ignores its signal and never returns
      for (;;) await new Promise((r) => setTimeout(r, 1000));
    case "signal":
      // returns once its signal aborts, with the reason it saw
      return await new Promise((done) => job.signal.addEventListener("abort", () => done(String(job.signal.reason))));
  }
  return null;
}
