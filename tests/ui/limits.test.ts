/**
 * A queue's limits on its page (issue 19 §6), in a real headless Chromium on both backends: the
 * Limits line follows each poll (limits set elsewhere, a park counting down), and its form sets
 * and removes the concurrency and rate limits through `POST api/limit`. The route: a foreign
 * Origin, or none, and any POST to a read-only dashboard, refused with nothing written (DEBUG
 * DIGEST before and after); a bad value a 400 with the client's own message; a queue that does
 * not exist a 404, and not created (pause and resume alike); a good one in force, in `/api/queue`
 * and `/metrics`.
 */
import { describe, expect, test } from "bun:test";
import { startUi } from "../../dev/ui/server/app.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { command, moduleBuilt } from "../../tools/embedded/mod.ts";
import { postJson, suiteBrowser, until, useUiRig } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
const UTC_TIME = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC`;

const browser = suiteBrowser();

for (const backend of BACKENDS) {
  describe(`limits on the queue page (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser, { discovery: { cycleMs: 100, stepMs: 0 }, snapshot: { everyMs: 100 } });
    /** POSTs `payload` to `api/limit`, from the page's own origin (or `from`). */
    const post = (payload: unknown, from?: Record<string, string>) => postJson(rig.ui, "api/limit", payload, from);
    const line = (): Promise<string> => rig.page.locator("#limits").textContent().then((t) => t ?? "");

    test("a POST from a foreign Origin, or none, is refused and writes nothing; the page's own sets them", async () => {
      await rig.mq.enqueue("guarded", { n: 1 });
      const before = await rig.digest();
      for (const origin of [{ origin: "https://evil.example" }, {}] as Array<Record<string, string>>) {
        const r = await post({ name: "guarded", concurrency: 3 }, origin);
        expect([r.status, await r.text()]).toEqual([403, `POST is answered only from ${new URL(rig.ui.url).origin}\n`]);
      }
      expect(await rig.digest()).toBe(before);
      expect(await rig.mq.limits("guarded")).toEqual({ concurrency: null, rate: null, parkedUntil: null });

      const ok = await post({ name: "guarded", concurrency: 3, rate: { max: 10, perMs: 1000, burst: 2 } });
      const limits = { concurrency: 3, rate: { max: 10, perMs: 1000, burst: 2 }, parkedUntil: null };
      expect([ok.status, await ok.json()]).toEqual([200, { limits }]);
      expect(await rig.mq.limits("guarded")).toEqual(limits);
      // a field left out keeps its limit; null removes one
      const kept = await post({ name: "guarded", rate: null });
      expect(await kept.json()).toEqual({ limits: { ...limits, rate: null } });
      await post({ name: "guarded", rate: { max: 10, perMs: 1000, burst: 2 } });
      const q = (await (await fetch(new URL("api/queue?name=guarded", rig.ui.url))).json()) as { limits: unknown };
      expect(q.limits).toEqual(limits);
      const metrics = await until(
        "the limits in /metrics",
        async () => await (await fetch(new URL("metrics", rig.ui.url))).text(),
        (t) => t.includes('echomq_concurrency_limit{queue="guarded"} 3\n'),
      );
      expect(metrics).toContain('echomq_rate_limit_per_second{queue="guarded"} 10\n');
      expect(metrics).toContain('echomq_parked{queue="guarded"} 0\n');
    });

    test("a bad value is a 400 with the client's message; nothing to set is a 400; nothing written", async () => {
      await rig.mq.enqueue("strict", { n: 1 });
      const before = await rig.digest();
      const cases: Array<[unknown, string]> = [
        [{ name: "strict", concurrency: 0 }, "limit: concurrency must be an integer from 1 to 1000000, got 0"],
        [{ name: "strict", concurrency: "5" }, "limit: concurrency must be an integer from 1 to 1000000, got 5"],
        [{ name: "strict", rate: { max: 10, perMs: 0 } }, "limit: rate.perMs must be an integer from 1 to 86400000, got 0"],
        [{ name: "strict", rate: { max: 1.5, perMs: 1000 } }, "limit: rate.max must be an integer from 1 to 1000000, got 1.5"],
        [{ name: "strict", rate: { max: 10, perMs: 1000, burst: -1 } }, "limit: rate.burst must be an integer from 1 to 1000000, got -1"],
        [{ name: "strict", rate: "fast" }, "limit: rate must be { max, perMs, burst? } or null"],
        [{ name: "strict" }, "concurrency or rate: give a limit to set (null removes one)"],
        [{ name: "a{b", concurrency: 1 }, "is not a queue name"],
      ];
      for (const [payload, error] of cases) {
        const r = await post(payload);
        expect({ payload, status: r.status }).toEqual({ payload, status: 400 });
        expect(((await r.json()) as { error: string }).error).toContain(error);
      }
      expect(await rig.digest()).toBe(before);
    });

    test("a queue that does not exist is refused (404) and not created, by limit as by pause and resume", async () => {
      const before = await rig.digest();
      const refused = { error: 'no queue "nope" on the server (no meta key and no jobs): nothing done, and no queue created' };
      const r = await post({ name: "nope", concurrency: 2 });
      expect([r.status, await r.json()]).toEqual([404, refused]);
      for (const verb of ["pause", "resume"]) {
        const p = await postJson(rig.ui, `api/${verb}`, { name: "nope" });
        expect([verb, p.status, await p.json()]).toEqual([verb, 404, refused]);
      }
      expect(await rig.digest()).toBe(before);
      expect(await command(rig.server.port, ["EXISTS", "emq:{nope}:meta"])).toBe(0);
    });

    test("read-only: no form shown, and a POST refused with nothing written", async () => {
      await rig.mq.enqueue("shown", { n: 1 });
      await rig.mq.limit("shown", { concurrency: 4 });
      const ro = await startUi({ mq: rig.mq, pollMs: 200, sampleMs: 200, readOnly: true });
      try {
        await rig.page.goto(new URL(queueHref("shown"), ro.url).href);
        await until("the line", line, (t) => t === "Limits: at most 4 active");
        expect(await rig.page.getByRole("form", { name: "Set limits" }).count()).toBe(0); // rendered, and hidden
        expect(await rig.page.locator("#limit-form").count()).toBe(1);
        const before = await rig.digest();
        const r = await postJson(ro, "api/limit", { name: "shown", concurrency: null });
        expect([r.status, await r.text()]).toEqual([403, "this dashboard is read-only: no action is answered\n"]);
        expect(await rig.digest()).toBe(before);
        expect((await rig.mq.limits("shown")).concurrency).toBe(4);
      } finally {
        await ro.close();
      }
    });

    test("the line follows each poll: limits set elsewhere, a park counting down", async () => {
      const q = `live-${backend}`;
      await rig.mq.enqueue(q, { n: 1 });
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      await until("no limits", line, (t) => t === "Limits: none");
      expect(await rig.page.getByRole("group", { name: "Limits" }).count()).toBe(1);
      await rig.mq.limit(q, { concurrency: 5, rate: { max: 20, perMs: 60_000 } });
      await until("the limits set elsewhere", line, (t) => t === "Limits: at most 5 active · 20 per 1 min (burst 1)");
      expect(await rig.page.getByRole("button", { name: "Remove concurrency limit" }).isEnabled()).toBe(true);
      await rig.mq.penalize(q, 30_000);
      const parked = await until("the park", line, (t) => t.includes("parked"));
      expect(parked).toMatch(new RegExp(`^Limits: at most 5 active · 20 per 1 min \\(burst 1\\) · parked until ${UTC_TIME} \\(in (29|30) s\\)$`));
      const later = await until("the park counting down", line, (t) => /\(in 2[0-8] s\)$/.test(t), 15_000);
      expect(later).toStartWith("Limits: at most 5 active · 20 per 1 min (burst 1) · parked until ");
    }, 30_000);

    test("a refresh answered before an action but delivered after it is not drawn over it", async () => {
      const q = `stale-${backend}`;
      await rig.mq.enqueue(q, { n: 1 });
      await rig.mq.limit(q, { concurrency: 3 });
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      await until("the limit", line, (t) => t === "Limits: at most 3 active");
      // the next poll's read of the queue is answered by the server now (the limit still set) and
      // handed to the page only after the Remove below has been answered and drawn
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      let held = false;
      await rig.page.route(/\/api\/queue\?/, async (route) => {
        if (held) return await route.continue();
        held = true;
        const response = await route.fetch();
        await gate;
        await route.fulfill({ response });
      });
      await until("a poll's read held", () => Promise.resolve(held), (h) => h);
      const removeConcurrency = rig.page.getByRole("button", { name: "Remove concurrency limit" });
      await removeConcurrency.click();
      await rig.page.getByText("Concurrency limit removed. Limits: none.").waitFor();
      // from now on, every redraw of the button and the line is recorded (a later poll would mend a
      // stale one before a check after the fact could see it)
      await rig.page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seen: string[] }).seen = seen;
        const button = document.getElementById("limit-concurrency-remove") as HTMLButtonElement;
        const text = document.getElementById("limits-text")!;
        new MutationObserver(() => seen.push(`${button.disabled ? "disabled" : "enabled"} ${text.textContent}`))
          .observe(document.body, { attributes: true, childList: true, characterData: true, subtree: true });
      });
      const polls = Number(await rig.page.evaluate(() => document.body.dataset.refreshes));
      open();
      // the held poll ends (its reply dropped), and one more after it
      await until("two more polls", () => rig.page.evaluate(() => Number(document.body.dataset.refreshes)), (n) => n >= polls + 2);
      const seen = await rig.page.evaluate(() => (window as unknown as { seen: string[] }).seen);
      expect(seen.filter((s) => s !== "disabled none")).toEqual([]);
      expect(await removeConcurrency.isDisabled()).toBe(true);
      expect(await line()).toBe("Limits: none");
      expect(await rig.page.locator("#status").textContent()).toBe("Concurrency limit removed. Limits: none.");
      await rig.page.unroute(/\/api\/queue\?/);
    });

    test("the form sets and removes each limit; a bad value is announced with the client's message", async () => {
      const q = `form-${backend}`;
      await rig.mq.enqueue(q, { n: 1 });
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      await until("no limits", line, (t) => t === "Limits: none");
      const removeConcurrency = rig.page.getByRole("button", { name: "Remove concurrency limit" });
      const removeRate = rig.page.getByRole("button", { name: "Remove rate limit" });
      expect([await removeConcurrency.isDisabled(), await removeRate.isDisabled()]).toEqual([true, true]);

      await rig.page.getByLabel("At most active at once").fill("3");
      await rig.page.getByRole("button", { name: "Set limits" }).click();
      await rig.page.getByText("Limits set. Limits: at most 3 active.").waitFor();
      expect(await rig.mq.limits(q)).toEqual({ concurrency: 3, rate: null, parkedUntil: null });
      expect(await rig.page.getByLabel("At most active at once").inputValue()).toBe(""); // the form starts over

      // a rate alone: the concurrency limit stays
      await rig.page.getByLabel("Max claims", { exact: true }).fill("100");
      await rig.page.getByLabel("per", { exact: true }).fill("2");
      await rig.page.getByLabel("Period unit").selectOption({ label: "min" });
      await rig.page.getByLabel("Burst").fill("5");
      await rig.page.getByRole("button", { name: "Set limits" }).click();
      await rig.page.getByText("Limits set. Limits: at most 3 active · 100 per 2 min (burst 5).").waitFor();
      expect(await rig.mq.limits(q)).toEqual({ concurrency: 3, rate: { max: 100, perMs: 120_000, burst: 5 }, parkedUntil: null });
      await until("the line", line, (t) => t === "Limits: at most 3 active · 100 per 2 min (burst 5)");

      await rig.page.getByLabel("At most active at once").fill("0");
      await rig.page.getByRole("button", { name: "Set limits" }).click();
      await rig.page.getByText("Failed: limit: concurrency must be an integer from 1 to 1000000, got 0").waitFor();
      expect((await rig.mq.limits(q)).concurrency).toBe(3);
      expect(await rig.page.getByLabel("At most active at once").inputValue()).toBe("0"); // kept, to fix

      await rig.page.getByLabel("At most active at once").fill("");
      await rig.page.getByRole("button", { name: "Set limits" }).click();
      await rig.page.getByText("Failed: fill in a concurrency or a rate (claims per period) to set").waitFor();

      await removeConcurrency.click();
      await rig.page.getByText("Concurrency limit removed. Limits: 100 per 2 min (burst 5).").waitFor();
      expect(await removeConcurrency.isDisabled()).toBe(true);
      await until("the focus on its field", () => rig.page.evaluate(() => document.activeElement?.id), (id) => id === "limit-concurrency");
      await removeRate.click();
      await rig.page.getByText("Rate limit removed. Limits: none.").waitFor();
      expect(await rig.mq.limits(q)).toEqual({ concurrency: null, rate: null, parkedUntil: null });
      await until("the line", line, (t) => t === "Limits: none");
    }, 30_000);

    test("a second Set while the page still refreshes after the first is sent, not dropped", async () => {
      const q = `again-${backend}`;
      await rig.mq.enqueue(q, { n: 1 });
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      await until("no limits", line, (t) => t === "Limits: none");
      // the page's reads of the queue held until released: the first action's refresh cannot end
      let release!: () => void;
      const held = new Promise<void>((resolve) => release = resolve);
      let holding = true;
      await rig.page.route("**/api/queue?*", async (route) => {
        if (holding) await held;
        await route.continue();
      });
      try {
        await rig.page.getByLabel("At most active at once").fill("3");
        await rig.page.getByRole("button", { name: "Set limits" }).click();
        await rig.page.getByText("Limits set. Limits: at most 3 active.").waitFor();
        expect(await rig.page.evaluate(() => document.body.getAttribute("aria-busy"))).toBe("true"); // still refreshing
        await rig.page.getByLabel("At most active at once").fill("4");
        await rig.page.getByRole("button", { name: "Set limits" }).click();
        await rig.page.getByText("Limits set. Limits: at most 4 active.").waitFor({ timeout: 10_000 });
        expect(await rig.mq.limits(q)).toEqual({ concurrency: 4, rate: null, parkedUntil: null });
      } finally {
        holding = false;
        release();
      }
      await until("the page idle", () => rig.page.evaluate(() => !document.body.hasAttribute("aria-busy")));
      await rig.page.unroute("**/api/queue?*");
      await until("the line", line, (t) => t === "Limits: at most 4 active");
    }, 30_000);
  });
}
