/**
 * What one call costs this process (client CPU), with 12 calls in flight as 12 small workers keep
 * them: a worker's SETTLE of 4 acks that claims 4 jobs (as `Worker` sends it: on the client's
 * shared connection) beside a bare PING. The worker's per-call cost is glide's more than EchoMQ's
 * (bench/RESULTS.md, section 11).
 *
 * Run: node_modules/.bin/bun bench/client_calls.ts [--rounds 2000]
 */
import { EchoMQ, type Job } from "../client.ts";
import { Connection } from "../lib/client/connection.ts";
import { startServer } from "../tools/embedded/mod.ts";
import { cliOptions } from "./_util.ts";

const { rounds: ROUNDS } = cliOptions({ rounds: 2000 });
const LINES = 12;
const K = 4;
const server = await startServer({});
const addresses = [{ host: server.host, port: server.port }];
const mq = await EchoMQ.connect<{ a: number }>({ addresses, backend: "module" });
const queues = Array.from({ length: LINES }, (_, i) => `calls-${i}`);
const raw = await Connection.open({ addresses });
const lines = await Promise.all(queues.map((q) => mq.workerClient().dedicated(q, 5000)));

/** Client CPU per call of `call` on each of the 12 queues, ROUNDS times each. */
async function measure(what: string, call: (i: number) => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  await Promise.all(queues.map(async (_, i) => {
    for (let r = 0; r < ROUNDS; r++) await call(i);
  }));
  const c = process.cpuUsage(c0);
  const calls = LINES * ROUNDS;
  console.log(
    `${what.padEnd(44)} ${Math.round(calls / (performance.now() - t0) * 1000).toString().padStart(7)} calls/s  client ${
      ((c.user + c.system) / calls).toFixed(1)
    } µs/call`,
  );
}

/** A SETTLE loop: each call acks the 4 jobs the one before claimed, and claims 4. */
async function settles(what: string): Promise<void> {
  for (const q of queues) {
    await mq.retain(q, { completedMax: 0 });
    await mq.enqueueMany(q, Array.from({ length: K * (ROUNDS + 1) }, (_, a) => ({ a })));
  }
  const held = await Promise.all(queues.map(async (q) => (await mq.claimMany(q, K, { leaseMs: 60_000 })) as Job<{ a: number }>[]));
  await measure(what, async (i) => {
    const settlements = held[i]!.map((job) => ({ kind: "ack" as const, job }));
    const r = await lines[i]!.settle!(queues[i]!, settlements, K, 60_000);
    held[i] = r.claim.jobs as Job<{ a: number }>[];
  });
}

await measure("PING, shared connection", () => raw.command(["PING"], "{calls}"));
await settles(`SETTLE of ${K} acks claiming ${K}`);
for (const line of lines) line.close();
raw.close();
await mq.close();
await server.stop();
