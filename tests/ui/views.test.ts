/**
 * What on-call looks at (issue 22 §4), in a real headless Chromium on both backends: `/` is the
 * dashboard with the key panel one link away; active jobs listed with their lease deadline,
 * attempts, token and progress; a job's page (payload pretty-printed, attempts, times in UTC with
 * how long ago, the full failure reason, the trace context a traced producer left) reached from
 * its row and by searching its id; Delete and
 * Retry now from it; the workers serving a queue; the throughput's axes labelled, per second and per
 * minute over the last hour (with its empty state).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import * as otel from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { hostname } from "node:os";
import process from "node:process";
import { EchoMQ, type Job } from "../../client.ts";
import type { Ui } from "../../cli/ui/server/app.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";
import { suiteBrowser, uiRig, type UiRig, until } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
/** A handler's failure with its stack: longer than a table cell shows (240 characters). */
const REASON = `TypeError: card declined\n${Array.from({ length: 12 }, (_, i) => `    at charge (billing.ts:${i + 10}:7)`).join("\n")}`;

const browser = suiteBrowser();

const cellsOf = (page: Page, table: string, id: string): Promise<string[]> =>
  page.getByRole("table", { name: table, exact: true }).locator(`tbody tr[data-id="${id}"] td`).allTextContents();

for (const backend of BACKENDS) {
  describe(`views (${backend} backend)`, () => {
    let rig: UiRig;
    let mq: EchoMQ<unknown>;
    let ui: Ui;
    let page: Page;
    let held: Job<unknown>;
    let dead: string;

    beforeAll(async () => {
      rig = await uiRig(backend, browser());
      ({ mq, ui, page } = rig);
      await mq.enqueue("oncall", { order: 7, items: ["a", "b"] });
      held = (await mq.claim("oncall", { leaseMs: 600_000 }))!;
      await mq.progress(held, { pct: 40 });
      await mq.enqueue("oncall", { order: 8 });
      const failing = (await mq.claim("oncall", { leaseMs: 60_000 }))!;
      await mq.bury(failing, REASON);
      dead = failing.id;
    }, 120_000);
    afterAll(() => rig?.close());

    test("/ is the dashboard; the key panel is one link away", async () => {
      await page.goto(ui.url);
      await page.waitForFunction(() => document.body.dataset.ready === "true");
      expect(await page.getByRole("table", { name: "Queues", exact: true }).count()).toBe(1);
      await page.getByRole("navigation", { name: "EchoMQ" }).getByRole("link", { name: "Key panel" }).click();
      await page.waitForURL(`${ui.url}keys`);
      expect(await page.getByLabel("Queue", { exact: true }).count()).toBe(1);
    });

    test("active jobs: lease deadline (ahead), attempts, token, progress", async () => {
      await page.goto(new URL(queueHref("oncall"), ui.url).href);
      const cells = await until("the active row", () => cellsOf(page, "Active jobs", held.id), (c) => c.length === 5);
      expect(cells[0]).toMatch(/\(in (9|10) min\)$/);
      expect(cells.slice(1)).toEqual(["1", String(held.token), '{"pct":40}', '{"order":7,"items":["a","b"]}']);
      expect(await page.locator("#oldest").textContent()).toBe("Oldest pending: none waiting");
      await mq.enqueue("oncall", { order: 9 });
      await until("the oldest pending job's age", () => page.locator("#oldest").textContent(), (t) => /^Oldest pending: admitted (just now|\d+ s ago)$/.test(t ?? ""));
    });

    test("a dead job's page from its row: the full reason, the payload pretty-printed, times in UTC and how long ago", async () => {
      await page.goto(new URL(queueHref("oncall"), ui.url).href);
      await until("the dead row", () => cellsOf(page, "Dead jobs", dead), (c) => c.length > 0);
      await page.getByRole("table", { name: "Dead jobs", exact: true }).getByRole("link", { name: dead }).click();
      await page.waitForFunction(() => document.body.dataset.page === "job");
      expect(await page.locator("#job-reason").textContent()).toBe(REASON);
      expect(await page.locator("#job-payload").textContent()).toBe('{\n  "order": 8\n}');
      const facts = await page.getByLabel("Facts").locator("div").allTextContents();
      expect(facts[0]).toBe("Statedead");
      expect(facts[1]).toBe("Attempts1");
      expect(facts[3]).toMatch(/^Created\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \((just now|\d+ s ago)\)$/);
      expect(facts[6]).toMatch(/^Buried\d{4}-\d\d-\d\d .* UTC \(/);
      expect(facts.slice(7)).toEqual(["Finished—", "Priority0 (the most urgent)", "Time limit— (the worker's)", "Dedup key—", "Scheduler—", "Trace—"]);
      expect(await page.getByRole("button", { name: "Retry now" }).count()).toBe(1);
      // a job admitted with its own priority, time limit and deduplication key shows them
      const keyed = await mq.enqueue("oncall", { order: 10 }, { dedup: { key: "order:10" }, timeoutMs: 5000, priority: 4 });
      await page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${keyed}`, ui.url).href);
      const own = await page.getByLabel("Facts").locator("div").allTextContents();
      expect(own.slice(8, 11)).toEqual(["Priority4", "Time limit5000 ms", "Dedup keyorder:10"]);
      expect(await mq.remove("oncall", keyed)).toBe(true);
    });

    test("a traced job's page shows the trace context its producer left: the trace id, and the traceparent", async () => {
      // a tracer of its own (no global provider): a real SDK span gives a real W3C context
      const provider = new BasicTracerProvider();
      const traced = await EchoMQ.connect({
        url: `valkey://127.0.0.1:${rig.server.port}`,
        backend,
        tracing: { api: { ...otel, trace: { getTracer: (n: string, v?: string) => provider.getTracer(n, v), setSpan: otel.trace.setSpan } } },
      });
      try {
        const id = await traced.enqueue("oncall", { order: 11 });
        const traceparent = (await mq.getJob("oncall", id))!.traceparent!;
        expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
        await page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${id}`, ui.url).href);
        const facts = await page.getByLabel("Facts").locator("div").allTextContents();
        expect(facts.at(-1)).toBe(`Tracetrace id ${traceparent.slice(3, 35)} (traceparent ${traceparent})`);
        expect(await page.locator("#job-trace-id").textContent()).toBe(traceparent.slice(3, 35));
        expect(await mq.remove("oncall", id)).toBe(true);
      } finally {
        await traced.close();
        await provider.shutdown();
      }
    });

    test("search by id, then Retry now: pending again; Delete: gone", async () => {
      await page.goto(new URL(queueHref("oncall"), ui.url).href);
      await page.getByRole("search", { name: "Find a job" }).getByLabel("Job id").fill(dead);
      await page.getByRole("button", { name: "Find" }).click();
      await page.waitForFunction(() => document.body.dataset.page === "job");
      expect(await page.locator("h2 code").textContent()).toBe(dead);
      await page.getByRole("button", { name: "Retry now" }).click();
      await until("pending again", () => mq.getJob("oncall", dead), (j) => j?.state === "pending");
      await page.waitForFunction(() => document.querySelector("#job-retry") === null); // the page read again
      expect(await page.getByLabel("Facts").locator("div").first().textContent()).toBe("Statepending");
      await page.getByRole("button", { name: "Delete" }).click();
      await until("deleted", () => mq.getJob("oncall", dead), (j) => j === null);
      await page.getByText(`no job ${dead} in "oncall"`).waitFor(); // the page read again: gone
      // an active job has no Delete (its worker holds it); an unknown id is a 404 page
      await page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${held.id}`, ui.url).href);
      expect(await page.getByRole("button", { name: "Delete" }).count()).toBe(0);
      const missing = await page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${dead}`, ui.url).href);
      expect(missing?.status()).toBe(404);
    });

    test("workers: who serves the queue (id, host, pid, concurrency, app, since when), gone once stopped", async () => {
      const q = `served-${backend}`;
      const app = await EchoMQ.connect({ url: `valkey://127.0.0.1:${rig.server.port}`, backend, clientName: "billing" });
      const worker = app.work(q, async () => {}, { concurrency: 5, blockMs: 200 });
      try {
        await page.goto(new URL(queueHref(q), ui.url).href);
        const table = page.getByRole("table", { name: "Workers", exact: true });
        const cells = await until("the worker's row", () => table.locator(`tbody tr[data-worker="${worker.id}"]`).locator("th, td").allTextContents(), (c) => c.length === 8);
        expect(cells.slice(0, 5)).toEqual([worker.id, hostname(), String(process.pid), "5", "billing"]);
        expect(cells[5]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \((just now|\d+ s ago)\)$/);
        expect(cells[6]).toMatch(/^\d+ s$/); // connected for
        expect(cells[7]).toMatch(/^(just now|\d+ s ago)$/); // its last claim or wait
        await worker.stop();
        await table.getByText("No worker is serving this queue now.").waitFor({ timeout: 20_000 });
        expect(await page.locator("#workers-note").isHidden()).toBe(true);
      } finally {
        await worker.stop();
        await app.close();
      }
    });

    test("per minute over the last hour: axes labelled in UTC, the empty state, then processed and failed bars", async () => {
      const q = `minutes-${backend}`;
      await mq.enqueue(q, { n: -1 }); // the queue exists; nothing runs yet
      await page.goto(new URL(queueHref(q), ui.url).href);
      const desc = page.locator("#minutes-desc");
      await until("the empty state", () => desc.textContent(), (t) => /^No traffic since \d\d:\d\d UTC \(sampled from then\)$/.test(t ?? ""));
      const axes = async (): Promise<string[]> =>
        await Promise.all(["minutes-peak", "minutes-start", "minutes-middle", "minutes-end"].map(async (id) => (await page.locator(`#${id}`).textContent()) ?? ""));
      const [peak, ...x] = await axes();
      expect(peak).toBe("1/min");
      for (const label of x) expect(label).toMatch(/^\d\d:\d\d UTC$/);
      expect(await page.locator("#minutes rect").count()).toBe(0);
      // 30 jobs, every third failing its first attempt: 31 processed (the one waiting too), 10 failed
      await mq.enqueueMany(q, Array.from({ length: 30 }, (_, n) => ({ n })));
      const worker = mq.work(q, (job) => {
        const { n } = job.payload as { n: number };
        if (n >= 0 && n % 3 === 0 && job.attempts === 1) throw new Error("flaky");
      }, { concurrency: 4, maxAttempts: 2, backoff: 0 });
      try {
        await until("the hour's counts", () => desc.textContent(), (t) => /^31 processed and 10 failed since \d\d:\d\d UTC \(sampled from then\); busiest minute \d\d:\d\d UTC with \d+ processed$/.test(t ?? ""));
        expect(await page.locator("#minutes rect.processed").count()).toBeGreaterThan(0);
        expect(await page.locator("#minutes rect.failed").count()).toBeGreaterThan(0);
        expect((await axes())[0]).toMatch(/^\d+\/min$/);
      } finally {
        await worker.stop();
      }
    });

    test("throughput and failures over time, the axes labelled: the peak rate and how far back", async () => {
      const q = `axes-${backend}`;
      await mq.enqueueMany(q, Array.from({ length: 300 }, (_, n) => ({ n })));
      await page.goto(new URL(queueHref(q), ui.url).href);
      // every third job fails its attempts: a failure line beside the acked one
      const worker = mq.work(q, async (job) => {
        await new Promise((r) => setTimeout(r, 5));
        if ((job.payload as { n: number }).n % 3 === 0) throw new Error("flaky");
      }, { concurrency: 4, maxAttempts: 2, backoff: () => 1 });
      try {
        const peak = await until("a peak above zero", () => page.locator("#spark-peak").textContent(), (t) => /^[1-9][\d.k]*\/s$/.test(t ?? ""));
        expect(peak).toMatch(/\/s$/);
        expect(await page.locator("#spark-start").textContent()).toMatch(/^\d+ s ago$/);
        const failedPoints = () => page.locator("#spark polyline.failed").getAttribute("points").then((p) => p ?? "");
        await until("a failure line that rises above the floor", failedPoints, (p) => p.split(" ").some((xy) => Number(xy.split(",")[1]) < 54));
      } finally {
        await worker.stop();
      }
    });
  });
}
