/**
 * Child process of memory.test.ts: `enqueueMany` of N small jobs from an async generator on the
 * server at argv[2] (port); resident memory and the JavaScript heap sampled every 20 ms. Prints
 * one JSON line.
 */
import { heapStats } from "bun:jsc";
import process from "node:process";
import { EchoMQ } from "../../client.ts";

const port = Number(process.argv[2]);
const n = Number(process.argv[3] ?? 1_000_000);
const mq = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: "127.0.0.1", port }] });
const mb = (bytes: number): number => Math.round(bytes / 2 ** 20);
const before = process.memoryUsage().rss;
let rss = before;
let heap = heapStats().heapSize;
const sample = (): void => {
  rss = Math.max(rss, process.memoryUsage().rss);
  heap = Math.max(heap, heapStats().heapSize);
};
const sampler = setInterval(sample, 20);
async function* jobs(): AsyncGenerator<{ n: number }> {
  for (let i = 0; i < n; i++) yield { n: i };
}
const t0 = performance.now();
const ids = await mq.enqueueMany("million", jobs());
const ms = performance.now() - t0;
clearInterval(sampler);
sample();
const pending = (await mq.counts("million")).pending;
await mq.close();
console.log(JSON.stringify({ n, returned: ids.length, pending, rssBeforeMb: mb(before), rssPeakMb: mb(rss), heapPeakMb: mb(heap), ms }));
