/**
 * Server CPU per call of each EchoMQ verb, module beside scripts, on one embedded server in one
 * run: `CONFIG RESETSTAT`, a phase of N calls, then `INFO commandstats` `usec_per_call`
 * (`cmdstat_emq.<verb>` for the module, `cmdstat_evalsha` for the scripts).
 * Prints a JSON report on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/server_cost.ts [N]
 */
import { EchoMQ, type Job } from "../client.ts";
import { command, infoFields, startServer } from "../lib/embedded/mod.ts";

const N = Number(process.argv[2] ?? 20000);
const IN_FLIGHT = 200;

/** `usec_per_call` and `calls` of one command from INFO commandstats. */
async function stat(port: number, name: string): Promise<{ calls: number; usecPerCall: number }> {
  const fields = infoFields(await command(port, ["INFO", "commandstats"]));
  const raw = fields[`cmdstat_${name}`];
  if (!raw) throw new Error(`no cmdstat_${name}`);
  const kv = Object.fromEntries(raw.split(",").map((p) => p.split("=") as [string, string]));
  return { calls: Number(kv.calls), usecPerCall: Number(kv.usec_per_call) };
}

/** Runs `task` over `items` with at most IN_FLIGHT calls at once. */
async function pool<T>(items: T[], task: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

type Verb = "enqueue" | "claim" | "ack" | "retry" | "bury" | "promote" | "reap" | "schedule";

async function measure(mq: EchoMQ<unknown>, port: number, queue: string): Promise<Record<Verb, number>> {
  const name = (verb: Verb): string => (mq.backend === "module" ? `emq.${verb}` : "evalsha");
  const out = {} as Record<Verb, number>;
  const phase = async (verb: Verb, run: () => Promise<unknown>): Promise<void> => {
    await command(port, ["CONFIG", "RESETSTAT"]);
    await run();
    const s = await stat(port, name(verb));
    out[verb] = s.usecPerCall;
  };
  const payload = { to: "ada@example.com", body: "x".repeat(64) };
  const ones = Array.from({ length: N }, (_, i) => i);
  await phase("enqueue", () => pool(ones, () => mq.enqueue(queue, payload)));
  const jobs: Job<unknown>[] = [];
  await phase("claim", () => pool(ones, async () => jobs.push((await mq.claim(queue, { leaseMs: 60_000 }))!)));
  await phase("ack", () => pool(jobs.splice(0, N / 2), (j) => mq.ack(j)));
  await phase("retry", () => pool(jobs.splice(0, N / 4), (j) => mq.retry(j, { delayMs: 1, reason: "bench" })));
  await phase("bury", () => pool(jobs.splice(0), (j) => mq.bury(j, "bench")));
  await phase("schedule", () => pool(ones.slice(0, N / 4), () => mq.schedule(queue, payload, { delayMs: 1 })));
  await new Promise((r) => setTimeout(r, 20));
  await phase("promote", () => pool(Array.from({ length: N / 100 }, (_, i) => i), () => mq.promote(queue, 100)));
  return out;
}

const server = await startServer({});
if (!server.module) throw new Error("the native module is not built: cargo build --release --manifest-path native/Cargo.toml");
try {
  const address = [{ host: server.host, port: server.port }];
  const results: Record<string, Record<Verb, number>> = {};
  for (const backend of ["module", "scripts"] as const) {
    const mq = await EchoMQ.connect({ addresses: address, backend, inflightRequestsLimit: 1000 });
    results[backend] = await measure(mq, server.port, `cost-${backend}`);
    await mq.close();
  }
  const m = results.module!, s = results.scripts!;
  const report = {
    n: N,
    usecPerCall: results,
    ratios: {
      enqueue: m.enqueue / s.enqueue,
      claimAck: (m.claim + m.ack) / (s.claim + s.ack),
    },
  };
  for (const verb of Object.keys(m) as Verb[]) {
    console.log(`${verb.padEnd(9)} module ${m[verb].toFixed(2).padStart(6)} µs   scripts ${s[verb].toFixed(2).padStart(6)} µs   ratio ${(m[verb] / s[verb]).toFixed(2)}`);
  }
  console.log(JSON.stringify(report));
} finally {
  await server.stop();
}
