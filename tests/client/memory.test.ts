/**
 * `enqueueMany` streams its input: 1,000,000 small jobs from an async generator, in a child
 * process of their own, sampled every 20 ms. What grows with the input is the array of ids it
 * returns (a million 14-byte strings, about 50 MB); the JavaScript heap stays under 200 MB. The
 * resident size is printed beside it (it adds the runtime and glide's native core, about 70 MB
 * before the first job) and bounded loosely: ids built by concatenation (ropes of 12 pieces) held
 * 385 MB on their own.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { moduleBuilt, modulePath, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

let server: ServerHandle;
beforeAll(async () => {
  server = await startServer({ module: moduleBuilt() ? modulePath() : false });
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
