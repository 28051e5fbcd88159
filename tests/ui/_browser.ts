/**
 * Shared by the ui suites: the browser (tools/chromium.ts), a dashboard over a server of one
 * backend, a POST to a dashboard's JSON API, opening the key panel, and readers for its outputs.
 */
import { afterAll, beforeAll } from "bun:test";
import type { BrowserContext, Page } from "playwright-core";
import { EchoMQ } from "../../client.ts";
import { startUi, type Ui, type UiOptions } from "../../dev/ui/server/app.ts";
import { buildWasm } from "../../dev/ui/server/wasm.ts";
import { launchChromium } from "../../tools/chromium.ts";
import { command, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

export { CHROMIUM, launchChromium } from "../../tools/chromium.ts";

/**
 * Builds the key panel's wasm and launches Chromium before the file's tests, closes it after;
 * the getter gives the browser's context (in a test or a hook).
 */
export function suiteBrowser(): () => BrowserContext {
  let browser: Awaited<ReturnType<typeof launchChromium>> | undefined;
  beforeAll(async () => {
    await buildWasm();
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => browser!.context;
}

/** A server of one backend, a client of it, `emq ui` over the client (polling fast) and a page. */
export interface UiRig {
  readonly server: ServerHandle;
  readonly mq: EchoMQ<unknown>;
  readonly ui: Ui;
  readonly page: Page;
  /** The server's `DEBUG DIGEST`: unchanged when nothing was written. */
  digest(): Promise<string>;
  /** Closes them all, the page first. */
  close(): Promise<void>;
}

/**
 * A {@link UiRig} on `backend` for the enclosing suite (a `describe`, or the file): started before
 * its tests, its page in `browser()`'s context, and closed after them. Its fields are set from the
 * first test on; `options` go to `emq ui`.
 */
export function useUiRig(backend: "module" | "scripts", browser: () => BrowserContext, options: Omit<UiOptions, "mq"> = {}): UiRig {
  const rig = {} as { -readonly [K in keyof UiRig]: UiRig[K] };
  let started: UiRig | undefined;
  beforeAll(async () => {
    started = await uiRig(backend, browser(), options);
    Object.assign(rig, started);
  }, 120_000);
  afterAll(() => started?.close());
  return rig;
}

/** Starts a {@link UiRig} on `backend`, its page in `context`; `options` go to `emq ui` too. */
async function uiRig(backend: "module" | "scripts", context: BrowserContext, options: Omit<UiOptions, "mq"> = {}): Promise<UiRig> {
  const server = await startServer({ module: backend === "scripts" ? false : undefined });
  const mq = await EchoMQ.connect({ url: `valkey://127.0.0.1:${server.port}`, backend });
  const ui = await startUi({ mq, pollMs: 200, sampleMs: 200, ...options });
  const page = await context.newPage();
  const digest = async (): Promise<string> => String(await command(server.port, ["DEBUG", "DIGEST"]));
  const close = async (): Promise<void> => {
    await page.close();
    await ui.close();
    await mq.close();
    await server.stop();
  };
  return { server, mq, ui, page, digest, close };
}

/**
 * POSTs `payload` as JSON to `path` of the dashboard `at`, with `from` the headers that say where
 * it comes from: the dashboard's own origin unless given (`{}`: none).
 */
export function postJson(at: Ui, path: string, payload: unknown, from: Record<string, string> = { origin: new URL(at.url).origin }): Promise<Response> {
  return fetch(new URL(path, at.url), {
    method: "POST",
    headers: { "content-type": "application/json", ...from },
    body: JSON.stringify(payload),
  });
}

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

const text = async (page: Page, label: string): Promise<string> => (await page.getByLabel(label, { exact: true }).textContent()) ?? "";

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
