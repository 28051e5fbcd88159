/**
 * A worker process that stops mid-job, per backend, its job then taken by a worker in this
 * process (waiting on the server, no polling) through CLAIM's own reap:
 * - crashed: a worker in a child process claims a job with a short lease (kept alive by its
 *   heartbeat) and is SIGKILLed mid-job; once the lease has passed, the job is completed on the
 *   second attempt, under a higher token; the dead worker's token is refused.
 * - frozen: a worker in a child process sends a CLAIM and is SIGSTOPped before it reads the reply
 *   (the server has claimed the job for it); the lease runs out, the other worker acks the job;
 *   after 3× the lease the child gets SIGCONT. It must not start a handler on that job (its lease
 *   is gone by the child's monotonic clock): it drops the job and says so through onError
 *   (`LeaseExpiredError`).
 */
import { describe, expect, test } from "bun:test";
import { EchoMQ, type Job, LeaseLostError } from "../../client.ts";
import { jobKey } from "../../mod.ts";
import { command } from "../../tools/embedded/mod.ts";
import { child, line } from "./_child.ts";
import { sleep } from "./_recorder.ts";
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
        const c = child([String(site.server.port), q, backend, "crash", String(LEASE_MS)]);
        let claimedLine: string;
        try {
          claimedLine = await line(c.lines, "claimed ", 60_000);
          // let the child's heartbeat extend the lease past its first deadline at least once
          await new Promise((r) => setTimeout(r, LEASE_MS + 200));
          expect(Number(await command(site.server.port, ["HGET", jobKey(q, id), "deadline_ms"])) - Date.now()).toBeGreaterThan(0);
        } finally {
          c.proc.kill("SIGKILL");
        }
        const killedAt = Date.now();
        expect(await c.exited).toBe("SIGKILL");
        const [, claimedId, attempts, token] = claimedLine.split(" ");
        expect(claimedId).toBe(id);
        expect(attempts).toBe("1");
        const deadToken = Number(token);
        expect(deadToken).toBeGreaterThan(0);
        const counts = await mq.counts(q);
        expect(counts).toEqual({ pending: 0, active: 1, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
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
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 1, waitingChildren: 0 });
        // completed once, kept (the default retention of completed jobs)
        expect(await command(site.server.port, ["HGET", jobKey(q, id), "state"])).toBe("completed");
        // the dead worker's claim, settled late: refused, nothing written
        const stale = await mq.ack({ id, queue: q, token: deadToken }).catch((e: unknown) => e);
        expect(stale).toBeInstanceOf(LeaseLostError);
      } finally {
        await mq.close();
      }
    }, 120_000);
  });

  describe(`frozen worker (${backend})`, () => {
    test("SIGSTOPped with a claim unread for 3× its lease: after SIGCONT it starts no handler on the job another worker acked", async () => {
      const q = `frozen-${backend}`;
      const mq = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: "127.0.0.1", port: site.server.port }], backend });
      const c = child([String(site.server.port), q, backend, "freeze", String(LEASE_MS)]);
      try {
        const id = await mq.enqueue(q, { n: 1 });
        await line(c.lines, "sent");
        c.proc.kill("SIGSTOP");
        const stoppedAt = Date.now();
        expect((await mq.counts(q)).active).toBe(1); // claimed for the frozen child
        const acked: string[] = [];
        const other = mq.work(q, (job) => void acked.push(job.id), { blockMs: 200, maintenanceMs: 1000 });
        while (acked.length === 0 && Date.now() - stoppedAt < 20_000) await sleep(20);
        await other.stop();
        expect(acked).toEqual([id]);
        await sleep(Math.max(0, stoppedAt + 3 * LEASE_MS - Date.now()));
        c.proc.kill("SIGCONT");
        const said = await line(c.lines, "dropped", 10_000).catch((e: Error) => e.message);
        await sleep(300); // a handler the child would start comes right after its claim is read
        console.log(`[frozen ${backend}] frozen ${Date.now() - stoppedAt} ms (lease ${LEASE_MS}); child said: ${c.lines.join(" | ")}`);
        expect(c.lines.filter((l) => l.startsWith("started"))).toEqual([]);
        expect(said).toMatch(new RegExp(`^dropped worker "${q}": ${id} \\(token \\d+\\) not started: its lease ran out \\d+ ms before`));
      } finally {
        c.proc.kill("SIGKILL");
        await c.exited;
        await mq.close();
      }
    }, 60_000);
  });
}
