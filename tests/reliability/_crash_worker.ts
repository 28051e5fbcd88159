/**
 * A worker that claims one job and never finishes it: run as a child process by
 * worker_crash.test.ts, which SIGKILLs it mid-job.
 *
 *   bun tests/reliability/_crash_worker.ts <port> <queue> <leaseMs> <backend>
 *
 * Prints `claimed <id> <attempts> <token>` once the handler runs, then hangs until killed (at most
 * 120 s). Its heartbeat keeps the lease alive until the kill.
 */
import { Logger } from "@valkey/valkey-glide";
import { EchoMQ } from "../../client.ts";

Logger.setLoggerConfig("off");

const [port, queue, lease, backend] = process.argv.slice(2);
const mq = await EchoMQ.connect({
  addresses: [{ host: "127.0.0.1", port: Number(port) }],
  requestTimeout: 10_000,
  backend: backend === "module" ? "module" : "scripts",
});
mq.work(queue!, async (job) => {
  process.stdout.write(`claimed ${job.id} ${job.attempts} ${job.token}\n`);
  await new Promise((r) => setTimeout(r, 120_000)); // "working" until SIGKILL
}, { leaseMs: Number(lease), blockMs: 200 });
setTimeout(() => process.exit(3), 120_000); // bounded even if nobody kills it
