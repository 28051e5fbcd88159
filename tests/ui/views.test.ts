/**
 * What on-call looks at (issue 22 §4), in a real headless Chromium on both backends: `/` is the
 * dashboard with the key panel one link away; active jobs listed with their lease deadline,
 * attempts, token and progress; a job's page (payload pretty-printed, attempts, times in UTC with
 * how long ago, the full failure reason, the trace context a traced producer left) reached from
 * its row and by searching its id; Delete and
 * Retry now from it; the workers serving a queue; the throughput's axes labelled, per second and per
 * minute over the last hour (with its empty state).
 */
import { beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import * as otel from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { hostname } from "node:os";
import process from "node:process";
import { EchoMQ, type Job } from "../../client.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";
import { suiteBrowser, until, useUiRig } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
/** A handler's failure with its stack: longer than a table cell shows (240 characters). */
const REASON = `TypeError: card declined\n${Array.from({ length: 12 }, (_, i) => `    at charge (billing.ts:${i + 10}:7)`).join("\n")}`;

const browser = suiteBrowser();

const cellsOf = (page: Page, table: string, id: string): Promise<string[]> =>
  page.getByRole("table", { name: table, exact: true }).locator(`tbody tr[data-id="${id}"] td`).allTextContents();

for (const backend of BACKENDS) {
  describe(`views (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser);
    let held: Job<unknown>;
    let dead: string;

    beforeAll(async () => {
      await rig.mq.enqueue("oncall", { order: 7, items: ["a", "b"] });
      held = (await rig.mq.claim("oncall", { leaseMs: 600_000 }))!;
      await rig.mq.progress(held, { pct: 40 });
      await rig.mq.enqueue("oncall", { order: 8 });
      const failing = (await rig.mq.claim("oncall", { leaseMs: 60_000 }))!;
      await rig.mq.bury(failing, REASON);
      dead = failing.id;
    }, 120_000);

    test("/ is the dashboard; the key panel is one link away", async () => {
      await rig.page.goto(rig.ui.url);
      await rig.page.waitForFunction(() => document.body.dataset.ready === "true");
      expect(await rig.page.getByRole("table", { name: "Queues", exact: true }).count()).toBe(1);
      await rig.page.getByRole("navigation", { name: "EchoMQ" }).getByRole("link", { name: "Key panel" }).click();
      await rig.page.waitForURL(`${rig.ui.url}keys`);
      expect(await rig.page.getByLabel("Queue", { exact: true }).count()).toBe(1);
    });

    test("active jobs: lease deadline (ahead), attempts, token, progress", async () => {
      await rig.page.goto(new URL(queueHref("oncall"), rig.ui.url).href);
      const cells = await until("the active row", () => cellsOf(rig.page, "Active jobs", held.id), (c) => c.length === 6);
      expect(cells[0]).toMatch(/\(in (9|10) min\)$/);
      expect(cells.slice(1)).toEqual(["1", String(held.token), '{"pct":40}', '{"order":7,"items":["a","b"]}', "Cancel"]);
      expect(await rig.page.locator("#oldest").textContent()).toBe("Oldest pending: none waiting");
      await rig.mq.enqueue("oncall", { order: 9 });
      await until(
        "the oldest pending job's age",
        () => rig.page.locator("#oldest").textContent(),
        (t) => /^Oldest pending: admitted (just now|\d+ s ago)$/.test(t ?? ""),
      );
    });

    test("a dead job's page from its row: the full reason, the payload pretty-printed, times in UTC and how long ago", async () => {
      await rig.page.goto(new URL(queueHref("oncall"), rig.ui.url).href);
      await until("the dead row", () => cellsOf(rig.page, "Dead jobs", dead), (c) => c.length > 0);
      await rig.page.getByRole("table", { name: "Dead jobs", exact: true }).getByRole("link", { name: dead }).click();
      await rig.page.waitForFunction(() => document.body.dataset.page === "job");
      expect(await rig.page.locator("#job-reason").textContent()).toBe(REASON);
      expect(await rig.page.locator("#job-payload").textContent()).toBe('{\n  "order": 8\n}');
      const facts = await rig.page.getByLabel("Facts").locator("div").allTextContents();
      expect(facts[0]).toBe("Statedead");
      expect(facts[1]).toBe("Attempts1");
      expect(facts[3]).toMatch(/^Created\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \((just now|\d+ s ago)\)$/);
      expect(facts[6]).toMatch(/^Buried\d{4}-\d\d-\d\d .* UTC \(/);
      expect(facts.slice(7)).toEqual(["Finished—", "Priority0 (the most urgent)", "Time limit— (the worker's)", "Dedup key—", "Scheduler—", "Name—", "Trace—"]);
      expect(await rig.page.getByRole("button", { name: "Retry now" }).count()).toBe(1);
      // a job admitted with its own priority, time limit and deduplication key shows them
      const keyed = await rig.mq.enqueue("oncall", { order: 10 }, { dedup: { key: "order:10" }, timeoutMs: 5000, priority: 4 });
      await rig.page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${keyed}`, rig.ui.url).href);
      const own = await rig.page.getByLabel("Facts").locator("div").allTextContents();
      expect(own.slice(8, 11)).toEqual(["Priority4", "Time limit5000 ms", "Dedup keyorder:10"]);
      expect(await rig.mq.remove("oncall", keyed)).toBe(true);
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
        const traceparent = (await rig.mq.getJob("oncall", id))!.traceparent!;
        expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
        await rig.page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${id}`, rig.ui.url).href);
        const facts = await rig.page.getByLabel("Facts").locator("div").allTextContents();
        expect(facts.at(-1)).toBe(`Tracetrace id ${traceparent.slice(3, 35)} (traceparent ${traceparent})`);
        expect(await rig.page.locator("#job-trace-id").textContent()).toBe(traceparent.slice(3, 35));
        // at 1280 px, the facts (the longest: the traceparent) stay inside the job's card
        await rig.page.setViewportSize({ width: 1280, height: 900 });
        const fit = await rig.page.evaluate(() => {
          const card = document.querySelector(".job")!;
          const right = card.getBoundingClientRect().right;
          const over = Array.from(card.querySelectorAll("dl dt, dl dd")).filter((e) => e.getBoundingClientRect().right > right + 0.5);
          return { overflowing: over.map((e) => e.textContent), scrolls: card.scrollWidth > card.clientWidth };
        });
        expect(fit).toEqual({ overflowing: [], scrolls: false });
        expect(await rig.mq.remove("oncall", id)).toBe(true);
      } finally {
        await traced.close();
        await provider.shutdown();
      }
    });

    test("search by id, then Retry now: pending again; Delete: gone", async () => {
      await rig.page.goto(new URL(queueHref("oncall"), rig.ui.url).href);
      await rig.page.getByRole("search", { name: "Find a job" }).getByLabel("Job id").fill(dead);
      await rig.page.getByRole("button", { name: "Find" }).click();
      await rig.page.waitForFunction(() => document.body.dataset.page === "job");
      expect(await rig.page.locator("h2 code").textContent()).toBe(dead);
      await rig.page.getByRole("button", { name: "Retry now" }).click();
      await until("pending again", () => rig.mq.getJob("oncall", dead), (j) => j?.state === "pending");
      await rig.page.waitForFunction(() => document.querySelector("#job-retry") === null); // the page read again
      expect(await rig.page.getByLabel("Facts").locator("div").first().textContent()).toBe("Statepending");
      await rig.page.getByRole("button", { name: "Delete" }).click();
      await until("deleted", () => rig.mq.getJob("oncall", dead), (j) => j === null);
      await rig.page.getByText(`no job ${dead} in "oncall"`).waitFor(); // the page read again: gone
      // an active job has no Delete (its worker holds it); an unknown id is a 404 page
      await rig.page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${held.id}`, rig.ui.url).href);
      expect(await rig.page.getByRole("button", { name: "Delete" }).count()).toBe(0);
      const missing = await rig.page.goto(new URL(`job?q=${encodeURIComponent("oncall")}&id=${dead}`, rig.ui.url).href);
      expect(missing?.status()).toBe(404);
    });

    test("workers: who serves the queue (id, host, pid, concurrency, app, since when), gone once stopped", async () => {
      const q = `served-${backend}`;
      const app = await EchoMQ.connect({ url: `valkey://127.0.0.1:${rig.server.port}`, backend, clientName: "billing" });
      const worker = app.work(q, async () => {}, { concurrency: 5, blockMs: 200 });
      try {
        await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
        const table = rig.page.getByRole("table", { name: "Workers", exact: true });
        const cells = await until(
          "the worker's row",
          () => table.locator(`tbody tr[data-worker="${worker.id}"]`).locator("th, td").allTextContents(),
          (c) => c.length === 8,
        );
        expect(cells.slice(0, 5)).toEqual([worker.id, hostname(), String(process.pid), "5", "billing"]);
        expect(cells[5]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \((just now|\d+ s ago)\)$/);
        expect(cells[6]).toMatch(/^\d+ s$/); // connected for
        expect(cells[7]).toMatch(/^(just now|\d+ s ago)$/); // its last claim or wait
        await worker.stop();
        await table.getByText("No worker is serving this queue now.").waitFor({ timeout: 20_000 });
        expect(await rig.page.locator("#workers-note").isHidden()).toBe(true);
      } finally {
        await worker.stop();
        await app.close();
      }
    });

    test("per minute over the last hour: axes labelled in UTC, the empty state, then processed and failed bars", async () => {
      const q = `minutes-${backend}`;
      await rig.mq.enqueue(q, { n: -1 }); // the queue exists; nothing runs yet
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      const desc = rig.page.locator("#minutes-desc");
      await until("the empty state", () => desc.textContent(), (t) => t === "No traffic in the last hour");
      const axes = async (): Promise<string[]> =>
        await Promise.all(
          ["minutes-peak", "minutes-start", "minutes-middle", "minutes-end"].map(async (id) => (await rig.page.locator(`#${id}`).textContent()) ?? ""),
        );
      const [peak, ...x] = await axes();
      expect(peak).toBe("1/min");
      for (const label of x) expect(label).toMatch(/^\d\d:\d\d UTC$/);
      expect(await rig.page.locator("#minutes rect").count()).toBe(0);
      // 30 jobs, every third failing its first attempt: 31 processed (the one waiting too), 10 failed
      await rig.mq.enqueueMany(q, Array.from({ length: 30 }, (_, n) => ({ n })));
      const worker = rig.mq.work(q, (job) => {
        const { n } = job.payload as { n: number };
        if (n >= 0 && n % 3 === 0 && job.attempts === 1) throw new Error("flaky");
      }, { concurrency: 4, maxAttempts: 2, backoff: 0 });
      try {
        await until(
          "the hour's counts",
          () => desc.textContent(),
          (t) => /^31 processed and 10 failed in the last hour; busiest minute \d\d:\d\d UTC with \d+ processed$/.test(t ?? ""),
        );
        expect(await rig.page.locator("#minutes rect.processed").count()).toBeGreaterThan(0);
        expect(await rig.page.locator("#minutes rect.failed").count()).toBeGreaterThan(0);
        expect((await axes())[0]).toMatch(/^\d+\/min$/);
        // the wait and run percentiles, from the histograms the settles keep
        await until(
          "the latency line",
          () => rig.page.locator("#latency").textContent(),
          (t) => /^Wait \(ready → claimed\): p50 [≤>] .+ of \d+ jobs; run \(claimed → settled\): p50 [≤>] .+ of \d+ jobs$/.test(t ?? ""),
        );
      } finally {
        await worker.stop();
      }
    });

    test("throughput and failures over time, the axes labelled: the peak rate and how far back", async () => {
      const q = `axes-${backend}`;
      await rig.mq.enqueueMany(q, Array.from({ length: 300 }, (_, n) => ({ n })));
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      // every third job fails its attempts: a failure line beside the acked one
      const worker = rig.mq.work(q, async (job) => {
        await new Promise((r) => setTimeout(r, 5));
        if ((job.payload as { n: number }).n % 3 === 0) throw new Error("flaky");
      }, { concurrency: 4, maxAttempts: 2, backoff: () => 1 });
      try {
        const peak = await until("a peak above zero", () => rig.page.locator("#spark-peak").textContent(), (t) => /^[1-9][\d.k]*\/s$/.test(t ?? ""));
        expect(peak).toMatch(/\/s$/);
        expect(await rig.page.locator("#spark-start").textContent()).toMatch(/^\d+ s ago$/);
        const failedPoints = () => rig.page.locator("#spark polyline.failed").getAttribute("points").then((p) => p ?? "");
        await until("a failure line that rises above the floor", failedPoints, (p) => p.split(" ").some((xy) => Number(xy.split(",")[1]) < 54));
      } finally {
        await worker.stop();
      }
    });
  });
}
