// `emq ui` as a command: usage, refusals as one line, and a real child serving the panel and the
// dashboard on a free port — with --url reading a server it writes nothing to, without it an
// embedded server with demo traffic that it stops on SIGINT / SIGTERM — under Bun, and under Deno
// as `EMQ_RUNTIME=deno ./emq ui` runs it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { request } from "node:http";
import { createServer, type Server } from "node:net";
import { resolve } from "node:path";
import { buildWasm } from "../../dev/ui/server/wasm.ts";
import { command, freePort, portFree, startServer } from "../../tools/embedded/mod.ts";

const ROOT = resolve(import.meta.dir, "../..");
const MAIN = resolve(ROOT, "dev/main.ts");
/** The shipped command line (`cli.ts`, what `npx emq` runs from the npm build). */
const SHIPPED = resolve(ROOT, "cli.ts");
// The binary itself, not node_modules/.bin/deno: that is a Node wrapper, which a signal kills
// without passing it on to Deno.
const DENO = resolve(ROOT, "node_modules/deno/deno");

function emq(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

function expectOneLineError(r: { code: number; err: string }, text: string): void {
  expect(r.code).toBe(2);
  const lines = r.err.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("emq: ");
  expect(lines[0]).toContain(text);
}

/** Starts `emq ui` as a child and resolves with it and the address it printed. */
function startChild(cmd: string, args: string[]): Promise<{ child: ChildProcess; url: string; out: () => string }> {
  const env = { ...process.env };
  delete env.RUST_BACKTRACE;
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += String(d)));
  child.stderr!.on("data", (d) => (err += String(d)));
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`emq ui printed no address in 60 s: ${out}${err}`)), 60_000);
    child.on("exit", (code) => reject(new Error(`emq ui exited ${code}: ${out}${err}`)));
    child.stdout!.on("data", () => {
      const m = /key panel on (http:\/\/127\.0\.0\.1:\d+\/)keys \(Ctrl-C stops it\)\n/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      resolveStart({ child, url: m[1]!, out: () => out });
    });
  });
}

/** Stops `child` with `signal`; resolves with its exit code once its output is read to the end ("close", not "exit"). */
function stop(child: ChildProcess, signal: "SIGINT" | "SIGTERM" = "SIGINT"): Promise<number | null> {
  return new Promise((r) => {
    if (child.exitCode !== null && child.stdout?.readableEnded !== false) return r(child.exitCode);
    child.once("close", (code) => r(code));
    if (child.exitCode === null) child.kill(signal);
  });
}

/** A GET with a chosen Host header (fetch would not let a test lie about it). */
function getWithHost(url: string, host: string): Promise<number> {
  return new Promise((r, reject) => {
    const req = request(url, { headers: { host } }, (res) => {
      res.resume();
      r(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

async function expectPanelServed(url: string): Promise<void> {
  const page = await fetch(new URL("/keys", url));
  expect(page.status).toBe(200);
  expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
  expect(page.headers.get("content-security-policy")).toContain("script-src 'self' 'wasm-unsafe-eval'");
  const html = await page.text();
  expect(html).toContain('<label for="queue">Queue</label>');
  const script = await fetch(new URL("/panel.js", url));
  expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
  expect(await script.text()).toContain("emq:{");
  const wasm = await fetch(new URL("/keyspace.wasm", url));
  expect(wasm.headers.get("content-type")).toBe("application/wasm");
  expect(WebAssembly.validate(new Uint8Array(await wasm.arrayBuffer()))).toBe(true);
  expect((await fetch(new URL("/nope", url))).status).toBe(404);
  expect((await fetch(new URL("/keys", url), { method: "POST", headers: { origin: new URL(url).origin } })).status).toBe(405);
  expect((await fetch(new URL("/keys", url), { method: "HEAD" })).status).toBe(200);
  expect(await getWithHost(url, "evil.example")).toBe(421);
}

/** The dashboard's page, its script, its API and /metrics answer. */
async function expectDashboardServed(url: string): Promise<unknown[]> {
  const page = await fetch(url); // the dashboard is the root
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<table id="queues" aria-labelledby="queues-title">');
  expect((await fetch(new URL("/dashboard.js", url))).status).toBe(200);
  const metrics = await fetch(new URL("/metrics", url));
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toContain("# TYPE echomq_jobs gauge\n");
  return ((await (await fetch(new URL("/api/queues", url))).json()) as { queues: unknown[] }).queues;
}

beforeAll(async () => {
  await buildWasm();
}, 180_000);

describe("emq ui", () => {
  let busy: Server;
  let busyPort = 0;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", () => r()));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => {
    busy.close();
  });

  test("--help prints its usage; emq's usage lists it", () => {
    const r = emq("ui", "--help");
    expect(r.code).toBe(0);
    expect(r.out).toStartWith("usage:\n  emq ui [--url valkey://host:port] [--cluster] [--port N] [--bind ADDR] [--token T]");
    expect(emq("--help").out).toContain("emq ui [--url valkey://host:port] [--cluster] [--port N] [--bind ADDR] [--token T]");
  });

  test("bad flags are one line and exit 2", async () => {
    const closedPort = await freePort();
    expectOneLineError(emq("ui", "--port", "http"), "--port must be a port number");
    expectOneLineError(emq("ui", "--port", "70000"), "--port must be a port number");
    expectOneLineError(emq("ui", "--url", "http://127.0.0.1:6379"), "cannot read the address");
    expectOneLineError(emq("ui", "--frobnicate"), "Unknown option '--frobnicate'");
    expectOneLineError(emq("ui", "--port", String(busyPort)), `port ${busyPort} on 127.0.0.1 is in use`);
    expectOneLineError(emq("ui", "--url", `valkey://127.0.0.1:${closedPort}`), `cannot use 127.0.0.1:${closedPort}`);
  }, 60_000);

  test("under Bun, --url: serves the panel and the dashboard of that server, writes nothing to it; SIGINT stops it", async () => {
    const server = await startServer();
    try {
      const { child, url, out } = await startChild(process.execPath, [MAIN, "ui", "--url", `valkey://${server.address}`]);
      try {
        expect(out()).toContain(`emq ui: server ${server.address}, backend `);
        expect(out()).toContain(`emq ui: dashboard on ${url}, metrics on ${url}metrics\n`);
        await expectPanelServed(url);
        expect(await expectDashboardServed(url)).toEqual([]);
        await new Promise((r) => setTimeout(r, 1500)); // a while of it running
        expect(await command(server.port, ["DBSIZE"])).toBe(0);
      } finally {
        expect(await stop(child)).toBe(0);
      }
      expect(out()).toContain("emq ui: stopped (SIGINT)");
      expect(await command(server.port, ["PING"])).toBe("PONG"); // not its server to stop
    } finally {
      await server.stop();
    }
  }, 90_000);

  test("--token and --read-only: every request needs the token, and no action is answered", async () => {
    const server = await startServer();
    try {
      const { child, url, out } = await startChild(process.execPath, [
        MAIN,
        "ui",
        "--url",
        `valkey://${server.address}`,
        "--token",
        "a-token-for-the-test",
        "--read-only",
      ]);
      try {
        expect(out()).toContain(`emq ui: dashboard on ${url}, metrics on ${url}metrics (token required), read-only\n`);
        expect((await fetch(url)).status).toBe(401);
        const auth = { authorization: "Bearer a-token-for-the-test" };
        const page = await fetch(url, { headers: auth });
        expect(page.status).toBe(200);
        expect(await page.text()).toContain('data-read-only="true"');
        const post = await fetch(new URL("/api/pause", url), {
          method: "POST",
          headers: { ...auth, origin: new URL(url).origin, "content-type": "application/json" },
          body: JSON.stringify({ name: "orders" }),
        });
        expect([post.status, await post.text()]).toEqual([403, "this dashboard is read-only: no action is answered\n"]);
        expect(await command(server.port, ["DBSIZE"])).toBe(0);
      } finally {
        expect(await stop(child)).toBe(0);
      }
    } finally {
      await server.stop();
    }
  }, 90_000);

  /** Runs `emq ui` without --url: the embedded server and its traffic show, and the signal stops them. */
  async function embedded(cmd: string, args: string[], signal: "SIGINT" | "SIGTERM"): Promise<void> {
    const { child, url, out } = await startChild(cmd, args);
    const m = /emq ui: embedded valkey-server on 127\.0\.0\.1:(\d+), backend (module|scripts); demo traffic on ui:orders, ui:emails, ui:reports\n/
      .exec(out());
    expect(m).not.toBeNull();
    const port = Number(m![1]);
    try {
      await expectPanelServed(url);
      const deadline = Date.now() + 30_000;
      let names: string[] = [];
      while (Date.now() < deadline) {
        names = ((await expectDashboardServed(url)) as Array<{ name: string }>).map((q) => q.name);
        const acked = /echomq_acked_total\{queue="ui:orders"\} ([1-9]\d*)/.exec(await (await fetch(new URL("/metrics", url))).text());
        if (names.length === 3 && acked) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(names).toEqual(["ui:emails", "ui:orders", "ui:reports"]);
    } finally {
      expect(await stop(child, signal)).toBe(0);
    }
    expect(out()).toContain(`emq ui: stopped (${signal})`);
    expect(await portFree(port)).toBe(true); // the embedded server is gone
  }

  test("under Bun, no --url: an embedded server with demo traffic; SIGTERM stops both", async () => {
    await embedded(process.execPath, [MAIN, "ui"], "SIGTERM");
  }, 120_000);

  // A terminal's Ctrl-C sends SIGINT to the whole foreground process group. The embedded server
  // runs in a group of its own, so emq ui stops in order at once; when the server took the signal
  // too, the traffic waited on a server already gone and the stop took 5 s (this test's 3 s bound).
  test("Ctrl-C in a terminal (SIGINT to the process group): stopped in order, at once, its server gone", async () => {
    const env = { ...process.env };
    delete env.RUST_BACKTRACE;
    const child = spawn(process.execPath, [MAIN, "ui"], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    child.stdout!.on("data", (d) => (out += String(d)));
    const closed = new Promise<number | null>((r) => child.once("close", (code) => r(code)));
    const deadline = Date.now() + 60_000;
    while (!/Ctrl-C stops it/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const port = Number(/embedded valkey-server on 127\.0\.0\.1:(\d+)/.exec(out)![1]);
    process.kill(-child.pid!, "SIGINT");
    const code = await Promise.race([closed, new Promise<string>((r) => setTimeout(() => r("still running after 3 s"), 3000))]);
    if (code === "still running after 3 s") process.kill(-child.pid!, "SIGKILL");
    expect(code).toBe(0);
    expect(out).toContain("emq ui: stopped (SIGINT)");
    expect(await portFree(port)).toBe(true);
  }, 90_000);

  // npx does not pass a SIGTERM on to what it runs: `emq ui` under it (npm_command=exec) stops
  // when its parent ends, rather than running on orphaned.
  test("under npx (npm_command=exec): the parent ends, emq ui --url stops too", async () => {
    const server = await startServer({ module: false });
    const env: Record<string, string | undefined> = { ...process.env, npm_command: "exec" };
    delete env.RUST_BACKTRACE;
    // a parent that starts emq ui, prints its pid and exits: as npx killed by a SIGTERM
    const parent = spawn("sh", [
      "-c",
      `"$0" "$@" > /dev/null 2>&1 & echo $!; sleep 2`,
      process.execPath,
      SHIPPED,
      "ui",
      "--url",
      `valkey://127.0.0.1:${server.port}`,
    ], {
      env,
      stdio: ["ignore", "pipe", "ignore"],
    });
    let pidText = "";
    parent.stdout!.on("data", (d) => (pidText += String(d)));
    await new Promise((r) => parent.once("close", r));
    const pid = Number(pidText.trim());
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      const deadline = Date.now() + 20_000;
      while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(alive()).toBe(false);
    } finally {
      if (alive()) process.kill(pid, "SIGKILL");
      await server.stop();
    }
  }, 60_000);

  test("under Deno (EMQ_RUNTIME=deno): the same, SIGINT", async () => {
    await embedded(DENO, ["run", "--allow-all", "--quiet", MAIN, "ui"], "SIGINT");
  }, 150_000);
});
