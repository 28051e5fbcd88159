/**
 * Workers of flows' queues in a process of their own, for the flow proofs that kill a worker
 * process (flows_chaos, flows_failover):
 *
 *   bun tests/reliability/_flow_worker_child.ts <json: { addresses, cluster, backend, queues, leaseMs, gated, relay, concurrency, workMs? }>
 *
 * One worker per queue (`concurrency` each). Each handler prints `start <queue> <id> <attempts>
 * <ms>`; a parent's (a job with children) first reads its children and prints `kids <id>
 * <unfinished>`, the children not finished yet. `gated`: every handler then waits until a line
 * `go <n>` on stdin releases the n longest waiting (the parent SIGKILLs the process around it: a
 * settle held, in flight or landed); `workMs`: every handler then takes that long. A job whose payload says `fail` throws an
 * `UnrecoverableError` (buried at once); the others return `r<id>`. Each handler prints `end
 * <queue> <id> <attempts> <ms>` as it returns (its settle goes out after). `relay`: the workers
 * relay their queues too. Prints `ready` once every worker started.
 */
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { Logger } from "@valkey/valkey-glide";

const config = JSON.parse(process.argv[2]!) as {
  addresses: Array<{ host: string; port: number }>;
  cluster: boolean;
  backend: "module" | "scripts";
  queues: string[];
  leaseMs: number;
  gated: boolean;
  relay: boolean;
  concurrency: number;
  workMs?: number;
};
const say = (line: string): void => void writeSync(1, `${line}\n`);
Logger.setLoggerConfig("off");
setTimeout(() => process.exit(3), 600_000).unref(); // bounded even if nobody kills it
const { EchoMQ, UnrecoverableError } = await import("../../client.ts");
const mq = await EchoMQ.connect<{ fail?: boolean; parent?: boolean }>({
  addresses: config.addresses,
  cluster: config.cluster,
  backend: config.backend,
  requestTimeout: 10_000,
});

const gates: Array<() => void> = [];
for (const queue of config.queues) {
  mq.work(queue, async (job) => {
    say(`start ${queue} ${job.id} ${job.attempts} ${Date.now()}`);
    if (job.payload.parent === true) {
      const kids = await job.children();
      say(`kids ${job.id} ${kids.filter((k) => k.state === "unfinished").length}`);
    }
    if (config.gated) await new Promise<void>((open) => gates.push(open));
    if (config.workMs !== undefined) await new Promise((r) => setTimeout(r, config.workMs));
    say(`end ${queue} ${job.id} ${job.attempts} ${Date.now()}`);
    if (job.payload.fail === true) throw new UnrecoverableError("planned failure");
    return `r${job.id}`;
  }, {
    concurrency: config.concurrency,
    leaseMs: config.leaseMs,
    blockMs: 200,
    maintenanceMs: 1000,
    relay: config.relay ? { leaseMs: config.leaseMs, intervalMs: 20, onError: () => {} } : false,
    onError: () => {}, // a failover's redirections and refused settles: the proof counts outcomes
  });
}
say("ready");
for await (const line of createInterface({ input: process.stdin })) {
  const [word, n] = line.split(" ");
  if (word === "go") { for (const open of gates.splice(0, Number(n))) open(); }
}
