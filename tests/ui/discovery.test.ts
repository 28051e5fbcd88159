/**
 * The dashboard's discovery (lib/ui/discovery.ts) on a fake client whose first walk finds one
 * queue and then hangs (a large keyspace's walk): the first reads share one wait of at most
 * `firstWaitMs` and answer with what was found so far; a read after that wait answers at once
 * (within microtasks, no timer), not after another wait — before, every read during the first walk
 * waited anew, which kept pages and the first /metrics snapshot 500 ms late for the whole walk.
 */
import { expect, test } from "bun:test";
import type { EchoMQ, QueueScanPage } from "../../client.ts";
import { Discovery } from "../../lib/ui/discovery.ts";

test("reads during the first walk: one shared wait, then answers at once with the names found so far", async () => {
  let release: () => void = () => {};
  const hung = new Promise<void>((r) => (release = r));
  const mq = {
    async *scanQueues(): AsyncGenerator<QueueScanPage, void, undefined> {
      yield { names: ["a"], unreadable: [] } as unknown as QueueScanPage;
      await hung; // the rest of a long walk
      yield { names: ["b"], unreadable: [] } as unknown as QueueScanPage;
    },
  } as unknown as EchoMQ<unknown>;
  const discovery = new Discovery(mq, { firstWaitMs: 5, cycleMs: 60_000 });
  try {
    const [first, alongside] = await Promise.all([discovery.names(), discovery.names()]);
    expect([first, alongside, discovery.complete]).toEqual([["a"], ["a"], false]);
    let later: readonly string[] | null = null;
    void discovery.names().then((n) => (later = n));
    for (let i = 0; i < 20; i++) await null; // microtasks only: no timer may fire
    expect(later as readonly string[] | null).toEqual(["a"]);
    release();
    await until(() => discovery.complete);
    expect(await discovery.names()).toEqual(["a", "b"]);
  } finally {
    release();
    discovery.close();
  }
});

/** Waits, a macrotask at a time, until `ok()`. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; !ok(); i++) {
    if (i > 1000) throw new Error("the condition never held");
    await new Promise((r) => setTimeout(r, 1));
  }
}
