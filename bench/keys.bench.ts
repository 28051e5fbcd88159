/**
 * Keys and slot, side by side in one run (mitata under Bun):
 * - `queueKey` with its validation vs a bare template literal;
 * - `slot` vs the npm package `cluster-key-slot` on EchoMQ keys, each call computing from the key.
 * Prints mitata's table, then the ratios as JSON on the last line (read by bench/run.ts).
 *
 * Run: node_modules/.bin/bun bench/keys.bench.ts
 */
import { bench, do_not_optimize, run, summary } from "mitata";
// @ts-types="npm:@types/cluster-key-slot"
import clusterKeySlot from "cluster-key-slot";
import { keyspace, newJobId, queueKey, type QueueType, slot } from "../mod.ts";

// Widened inputs drawn from arrays, so no call is constant-folded away.
const NAMES: string[] = Array.from({ length: 64 }, (_, i) => `orders-${i}:tenant-${i * 7}`);
const TYPES: QueueType[] = ["pending", "active", "schedule", "dead", "meta"];
const KEYS: string[] = NAMES.flatMap((q) => [...TYPES.map((t) => queueKey(q, t)), keyspace(q).job(newJobId())]);

summary(() => {
  bench("template literal `emq:{${q}}:${t}`", function* () {
    let i = 0;
    yield () => {
      i = (i + 1) & 63;
      return do_not_optimize(`emq:{${NAMES[i]}}:${TYPES[i % 5]}`);
    };
  });
  bench("queueKey(q, t) with validation", function* () {
    let i = 0;
    yield () => {
      i = (i + 1) & 63;
      return do_not_optimize(queueKey(NAMES[i], TYPES[i % 5]));
    };
  });
});

summary(() => {
  bench("cluster-key-slot", function* () {
    let i = 0;
    yield () => {
      i = (i + 1) % KEYS.length;
      return do_not_optimize(clusterKeySlot(KEYS[i]));
    };
  });
  bench("slot(key)", function* () {
    let i = 0;
    yield () => {
      i = (i + 1) % KEYS.length;
      return do_not_optimize(slot(KEYS[i]));
    };
  });
});

const result = await run();
const avg = (name: string): number => {
  for (const b of result.benchmarks) if (b.alias === name) return b.runs[0].stats!.avg;
  throw new Error(`no benchmark ${name}`);
};
const ratios = {
  queueKeyVsTemplate: avg("template literal `emq:{${q}}:${t}`") / avg("queueKey(q, t) with validation"),
  slotVsClusterKeySlot: avg("cluster-key-slot") / avg("slot(key)"),
};
console.log(JSON.stringify(ratios));
