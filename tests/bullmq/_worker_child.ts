/**
 * A BullMQ worker on the EchoMQ backend in a process of its own, for tests/bullmq/backend.test.ts
 * ("a SIGKILLed worker's job"):
 *
 *   bun tests/bullmq/_worker_child.ts <addresses JSON> <cluster 0|1> <backend> <queue> <lockDuration ms>
 *
 * Its processor prints `took <id> <attemptsStarted>` and never finishes: the test kills the process
 * (SIGKILL) while it holds the job. Bounded: it exits by itself after two minutes.
 */
import { writeSync } from "node:fs";
import { Logger } from "@valkey/valkey-glide";

const [addresses, cluster, backend, queue, lockMs] = process.argv.slice(2);
Logger.setLoggerConfig("off");
const { Worker } = await import("bullmq");
const { createEchoMQBackend } = await import("../../bullmq.ts");
setTimeout(() => process.exit(3), 120_000).unref();

const factory = createEchoMQBackend({
  addresses: JSON.parse(addresses!) as Array<{ host: string; port: number }>,
  cluster: cluster === "1",
  backend: backend === "module" ? "module" : "scripts",
});
new Worker(
  queue!,
  async (job) => {
    writeSync(1, `took ${job.id} ${job.attemptsStarted}\n`);
    await new Promise(() => undefined); // holds the job until the process is killed
  },
  { connection: {}, lockDuration: Number(lockMs), drainDelay: 1 },
  factory,
);
