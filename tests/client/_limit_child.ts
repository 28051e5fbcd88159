/**
 * Workers in a process of their own, the other half of `_limit_run.ts` (tests/client/limits.test.ts:
 * "the concurrency limit holds across processes"; tests/client/lanes.test.ts: a lane's, likewise):
 *
 *   bun tests/client/_limit_child.ts <addresses JSON> <cluster 0|1> <backend> <queue> <workers> <jobs>
 *
 * Starts `workers` workers (concurrency 4 each, one client each) on `queue`; each handler counts
 * itself in on the server (`INCR emq-test:{queue}:running`, or `…:running:<lane>` for a job of a
 * lane: the reply is how many run at once, across every process), holds 20 ms, counts itself out. Prints `ready` once every worker runs,
 * and `max <n> done <k> lanes <JSON>` once `jobs` jobs are done in the queue as a whole (this
 * process's observed maximum, its handled count, its observed maximum by lane: `""` for no lane).
 */
import { writeSync } from "node:fs";
import { Logger } from "@valkey/valkey-glide";

const [addresses, cluster, backend, queue, workers, jobs] = process.argv.slice(2);
const say = (line: string): void => void writeSync(1, `${line}\n`);
Logger.setLoggerConfig("off");
const { EchoMQ } = await import("../../client.ts");
const { Connection } = await import("../../lib/client/connection.ts");
setTimeout(() => process.exit(3), 120_000).unref(); // bounded even if nobody kills it

const options = {
  addresses: JSON.parse(addresses!) as Array<{ host: string; port: number }>,
  cluster: cluster === "1",
  backend: backend === "module" ? "module" as const : "scripts" as const,
};
const running = `emq-test:{${queue}}:running`;
const done = `emq-test:{${queue}}:done`;
const route = `emq:{${queue}}:meta`;
const raw = await Connection.open({ addresses: options.addresses, cluster: options.cluster, requestTimeout: 10_000 });
let max = 0;
let handled = 0;
const lanes: Record<string, number> = {};
const clients = await Promise.all(Array.from({ length: Number(workers) }, () => EchoMQ.connect<{ n: number }>(options)));
const started = clients.map((mq) =>
  mq.work(queue!, async (job) => {
    const counter = job.lane === undefined ? running : `${running}:${job.lane}`;
    const now = Number(await raw.command(["INCR", counter], route));
    max = Math.max(max, now);
    lanes[job.lane ?? ""] = Math.max(lanes[job.lane ?? ""] ?? 0, now);
    await new Promise((r) => setTimeout(r, 20));
    await raw.command(["DECR", counter], route);
    await raw.command(["INCR", done], route);
    handled++;
  }, { concurrency: 4 })
);
say("ready");
for (;;) {
  const total = Number(await raw.command(["GET", done], route));
  if (total >= Number(jobs)) break;
  await new Promise((r) => setTimeout(r, 20));
}
await Promise.all(started.map((w) => w.stop()));
await Promise.all(clients.map((c) => c.close()));
say(`max ${max} done ${handled} lanes ${JSON.stringify(lanes)}`);
raw.close();
process.exit(0);
