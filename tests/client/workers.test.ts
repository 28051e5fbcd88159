/**
 * Who serves a queue: each worker names its claim connection after itself (lib/client/worker/worker_name.ts)
 * and `mq.workers()` reads `CLIENT LIST` (every primary of a cluster). For each backend × topology:
 * real workers show with their id, queue, concurrency, host, pid, start and the client's
 * `clientName` — once each, on a cluster too — and leave the list when they stop. The name's
 * format round-trips every queue name (spaces, colons, `%`, non-ASCII), and a user without
 * `+client|list` is refused with a `WireError` of rule `noperm`.
 */
import { describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import process from "node:process";
import { EchoMQ, WireError, type WorkerInfo } from "../../client.ts";
import { parseWorkerName, WORKER_NAME_PREFIX, workerIdentity, workerName } from "../../lib/client/worker/worker_name.ts";
import { workersOf } from "../../lib/client/workers.ts";
import { command } from "../../tools/embedded/mod.ts";
import { COMBOS, eventually, useClient, useSites } from "./_harness.ts";

describe("worker names", () => {
  test("round-trip every queue name, host and app; the name holds only what CLIENT SETNAME takes", () => {
    for (const queue of ["orders", "a b", "a:b", "100%", "ünï/cödé", "x".repeat(300), "tab\there", "new\nline"]) {
      const w = { ...workerIdentity(queue, 7, "billing app:1"), host: "host 1:2" };
      const name = workerName(w);
      expect(name.startsWith(WORKER_NAME_PREFIX)).toBe(true);
      expect(/^[!-~]+$/.test(name)).toBe(true); // printable ASCII, no space
      expect(parseWorkerName(name)).toEqual(w);
    }
  });

  test("an id is 8 Base62 characters; pid and host are this process's", () => {
    const w = workerIdentity("q", 1);
    expect(w.id).toMatch(/^[0-9A-Za-z]{8}$/);
    expect(w.pid).toBe(process.pid);
    expect(w.host).toBe(hostname());
    expect(w.app).toBe("");
  });

  test("other names, and malformed worker names, are not workers", () => {
    const good = workerName(workerIdentity("q", 2));
    for (const name of ["", "my-app", "emq-worker:2:a:1:1:1:h::q", `${good}:extra`, good.replace(":2:", ":two:"), good.replace(/:q$/, ":%E0%A4%A")]) {
      expect(parseWorkerName(name)).toBeNull();
    }
  });

  test("CLIENT LIST replies: a worker on several nodes is listed once (longest open, latest command)", () => {
    const w = workerIdentity("q", 2);
    const line = (age: number, idle: number, port: number): string =>
      `id=${port} addr=10.0.0.1:${port} laddr=10.0.0.9:6379 fd=8 name=${workerName(w)} age=${age} idle=${idle} flags=N db=0`;
    const other = "id=9 addr=10.0.0.2:1 laddr=10.0.0.9:6379 fd=9 name= age=1 idle=1 flags=N db=0";
    const listed = workersOf([`${line(10, 4, 1)}\n${other}\n`, `${line(12, 2, 2)}\n`, new TextEncoder().encode(`${line(11, 3, 3)}\n`)]);
    expect(listed).toEqual([{ ...w, connectedMs: 12_000, idleMs: 2000, addr: "10.0.0.1:1" }]);
  });
});

const servers = useSites();

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<{ n: number }>(servers, combo);

    test("running workers are listed with who they are, and leave the list when they stop", async () => {
      const app = await ctx.connect<{ n: number }>({ clientName: "billing-app" });
      const since = Date.now();
      const q = `workers ${combo.name}:ü`; // a space, a colon and a non-ASCII letter in the name
      const idle = async (): Promise<void> => {};
      const a = app.work(q, idle, { concurrency: 3, blockMs: 200 });
      const b = app.work(q, idle, { concurrency: 1, blockMs: 200 });
      const other = app.work(`${q}-other`, idle, { blockMs: 200 });
      try {
        let listed: WorkerInfo[] = [];
        await eventually(async () => (listed = await ctx.mq.workers(q)).length === 2);
        const mine = (id: string): WorkerInfo => listed.find((w) => w.id === id)!;
        for (const [w, concurrency] of [[a, 3], [b, 1]] as const) {
          expect(mine(w.id)).toMatchObject({ id: w.id, queue: q, concurrency, pid: process.pid, host: hostname(), app: "billing-app" });
          expect(mine(w.id).startedAt).toBeGreaterThanOrEqual(since);
          expect(mine(w.id).startedAt).toBeLessThanOrEqual(Date.now());
          expect(mine(w.id).connectedMs).toBeGreaterThanOrEqual(0);
          expect(mine(w.id).idleMs).toBeGreaterThanOrEqual(0);
          expect(mine(w.id).addr).toMatch(/^127\.0\.0\.1:\d+$/);
        }
        // every queue's workers, in queue order, each once (a cluster's primaries each list the line)
        const all = (await ctx.mq.workers()).filter((w) => w.queue.startsWith(q));
        expect(all.map((w) => w.queue)).toEqual([q, q, `${q}-other`]);
        expect(all.map((w) => w.id).sort()).toEqual([a.id, b.id, other.id].sort());

        await a.stop();
        await eventually(async () => (await ctx.mq.workers(q)).map((w) => w.id).join() === b.id);
      } finally {
        await app.close();
      }
      await eventually(async () => (await ctx.mq.workers()).every((w) => !w.queue.startsWith(q)));
    });
  });
}

describe("without +client|list", () => {
  test("workers() is refused with a WireError of rule noperm", async () => {
    const site = servers.sites.get("standalone") ?? servers.sites.get("cluster")!;
    const port = site.addresses[0]!.port;
    const rules = ["+ping", "+info", "+client|setinfo", "+client|setname", "+client|id", "+command|info", "+config|get", "+evalsha", "+script|load"];
    for (const a of site.addresses) {
      expect(
        await command(a.port, ["ACL", "SETUSER", "no-list", "reset", "on", ">pw", "~*", "&*", ...rules, "+cluster|slots", "+cluster|nodes", "+cluster|shards"]),
      ).toBe("OK");
    }
    const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port }], cluster: site.cluster, credentials: { username: "no-list", password: "pw" } });
    try {
      const e = await mq.workers().then(() => null, (x: unknown) => x);
      expect(e).toBeInstanceOf(WireError);
      expect((e as WireError).rule).toBe("noperm");
    } finally {
      await mq.close();
    }
  });
});
