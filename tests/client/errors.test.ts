/**
 * Errors a user can act on, against real servers:
 * - at connect, a `ConnectionError` whose `reason` says what to do: `auth` (NOAUTH without
 *   credentials, WRONGPASS with wrong ones), `refused` (nothing listens on the port), `cluster`
 *   (a cluster node without `cluster: true`, or a standalone server with it) — never the
 *   password, in the error, its cause, or anything glide logs (at `trace`);
 * - after connect, glide's errors in the client's taxonomy, glide's own as `cause`: a server
 *   stopped (SIGSTOP) or killed after connect is a `RequestTimeoutError` (rule `timeout`: the call
 *   may or may not have run) on enqueue and on the reads; a full server (`maxmemory`,
 *   `noeviction`) refuses enqueue with a `WireError` of rule `oom`; an ACL user limited to
 *   `~emq:{t1}:*` is refused on t2 with a `WireError` of rule `noperm` by stats, counts, jobs,
 *   getJob and isPaused as by enqueue — on both backends;
 * - `settleMany` answers per settlement when its command's outcome is unknown (a paused server):
 *   each settlement gets the `RequestTimeoutError`, nothing rejects;
 * - the CLI takes credentials in `--url` (`valkey://user:password@host:port`) and never prints the
 *   password.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { ConnectionError, EchoMQ, EchoMQError, RequestTimeoutError, WireError } from "../../client.ts";
import type { JobId } from "../../mod.ts";
import { command, freePort, moduleIfBuilt, type ServerHandle, startCluster, startServer, waitUntil } from "../../tools/embedded/mod.ts";
import { BACKENDS } from "./_harness.ts";

const MODULE = moduleIfBuilt();
const SECRET = "Tr0ub4dor-s3cret";
const servers: ServerHandle[] = [];
let locked: ServerHandle; // requirepass SECRET
let plain: ServerHandle; // ACL users, pauses

beforeAll(async () => {
  [locked, plain] = await Promise.all([startServer({ module: MODULE }), startServer({ module: MODULE })]);
  servers.push(locked, plain);
  await command(locked.port, ["CONFIG", "SET", "requirepass", SECRET]);
  await command(plain.port, ["ACL", "SETUSER", "t1-only", "on", ">pw", "resetkeys", "~emq:{t1}:*", "+@all"]);
  await command(plain.port, ["ACL", "SETUSER", "t1-no-xread", "on", ">pw", "resetkeys", "~emq:{t1}:*", "+@all", "-xread"]);
}, 60_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

const at = (s: ServerHandle) => [{ host: s.host, port: s.port }];

/** Everything an error shows: its message, its stack, its cause's message, as one text. */
function shown(e: unknown): string {
  const parts: string[] = [];
  for (let x: unknown = e; x instanceof Error; x = x.cause) parts.push(x.message, x.stack ?? "");
  return parts.join("\n");
}

describe("connect", () => {
  test("requirepass, no credentials: ConnectionError, reason auth (NOAUTH)", async () => {
    const t0 = Date.now();
    const e = await EchoMQ.connect({ addresses: at(locked) }).catch((x: unknown) => x);
    console.log(`[errors] no credentials: ${(e as Error).name} (${(e as ConnectionError).reason}) in ${Date.now() - t0} ms: ${(e as Error).message}`);
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).reason).toBe("auth");
    expect((e as Error).message).toBe(
      `connect: ${locked.address} refused the connection: authentication required (NOAUTH); pass credentials: { password } ` +
        "(and username, for an ACL user)",
    );
  });

  test("a wrong password: reason auth (WRONGPASS), the password in no message; the right one connects", async () => {
    const wrong = `${SECRET}-not`;
    const e = await EchoMQ.connect({ addresses: at(locked), credentials: { password: wrong } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).reason).toBe("auth");
    expect((e as Error).message).toBe(
      `connect: ${locked.address} refused the connection: invalid username-password pair or user is disabled (WRONGPASS)`,
    );
    expect(shown(e)).not.toContain(SECRET);
    const user = await EchoMQ.connect({ addresses: at(locked), credentials: { username: "nobody", password: wrong } }).catch((x) => x);
    expect((user as ConnectionError).reason).toBe("auth");
    expect(shown(user)).not.toContain(SECRET);
    const mq = await EchoMQ.connect({ addresses: at(locked), credentials: { password: SECRET } });
    expect(typeof (await mq.enqueue("pw", 1))).toBe("string");
    await mq.close();
  });

  test("glide logs no password, even at trace", () => {
    const script = [
      `import { EchoMQ } from ${JSON.stringify(resolve(import.meta.dir, "../../client.ts"))};`,
      `const options = { addresses: [{ host: "127.0.0.1", port: ${locked.port} }], logLevel: "trace" };`,
      `await EchoMQ.connect({ ...options, credentials: { password: "${SECRET}-x" } }).catch((e) => console.log(String(e)));`,
      `const mq = await EchoMQ.connect({ ...options, credentials: { password: "${SECRET}" } });`,
      `await mq.enqueue("pw", 1);`,
      `await mq.close();`,
    ].join("\n");
    const child = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 60_000 });
    expect(child.status).toBe(0);
    expect(`${child.stdout}${child.stderr}`.length).toBeGreaterThan(0);
    expect(`${child.stdout}${child.stderr}`).not.toContain(SECRET);
  });

  // A refused port is answered once the probe confirms it (about 0.5 s), not after glide's whole
  // retry sequence (6 s here before the fix) or the connect timeout (60 s): this test's own 5 s
  // limit fails it if the connect waits for either.
  test("a port nobody listens on: reason refused, long before the connect timeout", async () => {
    const port = await freePort();
    const t0 = Date.now();
    const e = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port }], connectTimeout: 60_000 }).catch((x: unknown) => x);
    console.log(`[errors] refused port: ${(e as ConnectionError).reason} in ${Date.now() - t0} ms: ${(e as Error).message}`);
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).reason).toBe("refused");
    expect((e as Error).message).toBe(`connect: 127.0.0.1:${port} refused the connection: nothing listens on that port (ECONNREFUSED)`);
  }, 5_000);

  test("an address glide would misread is refused before any connection: a port in host, a bad port", async () => {
    const refused = async (addresses: unknown): Promise<unknown> => {
      const e = await EchoMQ.connect({ addresses: addresses as never }).catch((x: unknown) => x);
      return { type: (e as Error).name, rule: (e as EchoMQError).rule, message: (e as Error).message };
    };
    const options = (message: string) => ({ type: "EchoMQError", rule: "options", message });
    expect(await refused([{ host: "127.0.0.1:6390" }])).toEqual(
      options('connect: addresses[0].host "127.0.0.1:6390" holds a port: pass { host: "127.0.0.1", port: 6390 }'),
    );
    expect(await refused([{ host: "[::1]:6390" }])).toEqual(
      options('connect: addresses[0].host "[::1]:6390" holds a port: pass { host: "[::1]", port: 6390 }'),
    );
    expect(await refused([{ host: "a", port: 1 }, { host: "" }])).toEqual(options("connect: addresses[1].host must be a non-empty string"));
    expect(await refused([{ host: "127.0.0.1", port: 70000 }])).toEqual(options("connect: addresses[0].port must be an integer from 1 to 65535, got 70000"));
    expect(await refused([{ host: "127.0.0.1", port: "6379" }])).toEqual(options('connect: addresses[0].port must be an integer from 1 to 65535, got "6379"'));
  });

  test("a cluster node without cluster: true, a standalone server with it: reason cluster", async () => {
    const cluster = await startCluster({ primaries: 3, module: MODULE });
    try {
      const node = cluster.primaries[0]!.server;
      const t0 = Date.now();
      const e = await EchoMQ.connect({ addresses: at(node) }).catch((x: unknown) => x);
      console.log(`[errors] cluster node, no cluster option: ${(e as Error).name} in ${Date.now() - t0} ms: ${(e as Error).message}`);
      expect(e).toBeInstanceOf(ConnectionError);
      expect((e as ConnectionError).reason).toBe("cluster");
      expect((e as Error).message).toBe(
        `connect: ${node.address} is a cluster node (cluster_enabled:1): pass cluster: true to connect to a cluster`,
      );
      const mq = await EchoMQ.connect({ addresses: at(node), cluster: true });
      expect(typeof (await mq.enqueue("anywhere", 1))).toBe("string");
      await mq.close();
    } finally {
      await cluster.stop();
    }
    const e = await EchoMQ.connect({ addresses: at(plain), cluster: true }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).reason).toBe("cluster");
    expect((e as Error).message).toBe(
      `connect: ${plain.address} is not a cluster node (cluster_enabled:0): connect without cluster: true`,
    );
  }, 120_000);
});

for (const backend of BACKENDS) {
  describe(`after connect (${backend})`, () => {
    test("a server stopped after connect: RequestTimeoutError (outcome unknown), glide's error its cause", async () => {
      const server = await startServer({ module: MODULE });
      servers.push(server);
      const mq = await EchoMQ.connect<number>({ addresses: at(server), backend, requestTimeout: 500 });
      try {
        process.kill(server.pid, "SIGSTOP");
        const enqueue = await mq.enqueue("stopped", 1).catch((x: unknown) => x);
        const counts = await mq.counts("stopped").catch((x: unknown) => x);
        const many = await mq.enqueueMany("stopped", [1, 2, 3]).catch((x: unknown) => x);
        process.kill(server.pid, "SIGCONT");
        console.log(`[errors ${backend}] stopped server: enqueue ${(enqueue as Error).name}: ${(enqueue as Error).message}`);
        expect(enqueue).toBeInstanceOf(RequestTimeoutError);
        expect(enqueue).toBeInstanceOf(EchoMQError);
        expect((enqueue as RequestTimeoutError).rule).toBe("timeout");
        expect((enqueue as Error).message).toBe(
          `EMQ.ENQUEUE: no reply from ${server.address} within 500 ms (request timeout): it may or may not have run`,
        );
        expect(((enqueue as Error).cause as Error).name).toBe("TimeoutError");
        expect(counts).toBeInstanceOf(RequestTimeoutError);
        expect((many as { cause: unknown }).cause).toBeInstanceOf(RequestTimeoutError);
        expect((many as { unconfirmed: string[] }).unconfirmed.length).toBe(3);
        // killed: the same
        await server.kill();
        const killed = await mq.isPaused("stopped").catch((x: unknown) => x);
        expect(killed).toBeInstanceOf(EchoMQError);
        expect(["RequestTimeoutError", "ConnectionError"]).toContain((killed as Error).name);
      } finally {
        await mq.close();
        await server.stop();
      }
    });

    test("a full server: enqueue refused with WireError rule oom", async () => {
      const server = await startServer({ module: MODULE });
      servers.push(server);
      const mq = await EchoMQ.connect<number>({ addresses: at(server), backend });
      try {
        await mq.enqueue("full", 1); // the scripts are loaded, the queue exists
        await command(server.port, ["CONFIG", "SET", "maxmemory", "1"]);
        const e = await mq.enqueue("full", 2).catch((x: unknown) => x);
        expect(e).toBeInstanceOf(WireError);
        expect((e as WireError).rule).toBe("oom");
        expect((e as WireError).verb).toBe("EMQ.ENQUEUE");
        expect((e as WireError).text).toBe("OOM command not allowed when used memory > 'maxmemory'.");
        expect((e as Error).cause).toBeInstanceOf(Error);
      } finally {
        await command(server.port, ["CONFIG", "SET", "maxmemory", "0"]);
        await mq.close();
        await server.stop();
      }
    });

    test("an ACL user on another tenant's queue: WireError rule noperm from every read and from enqueue", async () => {
      const mq = await EchoMQ.connect<number>({
        addresses: at(plain),
        credentials: { username: "t1-only", password: "pw" },
        backend,
      });
      try {
        expect(await mq.counts("t1")).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
        const id = "JOB00000000001" as JobId;
        const calls: Record<string, () => Promise<unknown>> = {
          stats: () => mq.stats("t2"),
          counts: () => mq.counts("t2"),
          jobs: () => mq.jobs("t2", "pending"),
          getJob: () => mq.getJob("t2", id),
          isPaused: () => mq.isPaused("t2"),
          enqueue: () => mq.enqueue("t2", 1),
        };
        for (const [name, run] of Object.entries(calls)) {
          const e = await run().catch((x: unknown) => x);
          expect({ name, type: (e as Error).name, rule: (e as WireError).rule, text: (e as WireError).text }).toEqual({
            name,
            type: "WireError",
            rule: "noperm",
            text: "NOPERM No permissions to access a key",
          });
        }
      } finally {
        await mq.close();
      }
    });

    test("events() and result() of a queue the user may not read end with WireError rule noperm, not a silent wait", async () => {
      const tenant = await EchoMQ.connect<number>({ addresses: at(plain), credentials: { username: "t1-only", password: "pw" }, backend });
      const noXread = await EchoMQ.connect<number>({ addresses: at(plain), credentials: { username: "t1-no-xread", password: "pw" }, backend });
      const noperm = async (run: () => Promise<unknown>): Promise<unknown> => {
        const e = await run().catch((x: unknown) => x);
        return { type: (e as Error)?.name, rule: (e as WireError)?.rule, text: (e as WireError)?.text };
      };
      const first = (it: AsyncIterable<unknown>) => async () => {
        for await (const item of it) return item;
        return "ended without an error";
      };
      const want = { type: "WireError", rule: "noperm", text: "NOPERM No permissions to access a key" };
      try {
        // another tenant's queue, from every kind of start: the reader's tail, a catch-up
        for (const from of ["now", "start", "0-0"] as const) {
          expect({ from, out: await noperm(first(tenant.events("t2", { from }))) }).toEqual({ from, out: want });
        }
        expect(await noperm(() => tenant.result("t2", "JOB00000000001" as JobId))).toEqual(want);
        // its own queue, without +xread: XREVRANGE (the tail) passes, the blocking XREAD is refused
        await tenant.enqueue("t1", 1);
        const e = await first(noXread.events("t1", { from: "now" }))().catch((x: unknown) => x);
        expect({ type: (e as Error).name, rule: (e as WireError).rule, verb: (e as WireError).verb }).toEqual({
          type: "WireError",
          rule: "noperm",
          verb: "XREAD",
        });
      } finally {
        await tenant.drop("t1"); // (the other tests of this server expect t1 empty)
        await tenant.close();
        await noXread.close();
      }
    });

    test("every bad input is an EchoMQError (a keyspace one a TypeError too), refused with nothing written", async () => {
      const mq = await EchoMQ.connect<unknown>({ addresses: at(plain), backend });
      try {
        const bad = "nope" as never;
        const cases: Record<string, () => Promise<unknown>> = {
          "upsertScheduler: a BigInt payload": () => mq.upsertScheduler("q", "n", { everyMs: 1000 }, { payload: 1n as never }),
          "enqueue: a BigInt payload": () => mq.enqueue("q", 1n as never),
          "enqueue: undefined": () => mq.enqueue("q", undefined as never),
          "enqueueMany: a BigInt payload": () => mq.enqueueMany("q", [1, 2n] as never),
          "result: a bad id": () => mq.result("q", bad),
          "jobEvents: a bad id": () => mq.jobEvents("q", bad),
          "runNow: a bad id": () => mq.runNow("q", [bad]),
          "removeMany: a bad id": () => mq.removeMany("q", [bad]),
          "requeueDead: a bad id": () => mq.requeueDead("q", { ids: [bad] }),
          "requeueDead: ids without { ids }": () => mq.requeueDead("q", [bad] as never),
          "enqueue: a queue name with a brace": () => mq.enqueue("a}b" as string, 1),
        };
        const d0 = await command(plain.port, ["DEBUG", "DIGEST"]);
        for (const [name, run] of Object.entries(cases)) {
          const e = await run().then(() => "resolved", (x: unknown) => x);
          const keyspaceError = (e as Error).name === "KeyspaceError";
          expect({ name, echomq: e instanceof EchoMQError, type: e instanceof TypeError }).toEqual({ name, echomq: true, type: keyspaceError });
        }
        expect(await command(plain.port, ["DEBUG", "DIGEST"])).toBe(d0);
        // a subclass still tests as itself only
        expect(new EchoMQError("options", "x") instanceof WireError).toBe(false);
      } finally {
        await mq.close();
      }
    });

    test("settleMany answers per settlement when its command's outcome is unknown", async () => {
      const mq = await EchoMQ.connect<number>({ addresses: at(plain), backend, requestTimeout: 300 });
      const q = `paused-settle-${backend}`;
      try {
        await mq.enqueueMany(q, [1, 2, 3]);
        const jobs = await mq.claimMany(q, 3, { leaseMs: 60_000 });
        await command(plain.port, ["CLIENT", "PAUSE", "1500", "WRITE"]);
        const results = await mq.settleMany(jobs.map((job) => ({ kind: "ack", job: job as { id: JobId; queue: string; token: number } })));
        expect(results.map((r) => r?.name)).toEqual(["RequestTimeoutError", "RequestTimeoutError", "RequestTimeoutError"]);
        await waitUntil("the acks to run after the pause", async () => (await mq.counts(q)).active === 0, 10_000, 50);
      } finally {
        await mq.drop(q);
        await mq.close();
      }
    });
  });
}

describe("on a cluster", () => {
  test("events() and result() of another tenant's queue end with WireError rule noperm on both backends (not a silent wait)", async () => {
    const cluster = await startCluster({ primaries: 3, module: MODULE });
    try {
      for (const n of cluster.nodes) await command(n.server.port, ["ACL", "SETUSER", "t1-only", "on", ">pw", "resetkeys", "~emq:{t1}:*", "+@all"]);
      for (const backend of BACKENDS) {
        const tenant = await EchoMQ.connect<number>({
          addresses: at(cluster.primaries[0]!.server),
          cluster: true,
          credentials: { username: "t1-only", password: "pw" },
          backend,
        });
        try {
          const first = async (it: AsyncIterable<unknown>): Promise<unknown> => {
            for await (const item of it) return item;
            return "ended without an error";
          };
          const seen = (e: unknown): unknown => ({ backend, type: (e as Error)?.name, rule: (e as WireError)?.rule });
          const want = { backend, type: "WireError", rule: "noperm" };
          for (const from of ["now", "start"] as const) {
            expect(seen(await first(tenant.events("t2", { from })).catch((x: unknown) => x))).toEqual(want);
          }
          expect(seen(await tenant.result("t2", "JOB00000000001" as JobId).catch((x: unknown) => x))).toEqual(want);
        } finally {
          await tenant.close();
        }
      }
    } finally {
      await cluster.stop();
    }
  }, 120_000);
});

describe("the CLI", () => {
  const MAIN = resolve(import.meta.dir, "../../dev/main.ts");
  const emq = (...args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 60_000 });

  test("--url takes credentials and never prints the password", () => {
    const ok = emq("inspect", "pw", "--url", `valkey://default:${SECRET}@127.0.0.1:${locked.port}`);
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('queue "pw"');
    expect(ok.stdout).not.toContain(SECRET);
    const wrong = emq("inspect", "pw", "--url", `valkey://default:${SECRET}x@127.0.0.1:${locked.port}`);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toContain(`127.0.0.1:${locked.port} refused the connection`);
    expect(`${wrong.stdout}${wrong.stderr}`).not.toContain(SECRET);
    const bad = emq("inspect", "pw", "--url", `valkey://default:${SECRET}@127.0.0.1:notaport`);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain("valkey://default:***@127.0.0.1:notaport");
    expect(`${bad.stdout}${bad.stderr}`).not.toContain(SECRET);
  }, 60_000);
});
