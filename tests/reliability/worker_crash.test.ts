/**
 * Worker crash, per backend: a worker in a child process claims a job with a short lease (kept
 * alive by its heartbeat) and is SIGKILLed mid-job; once the lease has passed, a worker in this
 * process (waiting on the server, no polling) gets the job from CLAIM's own reap and completes it
 * on the second attempt, under a higher token; the dead worker's token is refused.
 */
import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { EchoMQ, type Job, LeaseLostError } from "../../client.ts";
import { jobKey } from "../../mod.ts";
import { command, repoRoot } from "../../tools/embedded/mod.ts";
import { BACKENDS, useServer } from "./_server.ts";

const LEASE_MS = 1500;
const site = useServer();

for (const backend of BACKENDS) {
  describe(`worker crash (${backend})`, () => {
    test("a SIGKILLed worker's job is reaped after its lease and completed by another (attempts = 2)", async () => {
      const q = `crash-${backend}`;
      const mq = await EchoMQ.connect<{ n: number }>({
        addresses: [{ host: "127.0.0.1", port: site.server.port }],
        requestTimeout: 10_000,
        backend,
      });
      try {
        const id = await mq.enqueue(q, { n: 1 });
        const root = repoRoot();
        const child = spawn(
          join(root, "node_modules", ".bin", "bun"),
          [join(root, "tests", "reliability", "_crash_worker.ts"), String(site.server.port), q, String(LEASE_MS), backend],
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
          // let the child's heartbeat extend the lease past its first deadline at least once
          await new Promise((r) => setTimeout(r, LEASE_MS + 200));
          expect(Number(await command(site.server.port, ["HGET", jobKey(q, id), "deadline_ms"])) - Date.now()).toBeGreaterThan(0);
        } finally {
          child.kill("SIGKILL");
        }
        const killedAt = Date.now();
        expect(await exited).toBe("SIGKILL");
        const [, claimedId, attempts, token] = claimedLine.split(" ");
        expect(claimedId).toBe(id);
        expect(attempts).toBe("1");
        const deadToken = Number(token);
        expect(deadToken).toBeGreaterThan(0);
        const counts = await mq.counts(q);
        expect(counts).toEqual({ pending: 0, active: 1, schedule: 0, dead: 0 });
        // the dead worker's lease, as the server wrote it on the row (same host clock as ours)
        const leaseEnd = Number(await command(site.server.port, ["HGET", jobKey(q, id), "deadline_ms"]));
        expect(leaseEnd).toBeGreaterThan(0);

        const seen: Array<Job<{ n: number }> & { at: number }> = [];
        const errors: unknown[] = [];
        const worker = mq.work(q, (job) => {
          seen.push({ ...job, at: Date.now() });
        }, { leaseMs: 30_000, maintenanceMs: 1000, blockMs: 5000, onError: (e) => errors.push(e) });
        const deadline = Date.now() + 60_000;
        while (worker.completed < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        const doneAt = Date.now();
        await worker.stop();
        console.log(
          `[worker_crash ${backend}] lease ${LEASE_MS} ms: killed, lease ran out ${leaseEnd - killedAt} ms later, ` +
            `handed out again ${seen[0] ? seen[0].at - leaseEnd : NaN} ms after that (attempts ${seen[0]?.attempts}, ` +
            `token ${deadToken} → ${seen[0]?.token}), completed ${doneAt - killedAt} ms after the kill`,
        );
        expect(errors).toEqual([]);
        expect(seen.length).toBe(1);
        expect(seen[0]!.id).toBe(id);
        expect(seen[0]!.attempts).toBe(2);
        expect(seen[0]!.token).toBeGreaterThan(deadToken);
        expect(seen[0]!.payload).toEqual({ n: 1 });
        // handed out again only once the dead worker's lease had run out
        expect(seen[0]!.at).toBeGreaterThanOrEqual(leaseEnd);
        expect(seen[0]!.at).toBeGreaterThanOrEqual(killedAt);
        expect(worker.completed).toBe(1);
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
        expect(await command(site.server.port, ["EXISTS", jobKey(q, id)])).toBe(0);
        // the dead worker's claim, settled late: refused, nothing written
        const stale = await mq.ack({ id, queue: q, token: deadToken }).catch((e: unknown) => e);
        expect(stale).toBeInstanceOf(LeaseLostError);
      } finally {
        await mq.close();
      }
    }, 120_000);
  });
}
