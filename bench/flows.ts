/**
 * Flows beside BullMQ's `FlowProducer` (issue 36), on one embedded server in one run:
 *
 * - **F1**: a parent with N = 10, 100, 1,000 children (the children in another queue than the
 *   parent: every edge crosses queues), drained by workers of concurrency 50 (EchoMQ's relay their
 *   queues' outboxes every `--relay-ms`, default 20 ms): the add call's latency, add → the parent's
 *   handler done, and server CPU per child (`INFO cpu` of the server process over the flow, ÷ N;
 *   the relays' polling included). EchoMQ module and scripts, BullMQ.
 * - **F3**: `--edges` flows of one parent and one child: the child in the parent's queue (a same-slot
 *   edge: no outbox) against the child in another queue (a cross-slot edge: the outbox, a relay's
 *   OUTBOX, APPLY and UNBOX): server CPU per flow, and their ratio (target ≤ 2×). EchoMQ module.
 * - **F6**: a `--fan`-child fan-in (100,000 by default): the parent's side as `MEMORY USAGE` once
 *   every child is added (EchoMQ: the parent's row, streamed by `addChildren` in calls of 1,000;
 *   BullMQ: the parent's `dependencies` set, one `FlowProducer.add`), target ≤ 64 KiB. The children
 *   are not run.
 *
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/flows.ts [--rounds 2] [--edges 300] [--fan 100000] [--relay-ms 20]
 */
import { FlowProducer, Worker as BullWorker } from "bullmq";
import { EchoMQ, type FlowChild } from "../client.ts";
import { keyspace } from "../mod.ts";
import { command, startServer } from "../tools/embedded/mod.ts";
import { bullConnection, cliOptions, PAYLOAD, phase, report, until } from "./_util.ts";

const opt = cliOptions({ rounds: 2, edges: 300, fan: 100000, "relay-ms": 20 });
const SIZES = [10, 100, 1000] as const;
const CONCURRENCY = 50;

const server = await startServer({});
if (!server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
const addresses = [{ host: server.host, port: server.port }];
const ports = [server.port];
const clients = {
  module: await EchoMQ.connect({ addresses, backend: "module" }),
  scripts: await EchoMQ.connect({ addresses, backend: "scripts" }),
};
const connection = bullConnection(addresses, false);
const relay = { intervalMs: opt["relay-ms"] };

/** One F1 measurement: the add call's ms, add → parent done ms, server µs per child. */
interface F1 {
  readonly addMs: number;
  readonly doneMs: number;
  readonly cpuPerChildUs: number;
}

const children = (n: number, queue: string): FlowChild[] => Array.from({ length: n }, (_, i) => ({ queue, payload: { ...PAYLOAD, i } }));

/** F1 on EchoMQ: a parent in `p`, `n` children in `c`, workers relaying both. */
async function emqF1(mq: EchoMQ<unknown>, n: number, tag: string): Promise<F1> {
  const [p, c] = [`f1p-${tag}`, `f1c-${tag}`];
  let doneAt = 0;
  const wc = mq.work(c, () => ({ ok: true }), { concurrency: CONCURRENCY, relay });
  const wp = mq.work(p, () => void (doneAt = performance.now()), { concurrency: 1, relay });
  let addMs = 0;
  let t0 = 0;
  const { cost } = await phase(ports, async () => {
    t0 = performance.now();
    await mq.flow({ queue: p, payload: PAYLOAD, children: children(n, c) });
    addMs = performance.now() - t0;
    await until(`${tag}'s parent`, () => doneAt > 0, 600_000, 1);
  });
  await Promise.all([wc.stop(), wp.stop()]);
  return { addMs, doneMs: doneAt - t0, cpuPerChildUs: cost.processUsec / n };
}

/** F1 on BullMQ: `FlowProducer.add` of a parent in `p` with `n` children in `c`. */
async function bullF1(n: number, tag: string): Promise<F1> {
  const [p, c] = [`f1p-${tag}`, `f1c-${tag}`];
  const producer = new FlowProducer({ connection });
  let doneAt = 0;
  const wc = new BullWorker(c, async () => ({ ok: true }), { connection, concurrency: CONCURRENCY });
  const wp = new BullWorker(p, async () => void (doneAt = performance.now()), { connection, concurrency: 1 });
  await Promise.all([wc.waitUntilReady(), wp.waitUntilReady()]);
  let addMs = 0;
  let t0 = 0;
  try {
    const { cost } = await phase(ports, async () => {
      t0 = performance.now();
      await producer.add({
        name: "parent",
        queueName: p,
        data: PAYLOAD,
        children: children(n, c).map((k) => ({ name: "child", queueName: c, data: k.payload })),
      });
      addMs = performance.now() - t0;
      await until(`${tag}'s parent`, () => doneAt > 0, 600_000, 1);
    });
    return { addMs, doneMs: doneAt - t0, cpuPerChildUs: cost.processUsec / n };
  } finally {
    await Promise.all([wc.close(), wp.close(), producer.close()]);
  }
}

/** F3: server µs per flow of `opt.edges` flows of one parent and one child (in `p`, or in another queue). */
async function f3(mq: EchoMQ<unknown>, cross: boolean, tag: string): Promise<number> {
  const [p, c] = [`f3p-${tag}`, cross ? `f3c-${tag}` : `f3p-${tag}`];
  let parents = 0;
  const wc = cross ? mq.work(c, () => ({ ok: true }), { concurrency: CONCURRENCY, relay }) : null;
  const wp = mq.work(p, (job) => void ((job.payload as { parent?: boolean }).parent && parents++), { concurrency: CONCURRENCY, relay });
  const { cost } = await phase(ports, async () => {
    for (let i = 0; i < opt.edges; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, opt.edges - i) }, () => mq.flow({ queue: p, payload: { parent: true }, children: [{ queue: c, payload: PAYLOAD }] })),
      );
    }
    await until(`${tag}'s parents`, () => parents >= opt.edges, 600_000, 2);
  });
  await Promise.all([wc?.stop(), wp.stop()]);
  return cost.processUsec / opt.edges;
}

/** F6 on EchoMQ: bytes of the parent's row once `opt.fan` children are added (100 calls of 1,000, then sealed). */
async function emqF6(mq: EchoMQ<unknown>, tag: string): Promise<number> {
  const [p, c] = [`f6p-${tag}`, `f6c-${tag}`];
  const parent = await mq.flow({ queue: p, payload: PAYLOAD, open: true, children: children(Math.min(1000, opt.fan), c) });
  for (let at = 1000; at < opt.fan; at += 1000) await mq.addChildren(parent, children(Math.min(1000, opt.fan - at), c));
  await mq.seal(parent);
  return Number(await command(server.port, ["MEMORY", "USAGE", keyspace(p).job(parent.id), "SAMPLES", "0"]));
}

/** F6 on BullMQ: bytes of the parent's `dependencies` set (and its job hash) once `opt.fan` children are added. */
async function bullF6(tag: string): Promise<{ dependencies: number; row: number }> {
  const [p, c] = [`f6p-${tag}`, `f6c-${tag}`];
  const producer = new FlowProducer({ connection });
  try {
    const node = await producer.add({
      name: "parent",
      queueName: p,
      data: PAYLOAD,
      children: Array.from({ length: opt.fan }, (_, i) => ({ name: "child", queueName: c, data: { ...PAYLOAD, i } })),
    });
    const id = node.job.id!;
    const usage = async (key: string) => Number(await command(server.port, ["MEMORY", "USAGE", key, "SAMPLES", "0"]));
    return { dependencies: await usage(`bull:${p}:${id}:dependencies`), row: await usage(`bull:${p}:${id}`) };
  } finally {
    await producer.close();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const medianOf = (xs: F1[]): F1 => ({
  addMs: median(xs.map((x) => x.addMs)),
  doneMs: median(xs.map((x) => x.doneMs)),
  cpuPerChildUs: median(xs.map((x) => x.cpuPerChildUs)),
});

// F1: one unmeasured pass at N = 10 warms the JIT and loads every script
const systems = ["module", "scripts", "bullmq"] as const;
const run1 = (s: (typeof systems)[number], n: number, tag: string): Promise<F1> => (s === "bullmq" ? bullF1(n, tag) : emqF1(clients[s], n, tag));
for (const s of systems) await run1(s, 10, `warm-${s}`);
const f1: Record<string, Record<string, F1>> = {};
for (const n of SIZES) {
  const seen: Record<string, F1[]> = { module: [], scripts: [], bullmq: [] };
  for (let r = 0; r < opt.rounds; r++) {
    for (const s of systems) {
      const m = await run1(s, n, `${s}-${n}-${r}`);
      seen[s]!.push(m);
      console.error(`F1 N=${n} round ${r} ${s.padEnd(8)} add ${m.addMs.toFixed(1)} ms, done ${m.doneMs.toFixed(0)} ms, ${m.cpuPerChildUs.toFixed(0)} µs/child`);
    }
  }
  f1[n] = Object.fromEntries(systems.map((s) => [s, medianOf(seen[s]!)]));
}

const same: number[] = [];
const cross: number[] = [];
for (let r = 0; r < opt.rounds; r++) {
  same.push(await f3(clients.module, false, `same-${r}`));
  cross.push(await f3(clients.module, true, `cross-${r}`));
  console.error(`F3 round ${r}: same-slot ${same.at(-1)!.toFixed(0)} µs/flow, cross-slot ${cross.at(-1)!.toFixed(0)} µs/flow`);
}
const f3Report = { sameUsPerFlow: median(same), crossUsPerFlow: median(cross), ratio: median(cross) / median(same) };

const f6 = { module: await emqF6(clients.module, "module"), bullmq: await bullF6("bullmq") };
console.error(`F6 fan-in of ${opt.fan}: EchoMQ parent row ${f6.module} B; BullMQ dependencies ${f6.bullmq.dependencies} B`);

await clients.module.close();
await clients.scripts.close();
await server.stop();
report({
  rounds: opt.rounds,
  relayMs: opt["relay-ms"],
  f1,
  f1Ratios: Object.fromEntries(SIZES.map((n) => [n, { moduleDoneOverBullmq: f1[n]!.module!.doneMs / f1[n]!.bullmq!.doneMs }])),
  f3: { edges: opt.edges, ...f3Report },
  f6: { fan: opt.fan, ...f6 },
});
