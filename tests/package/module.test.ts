/**
 * The module without Rust: in a directory outside the repository, with neither cargo nor a
 * compiler on `PATH` (only node, npm, npx and sh), `npm install` of the tarballs tools/package.ts
 * wrote — the package and its platform package, from the files; glide from npm's registry — brings
 * the module; `npx emq module path` prints it; it loads into the Debian Valkey 8.0.1 and into the
 * 9.1.2 the bootstrap installs (.tmp/valkey-9), and a Node program of that directory runs one job
 * through it on the module backend. `npx emq server` starts a local Valkey with it, and Ctrl-C
 * stops it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { platformPackage, platformTag } from "../../lib/module/platform.ts";
import { freePort, portFree } from "../../lib/server/ports.ts";
import { command, infoFields } from "../../lib/server/resp.ts";
import { type ServerHandle, startServer } from "../../lib/server/server.ts";
import { BUILT_MODULE, denoJson, mustRun, type NpmBuild, type Ran, ROOT, run } from "../../tools/package.ts";
import { CACHE_ENV, consumerDir, packages } from "./_shared.ts";

const SERVERS: Array<{ name: string; binary: string }> = [
  { name: "Debian's valkey-server", binary: "/usr/bin/valkey-server" },
  { name: "the bootstrap's valkey-server", binary: join(ROOT, ".tmp", "valkey-9", "valkey-server") },
].filter((s) => existsSync(s.binary));

let npm: NpmBuild;
let platforms: NpmBuild[];
let dir = "";
/** The environment of every command in the consumer directory: nothing of the machine's PATH but node, npm, npx and sh. */
let env: Record<string, string> = {};
const started: ServerHandle[] = [];

/** A directory of links to the only programs the consumer may run. */
function bareBin(root: string): string {
  const bin = join(root, "bin");
  mkdirSync(bin);
  for (const name of ["node", "npm", "npx", "sh"]) {
    const found = ["/usr/local/bin", "/usr/bin", "/bin"].map((d) => join(d, name)).find((p) => existsSync(p));
    if (found === undefined) throw new Error(`no ${name} on this machine`);
    symlinkSync(found, join(bin, name));
  }
  return bin;
}

beforeAll(async () => {
  ({ npm, platforms } = await packages());
  const root = consumerDir("module");
  dir = join(root, "app");
  mkdirSync(dir);
  env = { HOME: process.env["HOME"] ?? "/root", PATH: bareBin(root), ...CACHE_ENV, npm_config_loglevel: "error" };
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "module-consumer", private: true, type: "module" }));
  await mustRun("npm", ["install", "--prefer-offline", npm.tarball, ...platforms.map((p) => p.tarball)], { cwd: dir, env, timeoutMs: 180_000 });
}, 400_000);

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
});

/** Runs `line` through sh in the consumer directory, with its bare PATH. */
function sh(line: string, timeoutMs = 60_000): Promise<Ran> {
  return run("sh", ["-c", line], { cwd: dir, env, timeoutMs });
}

/** One job through the module on the server at `port`: a Node program of the consumer directory. */
const JOB = `
import { EchoMQ } from "@echomq/echomq/client";
const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: Number(process.argv[2]) }], backend: "module" });
const id = await mq.enqueue("module-job", { n: 7 });
const seen = [];
const worker = mq.work("module-job", async (job) => void seen.push({ id: job.id, payload: job.payload }));
const deadline = Date.now() + 15000;
while (seen.length === 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 5));
await worker.stop();
const counts = await mq.counts("module-job");
const backend = mq.backend;
await mq.close();
console.log(JSON.stringify({ backend, id, seen, completed: counts.completed }));
`;

/** Runs JOB against `port` under node in the consumer directory and checks its one job. */
async function expectJob(port: number): Promise<void> {
  writeFileSync(join(dir, "job.mjs"), JOB);
  const r = await run("node", ["job.mjs", String(port)], { cwd: dir, env, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`node job.mjs exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  const got = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as Record<string, unknown> & { id: string };
  expect(got).toEqual({ backend: "module", id: got.id, seen: [{ id: got.id, payload: { n: 7 } }], completed: 1 });
}

test("the tarballs: the package lists its platform package of the same version as an optional dependency; that one holds the built module", () => {
  const version = denoJson().version;
  const tag = platformTag();
  expect(npm.manifest["optionalDependencies"]).toEqual({ [platformPackage(tag)]: version });
  expect(platforms.map((p) => [p.manifest["name"], p.manifest["version"], p.files])).toEqual([
    [platformPackage(tag), version, ["LICENSE", "README.md", "libemq.so", "package.json"]],
  ]);
  expect(platforms[0]!.manifest).toMatchObject({ os: ["linux"], cpu: ["x64"], libc: ["glibc"] });
});

test("the consumer directory: no cargo, no compiler on PATH; npm installed the platform package", async () => {
  expect(await sh("command -v cargo rustc gcc cc clang ld; echo end")).toEqual({ code: 0, stdout: "end\n", stderr: "" });
  const installed = JSON.parse(readFileSync(join(dir, "node_modules", platformPackage(platformTag()), "package.json"), "utf8")) as { version: string };
  expect(installed.version).toBe(denoJson().version);
});

test("npx emq module path: the platform package's module, byte for byte the one cargo built", async () => {
  const r = await sh("npx emq module path");
  const path = join(dir, "node_modules", platformPackage(platformTag()), "libemq.so");
  expect(r).toEqual({ code: 0, stdout: `${path}\n`, stderr: "" });
  expect(Buffer.compare(readFileSync(path), readFileSync(BUILT_MODULE))).toBe(0);
});

test("optional dependencies omitted, no clone: emq module path exits 1 saying what to do", async () => {
  const bare = join(consumerDir("module-omitted"), "app");
  mkdirSync(bare);
  writeFileSync(join(bare, "package.json"), JSON.stringify({ name: "module-omitted", private: true, type: "module" }));
  await mustRun("npm", ["install", "--prefer-offline", "--omit=optional", npm.tarball], { cwd: bare, env, timeoutMs: 180_000 });
  const r = await run("sh", ["-c", "npx emq module path"], { cwd: bare, env, timeoutMs: 60_000 });
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
  expect(r.stderr).toStartWith(`emq: no native module found: the platform package ${platformPackage(platformTag())} is not installed`);
  expect(r.stderr).toContain("cargo build --release --manifest-path native/Cargo.toml");
}, 240_000);

for (const { name, binary } of SERVERS) {
  test(`${name} loads the module npx emq module path prints, and one job runs through it`, async () => {
    const path = (await sh("npx emq module path")).stdout.trim();
    const server = await startServer({ binary, module: path });
    started.push(server);
    const version = infoFields(await command(server.port, ["INFO", "server"]))["valkey_version"];
    const modules = JSON.stringify(await command(server.port, ["MODULE", "LIST"]));
    console.log(`[package] valkey ${version} loaded ${path}`);
    expect(modules).toContain(`"${path}"`);
    await expectJob(server.port);
    await server.stop();
  }, 120_000);
}

/** Waits until `child`'s stdout holds `text`; its output so far. */
function waitFor(child: ChildProcess, text: string, timeoutMs: number): Promise<string> {
  return new Promise((done, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`no "${text}" within ${timeoutMs} ms: ${out}`)), timeoutMs);
    child.stdout!.on("data", (c: Uint8Array) => {
      out += new TextDecoder().decode(c);
      if (out.includes(text)) {
        clearTimeout(timer);
        done(out);
      }
    });
  });
}

test.skipIf(SERVERS.length === 0)("npx emq server: a local Valkey with the module, a job through it, Ctrl-C stops it", async () => {
  const port = await freePort();
  const binary = SERVERS.at(-1)!.binary;
  // in a process group of its own, as in a terminal: Ctrl-C reaches npx and emq together
  const child = spawn("npx", ["emq", "server", "--port", String(port), "--valkey-server", binary], { cwd: dir, env, detached: true });
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  let stderr = "";
  child.stderr!.on("data", (c: Uint8Array) => (stderr += new TextDecoder().decode(c)));
  try {
    const out = await waitFor(child, "Ctrl-C stops it", 60_000);
    expect(out).toMatch(
      new RegExp(`^valkey-server [0-9.]+ on 127\\.0\\.0\\.1:${port} with the emq module .*/node_modules/@echomq/echomq-linux-x64-gnu/libemq\\.so\\n`),
    );
    await expectJob(port);
  } finally {
    process.kill(-child.pid!, "SIGINT");
  }
  await exited;
  expect(stderr).toBe("");
  expect(await portFree(port)).toBe(true);
}, 120_000);
