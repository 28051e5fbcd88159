// The dashboard in a real headless Chromium, against an embedded server seeded with known jobs:
// the Queues table and its live counts, a queue page's dead jobs with their reasons, requeue one,
// requeue all, pause and resume, paging, names that need encoding, escaping, the keyboard, and
// /metrics parsed against `stats`. Once on the module backend (when built) and once on the scripts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { BrowserContext, Page } from "playwright-core";
import { EchoMQ } from "../../client.ts";
import { startUi, type Ui } from "../../dev/ui/server/app.ts";
import { escapeLabel } from "../../lib/ui/metrics.ts";
import { buildWasm } from "../../dev/ui/server/wasm.ts";
import { PAYLOAD_CHARS, queueHref } from "../../lib/ui/json_api.ts";
import { visible } from "../../lib/ui/visible.ts";
import { moduleBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { launchChromium, until } from "./_browser.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;

/** Names that need care: a colon, a space and a slash; a non-ASCII letter; a quote, a backslash, a newline. */
const SPECIAL = "a:b c/d";
const UMLAUT = "ü";
const WEIRD = 'we"ird\\na\nme';
const HOSTILE_REASON = `<img src=x onerror="document.body.dataset.owned='1'"> & "quotes"`;

let browser: Awaited<ReturnType<typeof launchChromium>>;
let context: BrowserContext;

beforeAll(async () => {
  await buildWasm();
  browser = await launchChromium();
  context = browser.context;
}, 180_000);

afterAll(async () => {
  await browser?.close();
});

/** Buries the next `reasons.length` claimed jobs of `queue`, one reason each (oldest first). */
async function bury(mq: EchoMQ<unknown>, queue: string, reasons: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const reason of reasons) {
    const job = await mq.claim(queue, { leaseMs: 60_000 });
    if (job === null) throw new Error(`nothing to claim in ${queue}`);
    await mq.bury(job, reason);
    ids.push(job.id);
  }
  return ids;
}

async function open(page: Page, ui: Ui, path: string): Promise<void> {
  await page.goto(new URL(path, ui.url).href);
  await page.waitForFunction(() => document.body.dataset.ready === "true", undefined, { timeout: 30_000 });
}

/** The Queues table as the page shows it: per row the link's text and href and the cells' texts. */
function readQueues(page: Page): Promise<Array<{ name: string; text: string; href: string; cells: string[] }>> {
  return page.getByRole("table", { name: "Queues", exact: true }).locator("tbody tr[data-queue]").evaluateAll((trs) =>
    trs.map((tr) => {
      const a = tr.querySelector("a")!;
      return {
        name: decodeURIComponent((tr as HTMLElement).dataset.queue!), // percent-encoded: a CR survives
        text: a.textContent ?? "",
        href: a.getAttribute("href") ?? "",
        cells: Array.from(tr.querySelectorAll("td")).map((td) => td.textContent ?? ""),
      };
    })
  );
}

/** A job table's rows: the id (the row header) and every cell's text. */
function readJobs(page: Page, title: string): Promise<Array<{ id: string; cells: string[] }>> {
  return page.getByRole("table", { name: title, exact: true }).locator("tbody tr[data-id]").evaluateAll((trs) =>
    trs.map((tr) => ({
      id: (tr as HTMLElement).dataset.id!,
      cells: Array.from(tr.querySelectorAll("td")).map((td) => td.textContent ?? ""),
    }))
  );
}

const range = (page: Page, state: string): Promise<string> => page.locator(`#${state}-range`).textContent().then((t) => t ?? "");

const focused = (page: Page): Promise<string> =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    return el === null || el === document.body ? "(body)" : el.getAttribute("aria-label") || el.textContent || el.id;
  });

/** One sample line of the exposition: name, labels (unescaped), value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the text exposition strictly: every line a HELP, a TYPE or a sample; throws on anything else. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string>; helps: Set<string> } {
  expect(text.endsWith("\n")).toBe(true);
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
  for (const line of text.slice(0, -1).split("\n")) {
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${NAME}) ((?:[^\\\\\\n]|\\\\[\\\\n])*)$`).exec(line))) {
      helps.add(m[1]!);
      continue;
    }
    if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      expect(types.has(m[1]!)).toBe(false);
      types.set(m[1]!, m[2]!);
      continue;
    }
    m = new RegExp(`^(${NAME})(?:\\{([^\\n]*)\\})? (-?[0-9]+(?:\\.[0-9]+)?(?:e[+-]?[0-9]+)?)$`).exec(line);
    if (!m) throw new Error(`not a well-formed exposition line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    let rest = m[2] ?? "";
    while (rest.length > 0) {
      const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,|$)/.exec(rest);
      if (!l) throw new Error(`bad labels in ${JSON.stringify(line)}`);
      labels[l[1]!] = l[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
      rest = rest.slice(l[0].length);
    }
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types, helps };
}

for (const backend of BACKENDS) {
  describe(`dashboard (${backend} backend)`, () => {
    let server: ServerHandle;
    let mq: EchoMQ<unknown>; // the test's own client: seeds and checks
    let uiMq: EchoMQ<unknown>; // the ui's
    let ui: Ui;
    let page: Page;
    const dead: Record<string, string[]> = {};
    const reasons: Record<string, string> = {};
    const done: string[] = [];

    beforeAll(async () => {
      server = await startServer({ module: backend === "scripts" ? false : undefined });
      const connect = () => EchoMQ.connect<unknown>({ addresses: [{ host: server.host, port: server.port }], backend });
      mq = await connect();
      uiMq = await connect();
      expect(mq.backend).toBe(backend);
      // orders: 25 pending (paging, pause and resume)
      await mq.enqueueMany("orders", Array.from({ length: 25 }, (_, n) => ({ n })));
      // mail: 3 dead with reasons (one hostile), 1 pending
      await mq.enqueueMany("mail", [{ to: "a@example.com" }, { to: "b@example.com" }, { to: "<c>@example.com" }, { to: "d" }]);
      const mailReasons = ["smtp 550: mailbox unavailable", HOSTILE_REASON, 'quote " and backslash \\'];
      dead.mail = await bury(mq, "mail", mailReasons);
      dead.mail.forEach((id, i) => (reasons[id] = mailReasons[i]!));
      // bulk: 4 dead (requeue all)
      await mq.enqueueMany("bulk", [1, 2, 3, 4].map((n) => ({ n })));
      dead.bulk = await bury(mq, "bulk", ["e1", "e2", "e3", "e4"]);
      // keys: 2 dead (the keyboard)
      await mq.enqueueMany("keys", [{ k: 1 }, { k: 2 }]);
      dead.keys = await bury(mq, "keys", ["first", "second"]);
      // names that need encoding
      await mq.enqueueMany(SPECIAL, [{ s: 1 }, { s: 2 }, { s: 3 }]);
      dead[SPECIAL] = await bury(mq, SPECIAL, ["special </script> reason"]);
      await mq.enqueue(UMLAUT, { u: "ü" });
      dead[UMLAUT] = await bury(mq, UMLAUT, ["ünïcödé reason"]);
      await mq.schedule(UMLAUT, { later: true }, { delayMs: 3_600_000 });
      await mq.enqueue(WEIRD, { w: 1 });
      // done: 2 completed, with results (one long, one hostile as text)
      await mq.enqueueMany("done", [{ d: 1 }, { d: 2 }]);
      const first = (await mq.claim("done", { leaseMs: 60_000 }))!;
      await mq.ack(first, { long: "r".repeat(300) });
      done.push(first.id);
      await new Promise((r) => setTimeout(r, 3)); // a later finish time
      const second = (await mq.claim("done", { leaseMs: 60_000 }))!;
      await mq.ack(second, { html: HOSTILE_REASON });
      done.push(second.id);
      ui = await startUi({ mq: uiMq, pollMs: 200, sampleMs: 200, discovery: { cycleMs: 100, stepMs: 0 }, snapshot: { everyMs: 100 } });
      page = await context.newPage();
      page.on("pageerror", (e) => console.error(`page error: ${e.message}`));
    }, 120_000);

    afterAll(async () => {
      await page?.close();
      await ui?.close();
      await uiMq?.close();
      await mq?.close();
      await server?.stop();
    });

    test("the Queues table lists every queue with its counts and state; names link to their pages", async () => {
      await open(page, ui, "/queues");
      const rows = await readQueues(page);
      const names = await mq.queues();
      expect(rows.map((r) => r.name)).toEqual(names);
      expect(names).toEqual(expect.arrayContaining(["orders", "mail", "bulk", "keys", SPECIAL, UMLAUT, WEIRD]));
      for (const r of rows) {
        const s = await mq.stats(r.name);
        expect(r.cells).toEqual([
          String(s.pending),
          String(s.active),
          String(s.schedule),
          String(s.dead),
          String(s.completed),
          s.paused ? "paused" : "running",
        ]);
        expect(r.text).toBe(visible(r.name));
        expect(r.href).toBe(queueHref(r.name));
        expect(decodeURIComponent(r.href.slice("queues/".length))).toBe(r.name);
      }
      expect(rows.find((r) => r.name === "mail")!.cells).toEqual(["1", "0", "0", "3", "0", "running"]);
      expect(rows.find((r) => r.name === "done")!.cells).toEqual(["0", "0", "0", "0", "2", "running"]);
      expect(rows.find((r) => r.name === WEIRD)!.text).toBe('we"ird\\na\\nme');
      const headers = await page.getByRole("table", { name: "Queues" }).getByRole("columnheader").allTextContents();
      expect(headers).toEqual(["Queue", "Pending", "Active", "Scheduled", "Dead", "Completed", "State"]);
    });

    test("counts update live: a new queue appears, its counts follow the server", async () => {
      await open(page, ui, "/queues");
      const live = `live-${backend}`;
      await mq.enqueue(live, { n: 1 });
      await until("the new queue's row", async () => (await readQueues(page)).find((r) => r.name === live)?.cells.join(" "), (t) => t === "1 0 0 0 0 running");
      await mq.enqueueMany(live, [{ n: 2 }, { n: 3 }]);
      await mq.pause(live);
      await until("pending 3, paused", async () => (await readQueues(page)).find((r) => r.name === live)?.cells.join(" "), (t) => t === "3 0 0 0 0 paused");
      await mq.resume(live);
      await mq.remove(live, (await mq.jobs(live, "pending"))[0]!.id);
      await until("pending 2, running", async () => (await readQueues(page)).find((r) => r.name === live)?.cells.join(" "), (t) => t === "2 0 0 0 0 running");
    });

    test("a queue page shows its counts, totals and dead jobs with their reasons (as text)", async () => {
      await open(page, ui, queueHref("mail"));
      await until("the dead jobs", () => readJobs(page, "Dead jobs"), (r) => r.length === 3);
      const rows = await readJobs(page, "Dead jobs");
      const onServer = await mq.jobs("mail", "dead");
      expect(rows.map((r) => r.id)).toEqual(onServer.map((j) => j.id)); // most recent first
      for (const r of rows) {
        expect(r.cells[1]).toBe("1"); // attempts
        expect(r.cells[2]).toBe(reasons[r.id]!);
        expect(r.cells[4]).toBe("Requeue");
      }
      // The hostile reason is text: no element made from it, its handler never ran.
      expect(await page.getByRole("table", { name: "Dead jobs" }).locator("img").count()).toBe(0);
      expect(await page.evaluate(() => document.body.dataset.owned)).toBeUndefined();
      const count = (k: string) => page.locator(`#count-${k}`).textContent();
      expect([await count("pending"), await count("active"), await count("scheduled"), await count("dead"), await count("completed")]).toEqual([
        "1",
        "0",
        "0",
        "3",
        "0",
      ]);
      expect(await page.locator("#total-enqueued").textContent()).toBe("4");
      expect(await page.locator("#total-buried").textContent()).toBe("3");
      expect(await range(page, "dead")).toBe("1–3 of 3");
      expect(await page.getByRole("heading", { level: 2, name: "Queue mail" }).count()).toBe(1);
    });

    test("the Completed table shows each job's finish time, attempts, result (cut, as text) and payload; its page the whole result", async () => {
      await open(page, ui, queueHref("done"));
      const rows = await until("the completed jobs", () => readJobs(page, "Completed jobs"), (r) => r.length === 2);
      expect(rows.map((r) => r.id)).toEqual([done[1]!, done[0]!]); // most recent first
      expect(rows[0]!.cells[1]).toBe("1"); // attempts
      expect(rows[0]!.cells[2]).toBe(JSON.stringify({ html: HOSTILE_REASON }));
      expect(rows[0]!.cells[3]).toBe('{"d":2}');
      expect(rows[1]!.cells[2]).toBe(`${JSON.stringify({ long: "r".repeat(300) }).slice(0, PAYLOAD_CHARS - 1)}…`);
      expect(rows[1]!.cells[0]).toMatch(/\(.*\)$/); // a time, and how long ago
      expect(await page.getByRole("table", { name: "Completed jobs" }).locator("img").count()).toBe(0);
      expect(await page.locator("#count-completed").textContent()).toBe("2");
      expect(await range(page, "completed")).toBe("1–2 of 2");
      await page.getByRole("table", { name: "Completed jobs", exact: true }).getByRole("link", { name: done[0]! }).click();
      await until("the job page", () => page.locator("#job-result").textContent(), (t) => t !== null);
      expect(await page.locator("#job-result").textContent()).toBe(JSON.stringify({ long: "r".repeat(300) }, null, 2));
      const facts = await page.getByRole("definition").allTextContents();
      expect(facts[0]).toBe("completed");
      expect(await page.locator("dt", { hasText: "Finished" }).locator("xpath=..").locator("dd time").count()).toBe(1);
    });

    test('"Requeue" on one dead job moves it to pending', async () => {
      await open(page, ui, queueHref("mail"));
      await until("the dead jobs", () => readJobs(page, "Dead jobs"), (r) => r.length === 3);
      const id = dead.mail![0]!;
      const row = page.getByRole("table", { name: "Dead jobs" }).getByRole("row").filter({ hasText: id });
      await row.getByRole("button", { name: "Requeue" }).click();
      const job = await until("the job pending on the server", () => mq.getJob("mail", id), (j) => j?.state === "pending");
      expect(job!.attempts).toBe(0); // a fresh attempt budget
      await until("the row gone", () => readJobs(page, "Dead jobs"), (r) => r.length === 2 && !r.some((x) => x.id === id));
      await until("the counts", () => page.locator("#count-dead").textContent(), (t) => t === "2");
      expect(await page.locator("#status").textContent()).toBe(`Requeued ${id}: it is pending again.`);
      expect((await mq.stats("mail")).dead).toBe(2);
    });

    test('"Requeue all" moves every dead job to pending', async () => {
      await open(page, ui, queueHref("bulk"));
      await until("the dead jobs", () => readJobs(page, "Dead jobs"), (r) => r.length === 4);
      await page.getByRole("button", { name: "Requeue all" }).click();
      await until("no dead job on the server", () => mq.stats("bulk"), (s) => s.dead === 0 && s.pending === 4);
      await until("an empty dead table", () => page.getByRole("table", { name: "Dead jobs" }).locator("tbody").textContent(), (t) => t === "No dead jobs.");
      // the page's periodic refresh may empty the table before the action's own refresh ends and
      // says so: wait for the status and the button, each a condition the action must reach
      await until("the status", () => page.locator("#status").textContent(), (t) => t === "Requeued 4 dead jobs: pending again.");
      await until("Requeue all disabled", () => page.getByRole("button", { name: "Requeue all" }).isDisabled());
      const pending = await until("the pending table", () => readJobs(page, "Pending jobs"), (r) => r.length === 4);
      expect(pending.map((r) => r.id).sort()).toEqual([...dead.bulk!].sort());
    });

    test("pause, then resume, from the page", async () => {
      await open(page, ui, queueHref("orders"));
      const pause = page.getByRole("button", { name: "Pause", exact: true });
      const resume = page.getByRole("button", { name: "Resume", exact: true });
      expect([await pause.isDisabled(), await resume.isDisabled()]).toEqual([false, true]);
      await pause.click();
      await until("paused on the server", () => mq.isPaused("orders"));
      await until("the page shows it", () => page.locator("#state").textContent(), (t) => t === "paused");
      expect([await pause.isDisabled(), await resume.isDisabled()]).toEqual([true, false]);
      expect(await mq.claim("orders", { leaseMs: 1000 })).toBeNull(); // claims hand out nothing
      await resume.click();
      await until("resumed on the server", () => mq.isPaused("orders"), (p) => p === false);
      await until("the page shows it", () => page.locator("#state").textContent(), (t) => t === "running");
      expect([await pause.isDisabled(), await resume.isDisabled()]).toEqual([false, true]);
    });

    test("a CR in a name does not retarget the page: tenant\\ra's page shows and pauses tenant\\ra, not tenant\\na", async () => {
      const [cr, lf] = [`tenant\r${backend}`, `tenant\n${backend}`];
      await mq.enqueueMany(cr, [{ n: 1 }, { n: 2 }]);
      await mq.enqueue(lf, { n: 3 });
      await bury(mq, lf, ["the other tenant's"]);
      await open(page, ui, queueHref(cr));
      expect(await page.locator("#count-pending").textContent()).toBe("2");
      expect(await page.locator("#count-dead").textContent()).toBe("0");
      await until("the live counts", () => page.locator("#count-pending").textContent(), (t) => t === "2");
      await page.getByRole("button", { name: "Pause" }).click();
      await until("the CR queue paused", () => mq.isPaused(cr));
      expect(await mq.isPaused(lf)).toBe(false);
      expect(await page.locator("#count-dead").textContent()).toBe("0");
      await mq.resume(cr);
    });

    test("paging through pending: next and previous follow mq.jobs", async () => {
      await open(page, ui, queueHref("orders"));
      const pager = page.getByRole("group", { name: "Pending jobs pages" });
      const expectPage = async (offset: number, label: string) => {
        const want = (await mq.jobs("orders", "pending", { offset, limit: 10 })).map((j) => j.id);
        await until(
          `pending ${label}`,
          async () => [await range(page, "pending"), (await readJobs(page, "Pending jobs")).map((r) => r.id)],
          ([r, ids]) => r === label && JSON.stringify(ids) === JSON.stringify(want),
        );
        const rows = await readJobs(page, "Pending jobs");
        expect(rows.map((r) => r.cells[0])).toEqual(want.map((_, i) => String(offset + i + 1)));
      };
      await expectPage(0, "1–10 of 25");
      expect(await pager.getByRole("button", { name: "Previous" }).isDisabled()).toBe(true);
      await pager.getByRole("button", { name: "Next" }).click();
      await expectPage(10, "11–20 of 25");
      await pager.getByRole("button", { name: "Next" }).click();
      await expectPage(20, "21–25 of 25");
      expect(await pager.getByRole("button", { name: "Next" }).isDisabled()).toBe(true);
      await pager.getByRole("button", { name: "Previous" }).click();
      await expectPage(10, "11–20 of 25");
      // The payloads are the jobs' own.
      const rows = await readJobs(page, "Pending jobs");
      const jobs = await mq.jobs("orders", "pending", { offset: 10, limit: 10 });
      expect(rows.map((r) => r.cells[3])).toEqual(jobs.map((j) => JSON.stringify(j.payload)));
    });

    test("names with special characters: reached from the table, shown, encoded, acted on", async () => {
      await open(page, ui, "/queues");
      await page.getByRole("link", { name: SPECIAL, exact: true }).click();
      await page.waitForFunction(() => document.body.dataset.ready === "true");
      expect(new URL(page.url()).pathname).toBe("/queues/a%3Ab%20c%2Fd");
      expect(await page.getByRole("heading", { level: 2 }).first().textContent()).toBe(`Queue ${SPECIAL}`);
      const rows = await until("its dead job", () => readJobs(page, "Dead jobs"), (r) => r.length === 1);
      expect(rows[0]!.cells[2]).toBe("special </script> reason");
      expect(await page.locator("#count-pending").textContent()).toBe("2");
      await page.getByRole("button", { name: `Requeue ${dead[SPECIAL]![0]}` }).click();
      await until("pending on the server", () => mq.getJob(SPECIAL, dead[SPECIAL]![0]!), (j) => j?.state === "pending");

      await open(page, ui, "/queues");
      await page.getByRole("link", { name: UMLAUT, exact: true }).click();
      await page.waitForFunction(() => document.body.dataset.ready === "true");
      expect(new URL(page.url()).pathname).toBe("/queues/%C3%BC");
      const scheduled = await until("its scheduled job", () => readJobs(page, "Scheduled jobs"), (r) => r.length === 1);
      expect(scheduled[0]!.cells[3]).toBe('{"later":true}');
      expect((await readJobs(page, "Dead jobs"))[0]!.cells[2]).toBe("ünïcödé reason");
      await page.getByRole("button", { name: "Pause", exact: true }).click();
      await until("ü paused", () => mq.isPaused(UMLAUT));
      // the page is done with that action (aria-busy while it is sent and the page refreshes)
      await page.waitForFunction(() => !document.body.hasAttribute("aria-busy"));
      await page.getByRole("button", { name: "Resume", exact: true }).click();
      await until("ü resumed", () => mq.isPaused(UMLAUT), (p) => !p);

      await open(page, ui, "/queues");
      await page.getByRole("link", { name: visible(WEIRD), exact: true }).click();
      await page.waitForFunction(() => document.body.dataset.ready === "true");
      expect(await page.locator("#queue-title .qname").textContent()).toBe(visible(WEIRD));
      expect(await page.title()).toBe(`emq ui — ${visible(WEIRD)}`);
      await until("its pending job", () => readJobs(page, "Pending jobs"), (r) => r.length === 1);
    });

    test("the keyboard reaches and operates pause, resume, requeue and the pager", async () => {
      await open(page, ui, queueHref("keys"));
      await until("the dead jobs", () => readJobs(page, "Dead jobs"), (r) => r.length === 2);
      const [newer, older] = (await mq.jobs("keys", "dead")).map((j) => j.id);
      // Tab from the top until Pause has the focus.
      await page.locator("body").focus();
      for (let i = 0; i < 20 && (await focused(page)) !== "Pause"; i++) await page.keyboard.press("Tab");
      expect(await focused(page)).toBe("Pause");
      await page.keyboard.press("Enter");
      await until("paused", () => mq.isPaused("keys"));
      await until("the focus on Resume", () => focused(page), (f) => f === "Resume");
      await page.keyboard.press("Space");
      await until("resumed", () => mq.isPaused("keys"), (p) => !p);
      await until("the focus on Pause", () => focused(page), (f) => f === "Pause");
      // Resume is disabled now (and so are the actions on a selection, nothing selected, and the
      // Remove buttons of limits not set), so the next stops are the Limits form's fields and its
      // Set button, then "Requeue all", then the page's selection box, then each row's box, its
      // link to its page and its button. (`focused` names a select by its options' text.)
      for (const stop of ["limit-concurrency", "limit-rate-max", "limit-rate-per", "sminhms", "limit-rate-burst", "Set limits", "Requeue all"]) {
        await page.keyboard.press("Tab");
        expect(String(await focused(page)).trim()).toBe(stop);
      }
      await page.keyboard.press("Tab");
      expect(await focused(page)).toBe("Select every dead job of this page");
      await page.keyboard.press("Tab");
      expect(await focused(page)).toBe(`Select ${newer}`);
      await page.keyboard.press("Tab");
      expect(await focused(page)).toBe(newer);
      await page.keyboard.press("Tab");
      expect(await focused(page)).toBe(`Requeue ${newer}`);
      await page.keyboard.press("Enter");
      await until("requeued", () => mq.getJob("keys", newer!), (j) => j?.state === "pending");
      // The row is gone; the focus moved to the next one's button, which Enter operates too once
      // the page is done with the last action (while it refreshes, aria-busy, a press is ignored).
      await until("the focus on the next row", () => focused(page), (f) => f === `Requeue ${older}`);
      await until("the page idle", () => page.evaluate(() => !document.body.hasAttribute("aria-busy")));
      await page.keyboard.press("Enter");
      await until("requeued", () => mq.getJob("keys", older!), (j) => j?.state === "pending");
      await until("the focus kept on the page", () => focused(page), (f) => f === "Dead jobs" || f === "Requeue all");

      // The pager: Tab to the pending table's Next, press it.
      await open(page, ui, queueHref("orders"));
      await page.locator("#pending-title").focus();
      for (let i = 0; i < 30 && (await focused(page)) !== "Next"; i++) await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.closest("[role=group]")?.getAttribute("aria-label"))).toBe("Pending jobs pages");
      await page.keyboard.press("Enter");
      await until("page two", () => range(page, "pending"), (r) => r === "11–20 of 25");
      expect(await focused(page)).toBe("Next");
      await page.keyboard.press("Shift+Tab");
      expect(await focused(page)).toBe("Previous");
      await page.keyboard.press("Space");
      await until("page one", () => range(page, "pending"), (r) => r === "1–10 of 25");
    });

    test("accessibility: named tables, labelled groups, live regions", async () => {
      await open(page, ui, queueHref("mail"));
      for (const name of ["Dead jobs", "Pending jobs", "Scheduled jobs", "Completed jobs"]) {
        expect(await page.getByRole("table", { name, exact: true }).count()).toBe(1);
        expect(await page.getByRole("group", { name: `${name} pages` }).getByRole("button").count()).toBe(2);
      }
      expect(await page.getByRole("group", { name: "Claims" }).getByRole("button").allTextContents()).toEqual(["Pause", "Resume"]);
      expect(await page.locator("#counts").getAttribute("aria-live")).toBe("polite");
      expect(await page.getByRole("status").count()).toBeGreaterThanOrEqual(1);
      expect(await page.locator("#status").getAttribute("aria-live")).toBe("polite");
      expect(await page.getByRole("img", { name: "Throughput and failures, per second (last 60 s)" }).count()).toBe(1);
      expect(await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link", { name: "Queues" }).count()).toBe(1);
      expect(await page.getByRole("navigation", { name: "EchoMQ" }).getByRole("link").allTextContents()).toEqual(["Queues", "Metrics", "Key panel"]);
    });

    test("the throughput sparkline follows acked/s", async () => {
      const q = `flow-${backend}`;
      await mq.enqueueMany(q, Array.from({ length: 400 }, (_, n) => ({ n })));
      await open(page, ui, queueHref(q));
      const worker = mq.work(q, () => new Promise((r) => setTimeout(r, 5)), { concurrency: 4 });
      try {
        const read = async () => ({
          desc: (await page.locator("#spark-desc").textContent()) ?? "",
          points: ((await page.locator("#spark polyline.acked").getAttribute("points")) ?? "").split(" ").filter(Boolean).length,
        });
        const seen = await until("a line with a rate above zero", read, (v) => /peak [1-9]/.test(v.desc) && v.points >= 3);
        expect(seen.desc).toMatch(/^Throughput: \S+ acked\/s now, peak \S+\/s over the last \d+ s; 0 failed\/s now$/);
      } finally {
        await worker.stop();
      }
    });

    test("the API: JSON with markup escaped; actions only from the page's origin, as JSON", async () => {
      const api = (path: string) => new URL(path, ui.url).href;
      const text = await (await fetch(api(`/api/jobs?name=mail&state=dead`))).text();
      expect(text).not.toMatch(/[<>&]/);
      expect(JSON.parse(text).jobs.map((j: { reason: string }) => j.reason)).toContain(HOSTILE_REASON);
      const origin = new URL(ui.url).origin;
      const post = (path: string, headers: Record<string, string>, body = JSON.stringify({ name: "orders" })) =>
        fetch(api(path), { method: "POST", headers, body });
      expect((await post("/api/pause", { "content-type": "application/json" })).status).toBe(403); // no Origin
      expect((await post("/api/pause", { "content-type": "application/json", origin: "http://evil.example" })).status).toBe(403);
      expect((await post("/api/requeue", { "content-type": "text/plain", origin })).status).toBe(415);
      expect(await mq.isPaused("orders")).toBe(false);
      const bad = await post("/api/requeue", { "content-type": "application/json", origin }, JSON.stringify({ name: "a{b" }));
      expect(bad.status).toBe(400);
      expect((await bad.json()).error).toContain("is not a queue name");
      const notDead = await post(
        "/api/requeue",
        { "content-type": "application/json", origin },
        JSON.stringify({ name: "orders", ids: [(await mq.jobs("orders", "pending"))[0]!.id] }),
      );
      expect(notDead.status).toBe(409);
      expect((await fetch(api("/api/jobs?name=orders&state=running"))).status).toBe(400);
      expect((await fetch(api("/queues/a%7Bb"))).status).toBe(400);
      expect((await fetch(api("/queues/%E0%A4%A"))).status).toBe(400);
    });

    test("/metrics: well-formed exposition, values equal to stats, label values escaped", async () => {
      await mq.upsertScheduler((await mq.queues())[0]!, "hourly", { cron: "0 * * * *" }, { payload: 1 });
      const scrape = async () => {
        const r = await fetch(new URL("/metrics", ui.url));
        expect(r.status).toBe(200);
        expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
        return await r.text();
      };
      // the stats are a background snapshot (100 ms apart here): one taken after the last change
      const acked = async () => (await Promise.all((await mq.queues()).map((q) => mq.stats(q)))).map((s) => s.claims).join();
      const want = await acked();
      const text = await until("a snapshot with every claim so far and the scheduler", scrape, (t) => {
        const { samples } = parseExposition(t);
        return samples.filter((x) => x.name === "echomq_claims_total").map((x) => x.value).join() === want &&
          samples.some((x) => x.labels.scheduler === "hourly");
      });
      const { samples, types, helps } = parseExposition(text);
      const families = {
        echomq_jobs: "gauge",
        echomq_paused: "gauge",
        echomq_enqueued_total: "counter",
        echomq_acked_total: "counter",
        echomq_retried_total: "counter",
        echomq_buried_total: "counter",
        echomq_claims_total: "counter",
        echomq_concurrency_limit: "gauge",
        echomq_rate_limit_per_second: "gauge",
        echomq_parked: "gauge",
        echomq_lanes: "gauge",
        echomq_oldest_pending_age_seconds: "gauge",
        echomq_wait_seconds: "histogram",
        echomq_waiting_parents: "gauge",
        echomq_outbox_entries: "gauge",
        echomq_relay_lag_seconds: "gauge",
        echomq_run_seconds: "histogram",
        echomq_scheduler_next_run_timestamp_seconds: "gauge",
        echomq_scheduler_runs_total: "counter",
        echomq_snapshot_age_seconds: "gauge",
        echomq_unreadable_queue: "gauge",
      };
      expect(Object.fromEntries(types)).toEqual(families);
      expect([...helps].sort()).toEqual(Object.keys(families).sort());
      const names = await mq.queues();
      for (const q of names) {
        const s = await mq.stats(q);
        const of = (name: string, state?: string) =>
          samples.filter((x) => x.name === name && x.labels.queue === q && x.labels.state === state).map((x) => x.value);
        expect(of("echomq_jobs", "pending")).toEqual([s.pending]);
        expect(of("echomq_jobs", "active")).toEqual([s.active]);
        expect(of("echomq_jobs", "scheduled")).toEqual([s.schedule]);
        expect(of("echomq_jobs", "dead")).toEqual([s.dead]);
        expect(of("echomq_jobs", "completed")).toEqual([s.completed]);
        expect(of("echomq_jobs", "waiting-children")).toEqual([s.waitingChildren]);
        expect(of("echomq_paused")).toEqual([s.paused ? 1 : 0]);
        expect(of("echomq_enqueued_total")).toEqual([s.enqueued]);
        expect(of("echomq_acked_total")).toEqual([s.acked]);
        expect(of("echomq_retried_total")).toEqual([s.retried]);
        expect(of("echomq_buried_total")).toEqual([s.buried]);
        expect(of("echomq_claims_total")).toEqual([s.claims]);
        expect(of("echomq_parked")).toEqual([s.limits.parkedUntil === null ? 0 : 1]);
        expect(of("echomq_lanes")).toEqual([s.lanes]);
        expect(of("echomq_concurrency_limit")).toEqual(s.limits.concurrency === null ? [] : [s.limits.concurrency]);
        const f = await mq.flowStats(q);
        expect(of("echomq_waiting_parents")).toEqual([f.waitingParents]);
        expect(of("echomq_outbox_entries")).toEqual([f.outbox]);
        expect(of("echomq_relay_lag_seconds").length).toBe(1);
      }
      // one scheduler (made by this test): its next run and runs
      const [sch] = await mq.schedulers(names[0]!);
      const ofSch = (name: string) => samples.filter((x) => x.name === name && x.labels.scheduler === "hourly").map((x) => x.value);
      expect(ofSch("echomq_scheduler_next_run_timestamp_seconds")).toEqual([sch!.nextRun.getTime() / 1000]);
      expect(ofSch("echomq_scheduler_runs_total")).toEqual([0]);
      expect(samples.filter((x) => x.labels.queue !== undefined && x.labels.scheduler === undefined).length).toBe(names.length * (18 + 2 * 18)); // six states of echomq_jobs; no limits set: echomq_parked and echomq_lanes only; 3 flow gauges; 2 histograms of 16 buckets, a sum and a count
      expect(samples.filter((x) => x.name === "echomq_snapshot_age_seconds").length).toBe(1);
      // the oldest pending job's wait: 0 for a queue with none pending, else since its admission
      for (const q of names) {
        const [head] = await mq.jobs(q, "pending", { limit: 1 });
        const age = samples.filter((x) => x.name === "echomq_oldest_pending_age_seconds" && x.labels.queue === q).map((x) => x.value);
        expect(age.length).toBe(1);
        if (head === undefined) expect(age[0]).toBe(0);
        else expect(Math.abs(age[0]! - (Date.now() - head.createdAt) / 1000)).toBeLessThan(60);
        // the latency histograms: cumulative buckets up to +Inf, which is the count, as the server keeps them
        const { latency } = await mq.metrics(q, { minutes: 1 });
        for (const [family, h] of [["echomq_wait_seconds", latency.wait], ["echomq_run_seconds", latency.run]] as const) {
          const buckets = samples.filter((x) => x.name === `${family}_bucket` && x.labels.queue === q).map((x) => x.value);
          expect(buckets.length).toBe(h.boundsMs.length + 1);
          expect(buckets.every((v, i) => i === 0 || v >= buckets[i - 1]!)).toBe(true);
          const count = samples.filter((x) => x.name === `${family}_count` && x.labels.queue === q).map((x) => x.value);
          expect(count).toEqual([buckets.at(-1)!]);
          expect(count[0]).toBeLessThanOrEqual(h.count);
        }
      }
      // The name with a quote, a backslash and a newline, escaped as the format says.
      expect(text).toContain(`echomq_jobs{queue="we\\"ird\\\\na\\nme",state="pending"} 1\n`);
      expect(escapeLabel(WEIRD)).toBe('we\\"ird\\\\na\\nme');
    });
  });
}
