/**
 * Shared by the ui suites: the browser (tools/chromium.ts), opening the key panel, and readers for
 * its outputs.
 */
import type { BrowserContext, Page } from "playwright-core";

export { CHROMIUM, launchChromium } from "../../tools/chromium.ts";

/** Opens the panel and waits until the native half (the wasm) has loaded. */
export async function openPanel(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(() => document.body.dataset.ready !== undefined, undefined, { timeout: 30_000 });
  const ready = await page.evaluate(() => document.body.dataset.ready);
  if (ready !== "true") throw new Error(`the panel did not get ready (${ready}): ${errors.join("; ")}`);
  return page;
}

/** What the panel shows, read through the outputs' labels. */
export interface PanelView {
  readonly key: string;
  /** The text of the highlighted hashtag inside the key, or null when nothing is marked. */
  readonly mark: string | null;
  readonly hashtag: string;
  readonly slot: string;
  readonly host: string;
  readonly native: string;
  /** The red warning's text, or null while it is hidden. */
  readonly warning: string | null;
  /** The by-design note's text, or null while it is hidden. */
  readonly note: string | null;
}

const text = async (page: Page, label: string): Promise<string> =>
  (await page.getByLabel(label, { exact: true }).textContent()) ?? "";

/** Reads every output of the panel. */
export async function readPanel(page: Page): Promise<PanelView> {
  const key = page.getByLabel("Key", { exact: true });
  const marks = key.locator("mark");
  const shown = async (id: string): Promise<string | null> => {
    const el = page.locator(`#${id}`);
    return (await el.isVisible()) ? await el.textContent() : null;
  };
  return {
    key: (await key.textContent()) ?? "",
    mark: (await marks.count()) === 0 ? null : await marks.first().textContent(),
    hashtag: await text(page, "Hashtag"),
    slot: await text(page, "Slot"),
    host: await text(page, "Host verdict"),
    native: await text(page, "Native verdict"),
    warning: await shown("warning"),
    note: await shown("note"),
  };
}

/** Composes a key on the page as a person would: type the queue, pick the type (and the id). */
export async function compose(page: Page, queue: string, type: string): Promise<void> {
  const [kind, ...rest] = type.split(":");
  await page.getByLabel("Type", { exact: true }).selectOption(kind!);
  if (kind === "job") await page.getByLabel("Job id", { exact: true }).fill(rest.join(":"));
  await page.getByLabel("Queue", { exact: true }).fill(queue);
}

/** Polls `read` until `ok` holds (default: truthy); fails naming `what` with the last value. */
export async function until<T>(what: string, read: () => Promise<T> | T, ok: (v: T) => boolean = Boolean, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T;
  for (;;) {
    last = await read();
    if (ok(last)) return last;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
