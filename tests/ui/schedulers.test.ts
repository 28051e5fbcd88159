/**
 * A queue's schedulers on its page (issue 20 §4), in a real headless Chromium on both backends:
 * each listed with its spec, next and last run (UTC, how far), runs and missed policy; a note
 * while a next run lies in the past (no worker firing), gone once a worker fires it; Remove
 * deletes exactly the scheduler of its row (a quote or CR in a name retargets nothing); a POST
 * from a foreign Origin, and any on a read-only dashboard, is refused and writes nothing (DEBUG
 * DIGEST before and after), and read-only shows no Remove.
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { startUi } from "../../dev/ui/server/app.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { visible } from "../../lib/ui/visible.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";
import { postJson, suiteBrowser, until, useUiRig } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
/** Names the rule allows: a quote, a CR (a page attribute would read it back as LF: the sibling). */
const ODD = 'nightly "report"\r\nx';
const SIBLING = 'nightly "report"\nx';
const UTC_TIME = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC`;

const browser = suiteBrowser();

/** The Schedulers table's rows, each as its cells' text (the name first). */
const rowsOf = (page: Page): Promise<string[][]> =>
  page.getByRole("table", { name: "Schedulers", exact: true }).locator("tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.children, (c) => c.textContent ?? ""))
  );

for (const backend of BACKENDS) {
  describe(`schedulers on the queue page (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser);

    test("each scheduler with its spec, next run (ahead), last run, runs and missed policy", async () => {
      await rig.mq.upsertScheduler("timed", "digest", { everyMs: 3_600_000 }, { payload: { n: 1 } });
      await rig.mq.upsertScheduler("timed", "report", { cron: "0 9 * * *", tz: "Europe/Paris" }, { payload: {}, missed: { max: 3 } });
      await rig.page.goto(new URL(queueHref("timed"), rig.ui.url).href);
      const rows = await until("two scheduler rows", () => rowsOf(rig.page), (r) => r.length === 2 && r.every((c) => c.length === 7));
      const digestRow = rows.find((r) => r[0] === "digest")!;
      expect(digestRow[1]).toBe("every 3600000 ms");
      expect(digestRow[2]).toMatch(new RegExp(`^${UTC_TIME} \\(in (59|60) min\\)$`));
      expect(digestRow.slice(3)).toEqual(["—", "0", "latest", "Remove"]);
      const reportRow = rows.find((r) => r[0] === "report")!;
      expect(reportRow[1]).toBe('cron "0 9 * * *" tz Europe/Paris');
      expect(reportRow[2]).toMatch(new RegExp(`^${UTC_TIME} \\(in \\d+ (s|min|h)\\)$`));
      expect(reportRow[5]).toBe("max 3");
      // the next run the page shows is the client's
      const next = (await rig.mq.schedulers("timed")).find((s) => s.name === "digest")!.nextRun;
      expect(digestRow[2]).toStartWith(next.toISOString().replace("T", " ").replace("Z", " UTC"));
      expect(await rig.page.locator("#schedulers-overdue").isVisible()).toBe(false);
      // and through the JSON API
      const api = (await (await fetch(new URL(`api/schedulers?name=timed`, rig.ui.url))).json()) as {
        schedulers: Array<{ name: string; nextRun: number; spec: string }>;
      };
      expect(api.schedulers.find((s) => s.name === "digest")).toMatchObject({ spec: "every 3600000 ms", nextRun: next.getTime() });
    });

    test("a next run in the past (no worker firing) is noted; a worker fires it and the note goes", async () => {
      const q = `late-${backend}`;
      await rig.mq.enqueue(q, { n: 0 });
      await rig.mq.upsertScheduler(q, "tick", { everyMs: 1000 }, { payload: { tick: true } });
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      const note = await until("the note", () => rig.page.locator("#schedulers-overdue").textContent(), (t) => (t ?? "") !== "", 30_000);
      expect(note).toBe('The next run of "tick" is in the past: no worker of this queue is firing it (any running worker fires the queue\'s schedulers).');
      expect((await rowsOf(rig.page))[0]![2]).toMatch(/ ago\) — past: no worker firing$/);
      const worker = rig.mq.work(q, async () => {}, { concurrency: 1 });
      try {
        await until("the note hidden", () => rig.page.locator("#schedulers-overdue").isVisible(), (v) => !v, 30_000);
        const runs = await until("a run shown", () => rowsOf(rig.page), (r) => Number(r[0]?.[4]) > 0);
        expect(runs[0]![3]).toMatch(new RegExp(`^${UTC_TIME} \\(`)); // the last run
      } finally {
        await worker.stop();
      }
    });

    test("Remove deletes the scheduler of its row: a quote and a CR in its name retarget nothing", async () => {
      await rig.mq.upsertScheduler("odd", ODD, { everyMs: 3_600_000 }, { payload: {} });
      await rig.mq.upsertScheduler("odd", SIBLING, { everyMs: 3_600_000 }, { payload: {} });
      await rig.page.goto(new URL(queueHref("odd"), rig.ui.url).href);
      await until("both rows", () => rowsOf(rig.page), (r) => r.length === 2);
      await rig.page.getByRole("button", { name: `Remove scheduler ${visible(ODD)}`, exact: true }).click();
      const left = await until("the odd one gone", () => rig.mq.schedulers("odd"), (s) => s.length === 1);
      expect(left.map((s) => s.name)).toEqual([SIBLING]);
      await until("its row gone", () => rowsOf(rig.page), (r) => r.length === 1 && r[0]![0] === visible(SIBLING));
      await rig.page.getByText(`Removed scheduler ${visible(ODD)}.`).waitFor();
    });

    test("a POST from a foreign Origin is refused and writes nothing", async () => {
      await rig.mq.upsertScheduler("guarded", "keep", { everyMs: 3_600_000 }, { payload: {} });
      const before = await rig.digest();
      const own = new URL(rig.ui.url).origin;
      for (const origin of [{ origin: "https://evil.example" }, {}] as Array<Record<string, string>>) {
        const r = await postJson(rig.ui, "api/schedulers/remove", { name: "guarded", scheduler: "keep" }, origin);
        expect([r.status, await r.text()]).toEqual([403, `POST is answered only from ${own}\n`]);
      }
      expect(await rig.digest()).toBe(before);
      expect((await rig.mq.schedulers("guarded")).map((s) => s.name)).toEqual(["keep"]);
      // the page's own origin: removed
      const ok = await postJson(rig.ui, "api/schedulers/remove", { name: "guarded", scheduler: "keep" });
      expect([ok.status, await ok.json()]).toEqual([200, { removed: true }]);
      expect(await rig.mq.schedulers("guarded")).toEqual([]);
    });

    test("read-only: the schedulers listed, no Remove shown, and a remove refused with nothing written", async () => {
      await rig.mq.upsertScheduler("shown", "keep", { everyMs: 3_600_000 }, { payload: {} });
      const ro = await startUi({ mq: rig.mq, pollMs: 200, sampleMs: 200, readOnly: true });
      try {
        await rig.page.goto(new URL(queueHref("shown"), ro.url).href);
        await until("the row", () => rowsOf(rig.page), (r) => r[0]?.[0] === "keep");
        expect(await rig.page.locator('button[data-key^="unschedule:"]').count()).toBe(1); // rendered, and hidden:
        expect(await rig.page.getByRole("button", { name: "Remove scheduler keep" }).count()).toBe(0);
        const before = await rig.digest();
        const r = await postJson(ro, "api/schedulers/remove", { name: "shown", scheduler: "keep" });
        expect([r.status, await r.text()]).toEqual([403, "this dashboard is read-only: no action is answered\n"]);
        expect(await rig.digest()).toBe(before);
        expect((await rig.mq.schedulers("shown")).map((s) => s.name)).toEqual(["keep"]);
      } finally {
        await ro.close();
      }
    });
  });
}
