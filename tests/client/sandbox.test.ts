/**
 * Sandboxed processors (issue 38.2): a processor module's default export runs in a pool of worker
 * threads or child processes, for each backend on one server (a client-only feature). A processor
 * that throws fails its attempt as in process; one that exits, aborts or runs out of memory fails
 * only its job's attempt, with a reason that says how it died, and the pool replaces it; one that
 * ignores its time limit is terminated and its slot freed; progress crosses back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ, EchoMQError, type Worker } from "../../client.ts";
import { BACKENDS, eventually, useStandalone } from "./_harness.ts";

const PROCESSOR = new URL("./_processor.ts", import.meta.url);
const isBun = "Bun" in globalThis;
/** Node's threads take a heap limit; Bun's and Deno's take none. */
const threadLimits = !isBun && !("Deno" in globalThis);

const site = useStandalone();

type P = { do: string; n?: number };

for (const backend of BACKENDS) {
  for (const sandbox of ["thread", "process"] as const) {
    describe(`${backend}, ${sandbox}`, () => {
      let mq: EchoMQ<P>;
      let n = 0;
      beforeAll(async () => {
        mq = await EchoMQ.connect({ addresses: site().addresses, backend });
      });
      afterAll(async () => {
        await mq.close();
      });

      /** Runs `jobs` on a fresh queue with a sandboxed worker; resolves once each ran (dead, completed or scheduled again). */
      async function runAll(jobs: P[], opts: Record<string, unknown> = {}, timeoutMs?: number): Promise<{ q: string; ids: string[]; w: Worker<P> }> {
        const q = `sbx-${backend}-${sandbox}-${n++}`;
        const ids: string[] = [];
        // (`timeoutMs`: the first job's own limit; a new sandbox's start counts in a limit)
        for (const p of jobs) ids.push(await mq.enqueue(q, p, ids.length === 0 && timeoutMs !== undefined ? { timeoutMs } : {}));
        const w = mq.work(q, PROCESSOR, { sandbox, maxAttempts: 1, blockMs: 100, onError: () => {}, ...opts });
        await eventually(async () => {
          for (const id of ids) {
            const s = (await mq.getJob(q, id))?.state;
            if (s !== "dead" && s !== "completed" && s !== "scheduled") return false;
          }
          return true;
        }, 60_000);
        await w.stop();
        return { q, ids, w };
      }

      test("a result comes back; progress crosses; the sandbox is reused", async () => {
        const { q, ids, w } = await runAll([{ do: "ok", n: 21 }, { do: "progress" }, { do: "ok", n: 1 }]);
        const [a, b, c] = await Promise.all(ids.map((id) => mq.getJob(q, id)));
        expect((a!.result as { doubled: number }).doubled).toBe(42);
        expect([b!.result, b!.progress]).toEqual(["progressed", { done: 50 }]);
        if (sandbox === "process") expect((c!.result as { pid: number }).pid).toBe((a!.result as { pid: number }).pid);
        expect(w.completed).toBe(3);
      }, 90_000);

      test("a throw fails the attempt as in process: the reason is the error's; UnrecoverableError buries", async () => {
        const { q, ids } = await runAll([{ do: "throw" }, { do: "unrecoverable" }], { maxAttempts: 3, backoff: 60_000 });
        const [a, b] = await Promise.all(ids.map((id) => mq.getJob(q, id)));
        expect([a!.state, a!.reason]).toEqual(["scheduled", "Error: boom"]);
        expect([b!.state, b!.reason]).toEqual(["dead", "UnrecoverableError: never"]);
      }, 90_000);

      test("an exit fails only that job's attempt, saying so; the pool replaces the sandbox", async () => {
        const { q, ids } = await runAll([{ do: "exit" }, { do: "ok", n: 2 }], { concurrency: 1 });
        const [a, b] = await Promise.all(ids.map((id) => mq.getJob(q, id)));
        expect(a!.state).toBe("dead");
        expect(a!.reason).toBe(`SandboxCrashError: the sandbox ${sandbox} running the job exited with code 3`);
        expect([b!.state, (b!.result as { doubled: number }).doubled]).toEqual(["completed", 4]);
      }, 90_000);

      test("one that ignores its time limit is terminated and its slot freed: the next job runs", async () => {
        const started = performance.now();
        const { q, ids } = await runAll([{ do: "hang" }, { do: "ok", n: 3 }], { concurrency: 1 }, 300);
        const [a, b] = await Promise.all(ids.map((id) => mq.getJob(q, id)));
        expect([a!.state, a!.reason]).toEqual(["dead", "timed out after 300 ms"]);
        expect(b!.state).toBe("completed");
        expect(performance.now() - started).toBeLessThan(30_000);
      }, 90_000);

      if (sandbox === "process") {
        test("an abort fails only that job's attempt: killed by SIGABRT", async () => {
          const { q, ids } = await runAll([{ do: "abort" }, { do: "ok", n: 2 }], { concurrency: 1 });
          const [a, b] = await Promise.all(ids.map((id) => mq.getJob(q, id)));
          expect(a!.reason).toMatch(/^SandboxCrashError: the sandbox process running the job (was killed by SIGABRT|exited with code 134)$/);
          expect(b!.state).toBe("completed");
        }, 90_000);
      }

      if (sandbox === "process" || threadLimits) {
        test("out of memory under memoryLimitMb fails only that job's attempt, saying so", async () => {
          // (Bun's limit is on resident memory, whose floor is higher than a heap's)
          const { q, ids } = await runAll([{ do: "oom" }, { do: "ok", n: 2 }], { concurrency: 1, memoryLimitMb: isBun ? 256 : 64 });
          const [a, b] = await Promise.all(ids.map((id) => mq.getJob(q, id)));
          expect(a!.reason).toMatch(new RegExp(`^SandboxCrashError: the sandbox ${sandbox} running the job ran out of memory`));
          expect(b!.state).toBe("completed");
        }, 90_000);
      } else {
        test("Bun's and Deno's worker threads take no memory limit: refused", () => {
          expect(() => mq.work("x", PROCESSOR, { sandbox, memoryLimitMb: 64 })).toThrow(EchoMQError);
        });
      }
    });
  }
}

test("sandbox options need a processor module's URL", async () => {
  const mq = await EchoMQ.connect({ addresses: site().addresses });
  try {
    expect(() => mq.work("x", () => {}, { sandbox: "thread" })).toThrow(EchoMQError);
    expect(() => mq.work("x", PROCESSOR, { sandbox: "vm" as "thread" })).toThrow(EchoMQError);
  } finally {
    await mq.close();
  }
});
