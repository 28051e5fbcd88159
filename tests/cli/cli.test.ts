// The `emq` command line: what it prints, and that bad input is one line and a non-zero exit.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { GlideClient } from "@valkey/valkey-glide";
import { EchoMQ, type Job } from "../../client.ts";
import { freePort, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { emq, expectOneLineError } from "./_emq.ts";

test("--help lists every command, test and bench included", () => {
  const r = emq("--help");
  expect(r.code).toBe(0);
  for (
    const c of [
      "demo",
      "test",
      "bench",
      "key",
      "inspect",
      "requeue",
      "run",
      "pause",
      "resume",
      "retain",
      "jobs",
      "job",
      "find",
      "cancel",
      "limit",
      "limits",
      "lanes",
      "drop",
      "ui",
      "help",
    ]
  ) {
    expect(r.out).toMatch(new RegExp(`^  emq ${c}\\b`, "m"));
  }
});

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

  test("the empty name: the host accepts, the native mirror refuses, exit 1", () => {
    const r = emq("key", "", "pending");
    expect(r.code).toBe(1);
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
    expectOneLineError(emq("inspect", "orders", "--url", `valkey://127.0.0.1:${closedPort}`), `cannot use 127.0.0.1:${closedPort}`);
    expectOneLineError(emq("pause", "orders", "--url", `valkey://127.0.0.1:${closedPort}`), `cannot use 127.0.0.1:${closedPort}`);
    expectOneLineError(emq("key", "orders", "pending", "--url", `valkey://127.0.0.1:${closedPort}`), `cannot reach 127.0.0.1:${closedPort}`);
  });

  test("a cluster node without --cluster, a standalone server with it: the advice names the flag", async () => {
    const node = await startServer({ module: false, cluster: true });
    try {
      const without = emq("inspect", "orders", "--url", `valkey://127.0.0.1:${node.port}`);
      expectOneLineError(without, `cannot use 127.0.0.1:${node.port}: connect: 127.0.0.1:${node.port} is a cluster node (cluster_enabled:1): add --cluster`);
    } finally {
      await node.stop();
    }
    const withFlag = emq("inspect", "orders", "--url", `valkey://127.0.0.1:${plain.port}`, "--cluster");
    expectOneLineError(withFlag, `is not a cluster node (cluster_enabled:0): leave out --cluster`);
  }, 60_000);

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

  test("emq job shows one job's facts, its name included; a job not there is one line and exit 1", async () => {
    const mq = await EchoMQ.connect({ addresses: [{ host: plain.host, port: plain.port }], backend: "scripts" });
    const failed = await mq.enqueue("one-job", { n: 2 });
    const job = (await mq.claim("one-job", { leaseMs: 60_000 }))!;
    await mq.bury(job, "Error: boom", { error: new Error("boom") });
    const id = await mq.enqueue("one-job", { n: 1 }, { name: "send-invoice", priority: 3 });
    await mq.close();
    const url = `valkey://127.0.0.1:${plain.port}`;
    const r = emq("job", "one-job", id, "--url", url);
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" });
    const lines = r.out.split("\n");
    expect(lines[0]).toBe(`"one-job" ${id}`);
    expect(lines).toContain('  name        "send-invoice"');
    expect(lines).toContain("  state       pending");
    expect(lines).toContain("  priority    3");
    expect(lines).toContain('  payload     {"n":1}');
    expect(lines.some((l) => l.startsWith("  failed"))).toBe(false);
    const f = emq("job", "one-job", failed, "--url", url).out.split("\n");
    expect(f).toContain("  failed attempts (the newest 1, oldest first):");
    expect(f.find((l) => l.startsWith("    attempt 1  "))).toEndWith("  Error: boom");
    expect(f.find((l) => l.startsWith("      at "))).toBeDefined();
    expectOneLineError(emq("job", "one-job", "JOB00000000001", "--url", url), 'no job JOB00000000001 in "one-job"');
    expectOneLineError(emq("job", "one-job", "--url", url), "emq job takes a queue name, a job id and --url");
    expectOneLineError(emq("job", "one-job", "order-28", "--url", url), "order-28");
    // emq find: by name (a scan that says what it read), with a cursor to go on
    const found = emq("find", "one-job", "send-invoice", "--url", url, "--scan", "1");
    expect({ code: found.code, err: found.err }).toEqual({ code: 0, err: "" });
    expect(found.out).toBe(
      `"one-job": 1 job(s) matching "send-invoice", 1 scanned; go on with --cursor 0:1\n  ${id}  pending  name "send-invoice"  payload {"n":1}\n`,
    );
    // the rest: the dead job (its payload does not hold the text)
    const rest = emq("find", "one-job", "send-invoice", "--url", url, "--cursor", "0:1");
    expect(rest.out).toBe(`"one-job": 0 job(s) matching "send-invoice", 1 scanned; the end of the queue\n`);
    expectOneLineError(emq("find", "one-job", "--url", url), "emq find takes a queue name, what to find and --url");
    // emq cancel: the waiting job buried with the reason; again: finished; an unknown id: exit 1
    const c = emq("cancel", "one-job", id, "--url", url, "--reason", "wrong customer");
    expect({ code: c.code, err: c.err, out: c.out }).toEqual({ code: 0, err: "", out: `"one-job" ${id}: cancelled: it was waiting, and is buried now\n` });
    expect(emq("job", "one-job", id, "--url", url).out).toContain('  reason      "cancelled: wrong customer"');
    expect(emq("cancel", "one-job", id, "--url", url).out).toContain("not cancelled: it had finished already");
    const none = emq("cancel", "one-job", "JOB00000000001", "--url", url);
    expect([none.code, none.out]).toEqual([1, `"one-job" JOB00000000001: not cancelled: no such job (never admitted, or deleted)\n`]);
    expectOneLineError(emq("cancel", "one-job", "--url", url), "emq cancel takes a queue name, a job id and --url");
  });

  test("inspect shows counts, the oldest pending job's age and the dead with their reasons", async () => {
    const mq = await EchoMQ.connect({ addresses: [{ host: plain.host, port: plain.port }], backend: "scripts" });
    await mq.enqueue("inspected", { n: 1 });
    await mq.enqueue("inspected", { n: 2 });
    const doomed = await mq.enqueue("inspected", { n: 3 });
    await mq.pause("inspected");
    await mq.resume("inspected");
    const [a, b, c] = (await mq.claimMany("inspected", 3, { leaseMs: 10_000 })) as Job<unknown>[];
    await mq.retry(a!, { delayMs: 1 });
    await mq.retry(b!, { delayMs: 1 });
    await mq.bury(c!, "card declined: é");
    const fourth = await mq.enqueue("inspected", { n: 4 });
    await mq.close();
    const r = emq("inspect", "inspected", "--url", `valkey://127.0.0.1:${plain.port}`);
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    expect(lines[0]).toBe('queue "inspected"');
    expect(lines[1]).toBe("  pending 1, active 0, scheduled 2, dead 1, completed 0");
    expect(lines[2]).toBe("  totals: enqueued 4, acked 0, retried 2, buried 1, claims 3");
    expect(lines[3]).toBe("  retention: at most 10000 dead, dead kept 720.0 h; at most 1000 completed, kept 24.0 h; at most 10000 events");
    expect(lines[4]).toBe("  limits: none");
    expect(lines[5]).toMatch(new RegExp(`^  oldest pending: ${fourth}, \\d+\\.\\d s old$`));
    expect(lines[6]).toBe("  dead, most recent first (1 of 1):");
    expect(lines[7]).toMatch(new RegExp(`^    ${doomed}  \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  attempts 1  "card declined: é"$`));
    expect(r.out).toContain(`served by 127.0.0.1:${plain.port}`);
  });

  test("inspect lists the queue's schedulers, soonest first: name, spec, next run, runs; its --help says so", async () => {
    const mq = await EchoMQ.connect({ addresses: [{ host: plain.host, port: plain.port }], backend: "scripts" });
    const odd = 'nightly "report"\r\nx'; // the name rule allows a quote and CR/LF: JSON-quoted, one line
    let order: string[];
    try {
      await mq.enqueue("timed", { n: 1 });
      expect(emq("inspect", "timed", "--url", `valkey://127.0.0.1:${plain.port}`).out).toContain("\n  schedulers: none\n");
      await mq.upsertScheduler("timed", odd, { cron: "0 9 * * *", tz: "Europe/Paris" }, { payload: { report: true } });
      await mq.upsertScheduler("timed", "heartbeat", { everyMs: 3_600_000 }, { payload: {} });
      order = (await mq.schedulers("timed")).map((x) => JSON.stringify(x.name)); // by next run, as the client lists them
    } finally {
      await mq.close();
    }
    const r = emq("inspect", "timed", "--url", `valkey://127.0.0.1:${plain.port}`);
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    const at = lines.indexOf("  schedulers, soonest first (2):");
    expect(at).toBeGreaterThan(0);
    const listed = lines.slice(at + 1, at + 3);
    expect(listed.map((l) => l.slice(4, l.indexOf("  ", 4)))).toEqual(order);
    expect(listed).toContainEqual(
      expect.stringMatching(/^    "heartbeat"  every 3600000 ms  next \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \(in (59|60) min\)  runs 0$/),
    );
    expect(listed).toContainEqual(
      expect.stringMatching(/^    "nightly \\"report\\"\\r\\nx"  cron "0 9 \* \* \*" tz Europe\/Paris  next \d{4}-.* UTC \(in \d+ (s|min|h)\)  runs 0$/),
    );
    expect(lines[at + 3]).toMatch(/^  keys \(slot/);
    expect(r.out).toContain("    emq:{timed}:schedulers\n");
    expect(emq("inspect", "--help").out).toContain("the schedulers (name, spec, next run, runs)");
  });

  test("pause, resume, requeue and drop: one line each, and the state they claim", async () => {
    const url = `valkey://127.0.0.1:${plain.port}`;
    const mq = await EchoMQ.connect({ addresses: [{ host: plain.host, port: plain.port }], backend: "scripts" });
    try {
      const ids = await mq.enqueueMany("operated", [{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(emq("pause", "operated", "--url", url).out).toBe('paused "operated"\n');
      expect(await mq.isPaused("operated")).toBe(true);
      expect(emq("pause", "operated", "--url", url).out).toBe('"operated" was paused already\n');
      expect(inspectLine(emq("inspect", "operated", "--url", url).out)).toBe('queue "operated" (PAUSED: claims hand out nothing)');
      expect(await mq.claimMany("operated", 3, { leaseMs: 10_000 })).toHaveLength(0);
      expect(emq("resume", "operated", "--url", url).out).toBe('resumed "operated"\n');
      expect(emq("resume", "operated", "--url", url).out).toBe('"operated" was not paused\n');
      for (const j of (await mq.claimMany("operated", 3, { leaseMs: 10_000 })) as Job<unknown>[]) await mq.bury(j, "no");
      expect((await mq.counts("operated")).dead).toBe(3);
      expect(emq("requeue", "operated", "--url", url, "--ids", ids[0]!).out).toBe('requeued 1 dead job(s) of "operated" to pending\n');
      expect(emq("requeue", "operated", "--url", url, "--limit", "1").out).toBe('requeued 1 dead job(s) of "operated" to pending\n');
      expect(await mq.counts("operated")).toMatchObject({ pending: 2, dead: 1 });
      expectOneLineError(emq("drop", "operated", "--url", url), 'emq drop deletes every job and key of "operated": add --yes to do it');
      expect((await mq.counts("operated")).pending).toBe(2);
      expect(emq("drop", "operated", "--url", url, "--yes").out).toBe('dropped "operated": 3 job(s) and its keys deleted\n');
      expect(await mq.counts("operated")).toMatchObject({ pending: 0, active: 0, schedule: 0, dead: 0 });
      expectOneLineError(emq("requeue", "operated", "--url", url, "--limit", "0"), "--limit must be a positive integer, not 0");
      expectOneLineError(emq("pause", "operated", "--url", url, "--ids", "x"), "--ids and --limit go with emq requeue only");
      expectOneLineError(emq("pause", "operated"), "emq pause takes a queue name and --url");
    } finally {
      await mq.close();
    }
  });

  test("limit and limits: one line each, exactly; a flag left out keeps its limit, none removes it", async () => {
    const url = `valkey://127.0.0.1:${plain.port}`;
    const mq = await EchoMQ.connect({ addresses: [{ host: plain.host, port: plain.port }], backend: "scripts" });
    try {
      await mq.enqueue("limited", { n: 1 });
      expect(emq("limits", "limited", "--url", url)).toEqual({ code: 0, out: '"limited" limits: none\n', err: "" });
      expect(emq("limit", "limited", "--url", url, "--concurrency", "5", "--rate", "10/1s")).toEqual({
        code: 0,
        out: '"limited" limits: at most 5 active · 10 per 1 s (burst 1)\n',
        err: "",
      });
      expect(await mq.limits("limited")).toEqual({ concurrency: 5, rate: { max: 10, perMs: 1000, burst: 1 }, parkedUntil: null });
      expect(emq("limit", "limited", "--url", url, "--rate", "100/500ms", "--burst", "4").out)
        .toBe('"limited" limits: at most 5 active · 100 per 500 ms (burst 4)\n');
      expect(emq("limit", "limited", "--url", url, "--rate", "3/m").out).toBe('"limited" limits: at most 5 active · 3 per 1 min (burst 1)\n');
      expect(emq("limit", "limited", "--url", url, "--rate", "7/2h").out).toBe('"limited" limits: at most 5 active · 7 per 2 h (burst 1)\n');
      expect(emq("limit", "limited", "--url", url, "--concurrency", "none").out).toBe('"limited" limits: 7 per 2 h (burst 1)\n');
      expect(emq("limit", "limited", "--url", url, "--rate", "none", "--concurrency", "2").out).toBe('"limited" limits: at most 2 active\n');
      expect(emq("inspect", "limited", "--url", url).out.split("\n")[4]).toBe("  limits: at most 2 active");
      const parkedAt = performance.now();
      await mq.penalize("limited", 60_000);
      const shown = emq("limits", "limited", "--url", url).out;
      // the time left is the park's less the time this took (a busy machine starts the CLI slowly)
      const tookS = Math.ceil((performance.now() - parkedAt) / 1000);
      const left = /^"limited" limits: at most 2 active · parked until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \(in (\d+) s\)\n$/.exec(shown);
      expect(left, shown).not.toBeNull();
      expect(Number(left![1])).toBeGreaterThanOrEqual(59 - tookS);
      expect(Number(left![1])).toBeLessThanOrEqual(60);
      expect(await mq.limits("limited")).toMatchObject({ concurrency: 2, rate: null });
    } finally {
      await mq.close();
    }
  });

  test("lanes: a page busiest first; pause/resume --lane and limit/limits --lane | --per-lane", async () => {
    const url = `valkey://127.0.0.1:${plain.port}`;
    const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port: plain.port }] });
    try {
      await mq.enqueueMany("laned", [1, 2, 3].map((n) => ({ n })), { lane: "a" });
      await mq.enqueue("laned", { n: 4 }, { lane: "b" });
      expect(emq("pause", "laned", "--url", url, "--lane", "b").out).toBe('paused lane "b" of "laned"\n');
      expect(emq("pause", "laned", "--url", url, "--lane", "b").out).toBe('lane "b" of "laned" was paused already\n');
      expect(emq("limit", "laned", "--url", url, "--per-lane", "--concurrency", "2").out).toBe('"laned" per-lane limits: at most 2 active\n');
      expect(emq("limit", "laned", "--url", url, "--lane", "a", "--rate", "10/1s").out)
        .toBe('"laned" lane "a" limits: 10 per 1 s (burst 1)\n');
      expect(emq("limits", "laned", "--url", url, "--lane", "b").out).toBe('"laned" lane "b" limits: none\n');
      expect(emq("lanes", "laned", "--url", url)).toEqual({
        code: 0,
        out: '"laned": 2 lane(s), 1–2 by backlog\n' +
          '  "a": 3 ready, 0 active, limits: at most 2 active · 10 per 1 s (burst 1)\n' +
          '  "b": 1 ready, 0 active, limits: at most 2 active, paused\n',
        err: "",
      });
      expect(emq("lanes", "laned", "--url", url, "--offset", "1", "--limit", "1").out)
        .toBe('"laned": 2 lane(s), 2–2 by backlog\n  "b": 1 ready, 0 active, limits: at most 2 active, paused\n');
      expect(emq("resume", "laned", "--url", url, "--lane", "b").out).toBe('resumed lane "b" of "laned"\n');
      expectOneLineError(emq("pause", "laned", "--url", url, "--lane", "a{b"), 'lane name "a{b" must not contain "{"');
      expectOneLineError(emq("lanes", "no-such-queue", "--url", url), 'no queue "no-such-queue"');
    } finally {
      await mq.close();
    }
  });

  test("lanes, --lane, --per-lane: bad usage is one line, exit 2, before any connection", () => {
    const url = `valkey://127.0.0.1:${closedPort}`;
    const refusals: Array<[string[], string]> = [
      [["limit", "q", "--lane", "a", "--per-lane", "--concurrency", "2"], "emq: --lane and --per-lane: one or the other"],
      [["limits", "q", "--lane", "a", "--per-lane"], "emq: --lane and --per-lane: one or the other"],
      [["retain", "q", "--lane", "a"], "emq: --lane goes with emq pause and emq resume only (emq limit takes it too)"],
      [["lanes", "q", "--limit", "0"], 'emq: --limit must be an integer from 1 to 1000, not "0"'],
      [["lanes", "q", "--offset", "x"], 'emq: --offset must be an integer from 0 to 9007199254740991, not "x"'],
    ];
    for (const [args, line] of refusals) {
      const r = emq(...args, "--url", url);
      expect({ args, code: r.code, out: r.out, err: r.err }).toEqual({ args, code: 2, out: "", err: `${line}\n` });
    }
  });

  test("limit: bad flags are one line naming the flag, exit 2, before any connection", () => {
    const url = `valkey://127.0.0.1:${closedPort}`; // nothing listens: a usage error comes first
    const refusals: Array<[string[], string]> = [
      [[], "emq: emq limit needs --concurrency N|none or --rate MAX/PERIOD|none (emq limits <queue> shows them)"],
      [["--concurrency", "0"], 'emq: --concurrency must be an integer from 1 to 1000000, or none; not "0"'],
      [["--concurrency", "1000001"], 'emq: --concurrency must be an integer from 1 to 1000000, or none; not "1000001"'],
      [["--concurrency", "5x"], 'emq: --concurrency must be an integer from 1 to 1000000, or none; not "5x"'],
      [["--concurrency", "nil"], 'emq: --concurrency must be an integer from 1 to 1000000, or none; not "nil"'],
      ...["10", "10/", "10/1", "0/1s", "10/0s", "10/1.5s", "10/1S", "10/25h", "1.5/1s", "/1s", "10/1d"].map((rate): [string[], string] => [
        ["--rate", rate],
        `emq: --rate must be MAX/PERIOD (MAX from 1 to 1000000; PERIOD from 1ms to 24h, as 500ms, 1s, 1m, 2h) or none; not ${JSON.stringify(rate)}`,
      ]),
      [["--rate", "10/1s", "--burst", "0"], 'emq: --burst must be an integer from 1 to 1000000; not "0"'],
      [["--burst", "2"], "emq: --burst goes with --rate MAX/PERIOD"],
      [["--concurrency", "2", "--burst", "2"], "emq: --burst goes with --rate MAX/PERIOD"],
      [["--rate", "none", "--burst", "2"], "emq: --burst goes with --rate MAX/PERIOD, not --rate none"],
    ];
    for (const [flags, line] of refusals) {
      const r = emq("limit", "limited", "--url", url, ...flags);
      expect({ flags, code: r.code, out: r.out, err: r.err }).toEqual({ flags, code: 2, out: "", err: `${line}\n` });
    }
    expectOneLineError(emq("limit", "limited", "--concurrency", "2"), "emq limit takes a queue name and --url");
    expectOneLineError(emq("limits", "limited", "--url", url, "--concurrency", "2"), "Unknown option '--concurrency'");
  });

  test("run: scheduled jobs to pending now, one line; an id not scheduled is refused whole, exit 1", async () => {
    const url = `valkey://127.0.0.1:${plain.port}`;
    const mq = await EchoMQ.connect({ addresses: [{ host: plain.host, port: plain.port }], backend: "scripts" });
    try {
      const [a, b, c] = await Promise.all([1, 2, 3].map((n) => mq.schedule("ran", { n }, { delayMs: 3_600_000 })));
      const [p] = await mq.enqueueMany("ran", [{ n: 0 }]);
      const refused = emq("run", "ran", "--url", url, "--ids", `${a},${p}`);
      expectOneLineError(refused, `ERR EMQ.RUN job is not scheduled: ${p}`);
      expect(refused.code).toBe(1);
      expect(refused.out).toBe("");
      expect(await mq.counts("ran")).toMatchObject({ pending: 1, schedule: 3 });
      expect(emq("run", "ran", "--url", url, "--ids", `${a}, ${b}`).out).toBe('moved 2 scheduled job(s) of "ran" to pending, due now\n');
      expect(await mq.counts("ran")).toMatchObject({ pending: 3, schedule: 1 });
      expect((await mq.getJob("ran", c!))!.state).toBe("scheduled");
      expectOneLineError(emq("run", "ran", "--url", url), "emq run needs --ids id,id: the scheduled jobs to run now");
      expectOneLineError(emq("run", "ran", "--url", url, "--ids", c!, "--limit", "1"), "--limit goes with emq requeue only");
      expect(emq("run", "--help").out).toContain("scheduled jobs to pending now");
    } finally {
      await mq.close();
    }
  });

  test("key --url asks the module's own verdict; without the module it says so", () => {
    const r = emq("key", "orders", "pending", "--url", `valkey://127.0.0.1:${plain.port}`);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`(native verdict from its TypeScript port (127.0.0.1:${plain.port} has no emq module))`);
  });
});

describe("with the module", () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({});
  }, 60_000);
  afterAll(async () => {
    await server.stop();
  });

  test("key --url: the module accepts a good name and refuses the empty one, exit 1", () => {
    const url = `valkey://127.0.0.1:${server.port}`;
    const good = emq("key", "orders", "pending", "--url", url);
    expect(good.code).toBe(0);
    expect(good.out).toContain("native   accepted");
    expect(good.out).toContain(`(native verdict from the module on 127.0.0.1:${server.port})`);
    const empty = emq("key", "", "pending", "--url", url);
    expect(empty.code).toBe(1);
    expect(empty.out).toMatch(/native {3}refused — the module refuses: /);
  });

  test("demo --url runs on queues of its own and leaves no key behind", async () => {
    const r = emq("demo", "--url", `valkey://127.0.0.1:${server.port}`, "--seconds", "1");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/queues emq-demo-[a-z0-9]+-orders, emq-demo-[a-z0-9]+-emails, emq-demo-[a-z0-9]+-reports/);
    expect(r.out).toContain(`dropped the demo's queues from 127.0.0.1:${server.port}`);
    const client = await GlideClient.createClient({ addresses: [{ host: server.host, port: server.port }] });
    try {
      expect(await client.dbsize()).toBe(0);
    } finally {
      client.close();
    }
  });

  test("a type no verb derives is refused by the native half", () => {
    const r = emq("key", "orders", "inbox");
    expect(r.code).toBe(1);
    expect(r.out).toContain('no verb derives a key of type "inbox"');
  });
});

function inspectLine(out: string): string {
  return out.split("\n")[0]!;
}
