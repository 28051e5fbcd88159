/**
 * The dashboard as a handler users mount (issue 22 §1, §3): served through Bun.serve, Deno.serve
 * and node:http (nodeListener) under a base path, one request each; and who it answers — a wrong
 * or missing token, a foreign Host, a foreign Origin, an action on a read-only dashboard (run now
 * and the actions on a selection included) — each refused with its status and text, and nothing changed on the server (DEBUG DIGEST before and
 * after). On both backends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { EchoMQ } from "../../client.ts";
import { dashboard, nodeListener } from "../../ui.ts";
import { WORKERS_NEED_PERMISSION } from "../../lib/ui/workers.ts";
import { command, moduleBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { emq } from "../cli/_emq.ts";

const BACKENDS = [...(moduleBuilt() ? (["module"] as const) : []), "scripts"] as const;
const ROOT = resolve(import.meta.dir, "../..");
const DENO = resolve(ROOT, "node_modules/deno/deno");
const TOKEN = "s3cret-token-of-the-test";
const BASE = "/admin/queues";

/** One request over node:http, so the Host header is what the test says. */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((done, fail) => {
    const req = httpRequest({ host: "127.0.0.1", port, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", fail);
    req.end(body);
  });
}

const bearer = { authorization: `Bearer ${TOKEN}` };
const basic = (password: string) => ({ authorization: `Basic ${btoa(`ops:${password}`)}` });

describe.each(BACKENDS)("the mounted dashboard (%s)", (backend) => {
  let server: ServerHandle;
  let mq: EchoMQ<unknown>;
  const digest = async (): Promise<string> => String(await command(server.port, ["DEBUG", "DIGEST"]));

  beforeAll(async () => {
    server = await startServer({ module: backend === "module" ? undefined : false });
    mq = await EchoMQ.connect({ url: `valkey://127.0.0.1:${server.port}`, backend });
    await mq.enqueue("orders", { n: 1 });
    const job = await mq.claim("orders", { leaseMs: 60_000 });
    await mq.bury(job!, "card declined");
  }, 60_000);
  afterAll(async () => {
    await mq?.close();
    await server?.stop();
  });

  test("through Bun.serve: the queues under the base path, with the token", async () => {
    const ui = dashboard(mq, { basePath: BASE, token: TOKEN });
    const bun = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => ui(request) });
    try {
      const r = await fetch(`http://127.0.0.1:${bun.port}${BASE}/api/queues`, { headers: bearer });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(((await r.json()) as { queues: Array<{ name: string; dead: number }> }).queues).toEqual([
        { name: "orders", href: "queues/orders", pending: 0, active: 0, scheduled: 0, dead: 1, completed: 0, paused: false },
      ] as never);
    } finally {
      bun.stop(true);
      ui.close();
    }
  });

  test("through node:http (nodeListener): the dashboard page, its <base> the base path", async () => {
    const ui = dashboard(mq, { basePath: BASE, token: TOKEN });
    const node = createServer(nodeListener(ui));
    await new Promise<void>((r) => node.listen(0, "127.0.0.1", () => r()));
    try {
      const port = (node.address() as AddressInfo).port;
      const r = await raw(port, "GET", `${BASE}/`, { host: `127.0.0.1:${port}`, ...basic(TOKEN) });
      expect(r.status).toBe(200);
      expect(r.text).toContain(`<base href="${BASE}/">`);
      expect(r.text).toContain('<script type="module" src="dashboard.js"></script>');
      expect(r.text).toContain('href="queues/orders"');

      const redirect = await raw(port, "GET", BASE, { ...bearer });
      expect([redirect.status, redirect.headers.location]).toEqual([308, `${BASE}/`]);
      const script = await raw(port, "GET", `${BASE}/dashboard.js`, bearer);
      expect([script.status, script.headers["content-type"]]).toEqual([200, "text/javascript; charset=utf-8"]);
      expect((await raw(port, "GET", "/elsewhere", bearer)).status).toBe(404);
      ui.close();
      const closed = await raw(port, "GET", `${BASE}/`, bearer);
      expect([closed.status, closed.text, closed.headers["x-content-type-options"]]).toEqual([503, "the dashboard is closed\n", "nosniff"]);
    } finally {
      node.closeAllConnections();
      node.close();
      ui.close();
    }
  });

  test("through Deno.serve: /metrics with the token", async () => {
    const env = { ...process.env };
    delete env.RUST_BACKTRACE;
    const child = spawn(DENO, [
      "run",
      "--allow-all",
      "--quiet",
      "--config",
      resolve(ROOT, "deno.json"),
      resolve(import.meta.dir, "_deno_serve.ts"),
      `valkey://127.0.0.1:${server.port}`,
      BASE,
      TOKEN,
    ], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    try {
      const port = await new Promise<number>((done, fail) => {
        const timer = setTimeout(() => fail(new Error(`deno printed no port in 90 s: ${out}${err}`)), 90_000);
        child.on("exit", (code) => fail(new Error(`deno exited ${code}: ${out}${err}`)));
        child.stdout.on("data", () => {
          const m = /listening (\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            done(Number(m[1]));
          }
        });
      });
      const r = await fetch(`http://127.0.0.1:${port}${BASE}/metrics`, { headers: bearer });
      expect(r.status).toBe(200);
      expect(await r.text()).toContain('echomq_jobs{queue="orders",state="dead"} 1\n');
      expect((await fetch(`http://127.0.0.1:${port}${BASE}/metrics`)).status).toBe(401);
    } finally {
      child.kill("SIGTERM");
    }
  }, 120_000);

  describe("refusals change nothing", () => {
    let port = 0;
    let close: () => void = () => {};
    const post = (verb: string, headers: Record<string, string>) =>
      raw(port, "POST", `${BASE}/api/${verb}`, { "content-type": "application/json", ...headers }, JSON.stringify({ name: "orders" }));

    beforeAll(async () => {
      const ui = dashboard(mq, { basePath: BASE, token: TOKEN, publicOrigin: "https://ops.example.com" });
      const node = createServer(nodeListener(ui));
      await new Promise<void>((r) => node.listen(0, "127.0.0.1", () => r()));
      port = (node.address() as AddressInfo).port;
      close = () => {
        node.closeAllConnections();
        node.close();
        ui.close();
      };
    });
    afterAll(() => close());

    test("no token, a wrong token (Bearer or Basic): 401 with a Basic challenge", async () => {
      const before = await digest();
      const host = { host: "ops.example.com", origin: "https://ops.example.com" };
      for (const headers of [{}, { authorization: "Bearer nope" }, basic("nope"), { authorization: `Bearer ${TOKEN}x` }]) {
        for (
          const r of [
            await post("pause", { ...host, ...headers }),
            await post("requeue", { ...host, ...headers }),
            await raw(port, "GET", `${BASE}/api/queues`, { ...host, ...headers }),
          ]
        ) {
          expect(r.status).toBe(401);
          expect(r.text).toBe("a token is required (Authorization: Bearer <token>, or Basic with the token as the password)\n");
          expect(r.headers["www-authenticate"]).toBe('Basic realm="EchoMQ", charset="UTF-8"');
        }
      }
      expect(await digest()).toBe(before);
      expect(await mq.isPaused("orders")).toBe(false);
    });

    test("a foreign Host (DNS rebinding, a host the proxy does not own): 421", async () => {
      const before = await digest();
      for (const host of ["evil.example", `127.0.0.1:${port}`, "ops.example.com.evil.example"]) {
        const r = await post("pause", { host, origin: "https://ops.example.com", ...bearer });
        expect(r.status).toBe(421);
        expect(r.text).toBe(`this dashboard answers only to ops.example.com, not ${JSON.stringify(host)}\n`);
      }
      expect(await digest()).toBe(before);
    });

    test("a foreign Origin, or none, on an action: 403; the public origin's own acts", async () => {
      const before = await digest();
      for (const origin of [{ origin: "https://evil.example" }, { origin: "http://ops.example.com" }, {}] as Array<Record<string, string>>) {
        const r = await post("pause", { host: "ops.example.com", ...origin, ...bearer });
        expect(r.status).toBe(403);
        expect(r.text).toBe("POST is answered only from https://ops.example.com\n");
      }
      expect(await digest()).toBe(before);
      const ok = await post("pause", { host: "ops.example.com", origin: "https://ops.example.com", ...bearer });
      expect([ok.status, JSON.parse(ok.text)]).toEqual([200, { changed: true, paused: true }]);
      await mq.resume("orders");
    });

    test("run now and the actions on a selection: a foreign Origin, or none, 403 and nothing changed; the public origin's own acts", async () => {
      const scheduled = await mq.schedule("orders", { n: 2 }, { delayMs: 3_600_000 });
      const dead = (await mq.jobs("orders", "dead"))[0]!.id;
      const act = (verb: string, ids: string[], headers: Record<string, string>) =>
        raw(
          port,
          "POST",
          `${BASE}/api/${verb}`,
          { "content-type": "application/json", host: "ops.example.com", ...bearer, ...headers },
          JSON.stringify({ name: "orders", ids }),
        );
      const before = await digest();
      for (const [verb, ids] of [["run", [scheduled]], ["remove-many", [scheduled, dead]], ["requeue", [dead]]] as Array<[string, string[]]>) {
        for (const origin of [{ origin: "https://evil.example" }, { origin: "http://ops.example.com" }, {}] as Array<Record<string, string>>) {
          const r = await act(verb, ids, origin);
          expect([r.status, r.text]).toEqual([403, "POST is answered only from https://ops.example.com\n"]);
        }
      }
      expect(await digest()).toBe(before);
      // from its own origin: one atomic call — refused whole when one id is not scheduled (409)
      const stale = await act("run", [scheduled, dead], { origin: "https://ops.example.com" });
      expect(stale.status).toBe(409);
      expect(JSON.parse(stale.text).error).toContain(`ERR EMQ.RUN job is not scheduled: ${dead}`);
      expect(await digest()).toBe(before);
      const ok = await act("run", [scheduled], { origin: "https://ops.example.com" });
      expect([ok.status, JSON.parse(ok.text)]).toEqual([200, { moved: 1 }]);
      const gone = await act("remove-many", [scheduled], { origin: "https://ops.example.com" });
      expect([gone.status, JSON.parse(gone.text)]).toEqual([200, { removed: 1 }]);
      expect(await mq.getJob("orders", dead)).toMatchObject({ state: "dead" });
    });
  });

  test("read-only: actions hidden on the page and refused (403), nothing changed", async () => {
    const ui = dashboard(mq, { readOnly: true });
    try {
      const at = `http://127.0.0.1:9/`;
      const scheduled = await mq.schedule("orders", { n: 3 }, { delayMs: 3_600_000 });
      const dead = (await mq.jobs("orders", "dead"))[0]!.id;
      const before = await digest();
      for (
        const [verb, ids] of [["requeue", undefined], ["requeue", [dead]], ["run", [scheduled]], ["remove-many", [scheduled, dead]], [
          "remove",
          undefined,
        ], ["cancel", undefined]] as Array<[string, string[] | undefined]>
      ) {
        const body = JSON.stringify({ name: "orders", ...(ids ? { ids } : { id: dead }) });
        const r = await ui(
          new Request(`${at}api/${verb}`, {
            method: "POST",
            headers: { host: "127.0.0.1:9", origin: "http://127.0.0.1:9", "content-type": "application/json" },
            body,
          }),
        );
        expect(r.status).toBe(403);
        expect(await r.text()).toBe("this dashboard is read-only: no action is answered\n");
      }
      expect(await digest()).toBe(before);
      const hidden = '#pause, #resume, #requeue-all, button[data-key^="requeue:"], button[data-key^="unschedule:"], button[data-bulk], input.select, ' +
        'button[data-key^="lane:"], button[data-key^="cancel:"], #job-delete, #job-retry, #job-run, #job-cancel, #limit-form { display: none; }';
      const page = await (await ui(new Request(`${at}queues/orders`, { headers: { host: "127.0.0.1:9" } }))).text();
      expect(page).toContain('data-read-only="true"');
      expect(page).toContain(hidden);
      const jobPage = await (await ui(new Request(`${at}job?q=orders&id=${scheduled}`, { headers: { host: "127.0.0.1:9" } }))).text();
      expect(jobPage).toContain('id="job-run"');
      expect(jobPage).toContain(hidden);
      expect(await mq.remove("orders", scheduled)).toBe(true);
    } finally {
      ui.close();
    }
  });

  test("no token: loopback Hosts only, on any port (an SSH tunnel); others 421", async () => {
    const ui = dashboard(mq);
    try {
      for (const host of ["127.0.0.1:9000", "localhost:1234", "[::1]:8080", "localhost"]) {
        expect((await ui(new Request(`http://${host}/api/queues`, { headers: { host } }))).status).toBe(200);
      }
      const r = await ui(new Request("http://10.0.0.5:8080/api/queues", { headers: { host: "10.0.0.5:8080" } }));
      expect([r.status, await r.text()]).toEqual([
        421,
        'this dashboard answers only to a loopback address (127.0.0.1, localhost, [::1]), not "10.0.0.5:8080"\n',
      ]);
    } finally {
      ui.close();
    }
  });
});

test("options that would open it without a login are refused", () => {
  const mq = {} as EchoMQ<unknown>;
  expect(() => dashboard(mq, { publicOrigin: "https://ops.example.com" })).toThrow(
    "dashboard: a public origin off loopback (https://ops.example.com) needs a token",
  );
  expect(() => dashboard(mq, { token: "short" })).toThrow("dashboard: token must be a string of at least 8 characters");
  expect(() => dashboard(mq, { publicOrigin: "https://ops.example.com/admin", token: TOKEN })).toThrow("without a path");
  expect(() => dashboard(mq, { basePath: "admin" })).toThrow("dashboard: basePath must start with /");
  const r = emq("ui", "--bind", "0.0.0.0", "--url", "valkey://127.0.0.1:1");
  expect([r.code, r.err]).toEqual([2, "emq: --bind 0.0.0.0 is off loopback: add --token (or EMQ_UI_TOKEN); there is no login without one\n"]);
});

test("the script the package ships (lib/ui/dashboard_script.ts) is the bundle of lib/ui/browser as it is", () => {
  const r = Bun.spawnSync([process.execPath, resolve(ROOT, "tools/gen_ui.ts"), "--check"], { cwd: ROOT });
  expect(r.stderr.toString()).toBe("");
  expect(r.exitCode).toBe(0);
}, 60_000);

describe.each(BACKENDS)("an ACL user limited to one tenant's queues (%s)", (backend) => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({ module: backend === "module" ? undefined : false });
    const admin = await EchoMQ.connect({ url: `valkey://127.0.0.1:${server.port}`, backend });
    await admin.enqueue("t1", { n: 1 });
    await admin.enqueue("t2", { secret: true });
    await admin.close();
    expect(await command(server.port, ["ACL", "SETUSER", "tenant1", "on", ">pw-tenant1", "resetkeys", "~emq:{t1}:*", "+@all"])).toBe("OK");
  }, 60_000);
  afterAll(() => server?.stop());

  /**
   * Runs `use` on a dashboard (`discovery: { queues: ["t1"] }`) over a client logged in as `user`,
   * with `get` answering a GET of a path; the dashboard and the client are closed after.
   */
  async function asUser(
    user: string,
    password: string,
    use: (get: (path: string) => Promise<Response>, mq: EchoMQ) => Promise<void>,
  ): Promise<void> {
    const mq = await EchoMQ.connect({ url: `valkey://${user}:${password}@127.0.0.1:${server.port}`, backend });
    const ui = dashboard(mq, { discovery: { queues: ["t1"] } });
    const get = (path: string) => ui(new Request(`http://127.0.0.1:9${path}`, { headers: { host: "127.0.0.1:9" } }));
    try {
      await use(get, mq);
    } finally {
      ui.close();
      await mq.close();
    }
  }

  test("with discovery: { queues }, the dashboard and /metrics show its queues and never touch the others", async () => {
    await asUser("tenant1", "pw-tenant1", async (get) => {
      const api = await get("/api/queues");
      expect(api.status).toBe(200);
      expect(((await api.json()) as { queues: Array<{ name: string; pending: number }> }).queues.map((q) => [q.name, q.pending])).toEqual([["t1", 1]]);
      const metrics = await (await get("/metrics")).text();
      expect(metrics).toContain('echomq_jobs{queue="t1",state="pending"} 1\n');
      expect(metrics).not.toContain("t2");
      expect((await get("/")).status).toBe(200);
      expect(await (await get("/api/workers?name=t1")).json()).toEqual({ name: "t1", workers: [] });
    });
  });

  test("without +client|list, the worker list says what it needs; the rest of the page works", async () => {
    expect(await command(server.port, ["ACL", "SETUSER", "tenant1-nolist", "on", ">pw-nolist", "resetkeys", "~emq:{t1}:*", "+@all", "-client|list"])).toBe(
      "OK",
    );
    await asUser("tenant1-nolist", "pw-nolist", async (get) => {
      const workers = await get("/api/workers?name=t1");
      expect(workers.status).toBe(200);
      expect(await workers.json()).toEqual({ name: "t1", workers: [], unavailable: WORKERS_NEED_PERMISSION });
      expect(WORKERS_NEED_PERMISSION).toContain("+client|list");
      expect(((await (await get("/api/queue?name=t1")).json()) as { counts: { pending: number } }).counts.pending).toBe(1);
    });
  });

  test("without +xrevrange, a job's page says its events could not be read; the rest of the page shows", async () => {
    expect(await command(server.port, ["ACL", "SETUSER", "tenant1-noevents", "on", ">pw-noevents", "resetkeys", "~emq:{t1}:*", "+@all", "-xrevrange"])).toBe(
      "OK",
    );
    await asUser("tenant1-noevents", "pw-noevents", async (get, mq) => {
      const [job] = await mq.jobs("t1", "pending");
      const page = await get(`/job?q=t1&id=${job!.id}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain(`<pre id="job-payload">{\n  &#34;n&#34;: 1\n}</pre>`);
      expect(/<p class="note" id="job-events-scope">([^<]*)<\/p>/.exec(html)?.[1]).toMatch(
        /^The queue&#39;s events could not be read: XREVRANGE refused \(noperm\): NOPERM /,
      );
      expect(html).toContain('<td colspan="3">Events unavailable.</td>');
    });
  });
});
