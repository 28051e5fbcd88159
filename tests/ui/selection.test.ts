/**
 * Run now and actions on a selection (issue 22 §4), in a real headless Chromium on both backends: a
 * scheduled job's page has Run now; the queue page's Scheduled and Dead tables have a box per row
 * (and one for the page) and "Run selected now" / "Requeue selected" / "Delete selected", each one
 * POST and one verb call. A selection with a job that moved meanwhile is refused whole: nothing
 * moves (DEBUG DIGEST unchanged), the failure is said, the selection stays.
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { Job } from "../../client.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";
import { suiteBrowser, until, useUiRig } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
const HOUR = 3_600_000;

const browser = suiteBrowser();

/** The ids a job table shows, in its order. */
const idsOf = (page: Page, table: string): Promise<string[]> =>
  page.getByRole("table", { name: table, exact: true }).locator("tbody tr[data-id]").evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.id!));

for (const backend of BACKENDS) {
  describe(`run now and selections (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser);
    const open = async (q: string): Promise<void> => {
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      await rig.page.waitForFunction(() => document.body.dataset.ready === "true");
    };
    const section = (state: string) => rig.page.locator(`#${state}-section`);

    test("a scheduled job's page: Run now moves it to pending; a pending job's page has neither Run now nor Retry now", async () => {
      const id = await rig.mq.schedule("later", { n: 1 }, { delayMs: HOUR });
      await rig.page.goto(new URL(`job?q=${encodeURIComponent("later")}&id=${id}`, rig.ui.url).href);
      await rig.page.waitForFunction(() => document.body.dataset.ready === "true");
      expect(await rig.page.getByLabel("Facts").locator("div").first().textContent()).toBe("Statescheduled");
      expect(await rig.page.getByRole("button", { name: "Retry now" }).count()).toBe(0);
      await rig.page.getByRole("button", { name: "Run now" }).click();
      await until("pending", () => rig.mq.getJob("later", id), (j) => j?.state === "pending");
      await rig.page.waitForFunction(() => document.querySelector("#job-run") === null); // the page read again
      expect(await rig.page.getByLabel("Facts").locator("div").first().textContent()).toBe("Statepending");
      expect(await rig.page.getByRole("button", { name: "Retry now" }).count()).toBe(0);
    });

    test("scheduled: select two of three, Run selected now → those two pending, the third stays; Delete selected", async () => {
      const q = `sel-run-${backend}`;
      const [a, b, c] = await Promise.all([1, 2, 3].map((n) => rig.mq.schedule(q, { n }, { delayMs: HOUR * n })));
      await open(q);
      await until("three scheduled rows", () => idsOf(rig.page, "Scheduled jobs"), (ids) => ids.length === 3);
      const run = section("scheduled").getByRole("button", { name: "Run selected now" });
      const del = section("scheduled").getByRole("button", { name: "Delete selected" });
      expect(await run.isDisabled()).toBe(true);
      expect(await del.isDisabled()).toBe(true);
      await rig.page.getByRole("checkbox", { name: `Select ${a}` }).check();
      await rig.page.getByRole("checkbox", { name: `Select ${c}` }).check();
      expect(await run.isEnabled()).toBe(true);
      // a poll re-renders the table: the selection stays
      await rig.page.waitForTimeout(500);
      expect(await rig.page.getByRole("checkbox", { name: `Select ${a}` }).isChecked()).toBe(true);
      await run.click();
      await until("two pending", () => rig.mq.counts(q), (n) => n.pending === 2 && n.schedule === 1);
      expect((await rig.mq.getJob(q, b!))!.state).toBe("scheduled");
      await until("one scheduled row", () => idsOf(rig.page, "Scheduled jobs"), (ids) => ids.join() === b);
      await until("said", () => rig.page.locator("#status").textContent(), (t) => t === "Ran 2 scheduled jobs now: pending.");
      expect(await run.isDisabled()).toBe(true);
      // the page's box selects every row shown
      await section("scheduled").getByRole("checkbox", { name: "Select every scheduled job of this page" }).check();
      await del.click();
      await until("deleted", () => rig.mq.counts(q), (n) => n.schedule === 0 && n.pending === 2);
      expect(await rig.mq.getJob(q, b!)).toBeNull();
    });

    test("dead: select every row, Requeue selected → pending with a fresh budget; Delete selected", async () => {
      const q = `sel-dead-${backend}`;
      await rig.mq.enqueueMany(q, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      const jobs = (await rig.mq.claimMany(q, 3, { leaseMs: 60_000 })) as Array<Job<unknown>>;
      for (const j of jobs) await rig.mq.bury(j, "no");
      await open(q);
      await until("three dead rows", () => idsOf(rig.page, "Dead jobs"), (ids) => ids.length === 3);
      await rig.page.getByRole("checkbox", { name: `Select ${jobs[0]!.id}` }).check();
      await rig.page.getByRole("checkbox", { name: `Select ${jobs[1]!.id}` }).check();
      await section("dead").getByRole("button", { name: "Requeue selected" }).click();
      await until("two pending", () => rig.mq.counts(q), (n) => n.pending === 2 && n.dead === 1);
      expect(await rig.mq.getJob(q, jobs[0]!.id)).toMatchObject({ state: "pending", attempts: 0 });
      await until("one dead row", () => idsOf(rig.page, "Dead jobs"), (ids) => ids.join() === jobs[2]!.id);
      await rig.page.getByRole("checkbox", { name: `Select ${jobs[2]!.id}` }).check();
      await section("dead").getByRole("button", { name: "Delete selected" }).click();
      await until("deleted", () => rig.mq.counts(q), (n) => n.dead === 0 && n.pending === 2);
    });

    test("a selection with a job that moved meanwhile is refused whole: nothing moves, the failure is said", async () => {
      const q = `sel-stale-${backend}`;
      const [a, b] = await Promise.all([1, 2].map((n) => rig.mq.schedule(q, { n }, { delayMs: HOUR * n })));
      await open(q);
      await until("two scheduled rows", () => idsOf(rig.page, "Scheduled jobs"), (ids) => ids.length === 2);
      await section("scheduled").getByRole("checkbox", { name: "Select every scheduled job of this page" }).check();
      // the page keeps seeing the table as it is now (its polls answered with this page), so that
      // a is still shown, and selected, when the click comes
      const shown = await (await fetch(new URL(`api/jobs?name=${q}&state=scheduled`, rig.ui.url))).text();
      const polls = /api\/jobs\?.*state=scheduled/;
      await rig.page.route(polls, (route) => route.fulfill({ status: 200, contentType: "application/json", body: shown }));
      // behind the page's back: a is run (and claimed) before the click
      expect(await rig.mq.runNow(q, [a!])).toBe(1);
      const held = (await rig.mq.claim(q, { leaseMs: 60_000 }))!;
      expect(held.id).toBe(a!);
      const before = await rig.digest();
      await section("scheduled").getByRole("button", { name: "Run selected now" }).click();
      await until("the failure said", () => rig.page.locator("#status").textContent(), (t) => (t ?? "").startsWith("Failed:") && (t ?? "").includes(a!));
      expect(await rig.digest()).toBe(before);
      expect((await rig.mq.getJob(q, b!))!.state).toBe("scheduled");
      // polled again: the row of a is gone; b stays selected, and a second click runs it
      await rig.page.unroute(polls);
      await until("one scheduled row", () => idsOf(rig.page, "Scheduled jobs"), (ids) => ids.join() === b);
      expect(await rig.page.getByRole("checkbox", { name: `Select ${b}` }).isChecked()).toBe(true);
      await section("scheduled").getByRole("button", { name: "Run selected now" }).click();
      await until("b pending", () => rig.mq.getJob(q, b!), (j) => j?.state === "pending");
    });
  });
}
