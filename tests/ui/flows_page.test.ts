/**
 * Flows where an on-call engineer looks (issue 36), in a real headless Chromium on both backends:
 * the parent queue's page says its parents waiting and its outbox (`#flows`) and follows them live
 * as a relay drains the outbox and the children finish; the parent's job page lists its children
 * with their outcomes, each a link that opens the child's page, whose Flow section links back to the
 * parent. Waits are for conditions, never fixed sleeps.
 */
import { describe, expect, test } from "bun:test";
import { jobHref, queueHref } from "../../lib/ui/json_api.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";
import { suiteBrowser, until, useUiRig } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
const browser = suiteBrowser();

for (const backend of BACKENDS) {
  describe(`flows on the pages (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser);
    const flowsLine = (): Promise<string> => rig.page.locator("#flows").textContent().then((t) => t ?? "");

    test("the queue page's flow line follows a relay and the children; the job pages link parent and children", async () => {
      const [p, c] = [`fp-p-${backend}`, `fp-c-${backend}`];
      const tree = await rig.mq.flow({
        queue: p,
        payload: { parent: true },
        children: [{ queue: c, payload: { ok: 1 } }, { queue: c, payload: { ok: 0 }, onFailure: "ignore" }],
      });
      await rig.page.goto(new URL(queueHref(p), rig.ui.url).href);
      // nothing relays yet: one parent waiting, the two children's entries in the outbox
      await until("the flow line", flowsLine, (t) => t.startsWith("Flows: 1 parent waiting for children · outbox 2 entries"));

      const relay = rig.mq.relay([p], { intervalMs: 50 });
      await until("the outbox drained", flowsLine, (t) => t === "Flows: 1 parent waiting for children · outbox empty");
      const worker = rig.mq.work(c, (job) => {
        if ((job.payload as { ok: number }).ok === 0) throw new Error("child refused <b>bold</b>");
        return { done: true };
      }, { relay: { intervalMs: 50 } });
      try {
        await until("the parent ready", flowsLine, (t) => t === "Flows: 0 parents waiting for children · outbox empty");
      } finally {
        await worker.stop();
        await relay.stop();
      }

      await rig.page.goto(new URL(jobHref(p, tree.id), rig.ui.url).href);
      expect(await rig.page.locator("#job-children-summary").textContent()).toBe("Children: 2 — 1 completed, 1 failed");
      const rows = await rig.page.locator("#job-children tbody tr").evaluateAll((trs) =>
        trs.map((tr) => Array.from(tr.children).map((td) => td.textContent ?? ""))
      );
      expect(rows).toEqual([
        ["0", `${c} / ${tree.children[0]!.id}`, "completed", '{"done":true}'],
        ["1", `${c} / ${tree.children[1]!.id}`, "failed", "Error: child refused <b>bold</b>"],
      ]);
      expect(await rig.page.locator("#job-children b").count()).toBe(0); // the reason is text, not markup
      // a child's link opens its page, whose parent link comes back
      await rig.page.locator("#job-children tbody tr").nth(1).getByRole("link").click();
      await until("the child's page", () => Promise.resolve(rig.page.url()), (u) => u.includes(tree.children[1]!.id));
      await rig.page.locator("#job-parent").getByRole("link").click();
      await until("the parent's page", () => Promise.resolve(rig.page.url()), (u) => u.includes(tree.id));
      expect(await rig.page.locator("#job-children-summary").textContent()).toBe("Children: 2 — 1 completed, 1 failed");
    });
  });
}
