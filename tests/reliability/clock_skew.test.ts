/**
 * A worker whose clock is wrong, per backend and direction: the worker runs in a child process
 * whose `Date.now` is 5 s ahead of (or behind) the host's, which the server shares. A job is
 * scheduled 3 s ahead; the idle worker must wait for it on the server's time: a few commands
 * while it waits (not a busy loop when ahead), and the job handled soon after it falls due (not
 * seconds late when behind).
 */
import { describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { command } from "../../tools/embedded/mod.ts";
import { child, line } from "./_child.ts";
import { sleep } from "./_recorder.ts";
import { BACKENDS, useServer } from "./_server.ts";

const site = useServer();
const DUE_IN_MS = 3000;

/** The server's calls so far of each command an idle worker sends. */
async function calls(port: number): Promise<Record<string, number>> {
  const info = String(await command(port, ["INFO", "commandstats"]));
  return Object.fromEntries(["emq.claim", "fcall", "bzpopmin", "time"].map((name) => {
    const m = new RegExp(`cmdstat_${name.replace(".", "\\.")}:calls=(\\d+)`).exec(info);
    return [name, m ? Number(m[1]) : 0];
  }));
}

for (const backend of BACKENDS) {
  for (const skew of [5000, -5000]) {
    describe(`clock skew (${backend}, client ${skew > 0 ? "ahead" : "behind"})`, () => {
      test(`a client clock ${Math.abs(skew)} ms ${skew > 0 ? "ahead" : "behind"}: the worker waits on the server's time`, async () => {
        const q = `skew-${backend}-${skew > 0 ? "ahead" : "behind"}`;
        const mq = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: "127.0.0.1", port: site.server.port }], backend });
        const c = child([String(site.server.port), q, backend, "skew", String(skew)]);
        try {
          await line(c.lines, "ready");
          await sleep(500); // idle: waiting on the server
          const before = await calls(site.server.port);
          const due = Date.now() + DUE_IN_MS;
          const id = await mq.schedule(q, { n: 1 }, { at: due });
          const handled = Number((await line(c.lines, `handled ${id}`, 20_000)).split(" ")[2]);
          const after = await calls(site.server.port);
          const sent = Object.fromEntries(Object.keys(after).map((k) => [k, after[k]! - before[k]!]));
          console.log(`[clock skew ${backend} ${skew}] ${JSON.stringify(sent)} while waiting ${DUE_IN_MS} ms; handled ${handled - due} ms after due`);
          expect(handled - due).toBeGreaterThanOrEqual(-5);
          expect(handled - due).toBeLessThan(600);
          // Bounded by what the commands mean, not by a total a busy machine can exceed (the
          // scheduler firing and the clock refresh read TIME on timers of their own): a worker
          // that waits on the server's time waits for the schedule's wake, until the due time,
          // at most twice more when a wait ends a hair before it (a blocked call counts when it
          // returns), and claims the job — where a worker spinning on a wrong clock waits
          // hundreds of times. The scripts' claims each follow a
          // wait, besides the test's SCHEDULE, the claim that takes the job and its ack.
          const waits = backend === "module" ? sent["emq.claim"]! : sent.bzpopmin!;
          expect(waits).toBeLessThanOrEqual(5);
          if (backend === "scripts") expect(sent.fcall!).toBeLessThanOrEqual(waits + 3);
        } finally {
          c.proc.kill("SIGKILL");
          await c.exited;
          await mq.close();
        }
      }, 60_000);
    });
  }
}
