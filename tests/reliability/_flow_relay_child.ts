/**
 * A relay in a process of its own that takes one wire step per line read on stdin, so that its
 * parent can SIGKILL it exactly between two steps (flows_chaos: a relay killed between APPLY and
 * its acknowledgement) or while one is in flight. The steps are relayOnce's (lib/client/relay.ts),
 * queue by queue: OUTBOX (a lease), one APPLY per destination queue, UNBOX.
 *
 *   bun tests/reliability/_flow_relay_child.ts <json: { addresses, cluster, backend, queues, leaseMs }>
 *
 * Prints `ready` once connected; per `step` read, one line: `leased <queue> <n> next=<step>`,
 * `empty <queue> next=<step>`, `applied <queue> <dest> <reply> next=<step>`, `unboxed <queue> <n>
 * next=<step>`, where `<step>` is `lease`, `apply`, `unbox` or `end`; `done` when every queue was
 * relayed once.
 */
import { writeSync } from "node:fs";
import { Buffer } from "node:buffer";
import { createInterface } from "node:readline";
import { Decoder, Logger } from "@valkey/valkey-glide";
import { ClientContext } from "../../lib/client/context.ts";
import { wireCall } from "../../lib/wire/mod.ts";

const config = JSON.parse(process.argv[2]!) as {
  addresses: Array<{ host: string; port: number }>;
  cluster: boolean;
  backend: "module" | "scripts";
  queues: string[];
  leaseMs: number;
};
const say = (line: string): void => void writeSync(1, `${line}\n`);
Logger.setLoggerConfig("off");
setTimeout(() => process.exit(3), 120_000).unref(); // bounded even if nobody kills it
const c = await ClientContext.connect<unknown>({ addresses: config.addresses, cluster: config.cluster, backend: config.backend, requestTimeout: 10_000 });

/** The destination queue of an entry: its second NUL-separated field. */
function destination(entry: Buffer): string {
  const a = entry.indexOf(0);
  const b = entry.indexOf(0, a + 1);
  return entry.subarray(a + 1, b < 0 ? entry.length : b).toString();
}

/** One wire step: its kind and what it does (its reply as a line). */
interface Step {
  readonly kind: "lease" | "apply" | "unbox";
  run(): Promise<string>;
}
/** The steps still to take, built as the leases come back. */
const plan: Step[] = config.queues.map((q) => ({ kind: "lease", run: () => lease(q) }));
const next = (): string => plan[0]?.kind ?? "end";

async function lease(queue: string): Promise<string> {
  const ks = c.keyspace(queue);
  const reply = (await c.impl.call(wireCall("OUTBOX", ks, { lease_ms: config.leaseMs, count: 1000 }), Decoder.Bytes)) as unknown[];
  if (reply.length === 0) return `empty ${queue}`;
  const leased: Array<{ token: number; entry: Buffer }> = [];
  for (let i = 0; i < reply.length; i += 2) leased.push({ token: Number(reply[i]), entry: Buffer.from(reply[i + 1] as Uint8Array) });
  const by = new Map<string, Buffer[]>();
  for (const { entry } of leased) by.set(destination(entry), [...(by.get(destination(entry)) ?? []), entry]);
  const steps: Step[] = [...by].map(([dest, entries]) => ({
    kind: "apply",
    run: async () => {
      const n = await c.impl.call(wireCall("APPLY", c.keyspace(dest), {}, entries.map((entry) => ({ entry }))));
      return `applied ${queue} ${dest} ${String(n)}`;
    },
  }));
  steps.push({
    kind: "unbox",
    run: async () => {
      const n = await c.impl.call(wireCall("UNBOX", ks, {}, leased.map(({ token, entry }) => ({ deadline: token, entry }))));
      return `unboxed ${queue} ${String(n)}`;
    },
  });
  plan.unshift(...steps);
  return `leased ${queue} ${leased.length}`;
}

say("ready");
for await (const line of createInterface({ input: process.stdin })) {
  if (line !== "step") continue;
  const step = plan.shift();
  if (step === undefined) {
    say("done");
    break;
  }
  say(`${await step.run()} next=${next()}`);
}
c.close();
process.exit(0);
