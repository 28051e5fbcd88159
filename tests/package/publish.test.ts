/**
 * The tarballs the other package suites install are what would be published: `npm publish
 * --dry-run` of each (the package, its platform package) lists exactly the packed files; the
 * package holds no test or bench file, has its `emq` bin and types for every entry point; every
 * version is deno.json's (package.json's too, the platform packages' and the package's pins of
 * them); docs/PACKAGE.md and the README install it by name with npm, Bun and Deno.
 */
import { beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_NAME } from "../../lib/module/platform.ts";
import { denoJson, dryRunNpm, exportEntries, type NpmBuild, PACKAGE_README, ROOT } from "../../tools/package.ts";
import { releaseVersion } from "../../tools/release.ts";
import { packages } from "./_shared.ts";

let npm: NpmBuild;
let platforms: NpmBuild[];

beforeAll(async () => {
  ({ npm, platforms } = await packages());
}, 300_000);

test("npm publish --dry-run of each tarball: its name at deno.json's version, exactly the packed files", async () => {
  const version = denoJson().version;
  for (const built of [npm, ...platforms]) {
    const dry = await dryRunNpm(built.tarball);
    expect({ id: dry.id, files: dry.files }).toEqual({ id: `${built.manifest["name"]}@${version}`, files: built.files });
  }
}, 120_000);

test("the package's files: no test or bench file, the emq bin, JavaScript and types for every entry point", () => {
  expect(npm.files.filter((f) => /(^|\/)(tests?|bench|tools|dev|native)\/|\.test\.|_test\.|\.bench\./.test(f))).toEqual([]);
  expect(npm.files.filter((f) => !/^(dist\/.*\.(js|d\.ts)|bin\/emq\.js|README\.md|LICENSE|package\.json)$/.test(f))).toEqual([]);
  const bin = npm.manifest["bin"] as Record<string, string>;
  expect(npm.files).toContain(bin["emq"]!.replace(/^\.\//, ""));
  const exp = npm.manifest["exports"] as Record<string, { types: string; default: string }>;
  for (const [sub] of exportEntries()) {
    const has = (f: string): boolean => npm.files.includes(f.replace(/^\.\//, ""));
    expect({ sub, js: has(exp[sub]!.default), types: has(exp[sub]!.types) }).toEqual({ sub, js: true, types: true });
  }
  // every compiled module has its declarations
  const js = npm.files.filter((f) => f.startsWith("dist/") && f.endsWith(".js"));
  expect(js.filter((f) => !npm.files.includes(f.replace(/\.js$/, ".d.ts")))).toEqual([]);
});

test("one version: deno.json's, in package.json, the package, its platform packages and its pins of them", () => {
  const d = denoJson();
  const p = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  const pins = npm.manifest["optionalDependencies"] as Record<string, string>;
  expect(d.name).toBe(PACKAGE_NAME);
  expect([p.version, npm.manifest["version"], releaseVersion()]).toEqual([d.version, d.version, d.version]);
  for (const pl of platforms) expect([pl.manifest["version"], pins[pl.manifest["name"] as string]]).toEqual([d.version, d.version]);
});

test("docs/PACKAGE.md and the README install the package by name: npm install, bun add, deno add", () => {
  const lines = [`npm install ${PACKAGE_NAME}`, `bun add ${PACKAGE_NAME}`, `deno add jsr:${PACKAGE_NAME}`];
  for (const doc of [PACKAGE_README, join(ROOT, "README.md")]) {
    const sh = [...readFileSync(doc, "utf8").matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).join("");
    const commands = sh.split("\n").map((l) => l.replace(/#.*$/, "").trim());
    expect({ doc, missing: lines.filter((l) => !commands.includes(l)) }).toEqual({ doc, missing: [] });
  }
});
