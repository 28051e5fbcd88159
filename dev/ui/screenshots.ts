/**
 * A dev script, not part of the command: rewrites the ui's screenshots in docs/ (shown in
 * README.md), driving `startUi` in-process so it can poll and sample faster than the command does:
 *   node_modules/.bin/bun dev/ui/screenshots.ts [panel|dashboard|job]   (all when none is named)
 * - panel: `emq ui`'s key panel in headless Chromium after the "a}b" preset (both refuse) and the
 *   "empty name" preset (they differ by design);
 * - dashboard: a queue's page (`/queues/mail%3Aoutbox`) on an embedded server (the native module
 *   when built), after a few seconds of traffic: counts, throughput, dead jobs with their reasons;
 * - job: a job's page (docs/ui-job-page.png) on a seeded server: a named job running its third
 *   attempt, its two failed attempts folded (the newest opened to its stack), its log live, Cancel.
 *
 * @module
 */
import process from "node:process";
import { join } from "node:path";
import { EchoMQ } from "../../client.ts";
import { launchChromium } from "../../tools/chromium.ts";
import { repoRoot, startServer } from "../../tools/embedded/mod.ts";
import { startUi } from "./server/app.ts";
import { buildWasm } from "./server/wasm.ts";
import { queueHref } from "../../lib/ui/json_api.ts";

const SHOTS = [
  { preset: "a}b", file: "docs/ui-key-panel.png" },
  { preset: "empty name", file: "docs/ui-key-panel-empty-name.png" },
] as const;

const DASHBOARD = "docs/ui-dashboard.png";
const JOB_PAGE = "docs/ui-job-page.png";
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Browser = Awaited<ReturnType<typeof launchChromium>>;
type Page = Awaited<ReturnType<Browser["context"]["newPage"]>>;

/** A new page of `size` at `url`, once its script is ready. */
async function open(browser: Browser, size: { width: number; height: number }, url: string): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setViewportSize(size);
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready === "true");
  return page;
}

/** Writes the whole page (or only its viewport, `fullPage` false) to `file` (under the repository), the pointer out of the way. */
async function shoot(page: Page, file: string, fullPage = true): Promise<void> {
  await page.mouse.move(0, 0);
  await page.screenshot({ path: join(repoRoot(), file), fullPage, animations: "disabled" });
  console.log(`wrote ${file}`);
}

async function panel(browser: Browser): Promise<void> {
  const ui = await startUi();
  try {
    const page = await open(browser, { width: 1040, height: 560 }, ui.panelUrl);
    for (const { preset, file } of SHOTS) {
      await page.getByRole("button", { name: preset, exact: true }).click();
      await page.getByRole("button", { name: preset, exact: true }).blur();
      await shoot(page, file);
    }
    await page.close();
  } finally {
    await ui.close();
  }
}

async function dashboard(browser: Browser): Promise<void> {
  const server = await startServer();
  const connect = () => EchoMQ.connect<{ to: string; template: string }>({ addresses: [{ host: server.host, port: server.port }] });
  const mq = await connect();
  const uiMq = await connect();
  const ui = await startUi({ mq: uiMq as EchoMQ<unknown>, pollMs: 500, sampleMs: 500 });
  const queue = "mail:outbox";
  let producing = true;
  let n = 0;
  const worker = mq.work(queue, async (job) => {
    await sleep(15 + Math.random() * 40);
    const i = Number(job.payload.to.slice(4, job.payload.to.indexOf("@")));
    if (i % 23 === 0) throw new Error(`SMTP 550 5.1.1 <${job.payload.to}>: mailbox unavailable`);
    if (i % 31 === 0) throw new Error('template "welcome" renders <undefined> for {{name}}');
    if (Math.random() < 0.03) throw new Error("ETIMEDOUT connecting to smtp.example.com:587");
  }, { concurrency: 4, maxAttempts: 2, backoff: 1500, onError: () => {} });
  const producer = (async () => {
    for (let tick = 0; producing; tick++) {
      const burst = 4 + Math.round(10 * (1 + Math.sin(tick / 5)));
      await mq.enqueueMany(queue, Array.from({ length: burst }, () => ({ to: `user${n++}@example.com`, template: "welcome" })));
      await sleep(250);
    }
  })();
  try {
    const page = await open(browser, { width: 1100, height: 900 }, new URL(`${queueHref(queue)}?limit=6`, ui.url).href);
    await sleep(14_000);
    await mq.pause(queue); // a backlog builds up, the badge says so
    await sleep(2_500);
    await shoot(page, DASHBOARD);
    await page.close();
  } finally {
    producing = false;
    await producer;
    await worker.stop();
    await ui.close();
    await uiMq.close();
    await mq.close();
    await server.stop();
  }
}

/** An error whose stack reads as a handler's (the paths of this script would say nothing). */
function failure(kind: ErrorConstructor, message: string, frames: string[]): Error {
  const e = new kind(message);
  e.stack = `${e.name}: ${message}\n${frames.map((f) => `    at ${f}`).join("\n")}`;
  return e;
}

async function jobPage(browser: Browser): Promise<void> {
  const server = await startServer();
  const mq = await EchoMQ.connect<{ order: number; amount: string; card: string }>({ addresses: [{ host: server.host, port: server.port }] });
  const ui = await startUi({ mq: mq as EchoMQ<unknown>, pollMs: 500 });
  const queue = "payments";
  try {
    const id = await mq.enqueue(queue, { order: 4821, amount: "129.90 EUR", card: "visa ••4242" }, { name: "charge-card" });
    const frames = ["Gateway.charge (src/billing/gateway.ts:88:13)", "chargeCard (src/jobs/charge_card.ts:31:20)", "Worker.run (src/worker.ts:54:9)"];
    const first = (await mq.claim(queue, { leaseMs: 60_000 }))!;
    await mq.log(first, "charging order 4821: 129.90 EUR on visa ••4242");
    await mq.retry(first, { delayMs: 0, reason: "gateway timeout", error: failure(Error, "payment gateway timeout after 10000 ms", frames) });
    const second = (await mq.claim(queue, { leaseMs: 60_000 }))!;
    await mq.log(second, "retrying: attempt 2");
    await mq.retry(second, {
      delayMs: 0,
      reason: "card declined",
      error: failure(TypeError, "cannot read properties of undefined (reading 'authCode')", frames),
    });
    const third = (await mq.claim(queue, { leaseMs: 120_000 }))!;
    await mq.progress(third, { step: "3-D Secure", pct: 60 });
    for (const line of ["retrying: attempt 3", "3-D Secure challenge sent", "waiting for the cardholder"]) await mq.log(third, line);
    // the top of the page, down to its progress (the payload and events below would double the file)
    const page = await open(browser, { width: 1000, height: 1225 }, new URL(`job?q=${queue}&id=${id}`, ui.url).href);
    await page.locator("#job-failures summary").first().click();
    await shoot(page, JOB_PAGE, false);
    await page.close();
  } finally {
    await ui.close();
    await mq.close();
    await server.stop();
  }
}

const which = process.argv[2];
if (which !== undefined && which !== "panel" && which !== "dashboard" && which !== "job") {
  console.error("usage: bun dev/ui/screenshots.ts [panel|dashboard|job]");
  process.exit(2);
}
await buildWasm();
const browser = await launchChromium();
try {
  if (which === undefined || which === "panel") await panel(browser);
  if (which === undefined || which === "dashboard") await dashboard(browser);
  if (which === undefined || which === "job") await jobPage(browser);
} finally {
  await browser.close();
}
