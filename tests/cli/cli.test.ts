// The `emq` command line: what it prints, and that bad input is one line and a non-zero exit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { EchoMQ } from "../../client.ts";
import { freePort, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";

const MAIN = resolve(import.meta.dir, "../../cli/main.ts");

function emq(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

/** A refusal: exactly one line on stderr, starting `emq: `, no stack trace, non-zero exit. */
function expectOneLineError(r: { code: number; out: string; err: string }, text: string): void {
  expect(r.code).not.toBe(0);
  const lines = r.err.trim().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("emq: ");
  expect(lines[0]).toContain(text);
}

describe("emq key", () => {
  test("shows the key, hashtag, slot and both verdicts", () => {
    const r = emq("key", "orders", "pending");
    expect(r.code).toBe(0);
    expect(r.out.split("\n").slice(0, 5)).toEqual([
      'key      "emq:{orders}:pending"',
      'hashtag  "orders"',
      "slot     105",
      "host     accepted",
      "native   accepted",
    ]);
  });

  test("a brace in the name: both refuse, the host names the rule, exit 1", () => {
    const r = emq("key", "a}b", "pending");
    expect(r.code).toBe(1);
    expect(r.out).toContain('hashtag  "a"');
    expect(r.out).toContain('host     refused — queue name "a}b" must not contain "}"');
    expect(r.out).toContain("native   refused");
  });

  test("the empty name: the host accepts, the native mirror refuses", () => {
    const r = emq("key", "", "pending");
    expect(r.code).toBe(0);
    expect(r.out).toContain("host     accepted");
    expect(r.out).toContain("native   refused — the module refuses the empty name");
  });

  test("a job row and a bad id", () => {
    expect(emq("key", "orders", "job:JOB0Nb1VTbfnu4").out).toContain("native   accepted");
    const bad = emq("key", "orders", "job:JOB0Nb1VTbfn_4");
    expect(bad.code).toBe(1);
    expect(bad.out).toContain("payload must be 11 Base62 characters");
  });

  test("wrong arity is a usage error", () => {
    expectOneLineError(emq("key", "orders"), "emq key takes a queue name and a type");
  });
});

describe("bad input against servers", () => {
  let plain: ServerHandle;
  let closedPort: number;

  beforeAll(async () => {
    plain = await startServer({ module: false });
    closedPort = await freePort();
  }, 60_000);
  afterAll(async () => {
    await plain.stop();
  });

  test("an invalid queue name", () => {
    expectOneLineError(emq("inspect", "a{b", "--url", `valkey://127.0.0.1:${plain.port}`), 'queue name "a{b" must not contain "{"');
  });

  test("an unreachable server", () => {
    expectOneLineError(emq("demo", "--url", `valkey://127.0.0.1:${closedPort}`, "--seconds", "1"), `cannot use 127.0.0.1:${closedPort}`);
    expectOneLineError(emq("inspect", "orders", "--url", `valkey://127.0.0.1:${closedPort}`), `cannot reach 127.0.0.1:${closedPort}`);
  });

  test("--backend module on a server without the module", () => {
    expectOneLineError(
      emq("demo", "--backend", "module", "--url", `valkey://127.0.0.1:${plain.port}`, "--seconds", "1"),
      "does not have the emq module",
    );
  });

  test("unknown flags and values", () => {
    expectOneLineError(emq("demo", "--backend", "fast"), "--backend must be module, scripts or auto");
    expectOneLineError(emq("demo", "--seconds=-1"), "--seconds must be between 0 and 3600");
    expectOneLineError(emq("demo", "--seconds", "-1"), "Option '--seconds' argument is ambiguous");
    expect(emq("frobnicate").code).toBe(2);
  });

  test("inspect shows counts and the oldest pending job's age", async () => {
    const mq = await EchoMQ.connect({ addresses: [{ host: plain.host, port: plain.port }], backend: "scripts" });
    const first = await mq.enqueue("inspected", { n: 1 });
    await mq.enqueue("inspected", { n: 2 });
    await mq.close();
    const r = emq("inspect", "inspected", "--url", `valkey://127.0.0.1:${plain.port}`);
    expect(r.code).toBe(0);
    expect(r.out).toContain('queue "inspected": pending 2, active 0, schedule 0, dead 0');
    expect(r.out).toMatch(new RegExp(`oldest pending: ${first}, \\d+\\.\\ds old`));
    expect(r.out).toContain(`served by 127.0.0.1:${plain.port}`);
  });
});
