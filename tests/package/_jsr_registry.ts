/**
 * A stand-in for JSR's module registry (what Deno downloads a JSR specifier from), serving an unpacked
 * upload on a loopback port: the package's `meta.json`, the version's `<version>_meta.json`
 * (exports and a manifest of sha-256 checksums, which Deno verifies) and its files. Deno is pointed
 * at it with `JSR_URL` (a loopback address), so running the package's `./cli` export runs exactly
 * what was uploaded, and nothing reaches the real registry.
 */
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { listFiles } from "../../tools/package.ts";

/** A running stand-in: its URL (for `JSR_URL`) and how to stop it. */
export interface JsrRegistry {
  /** `http://127.0.0.1:<port>/`. */
  readonly url: string;
  /** The paths Deno asked for. */
  readonly served: string[];
  /** Stops listening. */
  close(): Promise<void>;
}

/** Serves `unpacked` (an unpacked upload of `@scope/name@version`) as JSR would. */
export async function serveJsr(unpacked: string, name: string, version: string): Promise<JsrRegistry> {
  const config = JSON.parse(readFileSync(join(unpacked, "deno.json"), "utf8")) as { exports: Record<string, string> };
  const manifest: Record<string, { size: number; checksum: string }> = {};
  for (const f of listFiles(unpacked)) {
    const bytes = readFileSync(join(unpacked, f));
    manifest[`/${f}`] = { size: bytes.length, checksum: `sha256-${createHash("sha256").update(bytes).digest("hex")}` };
  }
  const [scope, pkg] = name.replace(/^@/, "").split("/") as [string, string];
  const base = `/@${scope}/${pkg}/`;
  const served: string[] = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? "/").split("?")[0]!);
    served.push(path);
    const json = (value: unknown): void => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (path === `${base}meta.json`) return json({ scope, name: pkg, latest: version, versions: { [version]: {} } });
    if (path === `${base}${version}_meta.json`) return json({ manifest, exports: config.exports });
    const file = path.startsWith(`${base}${version}/`) ? path.slice(`${base}${version}`.length) : null;
    if (file !== null && Object.hasOwn(manifest, file)) {
      res.writeHead(200, { "content-type": file.endsWith(".ts") ? "text/typescript" : "application/octet-stream" });
      return res.end(readFileSync(join(unpacked, file.slice(1))));
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end(`not found: ${path}\n`);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    served,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
