/**
 * A process whose worker stops and whose client closes exits at once, per backend: nothing the
 * worker started (timers, waits, connections) keeps it alive. Measured from outside: from the
 * child's `stopping` line to its exit.
 */
import { describe, expect, test } from "bun:test";
import { child, line } from "./_child.ts";
import { BACKENDS, useServer } from "./_server.ts";

const site = useServer();

for (const backend of BACKENDS) {
  describe(`shutdown (${backend})`, () => {
    test("stop() then close(): the process exits within 250 ms", async () => {
      const c = child([String(site.server.port), `exit-${backend}`, backend, "exit"]);
      try {
        await line(c.lines, "stopping", 30_000);
        const t0 = performance.now();
        await c.exited;
        const took = performance.now() - t0;
        console.log(`[shutdown ${backend}] exited ${took.toFixed(0)} ms after the stop`);
        expect(c.proc.exitCode).toBe(0);
        expect(took).toBeLessThan(250);
      } finally {
        c.proc.kill("SIGKILL");
      }
    }, 60_000);
  });
}
