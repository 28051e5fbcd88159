// The CLI's truth (issue 22 §5): the real owner of a queue's slot, no queue made by a typo,
// --help for every command, nothing of glide's on stdout.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ } from "../../client.ts";
import { keyspace } from "../../mod.ts";
import { COMMANDS } from "../../dev/help.ts";
import { type ClusterHandle, command, moduleBuilt, type ServerHandle, startCluster, startServer } from "../../tools/embedded/mod.ts";
import { emq, emqAsync, expectOneLineError } from "./_emq.ts";

const digest = async (port: number): Promise<string> => String(await command(port, ["DEBUG", "DIGEST"]));

test("every command answers --help and -h with its own usage, exit 0, and runs nothing", () => {
  for (const c of Object.keys(COMMANDS).filter((c) => c !== "test" && c !== "bench")) {
    for (const flag of ["--help", "-h"]) {
      const r = emq(c, flag);
      expect({ c, code: r.code, err: r.err }).toEqual({ c, code: 0, err: "" });
      expect(r.out).toStartWith("usage:\n");
      expect(r.out).toContain(`emq ${c}`);
    }
  }
  // inspect used to answer "Unknown option '--help'"
  expect(emq("inspect", "--help").out).toContain("emq inspect <queue> --url");
});

test("key: when the host and native verdicts differ, a note says which half a call meets", () => {
  const id = emq("key", "orders", "job:order-1");
  expect(id.out).toContain("host     refused");
  expect(id.out).toContain(
    "native   accepted\nnote     the halves disagree: the module's layout check accepts the key, but the client refuses the name or id before any call is sent\n",
  );
  expect(emq("key", "", "pending").out).toContain("note     the halves disagree: the client sends it, and the module refuses it on the server\n");
  expect(emq("key", "orders", "pending").out).not.toContain("note");
});

const backends = moduleBuilt() ? (["module", "scripts"] as const) : (["scripts"] as const);

describe.each(backends)("a queue that does not exist (%s)", (backend) => {
  let server: ServerHandle;
  let url: string;
  beforeAll(async () => {
    server = await startServer({ module: backend === "module" ? undefined : false });
    url = `valkey://127.0.0.1:${server.port}`;
    const mq = await EchoMQ.connect({ addresses: [{ host: server.host, port: server.port }], backend });
    await mq.enqueue("real", { n: 1 });
    await mq.close();
  }, 60_000);
  afterAll(() => server.stop());

  test("pause, resume, retain, requeue, run and limit say so, exit 1, and write nothing", async () => {
    const before = await digest(server.port);
    for (
      const op of [["pause"], ["resume"], ["retain", "--dead-max", "5"], ["limit", "--concurrency", "2"], ["limit", "--rate", "none"], ["requeue"], [
        "requeue",
        "--ids",
        "JOB0Nb1VTbfnu4",
      ], ["run", "--ids", "JOB0Nb1VTbfnu4"]]
    ) {
      const r = emq(op[0]!, "nope", "--url", url, ...op.slice(1));
      expectOneLineError(r, `emq: no queue "nope" on 127.0.0.1:${server.port} (no meta key and no jobs): nothing done, and no queue created`);
      expect(r.code).toBe(1);
      expect(r.out).toBe("");
    }
    expect(await digest(server.port)).toBe(before);
    expect(await command(server.port, ["EXISTS", "emq:{nope}:meta"])).toBe(0);
  }, 120_000);

  test("inspect and limits say it does not exist, exit 1", async () => {
    const before = await digest(server.port);
    for (const c of ["inspect", "limits"]) {
      const r = emq(c, "nope", "--url", url);
      expect({ c, code: r.code, out: r.out, err: r.err }).toEqual({
        c,
        code: 1,
        out: "",
        err: `emq: no queue "nope" on 127.0.0.1:${server.port} (no meta key and no jobs)\n`,
      });
    }
    expect(await digest(server.port)).toBe(before);
  });

  test("on a queue that exists they act, retain included", async () => {
    expect(emq("pause", "real", "--url", url).out).toBe('paused "real"\n');
    expect(emq("resume", "real", "--url", url).out).toBe('resumed "real"\n');
    expect(emq("retain", "real", "--url", url, "--dead-max", "7", "--dead-age-ms", "60000").out)
      .toBe(
        '"real" keeps at most 7 dead job(s), for 60000 ms; at most 1000 completed job(s) with their results, for 86400000 ms; at most 10000 events; 1440 minute(s) of history\n',
      );
    expect(emq("inspect", "real", "--url", url).out).toContain(
      "retention: at most 7 dead, dead kept 0.0 h; at most 1000 completed, kept 24.0 h; at most 10000 events",
    );
    // a flag left out keeps its setting
    expect(emq("retain", "real", "--url", url, "--completed-max", "0", "--events-max", "5", "--completed-age-ms", "0").out)
      .toBe('"real" keeps at most 7 dead job(s), for 60000 ms; no completed job; at most 5 events; 1440 minute(s) of history\n');
    expect(emq("inspect", "real", "--url", url).out).toContain("retention: at most 7 dead, dead kept 0.0 h; no completed kept; at most 5 events");
    expectOneLineError(
      emq("pause", "real", "--url", url, "--dead-max", "1"),
      "--dead-max, --dead-age-ms, --completed-max, --completed-age-ms, --events-max, --history-minutes go with emq retain only",
    );
    expectOneLineError(
      emq("pause", "real", "--url", url, "--events-max", "1"),
      "--dead-max, --dead-age-ms, --completed-max, --completed-age-ms, --events-max, --history-minutes go with emq retain only",
    );
    expectOneLineError(emq("retain", "real", "--url", url, "--dead-max", "x"), "--dead-max must be a whole number, not x");
  }, 60_000);

  test("jobs pages one state's jobs, one line each: completed ones with their results", async () => {
    const mq = await EchoMQ.connect<{ n: number }>({ addresses: [{ host: server.host, port: server.port }], backend });
    let done: string;
    let waiting: string;
    try {
      [done, waiting] = (await mq.enqueueMany("listed", [{ n: 1 }, { n: 2 }])) as unknown as [string, string];
      await mq.ack((await mq.claim("listed", { leaseMs: 60_000 }))!, { ok: "é" });
    } finally {
      await mq.close();
    }
    const c = emq("jobs", "listed", "completed", "--url", url);
    expect(c.code).toBe(0);
    const lines = c.out.split("\n");
    expect(lines[0]).toBe('"listed": 1 completed job(s), 1–1 shown, most recent first');
    expect(lines[1]).toMatch(new RegExp(`^  ${done}  finished \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  attempts 1  result \\{"ok":"é"\\}$`));
    expect(lines.length).toBe(3);
    const p = emq("jobs", "listed", "pending", "--url", url, "--limit", "5");
    expect(p.out).toMatch(new RegExp(`^"listed": 1 pending job\\(s\\), 1–1 shown\n  ${waiting}  admitted [\\d:.TZ-]+  attempts 0  payload \\{"n":2\\}\n$`));
    expect(emq("jobs", "listed", "dead", "--url", url).out).toBe('"listed": 0 dead job(s), none shown\n');
    expectOneLineError(
      emq("jobs", "listed", "finished", "--url", url),
      'the state must be one of pending, active, scheduled, dead, completed, waiting-children, not "finished"',
    );
    expectOneLineError(emq("jobs", "listed", "--url", url), "emq jobs takes a queue name, a state and --url");
    expectOneLineError(emq("jobs", "listed", "pending", "--url", url, "--limit", "0"), '--limit must be an integer from 1 to 1000, not "0"');
    const none = emq("jobs", "nope", "completed", "--url", url);
    expect({ code: none.code, err: none.err }).toEqual({ code: 1, err: `emq: no queue "nope" on 127.0.0.1:${server.port} (no meta key and no jobs)\n` });
  }, 60_000);

  test("key --url prints nothing of glide's (no log line, no colour codes)", () => {
    const r = emq("key", "orders", "pending", "--url", url);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain("\x1b[");
    expect(r.out).not.toMatch(/WARN|INFO|glide/i);
    expect(r.out.split("\n")[0]).toBe('key      "emq:{orders}:pending"');
  });
});

describe("inspect --cluster", () => {
  let cluster: ClusterHandle;
  beforeAll(async () => {
    cluster = await startCluster({ primaries: 3, replicasPerPrimary: 0, module: false });
  }, 120_000);
  afterAll(() => cluster.stop());

  test("names the primary that owns the queue's slot, not the seed it was given", async () => {
    const seed = cluster.primaries[0]!.server;
    // a queue whose slot another primary serves
    let name = "";
    for (let i = 0; name === ""; i++) {
      if (cluster.primaryForSlot(keyspace(`q${i}`).slot).server.port !== seed.port) name = `q${i}`;
    }
    const owner = cluster.primaryForSlot(keyspace(name).slot).server;
    const mq = await EchoMQ.connect({ addresses: [{ host: seed.host, port: seed.port }], cluster: true, backend: "scripts" });
    await mq.enqueue(name, { n: 1 });
    await mq.close();
    const r = await emqAsync("inspect", name, "--cluster", "--url", `valkey://127.0.0.1:${seed.port}`);
    expect(r.err).toBe("");
    expect(r.out).toContain(`keys (slot ${keyspace(name).slot}, served by 127.0.0.1:${owner.port}):`);
    expect(owner.port).not.toBe(seed.port);
  }, 120_000);
});
