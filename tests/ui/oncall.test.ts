/**
 * On-call views (issue 37) in a real headless Chromium on both backends. The job page: failed
 * attempts folded (the name and message in view, the stack hidden) and unfolded on a click; a
 * running job's log growing on the page while its handler logs, without a reload, and the page
 * showing the job's end; the Cancel button stopping a running job (its handler's signal aborts,
 * the page shows it buried `cancelled`). The queue page: the wait and run percentiles the server's
 * histograms give; the per-minute chart after the dashboard *process* restarts (`emq ui --url` stopped and
 * a new one started on the same server): the same counts, read from Valkey. Waits are for
 * conditions, never fixed sleeps.
 */
import { describe, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { JobCancelledError, type WorkerJob } from "../../client.ts";
import { queueHref } from "../../lib/ui/json_api.ts";
import { latencyText, percentiles } from "../../lib/ui/latency_text.ts";
import { moduleBuilt } from "../../tools/embedded/mod.ts";
import { suiteBrowser, until, useUiRig } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
const MAIN = resolve(import.meta.dir, "../../dev/main.ts");
const browser = suiteBrowser();

/** A promise and the function that settles it: a handler waits on it until the test lets it go on. */
function gate<T = void>(): { wait: Promise<T>; open: (v: T) => void } {
  let open!: (v: T) => void;
  const wait = new Promise<T>((r) => (open = r));
  return { wait, open };
}

/** `emq ui --url <server>` as a process of its own; resolves with it and the dashboard's address. */
function startEmqUi(port: number): Promise<{ child: ChildProcess; url: string }> {
  const env = { ...process.env };
  delete env.RUST_BACKTRACE;
  const child = spawn(process.execPath, [MAIN, "ui", "--url", `valkey://127.0.0.1:${port}`], { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stderr!.on("data", (d) => (out += String(d)));
  return new Promise((ok, fail) => {
    child.on("exit", (code) => fail(new Error(`emq ui exited ${code}: ${out}`)));
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = /dashboard on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) ok({ child, url: m[1]! });
    });
  });
}

/** Stops an `emq ui` child (SIGINT, as Ctrl-C) and resolves once it has exited. */
function stopEmqUi(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    if (child.exitCode !== null) return r();
    child.removeAllListeners("exit");
    child.once("exit", () => r());
    child.kill("SIGINT");
  });
}

for (const backend of BACKENDS) {
  describe(`on-call views (${backend} backend)`, () => {
    const rig = useUiRig(backend, browser);
    const jobUrl = (q: string, id: string): string => new URL(`job?q=${encodeURIComponent(q)}&id=${id}`, rig.ui.url).href;
    /** A fact of the job page ("" while the page is being read again: a reload destroys what a read holds). */
    const fact = async (name: string): Promise<string> => {
      const facts = await rig.page.getByLabel("Facts").locator("div").allTextContents().catch(() => [] as string[]);
      return facts.find((f) => f.startsWith(name))?.slice(name.length) ?? "";
    };
    const stateOf = async (q: string, id: string): Promise<string | undefined> => (await rig.mq.getJob(q, id))?.state;

    test("failed attempts: folded (name and message shown, stack hidden), a click unfolds one", async () => {
      const q = `oc-stack-${backend}`;
      const id = await rig.mq.enqueue(q, { order: 1 });
      const first = (await rig.mq.claim(q, { leaseMs: 60_000 }))!;
      await rig.mq.retry(first, { delayMs: 0, reason: "timeout", error: new TypeError("gateway timeout for order 1") });
      const second = (await rig.mq.claim(q, { leaseMs: 60_000 }))!;
      await rig.mq.bury(second, "limit", { error: new RangeError("card limit exceeded") });
      const stored = (await rig.mq.getJob(q, id))!.failures!;
      expect(stored.map((f) => f.name)).toEqual(["TypeError", "RangeError"]);

      await rig.page.goto(jobUrl(q, id));
      const items = rig.page.locator("#job-failures details.failure");
      expect(await items.count()).toBe(2);
      // newest first, both folded: the summary in view, the stack not
      const summaries = await items.locator("summary").allTextContents();
      expect(summaries[0]).toMatch(/^Attempt 2 · .* · RangeError: card limit exceeded$/);
      expect(summaries[1]).toMatch(/^Attempt 1 · .* · TypeError: gateway timeout for order 1$/);
      expect(await items.evaluateAll((ds) => ds.map((d) => (d as HTMLDetailsElement).open))).toEqual([false, false]);
      const stack = items.first().locator("pre");
      expect(await stack.isVisible()).toBe(false);
      // unfolded: the whole stack as the row keeps it; the other stays folded
      await items.first().locator("summary").click();
      await stack.waitFor({ state: "visible" });
      expect(await stack.textContent()).toBe(stored[1]!.stack!);
      expect(stored[1]!.stack!).toContain("RangeError: card limit exceeded\n    at ");
      expect(await items.nth(1).locator("pre").isVisible()).toBe(false);
      // folded again
      await items.first().locator("summary").click();
      await stack.waitFor({ state: "hidden" });
    }, 60_000);

    test("a running job's log grows on its page while the handler logs, without a reload; the page then shows its end", async () => {
      const q = `oc-log-${backend}`;
      const second = gate();
      const third = gate();
      const worker = rig.mq.work(q, async (job) => {
        await job.log("connecting to the gateway");
        await second.wait;
        await job.log("charged 12.50 EUR");
        await third.wait;
        return "ok";
      }, { concurrency: 1, blockMs: 100 });
      try {
        const id = await rig.mq.enqueue(q, { order: 2 });
        await until("the job running", () => rig.mq.jobLogs(q, id), (l) => l.total === 1);
        await rig.page.goto(jobUrl(q, id));
        const log = rig.page.locator("#job-log");
        expect(await log.getAttribute("data-live")).toBe("true");
        expect(await log.textContent()).toBe("connecting to the gateway");
        expect(await rig.page.locator("#job-log-count").textContent()).toBe(" (1 line)");
        // a mark on this document: a reload would lose it
        await rig.page.evaluate(() => ((window as unknown as { mark: number }).mark = 1));
        second.open();
        await until("the new line on the page", () => log.textContent(), (t) => t === "connecting to the gateway\ncharged 12.50 EUR");
        expect(await rig.page.locator("#job-log-count").textContent()).toBe(" (2 lines)");
        expect(await rig.page.evaluate(() => (window as unknown as { mark?: number }).mark)).toBe(1);
        expect(await fact("State")).toBe("active");
        // the job ends: the page is read again and shows it completed, its log kept
        third.open();
        await until("the page showing the job completed", () => fact("State"), (s) => s === "completed");
        await rig.page.waitForLoadState();
        expect(await rig.page.evaluate(() => (window as unknown as { mark?: number }).mark)).toBeUndefined();
        expect(await log.getAttribute("data-live")).toBeNull();
        expect(await log.textContent()).toBe("connecting to the gateway\ncharged 12.50 EUR");
        expect(await rig.page.locator("#job-result").textContent()).toBe('"ok"');
      } finally {
        second.open();
        third.open();
        await worker.stop();
      }
    }, 60_000);

    test("the Cancel button stops a running job: its handler's signal aborts, the page shows it buried cancelled", async () => {
      const q = `oc-cancel-${backend}`;
      const aborted = gate<unknown>();
      let ran: WorkerJob<unknown> | undefined;
      const worker = rig.mq.work(q, async (job) => {
        ran = job;
        await new Promise<void>((r) => job.signal.addEventListener("abort", () => r(), { once: true }));
        aborted.open(job.signal.reason);
      }, { concurrency: 1, blockMs: 100, leaseMs: 30_000, heartbeatMs: 200 });
      try {
        const id = await rig.mq.enqueue(q, { order: 3 });
        await until("the job running", () => stateOf(q, id), (s) => s === "active");
        await rig.page.goto(jobUrl(q, id));
        await rig.page.waitForFunction(() => document.body.dataset.ready === "true");
        expect(await fact("State")).toBe("active");
        expect(ran!.signal.aborted).toBe(false);
        await rig.page.locator("#job-cancel").click();
        const reason = await Promise.race([
          aborted.wait,
          new Promise((_, fail) => setTimeout(() => fail(new Error("the handler's signal did not abort in 10 s")), 10_000)),
        ]);
        expect(reason).toBeInstanceOf(JobCancelledError);
        await until("the page showing it buried", () => fact("State"), (s) => s === "dead");
        await rig.page.waitForLoadState();
        expect(await rig.page.locator("#job-reason").textContent()).toBe("cancelled");
        expect(await rig.page.locator("#job-cancel").count()).toBe(0);
        // never retried: it stays buried
        expect((await rig.mq.getJob(q, id))!.attempts).toBe(1);
        expect(await rig.mq.counts(q)).toMatchObject({ pending: 0, active: 0, dead: 1 });
      } finally {
        await worker.stop();
      }
    }, 60_000);

    test("the queue page shows the wait and run percentiles the server's histograms give", async () => {
      const q = `oc-latency-${backend}`;
      await rig.mq.enqueueMany(q, Array.from({ length: 7 }, (_, n) => ({ n })));
      for (let n = 0; n < 7; n++) {
        const job = (await rig.mq.claim(q, { leaseMs: 60_000 }))!;
        if (n < 6) await rig.mq.ack(job);
        else await rig.mq.bury(job, "no");
      }
      const { latency } = await rig.mq.metrics(q, { minutes: 1 });
      expect(latency.wait.count + latency.run.count).toBeGreaterThan(0);
      const want = latencyText(percentiles(latency.wait), percentiles(latency.run));
      expect(want).toMatch(/^Wait \(ready → claimed\): p50 ≤ .+ of \d+ jobs; run \(claimed → settled\): p50 ≤ .+ of \d+ jobs$/);
      await rig.page.goto(new URL(queueHref(q), rig.ui.url).href);
      await until("the percentiles on the page", () => rig.page.locator("#latency").textContent(), (t) => t === want);
    }, 60_000);

    test("the per-minute chart after the dashboard process restarts: the same counts, read from Valkey", async () => {
      const q = `oc-history-${backend}`;
      const summary = /^(\d+) processed and (\d+) failed (in the last hour|since \d\d:\d\d UTC)/;
      const chart = async (url: string): Promise<{ text: string; bars: number }> => {
        await rig.page.goto(new URL(queueHref(q), url).href);
        const text = await until("the chart's words", () => rig.page.locator("#minutes-desc").textContent(), (t) => summary.test(t ?? ""));
        return { text: text!, bars: await rig.page.locator("#minutes rect").count() };
      };
      const first = await startEmqUi(rig.server.port);
      let before: { text: string; bars: number };
      try {
        await rig.mq.enqueueMany(q, Array.from({ length: 7 }, (_, n) => ({ n })));
        for (let n = 0; n < 7; n++) {
          const job = (await rig.mq.claim(q, { leaseMs: 60_000 }))!;
          if (n < 5) await rig.mq.ack(job);
          else await rig.mq.bury(job, "declined");
        }
        before = await chart(first.url);
        expect(before.text).toMatch(/^5 processed and 2 failed /);
        expect(before.bars).toBeGreaterThan(0);
      } finally {
        await stopEmqUi(first.child);
      }
      // a new process: nothing sampled in it, the hour read from the server
      const second = await startEmqUi(rig.server.port);
      try {
        expect(second.url).not.toBe(first.url);
        const after = await chart(second.url);
        expect(after).toEqual(before);
      } finally {
        await stopEmqUi(second.child);
      }
    }, 120_000);
  });
}
