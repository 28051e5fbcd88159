/**
 * A queue's latest events on its page, in a real headless Chromium: the last 50, newest first
 * (when, event, job, details), kept live by the page's poll of `GET /api/events` (one XREVRANGE:
 * the HTTP server never waits on the stream); a reason is shown as text, never markup. The stream
 * entries are written by hand, as the wire-10 verbs write them (docs/WIRE.md "Events").
 */
import { describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { keyspace } from "../../mod.ts";
import { EVENTS_SHOWN, queueHref } from "../../lib/ui/json_api.ts";
import { command } from "../../tools/embedded/mod.ts";
import { suiteBrowser, until, useUiRig } from "./_browser.ts";

const browser = suiteBrowser();

/** The Events table's rows, each as its cells' text. */
const rowsOf = (page: Page): Promise<string[][]> =>
  page.getByRole("table", { name: "Events", exact: true }).locator("tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.children, (c) => c.textContent ?? ""))
  );

describe("the events tail on the queue page", () => {
  const rig = useUiRig("scripts", browser);

  const xadd = async (q: string, ...fields: string[]): Promise<string> => String(await command(rig.server.port, ["XADD", keyspace(q).events, "*", ...fields]));

  test(`the last ${EVENTS_SHOWN}, newest first, live`, async () => {
    const q = "watched";
    await rig.mq.enqueue(q, { n: 1 }); // the queue exists
    for (let i = 0; i < 60; i++) await xadd(q, "type", "enqueued", "jobs", `JOB${String(i).padStart(11, "0")}`);
    await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
    const rows = await until("50 event rows", () => rowsOf(rig.page), (r) => r.length === EVENTS_SHOWN && r[0]!.length === 4);
    expect(rows[0]!.slice(1)).toEqual(["enqueued", "JOB00000000059", ""]);
    expect(rows.at(-1)!.slice(1)).toEqual(["enqueued", "JOB00000000010", ""]);
    expect(rows[0]![0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/);
    expect(await rig.page.locator("#events-range").textContent()).toBe("the latest 50, newest first");

    await xadd(q, "type", "dead", "jobs", "JOB00000000007", "reason", "<b>card</b> declined");
    await xadd(q, "type", "paused", "lane", "acme");
    await xadd(q, "type", "claimed", "jobs", "JOB00000000001 JOB00000000002", "attempts", "1 3");
    const live = await until("the new events", () => rowsOf(rig.page), (r) => r[0]?.[1] === "claimed");
    expect(live.slice(0, 4).map((r) => r.slice(1))).toEqual([
      ["claimed", "JOB00000000002", "attempt 3"],
      ["claimed", "JOB00000000001", "attempt 1"],
      ["paused", "the queue", 'lane "acme"'],
      ["dead", "JOB00000000007", 'reason "<b>card</b> declined"'],
    ]);
    expect(await rig.page.locator("#events b").count()).toBe(0); // text, not markup

    // the API itself: newest first, as the client's items
    const api = (await (await fetch(new URL(`api/events?name=${q}`, rig.ui.url))).json()) as { events: Array<{ type: string; jobId?: string }> };
    expect(api.events).toHaveLength(EVENTS_SHOWN);
    expect(api.events[0]).toMatchObject({ type: "claimed", jobId: "JOB00000000002" });
  }, 60_000);

  test("a queue without events says so", async () => {
    await rig.mq.enqueue("quiet", { n: 1 });
    await command(rig.server.port, ["DEL", keyspace("quiet").events]);
    await rig.page.goto(new URL(queueHref("quiet"), rig.ui.url).href);
    const rows = await until("the empty row", () => rowsOf(rig.page), (r) => r[0]?.[0] === "No events.");
    expect(rows).toEqual([["No events."]]);
  }, 60_000);
});
