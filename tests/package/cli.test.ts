/**
 * The CLI as the package ships it (`cli.ts`), run from directories outside the repository against
 * a real valkey-server: under Deno as `deno run jsr:@echomq/echomq/cli …` (served from the JSR
 * upload by a stand-in of JSR's module registry, _jsr_registry.ts, with the permissions
 * docs/PACKAGE.md documents), under Bun as `bunx --bun emq …` after `bun add` of the npm tarball,
 * and under Node as `npx emq …` after `npm install` of it. Each prints the package's `--help` and
 * every command's, `inspect`s a queue of known counts line for line, sets and removes its limits
 * (`limit`, `limits`), refuses a queue that does not exist (exit 1) and what needs a clone (exit 2), ends quietly with 0 when its stdout's reader
 * has gone (`emq … | head`), and serves the dashboard of a `--url` server until SIGINT.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { EchoMQ } from "../../client.ts";
import { keyspace } from "../../mod.ts";
import { commandUsage, PACKAGE_COMMANDS, usage } from "../../lib/cli/help.ts";
import { UI_USAGE } from "../../lib/cli/ui.ts";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { denoEnv, denoJson, mustRun, type NpmBuild, type Ran, run } from "../../tools/package.ts";
import { type JsrRegistry, serveJsr } from "./_jsr_registry.ts";
import { BIN, CACHE_ENV, consumerDir, DENO_EXE, DENO_PERMISSIONS, packages } from "./_shared.ts";

const QUEUE = "cli-orders";
let server: ServerHandle;
let url = "";
/** The ids enqueued, oldest first. */
let ids: string[] = [];
let npm: NpmBuild;
let registry: JsrRegistry;

beforeAll(async () => {
  const built = packages();
  server = await startServer({ module: false });
  url = `valkey://127.0.0.1:${server.port}`;
  const mq = await EchoMQ.connect({ addresses: [{ host: server.host, port: server.port }] });
  ids = [];
  for (let i = 0; i < 3; i++) ids.push(await mq.enqueue(QUEUE, { n: i }));
  await mq.close();
  const { jsr } = await built;
  npm = (await built).npm;
  registry = await serveJsr(jsr.unpacked, denoJson().name, denoJson().version);
}, 300_000);

afterAll(async () => {
  await registry?.close();
  await server?.stop();
});

/** What `emq inspect` prints for the queue (the oldest pending job's age: a pattern). */
function expectInspected(r: Ran): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  const ks = keyspace(QUEUE);
  const lines = r.stdout.split("\n");
  expect(lines[5]).toMatch(new RegExp(`^  oldest pending: ${ids[0]}, \\d+\\.\\d s old$`));
  lines[5] = "(age)";
  expect(lines).toEqual([
    `queue "${QUEUE}"`,
    "  pending 3, active 0, scheduled 0, dead 0, completed 0",
    "  totals: enqueued 3, acked 0, retried 0, buried 0, claims 0",
    "  retention: at most 10000 dead, dead kept 720.0 h; at most 1000 completed, kept 24.0 h; at most 10000 events",
    "  limits: none",
    "(age)",
    "  schedulers: none",
    `  keys (slot ${ks.slot}, served by 127.0.0.1:${server.port}):`,
    ...[
      ks.meta,
      ks.pending,
      ks.active,
      ks.schedule,
      ks.dead,
      ks.completed,
      ks.events,
      ks.wake,
      ks.schedulers,
      `${ks.base}job:<id>`,
      `${ks.base}scheduler:<name>`,
    ].map((k) => `    ${k}`),
    "",
  ]);
}

/** How a test runs the packaged CLI: its arguments, and whether its stdout's reader is gone at once. */
type Emq = (args: string[], opts?: { closeStdout?: boolean }) => Promise<Ran>;

/** The checks every runtime passes; `emq(args)` runs the packaged CLI there. */
async function expectCli(emq: Emq): Promise<void> {
  const help = await emq(["--help"]);
  expect(help).toEqual({ code: 0, stdout: `${usage()}\n`, stderr: "" });
  expect(help.stdout).toContain("In a clone of the repository, ./emq also has demo, test and bench");
  expect(await emq(["ui", "--help"])).toEqual({ code: 0, stdout: `${UI_USAGE}\n`, stderr: "" });
  for (const c of Object.keys(PACKAGE_COMMANDS).filter((c) => c !== "ui" && c !== "help")) {
    expect({ c, ...(await emq([c, "--help"])) }).toEqual({ c, code: 0, stdout: `${commandUsage(c)}\n`, stderr: "" });
  }

  expectInspected(await emq(["inspect", QUEUE, "--url", url]));
  // stdout's reader gone before the first line (`emq … | head` once head has what it wants): no
  // stack (Node's unhandled EPIPE), no "emq: Broken pipe" (Deno), exit 0 — one write and several
  for (const args of [["--help"], ["inspect", QUEUE, "--url", url]]) {
    expect({ args, ...(await emq(args, { closeStdout: true })) }).toEqual({ args, code: 0, stdout: "", stderr: "" });
  }

  // limit and limits, set and removed again (the other runtimes' runs, and inspect, see none)
  expect(await emq(["limit", QUEUE, "--url", url, "--concurrency", "4", "--rate", "10/1s", "--burst", "2"])).toEqual({
    code: 0,
    stdout: `"${QUEUE}" limits: at most 4 active · 10 per 1 s (burst 2)\n`,
    stderr: "",
  });
  expect(await emq(["limit", QUEUE, "--url", url, "--concurrency", "none"])).toEqual({
    code: 0,
    stdout: `"${QUEUE}" limits: 10 per 1 s (burst 2)\n`,
    stderr: "",
  });
  expect(await emq(["limit", QUEUE, "--url", url, "--rate", "none"])).toEqual({ code: 0, stdout: `"${QUEUE}" limits: none\n`, stderr: "" });
  expect(await emq(["limits", QUEUE, "--url", url])).toEqual({ code: 0, stdout: `"${QUEUE}" limits: none\n`, stderr: "" });
  expect(await emq(["limit", QUEUE, "--url", url, "--rate", "10"])).toEqual({
    code: 2,
    stdout: "",
    stderr: 'emq: --rate must be MAX/PERIOD (MAX from 1 to 1000000; PERIOD from 1ms to 24h, as 500ms, 1s, 1m, 2h) or none; not "10"\n',
  });
  expect(await emq(["limit", "nope", "--url", url, "--concurrency", "1"])).toEqual({
    code: 1,
    stdout: "",
    stderr: `emq: no queue "nope" on 127.0.0.1:${server.port} (no meta key and no jobs): nothing done, and no queue created\n`,
  });

  expect(await emq(["inspect", "nope", "--url", url])).toEqual({
    code: 1,
    stdout: "",
    stderr: `emq: no queue "nope" on 127.0.0.1:${server.port} (no meta key and no jobs)\n`,
  });
  expect(await emq(["ui"])).toEqual({
    code: 2,
    stdout: "",
    stderr:
      "emq: ui needs --url valkey://host:port: the embedded server with demo traffic (and the key panel) come with ./emq ui in a clone of the repository\n",
  });
  expect(await emq(["demo"])).toEqual({
    code: 2,
    stdout: "",
    stderr: "emq: demo runs in a clone of the repository (./emq demo): it starts an embedded valkey-server, and this CLI only reaches servers by --url\n",
  });
}

/**
 * Runs `emq ui --url …` (`argv` up to the command), reads the queue through the dashboard's JSON
 * API once it listens, then interrupts it as Ctrl-C would; resolves with the run and what it read.
 */
function uiRun(argv: string[], opts: { cwd: string; env: Record<string, string> }): Promise<Ran & { queue: unknown }> {
  return new Promise((done, fail) => {
    const child = spawn(argv[0]!, [...argv.slice(1), "ui", "--url", url], { cwd: opts.cwd, env: opts.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let queue: unknown = null;
    let asked = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.stdout.on("data", (c: Uint8Array) => {
      stdout += new TextDecoder().decode(c);
      const m = /emq ui: dashboard on (http:\/\/127\.0\.0\.1:\d+\/),/.exec(stdout);
      if (m && !asked && stdout.includes("emq ui: Ctrl-C stops it\n")) {
        asked = true;
        fetch(`${m[1]}api/queue?name=${QUEUE}`).then((r) => r.json()).then((q) => {
          queue = q;
        }, (e) => {
          queue = String(e);
        }).finally(() => child.kill("SIGINT"));
      }
    });
    child.stderr.on("data", (c: Uint8Array) => (stderr += new TextDecoder().decode(c)));
    child.once("error", fail);
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, queue });
    });
  });
}

/** Checks an `emq ui --url` run: the lines it printed, the queue it served, a clean stop. */
function expectUi(r: Ran & { queue: unknown }): void {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  const lines = r.stdout.replace(/http:\/\/127\.0\.0\.1:\d+\//g, "http://127.0.0.1:PORT/").split("\n");
  expect(lines).toEqual([
    `emq ui: server 127.0.0.1:${server.port}, backend scripts (it writes only what you click)`,
    "emq ui: dashboard on http://127.0.0.1:PORT/, metrics on http://127.0.0.1:PORT/metrics",
    "emq ui: Ctrl-C stops it",
    "emq ui: stopped (SIGINT)",
    "",
  ]);
  expect(r.queue).toMatchObject({ exists: true, counts: { pending: 3, active: 0, scheduled: 0, dead: 0 }, paused: false });
}

describe("the packaged CLI", () => {
  test("Deno: deno run jsr:@echomq/echomq/cli, with the documented permissions", async () => {
    const dir = consumerDir("cli-deno");
    const env = denoEnv({ JSR_URL: registry.url });
    const cli = "jsr:@echomq/echomq/cli";
    // --quiet: Deno's own "Download …" lines (first run) are not the CLI's
    await expectCli((args, o) => run(DENO_EXE, ["run", "--quiet", ...DENO_PERMISSIONS, cli, ...args], { cwd: dir, env, timeoutMs: 120_000, ...o }));
    expectUi(await uiRun([DENO_EXE, "run", "--quiet", ...DENO_PERMISSIONS, "--allow-net=127.0.0.1", cli], { cwd: dir, env }));
    // every file it ran came from the stand-in registry, none from the repository
    expect(registry.served).toContain("/@echomq/echomq/0.1.0/cli.ts");
  }, 240_000);

  test("Bun: bunx --bun emq after bun add of the npm tarball", async () => {
    const dir = consumerDir("cli-bun");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "bun-cli-user", private: true, type: "module" }));
    const bun = join(BIN, "bun");
    const env = denoEnv(CACHE_ENV);
    await mustRun(bun, ["add", npm.tarball], { cwd: dir, env, timeoutMs: 120_000 });
    await expectCli((args, o) => run(join(BIN, "bunx"), ["--bun", "emq", ...args], { cwd: dir, env, timeoutMs: 60_000, ...o }));
    // an operation through the bin: pause shows in inspect, resume undoes it
    const emq = (args: string[]): Promise<Ran> => run(bun, [join(dir, "node_modules", ".bin", "emq"), ...args], { cwd: dir, env, timeoutMs: 60_000 });
    expect(await emq(["pause", QUEUE, "--url", url])).toEqual({ code: 0, stdout: `paused "${QUEUE}"\n`, stderr: "" });
    expect((await emq(["inspect", QUEUE, "--url", url])).stdout.split("\n")[0]).toBe(`queue "${QUEUE}" (PAUSED: claims hand out nothing)`);
    expect(await emq(["resume", QUEUE, "--url", url])).toEqual({ code: 0, stdout: `resumed "${QUEUE}"\n`, stderr: "" });
    expectUi(await uiRun([bun, join(dir, "node_modules", ".bin", "emq")], { cwd: dir, env }));
  }, 240_000);

  test("Node: npx emq after npm install of the npm tarball", async () => {
    const dir = consumerDir("cli-node");
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "node-cli-user", private: true, type: "module" }));
    const env = denoEnv(CACHE_ENV);
    await mustRun("npm", ["install", "--prefer-offline", "--loglevel=error", npm.tarball], { cwd: dir, env, timeoutMs: 120_000 });
    await expectCli((args, o) => run("npx", ["emq", ...args], { cwd: dir, env, timeoutMs: 60_000, ...o }));
    // the bin itself (its shebang: node), so that SIGINT reaches the CLI and not npx
    expectUi(await uiRun([join(dir, "node_modules", ".bin", "emq")], { cwd: dir, env }));
  }, 240_000);
});
