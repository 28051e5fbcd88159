/**
 * A queue's lanes on its page, in a real headless Chromium on both backends: the Lanes table shows
 * the busiest lanes (ready, active, limits in force, paused) and follows each poll; its Pause and
 * Resume buttons pause one lane through `POST api/pause` / `api/resume` with `lane`. The route: a
 * foreign Origin refused with nothing written (DEBUG DIGEST before and after), a bad lane name a
 * 400 with the client's own message, a read-only dashboard shows no button and answers 403; and
 * `/metrics` has the queue's `echomq_lanes`, no per-lane series. Needs a wire-9 server (lanes).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { EchoMQ } from "../../client.ts";
import { startUi, type Ui } from "../../cli/ui/server/app.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { command, moduleBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { suiteBrowser, until } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;

const browser = suiteBrowser();

for (const backend of BACKENDS) {
  describe(`lanes on the queue page (${backend} backend)`, () => {
    let server: ServerHandle;
    let mq: EchoMQ<unknown>;
    let ui: Ui;
    let page: Page;
    const digest = async (): Promise<string> => String(await command(server.port, ["DEBUG", "DIGEST"]));
    /** POSTs `payload` to `api/<verb>` of `at` from the page's own origin (or `origin`). */
    const post = (verb: "pause" | "resume", payload: unknown, origin: Record<string, string> | null = null, at: Ui = ui) =>
      fetch(new URL(`api/${verb}`, at.url), {
        method: "POST",
        headers: { "content-type": "application/json", ...(origin ?? { origin: new URL(at.url).origin }) },
        body: JSON.stringify(payload),
      });
    /** The Lanes table's rows, each as its cells' texts. */
    const rows = (): Promise<string[][]> =>
      page.locator("#lanes tbody tr").evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent ?? "")));

    beforeAll(async () => {
      server = await startServer({ module: backend === "scripts" ? false : undefined });
      mq = await EchoMQ.connect({ url: `valkey://127.0.0.1:${server.port}`, backend });
      ui = await startUi({ mq, pollMs: 200, sampleMs: 200, discovery: { cycleMs: 100, stepMs: 0 }, snapshot: { everyMs: 100 } });
      page = await browser().newPage();
    }, 120_000);
    afterAll(async () => {
      await page?.close();
      await ui?.close();
      await mq?.close();
      await server?.stop();
    });

    test("the busiest lanes, live; Pause and Resume one lane", async () => {
      const q = "tenants";
      await mq.enqueueMany(q, [1, 2, 3], { lane: "acme" });
      await mq.enqueue(q, 4, { lane: "globex" });
      await mq.limit(q, { concurrency: 2 }, { perLane: true });
      await page.goto(new URL(queueHref(q), ui.url).href);
      await until("the lanes", rows, (r) => r.length === 2);
      expect(await rows()).toEqual([
        ["acme", "3", "0", "at most 2 active", "running", "Pause"],
        ["globex", "1", "0", "at most 2 active", "running", "Pause"],
      ]);
      expect(await page.locator("#lanes-range").textContent()).toBe("2 busiest of 2");
      await page.getByRole("button", { name: "Pause lane globex" }).click();
      await until("globex paused", rows, (r) => r[1]?.[4] === "paused" && r[1]?.[5] === "Resume");
      expect((await mq.lanes(q)).lanes.find((l) => l.name === "globex")?.paused).toBe(true);
      await mq.enqueueMany(q, [5, 6, 7], { lane: "globex" }); // set elsewhere: the next poll shows it
      await until("globex busiest", rows, (r) => r[0]?.[0] === "globex" && r[0]?.[1] === "4");
      await page.getByRole("button", { name: "Resume lane globex" }).click();
      await until("globex running", rows, (r) => r[0]?.[4] === "running");
      expect((await mq.lanes(q)).lanes.every((l) => !l.paused)).toBe(true);
      const metrics = await (await fetch(new URL("metrics", ui.url))).text();
      expect(metrics).toContain(`echomq_lanes{queue="${q}"} 2\n`);
      expect(metrics).not.toContain("acme");
    });

    test("a foreign Origin is refused with nothing written; a bad lane name is a 400 with the client's message", async () => {
      await mq.enqueue("guarded-lanes", 1, { lane: "a" });
      const before = await digest();
      const foreign = await post("pause", { name: "guarded-lanes", lane: "a" }, { origin: "https://evil.example" });
      expect(foreign.status).toBe(403);
      const bad = await post("pause", { name: "guarded-lanes", lane: "a{b" });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toContain('lane name "a{b" must not contain "{"');
      expect(await digest()).toBe(before);
    });

    test("read-only: no button, and a POST refused with nothing written", async () => {
      await mq.enqueue("ro-lanes", 1, { lane: "a" });
      const ro = await startUi({ mq, pollMs: 200, sampleMs: 200, readOnly: true });
      try {
        await page.goto(new URL(queueHref("ro-lanes"), ro.url).href);
        await until("the lane", rows, (r) => r[0]?.[0] === "a");
        expect(await page.getByRole("button", { name: "Pause lane a" }).count()).toBe(0); // rendered, and hidden
        const before = await digest();
        const r = await post("pause", { name: "ro-lanes", lane: "a" }, null, ro);
        expect([r.status, await r.text()]).toEqual([403, "this dashboard is read-only: no action is answered\n"]);
        expect(await digest()).toBe(before);
      } finally {
        await ro.close();
      }
    });
  });
}
