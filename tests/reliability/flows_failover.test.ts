/**
 * The flows failover proof (issue 36), short: per backend, 60 flows (a parent, 4 children in 4
 * queues over the 3 primaries, a grandchild under the first child) on a 3-primary cluster with
 * replicas, workers in 2 processes; one worker process SIGKILLed mid-run, the parent queue's
 * primary SIGKILLed and failed over (tests/reliability/_flows_failover.ts): every parent runs,
 * after all its descendants; nothing stuck, no outbox entry left, every queue's counters balance
 * (a flow the dead primary took whole — its FLOW acknowledged before a replica had it: `flow` has
 * no `durable` — is counted and printed, not failed: asynchronous replication promises no more).
 * The long run: `bun tools/flows_failover.ts --flows 500`.
 */
import { expect, test } from "bun:test";
import { runFailover } from "./_flows_failover.ts";
import { BACKENDS } from "./_server.ts";

const FLOWS = 60;

for (const backend of BACKENDS) {
  test(`${backend}: a worker process and a primary killed mid-run — every parent once, after its descendants`, async () => {
    const f = await runFailover(backend, FLOWS);
    console.log(
      `[flows_failover ${backend}] ${f.flows} flows in ${f.runMs} ms, promotion ${f.promotionMs} ms, flow calls sent again ` +
        `${f.flowRetries}, handlers run again ${f.reruns} (${f.rerunsSameAttempt} same attempt), not once: ${f.parentsNotOnce} parents, ` +
        `${f.childrenNotOnce} children; flows lost whole with the primary ${f.lostWithPrimary}, partly ${f.lostPartly}`,
    );
    expect(f.problems).toEqual([]);
    expect([f.early, f.stuck, f.left]).toEqual([0, 0, 0]);
    expect(f.unbalanced).toEqual([]);
    expect(f.promotionMs).toBeGreaterThan(0);
  }, 240_000);
}
