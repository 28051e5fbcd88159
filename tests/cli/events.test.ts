// `emq events` and `emq result`: JSON lines following a queue until interrupted; a job's result,
// its failure or a timeout as one line. The stream entries and rows are written by hand, as the
// wire-10 verbs write them (docs/WIRE.md "Events").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { Connection } from "../../lib/client/connection.ts";
import { keyspace } from "../../mod.ts";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { emq, emqAsync, expectOneLineError, MAIN } from "./_emq.ts";

describe("emq events and emq result", () => {
  let server: ServerHandle;
  let raw: Connection;
  let url: string;
  beforeAll(async () => {
    server = await startServer({ module: false });
    raw = await Connection.open({ addresses: [{ host: server.host, port: server.port }] });
    url = `valkey://127.0.0.1:${server.port}`;
  });
  afterAll(async () => {
    raw.close();
    await server.stop();
  });

  const xadd = async (q: string, ...fields: string[]): Promise<string> =>
    String(await raw.command(["XADD", keyspace(q).events, "*", ...fields], keyspace(q).meta));

  test("events --from start: one JSON line per job, following the queue until SIGINT (exit 0)", async () => {
    const q = "followed";
    const first = await xadd(q, "type", "enqueued", "jobs", "a b");
    const child = spawn(process.execPath, [MAIN, "events", q, "--url", url, "--from", "start"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const exited = new Promise<number>((done) => child.on("close", (code) => done(code ?? -1)));
    const lines = async (n: number): Promise<string[]> => {
      const deadline = Date.now() + 20_000;
      while (out.split("\n").filter((l) => l !== "").length < n && Date.now() < deadline) await Bun.sleep(20);
      return out.split("\n").filter((l) => l !== "");
    };
    expect(await lines(2)).toEqual([
      JSON.stringify({ id: `${first}:0`, type: "enqueued", jobId: "a" }),
      JSON.stringify({ id: `${first}:1`, type: "enqueued", jobId: "b" }),
    ]);
    const dead = await xadd(q, "type", "dead", "jobs", "a", "reason", "card declined: é");
    expect((await lines(3))[2]).toBe(JSON.stringify({ id: `${dead}:0`, type: "dead", jobId: "a", reason: "card declined: é" }));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
  }, 30_000);

  test("events for a user who may not read the stream: one line naming NOPERM, exit 1 (not a silent wait)", async () => {
    await raw.command(["ACL", "SETUSER", "no-xread", "on", ">pw", "~*", "+@all", "-xread"], "x");
    await xadd("denied", "type", "enqueued", "jobs", "a");
    const r = await emqAsync("events", "denied", "--url", `valkey://no-xread:pw@127.0.0.1:${server.port}`);
    expectOneLineError(r, "XREAD refused (noperm): NOPERM User no-xread has no permissions to run the 'xread' command");
  }, 30_000);

  test("result: the result as JSON; a dead job's reason, a missing job, a timeout: one line, exit 1", async () => {
    const q = "results";
    const K = keyspace(q);
    await raw.command(["HSET", K.job("JOB00000000001" as never), "state", "completed", "result", '{"sum":3}'], K.meta);
    await raw.command(["HSET", K.job("JOB00000000002" as never), "state", "dead", "reason", "out of paper"], K.meta);
    await raw.command(["HSET", K.job("JOB00000000003" as never), "state", "pending"], K.meta);
    expect(emq("result", q, "JOB00000000001", "--url", url)).toEqual({ code: 0, out: '{"sum":3}\n', err: "" });
    expectOneLineError(emq("result", q, "JOB00000000002", "--url", url), "job JOB00000000002 failed: out of paper");
    expectOneLineError(emq("result", q, "JOB00000000009", "--url", url), "no job JOB00000000009");
    expectOneLineError(emq("result", q, "JOB00000000003", "--url", url, "--timeout-ms", "200"), "did not finish within 200 ms");
    // waits on the stream: finished while it waits
    const waiting = emqAsync("result", q, "JOB00000000003", "--url", url, "--timeout-ms", "20000");
    await Bun.sleep(1000);
    for (
      const r of await raw.batch(
        [
          ["HSET", K.job("JOB00000000003" as never), "state", "completed", "result", "7"],
          ["XADD", K.events, "*", "type", "completed", "jobs", "JOB00000000003"],
        ],
        K.meta,
        true,
      )
    ) if (r instanceof Error) throw r;
    expect(await waiting).toEqual({ code: 0, out: "7\n", err: "" });
  }, 60_000);

  test("bad usage is one line, exit 2, before any connection", () => {
    for (
      const [args, text] of [
        [["events", "q", "--url", "valkey://127.0.0.1:1", "--from", "yesterday"], "--from must be now, start"],
        [["events", "q"], "emq events takes a queue name and --url"],
        [["result", "q", "--url", "valkey://127.0.0.1:1"], "emq result takes a queue name, a job id and --url"],
        [["result", "q", "JOB00000000001", "--url", "valkey://127.0.0.1:1", "--timeout-ms", "soon"], "--timeout-ms must be"],
      ] as const
    ) {
      const r = emq(...args);
      expectOneLineError(r, text);
      expect(r.code).toBe(2);
    }
  });
});
