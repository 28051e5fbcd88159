/**
 * Worker crash: a worker in a child process claims a job with a short lease and is SIGKILLed
 * mid-job; once the lease has passed, a worker in this process reaps the job and completes it on
 * the second attempt.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { EchoMQ, type Job } from "../../client.ts";
import { jobKey } from "../../mod.ts";
import { command, repoRoot, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { requireModule } from "../native/_native.ts";


const LEASE_MS = 1500;
let server: ServerHandle;

beforeAll(async () => {
  server = await startServer({ module: requireModule() });
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

test("a SIGKILLed worker's job is reaped after its lease and completed by another (attempts = 2)", async () => {
  const q = "crash";
  const mq = await EchoMQ.connect<{ n: number }>({
    addresses: [{ host: "127.0.0.1", port: server.port }],
    requestTimeout: 10_000,
  });
  try {
    const id = await mq.enqueue(q, { n: 1 });
    const root = repoRoot();
    const child = spawn(
      join(root, "node_modules", ".bin", "bun"),
      [join(root, "tests", "reliability", "_crash_worker.ts"), String(server.port), q, String(LEASE_MS)],
      { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise<string | null>((done) => child.once("exit", (_code, signal) => done(signal)));
    let claimedLine: string;
    try {
      claimedLine = await new Promise<string>((done, fail) => {
        let out = "";
        const timer = setTimeout(() => fail(new Error(`child did not claim within 60 s: ${out}`)), 60_000);
        child.stdout!.on("data", (chunk: Uint8Array) => {
          out += new TextDecoder().decode(chunk);
          const line = out.split("\n").find((l) => l.startsWith("claimed "));
          if (line) {
            clearTimeout(timer);
            done(line);
          }
        });
        child.once("exit", () => fail(new Error(`child exited before claiming: ${out}`)));
      });
    } finally {
      child.kill("SIGKILL");
    }
    const killedAt = Date.now();
    expect(await exited).toBe("SIGKILL");
    expect(claimedLine).toBe(`claimed ${id} 1`);
    const counts = await mq.counts(q);
    expect(counts).toEqual({ pending: 0, active: 1, schedule: 0, dead: 0 });
    // the dead worker's lease, as the server wrote it on the row (same host clock as ours)
    const leaseEnd = Number(await command(server.port, ["HGET", jobKey(q, id), "deadline_ms"]));
    expect(leaseEnd).toBeGreaterThan(0);

    const seen: Array<Job<{ n: number }> & { at: number }> = [];
    const worker = mq.work(q, (job) => {
      seen.push({ ...job, at: Date.now() });
    }, { leaseMs: 30_000, maintenanceMs: 100, pollMs: 20 });
    const deadline = Date.now() + 60_000;
    while (worker.completed < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await worker.stop();
    expect(seen.length).toBe(1);
    expect(seen[0]!.id).toBe(id);
    expect(seen[0]!.attempts).toBe(2);
    expect(seen[0]!.payload).toEqual({ n: 1 });
    // handed out again only once the dead worker's lease had run out
    expect(seen[0]!.at).toBeGreaterThanOrEqual(leaseEnd);
    expect(seen[0]!.at).toBeGreaterThanOrEqual(killedAt);
    expect(worker.completed).toBe(1);
    expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await command(server.port, ["EXISTS", jobKey(q, id)])).toBe(0);
  } finally {
    await mq.close();
  }
}, 120_000);
