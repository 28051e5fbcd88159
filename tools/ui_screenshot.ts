/**
 * Rewrites the key panel's screenshots in docs/ (shown in README.md): `emq ui` in headless
 * Chromium after the "a}b" preset (both refuse) and the "empty name" preset (they differ by design).
 *   node_modules/.bin/bun tools/ui_screenshot.ts
 *
 * @module
 */
import { join } from "node:path";
import { startUi } from "../cli/ui/main.ts";
import { buildWasm } from "../cli/ui/wasm.ts";
import { launchChromium } from "./chromium.ts";
import { repoRoot } from "./embedded/paths.ts";

const SHOTS = [
  { preset: "a}b", file: "docs/ui-key-panel.png" },
  { preset: "empty name", file: "docs/ui-key-panel-empty-name.png" },
] as const;

await buildWasm();
const ui = await startUi();
const browser = await launchChromium();
try {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 1040, height: 560 });
  await page.goto(ui.url);
  await page.waitForFunction(() => document.body.dataset.ready === "true");
  for (const { preset, file } of SHOTS) {
    await page.getByRole("button", { name: preset, exact: true }).click();
    await page.getByRole("button", { name: preset, exact: true }).blur();
    await page.mouse.move(0, 0);
    await page.screenshot({ path: join(repoRoot(), file), fullPage: true, animations: "disabled" });
    console.log(`wrote ${file}`);
  }
} finally {
  await browser.close();
  await ui.close();
}
