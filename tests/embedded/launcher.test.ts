/**
 * The embedded launcher (tools/embedded): real servers on free loopback ports in temporary
 * directories, idempotent stop, pass-through arguments, module loading, replication, leak
 * protection when the host dies, and the same code under Deno.
 */
import { describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  command,
  freePort,
  infoFields,
  moduleBuilt,
  modulePath,
  portFree,
  repoRoot,
  RespError,
  startCluster,
  startReplicated,
  startServer,
  sweepOrphans,
  waitForSync,
} from "../../tools/embedded/mod.ts";

/** Whether `pid` runs (a zombie awaiting its reaper counts as dead). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe("paths and ports", () => {
  test("modulePath resolves native/target/release/libemq.so under the repository root", () => {
    expect(modulePath()).toBe(join(repoRoot(), "native", "target", "release", "libemq.so"));
    expect(existsSync(join(repoRoot(), "package.json"))).toBe(true);
  });

  test("freePort hands out distinct loopback ports whose bus port is free too", async () => {
    const a = await freePort();
    const b = await freePort();
    expect(a).not.toBe(b);
    for (const p of [a, b]) {
      expect(await portFree(p)).toBe(true);
      expect(await portFree(p + 10000)).toBe(true);
    }
  });
});

describe("startServer", () => {
  test("starts without a module, answers on loopback, stops idempotently and cleans up", async () => {
    const s = await startServer({ module: false });
    expect(s.host).toBe("127.0.0.1");
    expect(s.address).toBe(`127.0.0.1:${s.port}`);
    expect(s.module).toBeNull();
    expect(await command(s.port, ["PING"])).toBe("PONG");
    expect(await command(s.port, ["MODULE", "LIST"])).toEqual([]);
    expect(existsSync(s.dir)).toBe(true);
    await s.stop();
    await s.stop();
    expect(alive(s.pid)).toBe(false);
    expect(existsSync(s.dir)).toBe(false);
    expect(await portFree(s.port)).toBe(true);
  });

  test.skipIf(!moduleBuilt())("loads the module and passes extra arguments through", async () => {
    const s = await startServer({ module: modulePath(), args: ["--emq.wire", "3"] });
    try {
      expect(s.module).toBe(modulePath());
      expect(JSON.stringify(await command(s.port, ["MODULE", "LIST"]))).toContain("emq");
      expect(await command(s.port, ["CONFIG", "GET", "emq.wire"])).toEqual(["emq.wire", "3"]);
      expect(await command(s.port, ["DEBUG", "DIGEST"])).toBe("0".repeat(40));
    } finally {
      await s.stop();
    }
  });

  test("a server that cannot start rejects with its log and leaves nothing behind", async () => {
    const err = await startServer({ module: false, args: ["--no-such-option", "1"] }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String((err as Error).message)).toContain("no-such-option");
    const missing = await startServer({ module: "/nonexistent/libemq.so" }).catch((e: Error) => e);
    expect(String((missing as Error).message)).toContain("module not found");
  });
});

describe("startReplicated", () => {
  test("returns a primary and an in-sync replica", async () => {
    const pair = await startReplicated({ module: false });
    try {
      expect(await command(pair.primary.port, ["SET", "k", "v"])).toBe("OK");
      await waitForSync(pair.primary.port, pair.replica.port);
      expect(await command(pair.replica.port, ["GET", "k"])).toBe("v");
      const info = infoFields(await command(pair.replica.port, ["INFO", "replication"]));
      expect(info["role"]).toBe("slave");
      expect(info["master_port"]).toBe(String(pair.primary.port));
      expect(await command(pair.replica.port, ["SET", "k", "w"])).toBeInstanceOf(RespError);
    } finally {
      await pair.stop();
      await pair.stop();
    }
    expect(alive(pair.primary.pid) || alive(pair.replica.pid)).toBe(false);
  });
});

describe("startCluster", () => {
  test("a cluster that cannot form is retried once, then rejects naming what each node said, and leaves no node running", async () => {
    // `--cluster-enabled no` after the launcher's own `yes`: valkey-cli refuses to join such nodes.
    const failure = await startCluster({ module: false, args: ["--cluster-enabled", "no"] }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(failure).toContain("the cluster did not form, twice.");
    expect(failure).toContain("what the nodes said (all stopped):");
    const ports = [...(failure ?? "").matchAll(/127\.0\.0\.1:(\d+): /g)].map((m) => Number(m[1]));
    expect(ports.length).toBe(6); // 3 nodes per try, both tries reported
    for (const port of ports) expect(await portFree(port)).toBe(true);
  }, 120_000);
});

/** Runs a one-off script that starts a server, prints its pid and dir, then dies by `how`. */
function orphanRun(runtime: string[], how: "SIGKILL" | "exit" | "unguarded"): Promise<{ pid: number; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), "emq-launcher-test-"));
  const script = join(dir, "orphan.ts");
  const mod = join(repoRoot(), "tools", "embedded", "mod.ts");
  writeFileSync(
    script,
    `import { startServer } from ${JSON.stringify(mod)};
const s = await startServer({ module: false });
console.log(JSON.stringify({ pid: s.pid, dir: s.dir }));
${how === "unguarded" ? `require("node:child_process").execSync("pkill -KILL -f '[e]mq-watchdog " + process.pid + " " + s.pid + "'");` : ""}
${how === "exit" ? "process.exit(0);" : 'process.kill(process.pid, "SIGKILL");'}
`,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(runtime[0]!, [...runtime.slice(1), script], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("exit", () => {
      rmSync(dir, { recursive: true, force: true });
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (!line) return reject(new Error(`no output: ${out}\n${err}`));
      resolve(JSON.parse(line));
    });
  });
}

describe("leak protection", () => {
  const bun = join(repoRoot(), "node_modules", ".bin", "bun");
  const deno = join(repoRoot(), "node_modules", ".bin", "deno");

  test("servers die with a host that exits normally", async () => {
    const { pid, dir } = await orphanRun([bun, "run"], "exit");
    expect(await waitFor(() => !alive(pid), 3000)).toBe(true);
    expect(await waitFor(() => !existsSync(dir), 3000)).toBe(true);
  });

  test("servers die with a host killed by SIGKILL (watchdog)", async () => {
    const { pid, dir } = await orphanRun([bun, "run"], "SIGKILL");
    expect(await waitFor(() => !alive(pid), 5000)).toBe(true);
    expect(await waitFor(() => !existsSync(dir), 5000)).toBe(true);
  });

  test("a server whose host and watchdog were both killed is found by its owner record and swept", async () => {
    const { pid, dir } = await orphanRun([bun, "run"], "unguarded");
    expect(alive(pid)).toBe(true);
    const swept = sweepOrphans();
    expect(swept.filter((o) => o.dir === dir)).toEqual([{ dir, pid, host: expect.any(Number) }]);
    expect(await waitFor(() => !alive(pid), 5000)).toBe(true);
    expect(existsSync(dir)).toBe(false);
  });

  test("a live host's servers are never swept", async () => {
    const s = await startServer({ module: false });
    try {
      expect(sweepOrphans().some((o) => o.dir === s.dir)).toBe(false);
      expect(alive(s.pid)).toBe(true);
    } finally {
      await s.stop();
    }
  });

  test.skipIf(!existsSync(deno))("the launcher runs under Deno", async () => {
    const { pid, dir } = await orphanRun([deno, "run", "--allow-all", "--quiet"], "exit");
    expect(pid).toBeGreaterThan(0);
    expect(await waitFor(() => !alive(pid), 3000)).toBe(true);
    expect(await waitFor(() => !existsSync(dir), 3000)).toBe(true);
  }, 60_000);
});
