/**
 * A job's own events on its page, in a real headless Chromium on both backends: the entries of
 * its queue's events stream that concern it, newest first — when, the event, what it carries
 * (attempt, reason, progress) — written by the verbs themselves (a job enqueued and claimed in a
 * batch with another, retried, claimed again, reporting progress, completed; the other job's own
 * events stay on the other's page); a call deduplicated into a job shows on the holder's page.
 * The search is bounded and says so: only the newest 2,000 entries are read ("older entries are not
 * searched"), and a job whose events are all older shows an honest empty state. A reason is text,
 * never markup.
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { type Job, JOB_EVENTS_SCAN } from "../../client.ts";
import type { Ui } from "../../dev/ui/server/app.ts";
import { keyspace } from "../../mod.ts";
import { command, moduleBuilt } from "../../tools/embedded/mod.ts";
import { suiteBrowser, useUiRig } from "./_browser.ts";

const BACKENDS = [
  ...(moduleBuilt() ? (["module"] as const) : []),
  "scripts",
] as const;
const browser = suiteBrowser();
const Q = "ledger";
const UTC = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \((just now|\d+ s ago)\)$/;

/** What the job's page shows of its events: the note, and each row's cells (the time apart). */
async function shown(
  page: Page,
  ui: Ui,
  id: string,
): Promise<{ scope: string; rows: string[][] }> {
  await page.goto(
    new URL(`job?q=${encodeURIComponent(Q)}&id=${id}`, ui.url).href,
  );
  const rows = await page.getByRole("table", { name: "Events", exact: true })
    .locator("tbody tr").evaluateAll((trs) => trs.map((tr) => Array.from(tr.children, (c) => c.textContent ?? "")));
  for (const r of rows) if (r.length === 3) expect(r[0]).toMatch(UTC);
  return {
    scope: (await page.locator("#job-events-scope").textContent()) ?? "",
    rows: rows.map((r) => (r.length === 3 ? r.slice(1) : r)),
  };
}

for (const backend of BACKENDS) {
  describe(`a job's events on its page (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser);

    /** Entries in the queue's stream now. */
    const entries = async (): Promise<number> => Number(await command(rig.server.port, ["XLEN", keyspace(Q).events]));
    /** `n` entries of another job, written at once (one EVAL). */
    const filler = (n: number): Promise<unknown> =>
      command(rig.server.port, [
        "EVAL",
        "for i = 1, tonumber(ARGV[1]) do redis.call('XADD', KEYS[1], '*', 'type', 'enqueued', 'jobs', 'JOB99999999999') end",
        "1",
        keyspace(Q).events,
        String(n),
      ]);

    test(
      "enqueued, claimed, retried, claimed again, progress, completed: exactly its own, newest first; then bounded",
      async () => {
        const [a, b] = await rig.mq.enqueueMany(Q, [{ n: 1 }, { n: 2 }]); // one entry naming both
        const [ja, jb] = (await rig.mq.claimMany(Q, 2, { leaseMs: 60_000 })) as Array<
          Job<unknown>
        >; // one entry, attempts 1 1
        expect([ja!.id, jb!.id]).toEqual([a!, b!]);
        await rig.mq.retry(ja!, { delayMs: 0, reason: "<b>card</b> declined" });
        await rig.mq.ack(jb!, "b done");
        const again = (await rig.mq.claim(Q, { leaseMs: 60_000 }))!;
        expect(again.id).toBe(a!);
        await rig.mq.progress(again, { pct: 50 });
        await rig.mq.ack(again, { ok: true });

        const all = await entries();
        const mine = await shown(rig.page, rig.ui, a!);
        expect(mine.scope).toBe(
          `Events of this job among all ${all} entries the queue's events stream keeps, newest first.`,
        );
        expect(mine.rows.map((r) => r[0])).toEqual([
          "completed",
          "progress",
          "claimed",
          "retried",
          "claimed",
          "enqueued",
        ]);
        expect(mine.rows[0]![1]).toBe(`result {"ok":true}`); // the completed event carries its result (issue 37.8)
        expect(mine.rows[1]![1]).toBe('progress {"pct":50}');
        expect(mine.rows[2]![1]).toBe("attempt 2");
        expect(mine.rows[3]![1]).toMatch(
          /^reason "<b>card<\/b> declined", until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/,
        );
        expect(mine.rows[4]![1]).toBe("attempt 1");
        expect(mine.rows[5]![1]).toBe("");
        expect(await rig.page.locator("#job-events b").count()).toBe(0); // text, not markup

        // the other job of the same entries: its own events only
        expect((await shown(rig.page, rig.ui, b!)).rows).toEqual([
          ["completed", `result "b done"`],
          ["claimed", "attempt 1"],
          ["enqueued", ""],
        ]);

        // bounded: the newest 2,000 entries are searched — with 1,997 newer ones, a's newest three are left
        expect(JOB_EVENTS_SCAN).toBe(2000);
        await filler(JOB_EVENTS_SCAN - 3);
        const bounded = await shown(rig.page, rig.ui, a!);
        expect(bounded.scope).toBe(
          "Events of this job among the last 2,000 of the queue, newest first: older entries are not searched.",
        );
        expect(bounded.rows).toEqual([["completed", `result {"ok":true}`], [
          "progress",
          'progress {"pct":50}',
        ], ["claimed", "attempt 2"]]);
        // and three more: none of a's is among them, and the page says so
        await filler(3);
        expect(await shown(rig.page, rig.ui, a!)).toEqual({
          scope: "Events of this job among the last 2,000 of the queue, newest first: older entries are not searched.",
          rows: [["No events of this job among those entries."]],
        });
      },
      60_000,
    );

    test(
      "a call deduplicated into a job shows on the holder's page; a queue without events says so",
      async () => {
        const holder = await rig.mq.enqueue(Q, { n: 3 }, {
          dedup: { key: "once" },
        });
        const { id: folded, outcome } = await rig.mq.submit(Q, { n: 4 }, {
          dedup: { key: "once" },
        });
        expect(outcome).toBe("deduplicated");
        expect(folded).toBe(holder);
        const { rows } = await shown(rig.page, rig.ui, holder);
        expect(rows.map((r) => r[0])).toEqual(["deduplicated", "enqueued"]);
        expect(rows[0]![1]).toMatch(/^JOB\w{11} folded into this job$/);
        expect(rows[0]![1]).not.toContain(holder);

        await rig.mq.retain(Q, { eventsMax: 0 }); // events off: the stream deleted
        expect(await shown(rig.page, rig.ui, holder)).toEqual({
          scope: "The queue's events stream is empty (nothing written yet, trimmed, or events are off for the queue).",
          rows: [["No events."]],
        });
      },
      60_000,
    );
  });
}
