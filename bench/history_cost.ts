/**
 * The cost of the history and its latency histograms (issue 37.5, 37.6): a worker's drain of N jobs with the queue's history on
 * (the default) beside off (`retain({ historyMinutes: 0 })`), on one embedded server, rounds
 * interleaved (on, off, on, …), for the module and the scripts. Per job: the server's command time
 * (`INFO commandstats`: every EchoMQ command — `emq.*`, or `fcall` for the scripts) and its process
 * CPU (`INFO cpu`, sockets included); the ratio on ÷ off of each round's medians.
 *
 * Run: node_modules/.bin/bun bench/history_cost.ts [N] [ROUNDS]
 */
import { EchoMQ } from "../client.ts";
import { moduleBuilt, startServer } from "../tools/embedded/mod.ts";
import { phase } from "./_util.ts";

const N = Number(process.argv[2] ?? 20000);
const ROUNDS = Number(process.argv[3] ?? 5);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** One drain of N jobs on queue `q` by a worker (concurrency 64): server µs per job, command time and process CPU. */
async function drain(mq: EchoMQ<{ n: number }>, port: number, q: string): Promise<{ command: number; process: number }> {
  await mq.enqueueMany(q, Array.from({ length: N }, (_, n) => ({ n })));
  const { cost } = await phase([port], async () => {
    let done = 0;
    let finish: () => void = () => {};
    const all = new Promise<void>((r) => (finish = r));
    const worker = mq.work(q, () => {
      if (++done === N) finish();
    }, { concurrency: 64, blockMs: 100 });
    await all;
    await worker.stop();
  });
  const ours = Object.entries(cost.commands).filter(([name]) => name.startsWith("emq.") || name.startsWith("fcall"));
  const usec = ours.reduce((t, [, c]) => t + c.usec, 0);
  return { command: usec / N, process: cost.processUsec / N };
}

const backends = moduleBuilt() ? (["module", "scripts"] as const) : (["scripts"] as const);
const server = await startServer({});
const report: Record<string, unknown> = {};
try {
  for (const backend of backends) {
    const mq = await EchoMQ.connect<{ n: number }>({ url: `valkey://127.0.0.1:${server.port}`, backend });
    const on: Array<{ command: number; process: number }> = [];
    const off: Array<{ command: number; process: number }> = [];
    for (let r = 0; r < ROUNDS; r++) {
      const qOn = `hist-on-${backend}-${r}`, qOff = `hist-off-${backend}-${r}`;
      await mq.retain(qOff, { historyMinutes: 0, completedMax: 0 });
      await mq.retain(qOn, { completedMax: 0 });
      on.push(await drain(mq, server.port, qOn));
      off.push(await drain(mq, server.port, qOff));
    }
    const m = (xs: typeof on, k: "command" | "process") => median(xs.map((x) => x[k]));
    report[backend] = {
      commandUsecPerJob: { on: m(on, "command"), off: m(off, "command"), ratio: m(on, "command") / m(off, "command") },
      processUsecPerJob: { on: m(on, "process"), off: m(off, "process"), ratio: m(on, "process") / m(off, "process") },
    };
    console.log(backend, JSON.stringify(report[backend]));
    await mq.close();
  }
} finally {
  await server.stop();
}
console.log(JSON.stringify({ n: N, rounds: ROUNDS, ...report }));
