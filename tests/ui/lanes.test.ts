/**
 * A queue's lanes on its page, in a real headless Chromium on both backends: the Lanes table shows
 * the busiest lanes (ready, active, limits in force, paused) and follows each poll; its Pause and
 * Resume buttons pause one lane through `POST api/pause` / `api/resume` with `lane`. The route: a
 * foreign Origin refused with nothing written (DEBUG DIGEST before and after), a bad lane name a
 * 400 with the client's own message, a read-only dashboard shows no button and answers 403; and
 * `/metrics` has the queue's `echomq_lanes`, no per-lane series. Needs a wire-9 server (lanes).
 */
import { describe, expect, test } from "bun:test";
import { startUi } from "../../dev/ui/server/app.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";
import { postJson, suiteBrowser, until, useUiRig } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;

const browser = suiteBrowser();

for (const backend of BACKENDS) {
  describe(`lanes on the queue page (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser, { discovery: { cycleMs: 100, stepMs: 0 }, snapshot: { everyMs: 100 } });
    /** POSTs `payload` to `api/<verb>` from the page's own origin (or `from`). */
    const post = (verb: "pause" | "resume", payload: unknown, from?: Record<string, string>) => postJson(rig.ui, `api/${verb}`, payload, from);
    /** The Lanes table's rows, each as its cells' texts. */
    const rows = (): Promise<string[][]> =>
      rig.page.locator("#lanes tbody tr").evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((c) => c.textContent ?? "")));

    test("the busiest lanes, live; Pause and Resume one lane", async () => {
      const q = "tenants";
      await rig.mq.enqueueMany(q, [1, 2, 3], { lane: "acme" });
      await rig.mq.enqueue(q, 4, { lane: "globex" });
      await rig.mq.limit(q, { concurrency: 2 }, { perLane: true });
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      await until("the lanes", rows, (r) => r.length === 2);
      expect(await rows()).toEqual([
        ["acme", "3", "0", "at most 2 active", "running", "Pause"],
        ["globex", "1", "0", "at most 2 active", "running", "Pause"],
      ]);
      expect(await rig.page.locator("#lanes-range").textContent()).toBe("2 busiest of 2");
      await rig.page.getByRole("button", { name: "Pause lane globex" }).click();
      await until("globex paused", rows, (r) => r[1]?.[4] === "paused" && r[1]?.[5] === "Resume");
      expect((await rig.mq.lanes(q)).lanes.find((l) => l.name === "globex")?.paused).toBe(true);
      await rig.mq.enqueueMany(q, [5, 6, 7], { lane: "globex" }); // set elsewhere: the next poll shows it
      await until("globex busiest", rows, (r) => r[0]?.[0] === "globex" && r[0]?.[1] === "4");
      await rig.page.getByRole("button", { name: "Resume lane globex" }).click();
      await until("globex running", rows, (r) => r[0]?.[4] === "running");
      expect((await rig.mq.lanes(q)).lanes.every((l) => !l.paused)).toBe(true);
      const metrics = await (await fetch(new URL("metrics", rig.ui.url))).text();
      expect(metrics).toContain(`echomq_lanes{queue="${q}"} 2\n`);
      expect(metrics).not.toContain("acme");
    });

    test("a foreign Origin is refused with nothing written; a bad lane name is a 400 with the client's message", async () => {
      await rig.mq.enqueue("guarded-lanes", 1, { lane: "a" });
      const before = await rig.digest();
      const foreign = await post("pause", { name: "guarded-lanes", lane: "a" }, { origin: "https://evil.example" });
      expect(foreign.status).toBe(403);
      const bad = await post("pause", { name: "guarded-lanes", lane: "a{b" });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toContain('lane name "a{b" must not contain "{"');
      expect(await rig.digest()).toBe(before);
    });

    test("read-only: no button, and a POST refused with nothing written", async () => {
      await rig.mq.enqueue("ro-lanes", 1, { lane: "a" });
      const ro = await startUi({ mq: rig.mq, pollMs: 200, sampleMs: 200, readOnly: true });
      try {
        await rig.page.goto(new URL(queueHref("ro-lanes"), ro.url).href);
        await until("the lane", rows, (r) => r[0]?.[0] === "a");
        expect(await rig.page.getByRole("button", { name: "Pause lane a" }).count()).toBe(0); // rendered, and hidden
        const before = await rig.digest();
        const r = await postJson(ro, "api/pause", { name: "ro-lanes", lane: "a" });
        expect([r.status, await r.text()]).toEqual([403, "this dashboard is read-only: no action is answered\n"]);
        expect(await rig.digest()).toBe(before);
      } finally {
        await ro.close();
      }
    });
  });
}
