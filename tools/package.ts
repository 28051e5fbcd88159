/**
 * Builds what EchoMQ publishes, exactly as its consumers get it:
 *
 * - **JSR** (`@echomq/echomq`): stages the package in a temporary directory — `deno.json` and what
 *   its `publish.include` lists, with `docs/PACKAGE.md` as the package's `README.md` — runs
 *   `deno publish --dry-run` there, then a real `deno publish` against a local stand-in of the JSR
 *   publish API (`JSR_URL` pointed at a small HTTP server in this process), and keeps the uploaded
 *   tarball, unpacked: the files a Deno consumer gets, with bare imports rewritten to `npm:` ranges.
 * - **npm** (for Bun and Node): compiles the same sources to JavaScript and `.d.ts` with `tsc`
 *   (Node 20 cannot run TypeScript) and `npm pack`s them with a `package.json` whose `exports`
 *   mirror deno.json's, whose dependencies are package.json's ranges, and whose `bin` is `emq`
 *   (`npx emq …`, `bunx emq …`): a shim that runs the compiled `cli.ts`. Its optional
 *   dependencies are the platform packages of the same version.
 * - **npm platform packages** (lib/module/platform.ts), as glide ships its addon: one per platform
 *   (`@echomq/echomq-linux-x64-gnu`), holding the built native module (`libemq.so`, from
 *   `cargo build --release --manifest-path native/Cargo.toml`) with npm's `os`, `cpu` and `libc`
 *   fields, so npm installs only the one that fits; `emq module path` finds it.
 *
 * Every version is deno.json's. `bun tools/package.ts [outDir]` (default `.tmp/package`) writes
 * every tarball there and prints what they hold; `tests/package/` builds into a temporary directory
 * and installs from it; `bun tools/release.ts` is the release: it builds them all, dry-runs the
 * publication of each, and with `--publish` publishes them (JSR from the same stage: a plain
 * `deno publish` in the repository would ship the repository's README).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { MODULE_FILE, PACKAGE_NAME, platformPackage, PLATFORMS, platformTag } from "../lib/module/platform.ts";

/** The repository root (this file's parent directory). */
export const ROOT: string = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** The README the published packages carry. */
export const PACKAGE_README: string = join(ROOT, "docs", "PACKAGE.md");
/** Deno's cache for everything this tool and tests/package run: reused between runs (gitignored). */
export const DENO_DIR: string = join(ROOT, ".tmp", "deno-dir");

const BIN = join(ROOT, "node_modules", ".bin");

/** The parts of deno.json this tool reads. */
export interface DenoJson {
  name: string;
  version: string;
  license?: string;
  exports: string | Record<string, string>;
  imports?: Record<string, string>;
  publish?: { include?: string[]; exclude?: string[] };
}

/** The repository's deno.json. */
export function denoJson(): DenoJson {
  return JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")) as DenoJson;
}

/** The repository's package.json (its dependencies are what the npm package depends on). */
export function packageJson(): { description?: string; dependencies?: Record<string, string> } {
  return JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
}

/** deno.json `exports` as `[subpath, file]` pairs, e.g. `[".", "./mod.ts"]`. */
export function exportEntries(d: DenoJson = denoJson()): Array<[string, string]> {
  return typeof d.exports === "string" ? [[".", d.exports]] : Object.entries(d.exports);
}

/** The environment Deno runs with here: system CA store (the npm mirror), the shared cache. */
export function denoEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env["RUST_BACKTRACE"]; // Deno aborts on some paths with it set
  return { ...env, DENO_DIR, DENO_TLS_CA_STORE: "system", NO_COLOR: "1", ...extra };
}

/** A finished child process. */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd args` in `cwd` without blocking this process's event loop; never rejects on exit code. */
export function run(
  cmd: string,
  args: string[],
  opts: {
    cwd?: string;
    env?: Record<string, string>;
    timeoutMs?: number;
    /** Send `signal` to the process once its stdout contains `when` (as a user's Ctrl-C would). */
    interrupt?: { when: string; signal: "SIGINT" | "SIGTERM" };
    /** Close the reading end of its stdout at once, as a reader that stops early (`| head`) would: its writes fail with EPIPE. */
    closeStdout?: boolean;
  } = {},
): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? denoEnv(), stdio: ["ignore", "pipe", "pipe"] });
    if (opts.closeStdout) child.stdout!.destroy();
    let stdout = "";
    let stderr = "";
    let interrupted = false;
    child.stdout!.on("data", (c: Uint8Array) => {
      stdout += new TextDecoder().decode(c);
      if (opts.interrupt && !interrupted && stdout.includes(opts.interrupt.when)) {
        interrupted = true;
        child.kill(opts.interrupt.signal);
      }
    });
    child.stderr!.on("data", (c: Uint8Array) => (stderr += new TextDecoder().decode(c)));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${opts.timeoutMs} ms]`;
      child.kill("SIGKILL");
    }, opts.timeoutMs ?? 300_000);
    child.once("error", (e) => {
      clearTimeout(timer);
      fail(e);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** Like {@link run}, but a non-zero exit is an error quoting the output. */
export async function mustRun(cmd: string, args: string[], opts: Parameters<typeof run>[2] = {}): Promise<Ran> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} (in ${opts.cwd ?? ROOT}) exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

/** Every file under `dir`, as sorted `/`-separated paths relative to `base`. */
export function listFiles(dir: string, base: string = dir): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...listFiles(p, base));
    else out.push(relative(base, p).split(sep).join("/"));
  }
  return out.sort();
}

/** The files a `deno publish` run lists (`file:///…/x.ts (1.2KB)` lines), relative to `dir`. */
export function publishedFiles(output: string, dir: string): string[] {
  const out: string[] = [];
  for (const m of output.matchAll(/^\s+file:\/\/(\S+) \(/gm)) out.push(relative(dir, decodeURIComponent(m[1]!)));
  return out.map((p) => p.split(sep).join("/")).sort();
}

/**
 * Copies the JSR package into `stage` as `deno publish` would take it from the repository:
 * deno.json unchanged, each `publish.include` path (minus `publish.exclude`), and `docs/PACKAGE.md`
 * as `README.md`. `node_modules` is linked (not published) so that the type check `deno publish`
 * runs resolves glide offline, as it does in the repository (`nodeModulesDir: "manual"`).
 */
export function stageJsr(stage: string): string[] {
  const d = denoJson();
  const include = d.publish?.include ?? ["."];
  const exclude = (d.publish?.exclude ?? []).map((p) => p.replace(/\/$/, ""));
  const excluded = (rel: string): boolean => exclude.some((x) => rel === x || rel.startsWith(`${x}/`));
  mkdirSync(stage, { recursive: true });
  cpSync(join(ROOT, "deno.json"), join(stage, "deno.json"));
  for (const entry of include) {
    const rel = entry.replace(/^\.\//, "").replace(/\/$/, "");
    const from = join(ROOT, rel);
    if (rel === "README.md" || excluded(rel) || !existsSync(from)) continue;
    cpSync(from, join(stage, rel), {
      recursive: true,
      filter: (src) => !excluded(relative(ROOT, src).split(sep).join("/")),
    });
  }
  if (!include.some((e) => e.replace(/^\.\//, "") === "README.md")) {
    throw new Error("deno.json publish.include must list README.md (staged from docs/PACKAGE.md)");
  }
  cpSync(PACKAGE_README, join(stage, "README.md"));
  symlinkSync(join(ROOT, "node_modules"), join(stage, "node_modules"), "dir");
  return listFiles(stage).filter((p) => p !== "node_modules");
}

/** One request the stand-in registry answered. */
export interface RegistryRequest {
  method: string;
  url: string;
  bytes: number;
}

/**
 * A stand-in for the JSR publish API on a loopback port: it answers the package lookup, the
 * version upload (keeping the gzip tarball) and the publishing task with `status: "success"`.
 */
async function standInRegistry(scope: string, pkg: string, version: string): Promise<{
  url: string;
  requests: RegistryRequest[];
  upload: () => Uint8Array | null;
  close: () => Promise<void>;
}> {
  const requests: RegistryRequest[] = [];
  let upload: Uint8Array | null = null;
  const now = new Date().toISOString();
  const task = {
    id: "emq-local-task",
    status: "success",
    error: null,
    packageScope: scope,
    packageName: pkg,
    packageVersion: version,
    createdAt: now,
    updatedAt: now,
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Uint8Array[] = [];
    req.on("data", (c: Uint8Array) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? "/";
      requests.push({ method: req.method ?? "?", url, bytes: body.length });
      const path = url.split("?")[0]!;
      let reply: unknown = null;
      if (req.method === "GET" && path === `/api/scopes/${scope}/packages/${pkg}`) {
        reply = { scope, name: pkg, status: "success", createdAt: now, updatedAt: now };
      } else if (req.method === "POST" && path === `/api/scopes/${scope}/packages/${pkg}/versions/${version}`) {
        upload = new Uint8Array(body);
        reply = task;
      } else if (req.method === "GET" && path.startsWith("/api/publish_status/")) {
        reply = task;
      }
      res.writeHead(reply === null ? 404 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify(reply ?? { code: "notFound", message: `stand-in: no ${req.method} ${path}` }));
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    upload: () => upload,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** What {@link buildJsr} produced. */
export interface JsrBuild {
  /** The staged files (what deno.json's publish config selects, README.md from docs/PACKAGE.md). */
  staged: string[];
  /** The files `deno publish --dry-run` listed in the stage. */
  dryRun: string[];
  /** The uploaded gzip tarball, as sent. */
  tarball: string;
  /** Where it is unpacked. */
  unpacked: string;
  /** The unpacked files. */
  uploaded: string[];
  /** The requests `deno publish` made to the stand-in registry. */
  requests: RegistryRequest[];
}

/** Stages, dry-runs and publishes the JSR package to the stand-in registry; output under `outDir`. */
export async function buildJsr(outDir: string): Promise<JsrBuild> {
  const d = denoJson();
  const [scope, pkg] = d.name.replace(/^@/, "").split("/") as [string, string];
  const stage = mkdtempSync(join(tmpdir(), "emq-jsr-stage-"));
  try {
    const staged = stageJsr(stage);
    const deno = join(BIN, "deno");
    const dry = await mustRun(deno, ["publish", "--dry-run", "--allow-dirty"], { cwd: stage });
    const dryRun = publishedFiles(dry.stdout + dry.stderr, stage);
    const registry = await standInRegistry(scope, pkg, d.version);
    let published: Ran;
    try {
      published = await run(deno, ["publish", "--token", "x", "--allow-dirty", "--no-provenance"], {
        cwd: stage,
        env: denoEnv({ JSR_URL: registry.url }),
      });
    } finally {
      await registry.close();
    }
    const body = registry.upload();
    if (published.code !== 0 || body === null) {
      throw new Error(
        `deno publish to the stand-in registry failed (exit ${published.code}, upload ${body ? "kept" : "missing"})\n` +
          `${published.stdout}\n${published.stderr}\nrequests: ${JSON.stringify(registry.requests)}`,
      );
    }
    mkdirSync(outDir, { recursive: true });
    const tarball = join(outDir, `${scope}-${pkg}-${d.version}.jsr.tgz`);
    writeFileSync(tarball, body);
    const unpacked = join(outDir, "jsr");
    rmSync(unpacked, { recursive: true, force: true });
    mkdirSync(unpacked);
    await mustRun("tar", ["-xzf", tarball, "-C", unpacked]);
    return { staged, dryRun, tarball, unpacked, uploaded: listFiles(unpacked), requests: registry.requests };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** What {@link buildNpm} produced. */
export interface NpmBuild {
  /** The packed tarball. */
  tarball: string;
  /** Its package.json. */
  manifest: Record<string, unknown>;
  /** The files in it, relative to the package root. */
  files: string[];
}

/** The npm package's `emq` command (its `bin`), relative to the package root. */
export const NPM_BIN = "bin/emq.js";

/**
 * The `emq` command's file: Node ≥ 20 has no `import.meta.main`, so the compiled `cli.ts` cannot
 * tell it is the program; this shim runs the program's part of it (`lib/cli/program.ts`: the
 * process's arguments, its exit code, a quiet end when stdout's reader goes away). Node runs it
 * (`npx emq`, and `bunx emq` through the shebang); `bunx --bun emq` runs it under Bun.
 */
export const NPM_BIN_SOURCE = `#!/usr/bin/env node
// emq, the EchoMQ command line (the package's cli.ts): emq --help
import { runProgram } from "../dist/lib/cli/program.js";

await runProgram();
`;

/** The BullMQ versions `./bullmq` implements the backend interface of (BullMQ 6.7 made it pluggable). */
export const BULLMQ_PEER = ">=6.7.0 <7";

/** The npm package's manifest: deno.json's name, version and exports (compiled), package.json's ranges, the `emq` bin. */
export function npmManifest(): Record<string, unknown> {
  const d = denoJson();
  const p = packageJson();
  const exports: Record<string, unknown> = {};
  for (const [sub, file] of exportEntries(d)) {
    const js = `./dist/${file.replace(/^\.\//, "").replace(/\.ts$/, "")}`;
    exports[sub] = { types: `${js}.d.ts`, default: `${js}.js` };
  }
  exports["./package.json"] = "./package.json";
  const main = exports["."] as { types: string; default: string } | undefined;
  return {
    name: d.name,
    version: d.version,
    description: p.description,
    license: d.license,
    type: "module",
    exports,
    ...(main ? { main: main.default, types: main.types } : {}),
    bin: { emq: `./${NPM_BIN}` },
    files: ["dist/", "bin/", "README.md", "LICENSE"],
    engines: { node: ">=20" },
    dependencies: p.dependencies ?? {},
    // `./bullmq` (the backend of BullMQ 6) imports BullMQ's types only: its users bring their own
    peerDependencies: { bullmq: BULLMQ_PEER },
    peerDependenciesMeta: { bullmq: { optional: true } },
    optionalDependencies: Object.fromEntries(Object.keys(PLATFORMS).map((tag) => [platformPackage(tag), d.version])),
    repository: { type: "git", url: "git+https://github.com/echomq/echomq-ts.git" },
  };
}

/**
 * Compiles deno.json's exports (and everything they import) to ES2022 JavaScript with `.d.ts` in
 * `dist/` — relative `.ts` imports rewritten to `.js` — and packs it into `outDir`.
 */
export async function buildNpm(outDir: string): Promise<NpmBuild> {
  const stage = mkdtempSync(join(tmpdir(), "emq-npm-stage-"));
  try {
    const entries = exportEntries().map(([, file]) => join(ROOT, file));
    await mustRun(join(BIN, "tsc"), [
      ...entries,
      "--outDir",
      join(stage, "dist"),
      "--rootDir",
      ROOT,
      "--declaration",
      "--rewriteRelativeImportExtensions",
      "--target",
      "ES2022",
      "--module",
      "ESNext",
      "--moduleResolution",
      "Bundler",
      "--lib",
      "ES2022,DOM",
      "--types",
      "node",
      "--strict",
      "--skipLibCheck",
      "--verbatimModuleSyntax",
    ]);
    if (!existsSync(join(stage, "dist", "cli.js"))) throw new Error("the npm bin needs dist/cli.js: deno.json must export ./cli.ts");
    const manifest = npmManifest();
    writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    mkdirSync(join(stage, dirname(NPM_BIN)), { recursive: true });
    writeFileSync(join(stage, NPM_BIN), NPM_BIN_SOURCE, { mode: 0o755 });
    cpSync(PACKAGE_README, join(stage, "README.md"));
    cpSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));
    return await pack(stage, outDir, manifest);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The built native module this machine's platform package carries. */
export const BUILT_MODULE: string = join(ROOT, "native", "target", "release", MODULE_FILE);

/** The manifest of `tag`'s platform package: deno.json's version, npm's `os`, `cpu` and `libc` for it, the module file alone. */
export function platformManifest(tag: string): Record<string, unknown> {
  const d = denoJson();
  const p = PLATFORMS[tag];
  if (p === undefined) throw new Error(`no platform ${tag}: lib/module/platform.ts lists ${Object.keys(PLATFORMS).join(", ")}`);
  return {
    name: platformPackage(tag),
    version: d.version,
    description: `EchoMQ's native Valkey module (${MODULE_FILE}) for ${tag}: valkey-server --loadmodule "$(npx emq module path)"`,
    license: d.license,
    os: [p.os],
    cpu: [p.cpu],
    libc: [p.libc],
    files: [MODULE_FILE, "README.md", "LICENSE"],
    repository: { type: "git", url: "git+https://github.com/echomq/echomq-ts.git" },
  };
}

/**
 * Packs `tag`'s platform package with the module cargo built (it must be this machine's platform:
 * the module is not cross-built) into `outDir`.
 */
export async function buildPlatform(outDir: string, tag: string = platformTag()): Promise<NpmBuild> {
  if (tag !== platformTag()) throw new Error(`the module is built for this machine (${platformTag()}), not ${tag}`);
  if (!existsSync(BUILT_MODULE)) throw new Error(`no module to pack: cargo build --release --manifest-path native/Cargo.toml (${BUILT_MODULE})`);
  const stage = mkdtempSync(join(tmpdir(), "emq-npm-platform-"));
  try {
    const manifest = platformManifest(tag);
    writeFileSync(join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    cpSync(BUILT_MODULE, join(stage, MODULE_FILE));
    writeFileSync(
      join(stage, "README.md"),
      `# ${manifest["name"]}\n\n${manifest["description"]}.\n\nInstalled by \`${PACKAGE_NAME}\` as an optional dependency on ${tag}; ` +
        `\`npx emq module path\` prints the file, \`npx emq server\` starts a local Valkey with it.\n`,
    );
    cpSync(join(ROOT, "LICENSE"), join(stage, "LICENSE"));
    return await pack(stage, outDir, manifest);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** `npm pack`s the package staged in `stage` into `outDir`. */
async function pack(stage: string, outDir: string, manifest: Record<string, unknown>): Promise<NpmBuild> {
  mkdirSync(outDir, { recursive: true });
  const packed = await mustRun("npm", ["pack", "--json", "--pack-destination", outDir], {
    cwd: stage,
    env: denoEnv({ npm_config_loglevel: "error", npm_config_update_notifier: "false" }),
  });
  const info = JSON.parse(packed.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
  return { tarball: join(outDir, info[0]!.filename), manifest, files: info[0]!.files.map((f) => f.path).sort() };
}

/** What `npm publish --dry-run` of a tarball says it would publish. */
export interface NpmDryRun {
  /** The name and version it would publish. */
  id: string;
  /** The files, relative to the package root. */
  files: string[];
}

/** `npm publish --dry-run` of `tarball` (the file itself, as a release publishes it): what npm would publish. */
export async function dryRunNpm(tarball: string): Promise<NpmDryRun> {
  const r = await mustRun("npm", ["publish", "--dry-run", "--json", "--access", "public", "--tag", "latest", tarball], {
    env: denoEnv({ npm_config_loglevel: "error", npm_config_update_notifier: "false" }),
  });
  const info = JSON.parse(r.stdout) as { id: string; files: Array<{ path: string }> } | Record<string, { id: string; files: Array<{ path: string }> }>;
  const one = "id" in info ? info as { id: string; files: Array<{ path: string }> } : Object.values(info)[0]!;
  return { id: one.id, files: one.files.map((f) => f.path).sort() };
}

/** Every package a user would get: the JSR upload, the npm package and its platform package(s). */
export async function buildPackages(outDir: string): Promise<{ jsr: JsrBuild; npm: NpmBuild; platforms: NpmBuild[] }> {
  const jsr = await buildJsr(outDir);
  const npm = await buildNpm(outDir);
  const platforms = [await buildPlatform(outDir)];
  return { jsr, npm, platforms };
}

function kb(path: string): string {
  return `${(statSync(path).size / 1024).toFixed(1)} KB`;
}

/**
 * Publishes to JSR (tools/release.ts): stages the package as {@link buildJsr} does and runs `deno
 * publish` there against the real registry (`args` passed on, e.g. `--token …`), so JSR shows
 * docs/PACKAGE.md.
 */
export async function publishToJsr(args: string[]): Promise<number> {
  const stage = mkdtempSync(join(tmpdir(), "emq-jsr-stage-"));
  try {
    stageJsr(stage);
    const env = denoEnv();
    delete env["JSR_URL"];
    const child = spawn(join(BIN, "deno"), ["publish", ...args], { cwd: stage, env, stdio: "inherit" });
    return await new Promise<number>((done) => child.once("close", (code) => done(code ?? 1)));
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if ((import.meta as { main?: boolean }).main) {
  const outDir = resolve(process.argv[2] ?? join(ROOT, ".tmp", "package"));
  const t0 = Date.now();
  const { jsr, npm, platforms } = await buildPackages(outDir);
  const rewritten = new Set<string>();
  for (const f of jsr.uploaded.filter((p) => p.endsWith(".ts"))) {
    for (const m of readFileSync(join(jsr.unpacked, f), "utf8").matchAll(/from "(npm:[^"]+|jsr:[^"]+)"/g)) rewritten.add(m[1]!);
  }
  console.log(`JSR upload   ${jsr.tarball} (${kb(jsr.tarball)}), unpacked in ${jsr.unpacked}`);
  console.log(`  ${jsr.uploaded.length} files: ${jsr.uploaded.join(" ")}`);
  console.log(`  imports rewritten to: ${[...rewritten].sort().join(", ")}`);
  console.log(`  registry calls: ${jsr.requests.map((r) => `${r.method} ${r.url}`).join(" | ")}`);
  console.log(`npm tarball  ${npm.tarball} (${kb(npm.tarball)}), ${npm.files.length} files`);
  console.log(`  exports: ${JSON.stringify(npm.manifest["exports"])}`);
  console.log(`  bin: ${JSON.stringify(npm.manifest["bin"])}`);
  console.log(`  dependencies: ${JSON.stringify(npm.manifest["dependencies"])}`);
  console.log(`  optionalDependencies: ${JSON.stringify(npm.manifest["optionalDependencies"])}`);
  for (const p of platforms) console.log(`npm platform ${p.tarball} (${kb(p.tarball)}): ${p.files.join(" ")}`);
  console.log(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
