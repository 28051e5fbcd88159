/**
 * Reaching production servers (issue 22 §2): `EchoMQ.connect({ url })` and every CLI command take
 * `valkey://[user:password@]host:port` and `valkeys://…` (TLS), against real servers — one with
 * `requirepass` and an ACL user, one speaking TLS with a CA made by openssl in this test. A
 * refused connect is a `ConnectionError` whose `reason` says why (auth, tls), and no message or
 * output shows the password. On both backends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConnectionError, EchoMQ, EchoMQError } from "../../client.ts";
import { command, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { emqAsync } from "../cli/_emq.ts";
import { BACKENDS } from "./_harness.ts";
import { makeCa, serverHasTls, startTlsServer, type TestCa } from "./_tls.ts";

/** The Valkey 9.1.2 this project tests with is built without TLS: its TLS cases are skipped, saying so. */
const TLS = serverHasTls();
if (!TLS) console.log("[reach] this valkey-server has no TLS support: the TLS cases are skipped");

const MODULE = moduleIfBuilt();
const SECRET = "s3cret/with@odd:chars";
const ENCODED = encodeURIComponent(SECRET);

let locked: ServerHandle;
let tlsServer: ServerHandle;
let tlsPort: number;
let ca: TestCa;
let otherCa: TestCa;

beforeAll(async () => {
  ca = makeCa();
  otherCa = makeCa("other-ca");
  locked = await startServer({ module: MODULE });
  // the ACL user first: after requirepass, an unauthenticated command is refused
  expect(await command(locked.port, ["ACL", "SETUSER", "ops", "on", ">ops-pw", "~emq:*", "+@all"])).toBe("OK");
  expect(await command(locked.port, ["CONFIG", "SET", "requirepass", SECRET])).toBe("OK");
  if (TLS) ({ server: tlsServer, tlsPort } = await startTlsServer(ca, MODULE));
}, 60_000);

afterAll(async () => {
  await Promise.all([locked?.stop(), tlsServer?.stop()]);
  ca?.remove();
  otherCa?.remove();
});

describe.each(BACKENDS)("connect({ url }) (%s)", (backend) => {
  test("valkey://:password@ (requirepass) and valkey://user:password@ (an ACL user), percent-decoded", async () => {
    for (const url of [`valkey://:${ENCODED}@127.0.0.1:${locked.port}`, `valkey://ops:ops-pw@127.0.0.1:${locked.port}`]) {
      const mq = await EchoMQ.connect({ url, backend });
      try {
        const id = await mq.enqueue("reach", { n: 1 });
        expect((await mq.getJob("reach", id))?.payload).toEqual({ n: 1 });
      } finally {
        await mq.close();
      }
    }
  });

  test("a wrong password or an unknown user in the url: reason auth, the password in no message", async () => {
    for (const url of [`valkey://:nope-${ENCODED}@127.0.0.1:${locked.port}`, `valkey://nobody:nope-pw@127.0.0.1:${locked.port}`]) {
      const e = await EchoMQ.connect({ url, backend }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ConnectionError);
      expect((e as ConnectionError).reason).toBe("auth");
      expect((e as Error).message).toContain("(WRONGPASS)");
      expect((e as Error).message).not.toContain("nope-");
    }
  });

  test.skipIf(!TLS)("valkeys:// with the test CA: enqueue and read back over TLS", async () => {
    const mq = await EchoMQ.connect({ url: `valkeys://127.0.0.1:${tlsPort}`, tls: { ca: ca.ca }, backend });
    try {
      const id = await mq.enqueue("tls", { over: "tls" });
      expect((await mq.getJob("tls", id))?.payload).toEqual({ over: "tls" });
      expect(mq.backend).toBe(backend);
    } finally {
      await mq.close();
    }
  });

  test.skipIf(!TLS)("valkeys:// with a CA that did not sign the server's certificate: reason tls", async () => {
    const e = await EchoMQ.connect({ url: `valkeys://127.0.0.1:${tlsPort}`, tls: { ca: otherCa.ca }, backend, connectTimeout: 3000 })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ConnectionError);
    expect((e as ConnectionError).reason).toBe("tls");
    expect((e as Error).message).toStartWith(`connect: the TLS handshake with 127.0.0.1:${tlsPort} failed: `);
  }, 30_000);

  test.skipIf(!TLS)("valkeys:// and tls: { insecure: true } (no check) connects", async () => {
    const mq = await EchoMQ.connect({ url: `valkeys://127.0.0.1:${tlsPort}`, tls: { insecure: true }, backend });
    expect(await mq.counts("tls-insecure")).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 0, waitingChildren: 0 });
    await mq.close();
  });
});

test("a url that cannot be read is refused (options), its password not shown; no url and no addresses too", async () => {
  const bad = await EchoMQ.connect({ url: "http://ops:hunter2@db:6379" }).catch((x: unknown) => x);
  expect(bad).toBeInstanceOf(EchoMQError);
  expect((bad as EchoMQError).rule).toBe("options");
  expect((bad as Error).message).toBe(
    'connect: cannot read the url "http://ops:***@db:6379": expected valkey://[user:password@]host:port (valkeys:// for TLS)',
  );
  const none = await EchoMQ.connect({} as never).catch((x: unknown) => x);
  expect((none as Error).message).toBe("connect: options.addresses must list at least one { host, port } (or give url)");
});

describe("the CLI", () => {
  test("inspect, pause, resume and key take valkey://:password@ and never print the password", async () => {
    const url = `valkey://:${ENCODED}@127.0.0.1:${locked.port}`;
    const runs = [
      await emqAsync("pause", "reach", "--url", url),
      await emqAsync("inspect", "reach", "--url", url),
      await emqAsync("resume", "reach", "--url", url),
      await emqAsync("key", "reach", "pending", "--url", url),
    ];
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0]);
    expect(runs[0]!.out).toBe('paused "reach"\n');
    expect(runs[1]!.out).toContain('queue "reach" (PAUSED: claims hand out nothing)');
    for (const r of runs) expect(`${r.out}${r.err}`).not.toContain(SECRET);
  }, 60_000);

  test("without the password: one line saying authentication is required", async () => {
    const r = await emqAsync("inspect", "reach", "--url", `valkey://127.0.0.1:${locked.port}`);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `emq: cannot use 127.0.0.1:${locked.port}: connect: 127.0.0.1:${locked.port} refused the connection: ` +
        "authentication required (NOAUTH); pass credentials: { password } (and username, for an ACL user)\n",
    );
  }, 30_000);

  test.skipIf(!TLS)("valkeys:// with --tls-ca: inspect over TLS; without the CA: one line naming TLS", async () => {
    const mq = await EchoMQ.connect({ url: `valkeys://127.0.0.1:${tlsPort}`, tls: { ca: ca.ca } });
    await mq.enqueue("tls-cli", { n: 1 });
    await mq.close();
    const ok = await emqAsync("inspect", "tls-cli", "--url", `valkeys://127.0.0.1:${tlsPort}`, "--tls-ca", ca.caFile);
    expect(ok.err).toBe("");
    expect(ok.out).toContain("  pending 1, active 0, scheduled 0, dead 0");
    const refused = await emqAsync("inspect", "tls-cli", "--url", `valkeys://127.0.0.1:${tlsPort}`, "--tls-ca", otherCa.caFile);
    expect(refused.code).toBe(2);
    expect(refused.err).toStartWith(`emq: cannot use 127.0.0.1:${tlsPort}: connect: the TLS handshake with 127.0.0.1:${tlsPort} failed: `);
    // without a CA for the server's certificate: the one line, and the process ends with it (a
    // refused connect's background attempt kept it up 6 s); 5 s would be that wait again
    const noCa = await Promise.race([
      emqAsync("inspect", "tls-cli", "--url", `valkeys://127.0.0.1:${tlsPort}`),
      new Promise<string>((done) => setTimeout(() => done("still running after 5 s"), 5000)),
    ]);
    expect(typeof noCa === "string" ? noCa : [noCa.code, noCa.err.split(" failed: ")[0]]).toEqual([
      2,
      `emq: cannot use 127.0.0.1:${tlsPort}: connect: the TLS handshake with 127.0.0.1:${tlsPort}`,
    ]);
    const insecure = await emqAsync("inspect", "tls-cli", "--url", `valkeys://127.0.0.1:${tlsPort}`, "--insecure");
    expect([insecure.err, insecure.code]).toEqual(["", 0]);
    const plain = await emqAsync("inspect", "tls-cli", "--url", `valkey://127.0.0.1:${tlsPort}`, "--tls-ca", ca.caFile);
    expect(plain.err).toBe("emq: --tls-ca and --insecure go with a valkeys:// (TLS) --url\n");
  }, 90_000);
});
