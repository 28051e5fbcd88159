/**
 * A process of workers that fire one scheduler: run by schedulers_procs.test.ts, several at once,
 * one of them SIGKILLed mid-way.
 *
 *   bun tests/reliability/_scheduler_child.ts <addresses-json> <cluster 0|1> <queue> <backend> <workers> <ms> <startAt>
 *
 * At <startAt> (ms since the epoch, so that the processes race) upserts scheduler `fast` (every
 * 100 ms, missed { max: 1000 }) — every process does —
 * and prints `next <ms>` (the next run in force), then runs <workers> workers for <ms>; each job's
 * handler prints `tick <tickAt> <id> <createdAt>`. Prints `done` once its workers stopped, then exits.
 */
import { Logger } from "@valkey/valkey-glide";
import { EchoMQ } from "../../client.ts";

Logger.setLoggerConfig("off");

const [addresses, cluster, queue, backend, workers, ms, startAt] = process.argv.slice(2);
const mq = await EchoMQ.connect({
  addresses: JSON.parse(addresses!) as Array<{ host: string; port: number }>,
  cluster: cluster === "1",
  requestTimeout: 10_000,
  backend: backend === "module" ? "module" : "scripts",
});
await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
const next = await mq.upsertScheduler(queue!, "fast", { everyMs: 100 }, { payload: { from: process.pid }, missed: { max: 1000 } });
process.stdout.write(`next ${next.getTime()}\n`);
const running = Array.from({ length: Number(workers) }, () =>
  mq.work(queue!, async (job) => {
    const info = await mq.getJob(queue!, job.id);
    process.stdout.write(`tick ${info?.tickAt} ${job.id} ${info?.createdAt}\n`);
  }, { blockMs: 100, concurrency: 2, onError: () => {} }));
await new Promise((r) => setTimeout(r, Number(ms)));
await Promise.all(running.map((w) => w.stop()));
await mq.close();
process.stdout.write("done\n");
process.exit(0);
