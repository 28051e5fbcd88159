/**
 * The key panel's script: `dev/ui/browser/key_panel.ts` with everything it imports — the real
 * `mod.ts` among them — bundled for the browser by `bun build` (run as a child, so the server
 * itself runs under Bun or Deno), and its route. (The dashboard's script ships with the package,
 * bundled ahead of time: tools/gen_ui.ts.)
 *
 * @module
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { repoRoot } from "../../../tools/embedded/paths.ts";
import type { Route } from "../../../lib/ui/route_table.ts";
import { answer } from "../../../lib/ui/responses.ts";

/** A script of `dev/ui/browser/` (the checkout's; the dashboard's are in `lib/ui/browser/`). */
function browserEntry(file: string): string {
  return join(repoRoot(), "dev", "ui", "browser", file);
}

/** The entry point of the key panel's bundle. */
export function panelEntry(): string {
  return browserEntry("key_panel.ts");
}

function bunBinary(): string {
  const local = join(repoRoot(), "node_modules", ".bin", "bun");
  if (existsSync(local)) return local;
  if (/\bbun(\.exe)?$/.test(process.execPath)) return process.execPath;
  throw new Error("bun not found: run tools/bootstrap.sh (npm install brings it)");
}

/** Bundles `entry`, the key panel's unless told (`bun build --target=browser --format=esm`); resolves with the script. */
export function buildBundle(entry: string = panelEntry()): Promise<string> {
  const args = ["build", entry, "--target=browser", "--format=esm"];
  return new Promise((resolve, reject) => {
    execFile(bunBinary(), args, { cwd: repoRoot(), maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`bun build ${entry} failed:\n${stderr || stdout}`));
      else resolve(stdout);
    });
  });
}

/** `GET /panel.js` (or `path`): a bundle, built once before the server starts. */
export function bundleRoute(script: string, path = "/panel.js"): Route {
  return { path, handle: () => answer(script, "text/javascript; charset=utf-8") };
}
