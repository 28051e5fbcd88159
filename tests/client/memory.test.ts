/**
 * `enqueueMany` streams its input: 1,000,000 small jobs from an async generator, in a child
 * process of their own, sampled every 20 ms. What grows with the input is the array of ids it
 * returns (a million 14-byte strings, about 50 MB); the JavaScript heap stays under 200 MB. The
 * resident size is printed beside it (it adds the runtime and glide's native core, about 70 MB
 * before the first job) and bounded loosely: ids built by concatenation (ropes of 12 pieces) held
 * 385 MB on their own.
 *
 * And the client's cache of queue keys is bounded by the bytes of the names it holds, not only
 * by their count: 60 queue names of 1 MB each, one call on each, leave the heap (after a full
 * collection, once it settles) within 64 MB of where it was (unbounded, the cache held every
 * name's keys: 4 → 136 MB here, 15 → 387 MB in the issue).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { EchoMQ } from "../../client.ts";
import { moduleIfBuilt, type ServerHandle, startServer, waitUntil } from "../../tools/embedded/mod.ts";

let server: ServerHandle;
beforeAll(async () => {
  server = await startServer({ module: moduleIfBuilt() });
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

test("enqueueMany of 1,000,000 jobs from an async generator: heap under 200 MB, every job admitted", () => {
  const r = spawnSync(process.execPath, [join(import.meta.dir, "_enqueue_million.ts"), String(server.port)], {
    encoding: "utf8",
    timeout: 170_000,
  });
  if (r.status !== 0) throw new Error(`child exited ${r.status}: ${r.stderr}`);
  const m = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as {
    returned: number;
    pending: number;
    rssBeforeMb: number;
    rssPeakMb: number;
    heapPeakMb: number;
    ms: number;
  };
  console.log(
    `[memory] enqueueMany of 1,000,000 jobs: heap peak ${m.heapPeakMb} MB, resident peak ${m.rssPeakMb} MB ` +
      `(${m.rssBeforeMb} MB before), ${(m.ms / 1000).toFixed(1)} s`,
  );
  expect(m.returned).toBe(1_000_000);
  expect(m.pending).toBe(1_000_000);
  expect(m.heapPeakMb).toBeLessThan(200);
  expect(m.rssPeakMb).toBeLessThan(400);
}, 180_000);

test("the key cache is bounded by bytes: 60 queue names of 1 MB leave the heap within 64 MB", async () => {
  const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: server.port }] });
  const heap = (): number => {
    Bun.gc(true);
    return process.memoryUsage().heapUsed / 2 ** 20;
  };
  try {
    await mq.isPaused("warm-up");
    const before = heap();
    for (let i = 0; i < 60; i++) {
      // a fresh flat string each time: only the client can keep it
      expect(await mq.isPaused(`${i}:${"n".repeat(2 ** 20)}`)).toBe(false);
    }
    const right = heap();
    // what the calls left behind but no longer hold (glide's request buffers) is freed a little later
    let after = right;
    await waitUntil("the heap to settle within 64 MB", () => (after = heap()) - before < 64, 10_000, 100).catch(() => {});
    console.log(
      `[memory] 60 queue names of 1 MB: heap ${before.toFixed(0)} MB before, ${right.toFixed(0)} MB right after, ` +
        `${after.toFixed(0)} MB settled`,
    );
    expect(after - before).toBeLessThan(64);
  } finally {
    await mq.close();
  }
}, 120_000);
