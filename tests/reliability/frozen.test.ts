/**
 * A frozen worker, per backend: a worker in a child process sends a CLAIM and is SIGSTOPped before
 * it reads the reply (the server has claimed the job for it); the lease runs out, a worker in this
 * process gets the job through its own claim's reap and acks it; after 3× the lease the child gets
 * SIGCONT. It must not start a handler on that job (its lease is gone by the child's monotonic
 * clock): it drops the job and says so through onError (`LeaseExpiredError`).
 */
import { describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { child, line } from "./_child.ts";
import { sleep } from "./_recorder.ts";
import { BACKENDS, useServer } from "./_server.ts";

const LEASE_MS = 1500;
const site = useServer();

for (const backend of BACKENDS) {
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
