/**
 * A queue's latest events on its page, in a real headless Chromium: the last 50, newest first
 * (when, event, job, details), kept live by the page's poll of `GET /api/events` (one XREVRANGE:
 * the HTTP server never waits on the stream); a reason is shown as text, never markup. The stream
 * entries are written by hand, as the wire-10 verbs write them (docs/WIRE.md "Events").
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import type { EchoMQ } from "../../client.ts";
import type { Ui } from "../../cli/ui/server/app.ts";
import { keyspace } from "../../mod.ts";
import { EVENTS_SHOWN, queueHref } from "../../lib/ui/json_api.ts";
import { command, type ServerHandle } from "../../tools/embedded/mod.ts";
import { suiteBrowser, uiRig, type UiRig, until } from "./_browser.ts";

const browser = suiteBrowser();

/** The Events table's rows, each as its cells' text. */
const rowsOf = (page: Page): Promise<string[][]> =>
  page.getByRole("table", { name: "Events", exact: true }).locator("tbody tr").evaluateAll((trs) =>
    trs.map((tr) => Array.from(tr.children, (c) => c.textContent ?? ""))
  );

describe("the events tail on the queue page", () => {
  let rig: UiRig;
  let server: ServerHandle;
  let mq: EchoMQ<unknown>;
  let ui: Ui;
  let page: Page;

  beforeAll(async () => {
    rig = await uiRig("scripts", browser());
    ({ server, mq, ui, page } = rig);
  }, 120_000);
  afterAll(() => rig?.close());

  const xadd = async (q: string, ...fields: string[]): Promise<string> =>
    String(await command(server.port, ["XADD", keyspace(q).events, "*", ...fields]));

  test(`the last ${EVENTS_SHOWN}, newest first, live`, async () => {
    const q = "watched";
    await mq.enqueue(q, { n: 1 }); // the queue exists
    for (let i = 0; i < 60; i++) await xadd(q, "type", "enqueued", "jobs", `JOB${String(i).padStart(11, "0")}`);
    await page.goto(new URL(queueHref(q), ui.url).href);
    const rows = await until("50 event rows", () => rowsOf(page), (r) => r.length === EVENTS_SHOWN && r[0]!.length === 4);
    expect(rows[0]!.slice(1)).toEqual(["enqueued", "JOB00000000059", ""]);
    expect(rows.at(-1)!.slice(1)).toEqual(["enqueued", "JOB00000000010", ""]);
    expect(rows[0]![0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/);
    expect(await page.locator("#events-range").textContent()).toBe("the latest 50, newest first");

    await xadd(q, "type", "dead", "jobs", "JOB00000000007", "reason", "<b>card</b> declined");
    await xadd(q, "type", "paused", "lane", "acme");
    await xadd(q, "type", "claimed", "jobs", "JOB00000000001 JOB00000000002", "attempts", "1 3");
    const live = await until("the new events", () => rowsOf(page), (r) => r[0]?.[1] === "claimed");
    expect(live.slice(0, 4).map((r) => r.slice(1))).toEqual([
      ["claimed", "JOB00000000002", "attempt 3"],
      ["claimed", "JOB00000000001", "attempt 1"],
      ["paused", "the queue", 'lane "acme"'],
      ["dead", "JOB00000000007", 'reason "<b>card</b> declined"'],
    ]);
    expect(await page.locator("#events b").count()).toBe(0); // text, not markup

    // the API itself: newest first, as the client's items
    const api = (await (await fetch(new URL(`api/events?name=${q}`, ui.url))).json()) as { events: Array<{ type: string; jobId?: string }> };
    expect(api.events).toHaveLength(EVENTS_SHOWN);
    expect(api.events[0]).toMatchObject({ type: "claimed", jobId: "JOB00000000002" });
  }, 60_000);

  test("a queue without events says so", async () => {
    await mq.enqueue("quiet", { n: 1 });
    await command(server.port, ["DEL", keyspace("quiet").events]);
    await page.goto(new URL(queueHref("quiet"), ui.url).href);
    const rows = await until("the empty row", () => rowsOf(page), (r) => r[0]?.[0] === "No events.");
    expect(rows).toEqual([["No events."]]);
  }, 60_000);
});
