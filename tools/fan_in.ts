/**
 * A 100,000-child open fan-in (issue 36): one server started on loopback (the module when built,
 * else the scripts; `--scripts` forces them), a parent made open with 1,000 children, 99 more
 * calls of `addChildren` of 1,000 each — the producer never holds more than one call's children —
 * then `seal`; workers of the parent's queue and of a second queue (half the children, so half
 * travel through the outbox) run every child, and the parent runs once, after all. Prints the
 * times, the parent row's `MEMORY USAGE` (issue 36's F6 target: ≤ 64 KiB, reached only once the
 * packed bitset lands — today one `child:<i>` and one `done:<i>` field per child), and exits 1
 * when the parent did not run exactly once with every child completed.
 *
 * Run: `node_modules/.bin/bun tools/fan_in.ts [--children N] [--scripts]`.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { EchoMQ } from "../client.ts";
import { keyspace } from "../mod.ts";
import { command, moduleIfBuilt, startServer } from "./embedded/mod.ts";

const { values } = parseArgs({ options: { children: { type: "string", default: "100000" }, scripts: { type: "boolean", default: false } } });
const total = Number(values.children);
const CALL = 1000;
const built = values.scripts ? false : moduleIfBuilt();
const module = built === false ? null : built;
const server = await startServer(module === null ? { module: false } : { module });
const mq = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: server.host, port: server.port }], backend: module === null ? "scripts" : "module" });
try {
  const [p, a] = ["fan-in", "fan-in-kids"];
  const call = (from: number) =>
    Array.from({ length: Math.min(CALL, total - from) }, (_, i) => ({ queue: (from + i) % 2 === 0 ? a : p, payload: { n: from + i } }));
  let t = performance.now();
  const tree = await mq.flow({ queue: p, payload: { n: -1 }, open: true, children: call(0) });
  for (let from = CALL; from < total; from += CALL) await mq.addChildren(tree, call(from));
  await mq.seal(tree);
  const added = performance.now() - t;
  t = performance.now();
  let ran = 0;
  let completed = 0;
  const workers = [p, a].map((q) =>
    mq.work(q, async (job) => {
      if (job.payload.n === -1) {
        completed = (await job.children()).filter((k) => k.state === "completed").length;
        ran++;
      }
      return job.payload.n;
    }, { concurrency: 64, blockMs: 100, relay: { intervalMs: 20, batch: 1000 } })
  );
  while (ran === 0) await new Promise((r) => setTimeout(r, 50));
  const done = performance.now() - t;
  await Promise.all(workers.map((w) => w.stop()));
  const usage = Number(await command(server.port, ["MEMORY", "USAGE", keyspace(p).job(tree.id)]));
  console.log(
    `${module === null ? "scripts" : "module"}: ${total} children in ${Math.ceil(total / CALL)} calls: added in ${added.toFixed(0)} ms, ` +
      `sealed → parent ran in ${done.toFixed(0)} ms; parent row ${usage} bytes (MEMORY USAGE); ${completed} completed children seen`,
  );
  process.exitCode = ran === 1 && completed === total ? 0 : 1;
} finally {
  await mq.close();
  await server.stop();
}
