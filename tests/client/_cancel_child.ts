/**
 * A worker in a process of its own, for tests/client/cancel.test.ts ("a handler in another process
 * aborts"):
 *
 *   bun tests/client/_cancel_child.ts <addresses JSON> <cluster 0|1> <backend> <queue> <heartbeat ms>
 *
 * Works `queue` with that heartbeat; each handler prints `running <id>`, waits for its signal and
 * prints `aborted <id> <Date.now()> <the reason's name> <its message>`. Prints `ready` once the
 * worker runs; exits at SIGTERM or after two minutes.
 */
import { writeSync } from "node:fs";
import { Logger } from "@valkey/valkey-glide";

const [addresses, cluster, backend, queue, heartbeat] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
Logger.setLoggerConfig("off");
const { EchoMQ } = await import("../../client.ts");
setTimeout(() => process.exit(3), 120_000).unref(); // bounded even if nobody kills it

const mq = await EchoMQ.connect<{ n: number }>({
  addresses: JSON.parse(addresses!) as Array<{ host: string; port: number }>,
  cluster: cluster === "1",
  backend: backend === "module" ? "module" : "scripts",
});
const heartbeatMs = Number(heartbeat);
const worker = mq.work(queue!, async (job) => {
  say(`running ${job.id}`);
  await new Promise<void>((done) => job.signal.addEventListener("abort", () => done(), { once: true }));
  const reason = job.signal.reason as Error;
  say(`aborted ${job.id} ${Date.now()} ${reason.name} ${reason.message}`);
  throw reason;
}, { concurrency: 2, heartbeatMs, leaseMs: heartbeatMs * 10, blockMs: 200, onError: (e) => say(`error ${(e as Error).name}`) });
say("ready");
process.once("SIGTERM", () => void worker.stop().then(() => mq.close()).then(() => process.exit(0)));
