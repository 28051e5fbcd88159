/**
 * The native module on one standalone server: every verb's happy path, every refusal class with
 * its exact text and an unchanged DEBUG DIGEST, the order of the steps, the configurations, and
 * the `{emq}:version` fence.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import type { GlideClient } from "@valkey/valkey-glide";
import { type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import {
  call,
  digest,
  expectOk,
  expectRefused,
  jobId,
  type Outcome,
  queue,
  requireModule,
  row,
  sleep,
  standalone,
  type VerbName,
  VERBS,
  wellFormed,
} from "./_native.ts";

let server: ServerHandle;
let db: GlideClient;

beforeAll(async () => {
  server = await startServer({ module: requireModule() });
  db = await standalone(server.port);
}, 60_000);

afterAll(async () => {
  db?.close();
  await server?.stop();
});

beforeEach(async () => {
  expectOk(await call(db, ["FLUSHALL"]));
});

const run = (args: string[]): Promise<Outcome> => call(db, args);

/** Runs `args` and asserts the refusal `text` with the keyspace unchanged. */
async function refuses(args: string[], text: string): Promise<void> {
  const before = await digest(db);
  expectRefused(await run(args), text);
  expect(await digest(db)).toBe(before);
}

async function zscore(key: string, member: string): Promise<number | null> {
  const out = expectOk(await run(["ZSCORE", key, member]));
  return out === null ? null : Number(out);
}

async function lrange(key: string): Promise<string[]> {
  return (expectOk(await run(["LRANGE", key, "0", "-1"])) as unknown[]).map(String);
}

describe("happy paths", () => {
  const q = queue("orders");
  const [a, b, c] = [jobId(1), jobId(2), jobId(3)];

  test("ENQUEUE writes the row and pushes on the head of pending", async () => {
    const t0 = Date.now();
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "pay-a"]), 1);
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(b), q.pending, b, "pay-b"]), 1);
    const r = await row(db, q.row(a));
    expect(Object.keys(r).sort()).toEqual(["attempts", "created_ms", "payload", "state"]);
    expect(r).toMatchObject({ state: "pending", payload: "pay-a", attempts: "0" });
    expect(Math.abs(Number(r.created_ms) - t0)).toBeLessThan(5000);
    expect(await lrange(q.pending)).toEqual([b, a]);
  });

  test("SCHEDULE writes a scheduled row and the score, numbers canonical", async () => {
    expectOk(await run(["EMQ.SCHEDULE", "2", q.row(a), q.schedule, a, "007", "pay"]), 1);
    const r = await row(db, q.row(a));
    expect(Object.keys(r).sort()).toEqual(["attempts", "created_ms", "due_ms", "payload", "state"]);
    expect(r).toMatchObject({ state: "scheduled", payload: "pay", attempts: "0", due_ms: "7" });
    expect(await zscore(q.schedule, a)).toBe(7);
  });

  test("PROMOTE moves due ids (ascending, at most limit) and skips future ones", async () => {
    const far = String(Date.now() + 3_600_000);
    expectOk(await run(["EMQ.SCHEDULE", "2", q.row(a), q.schedule, a, "2", "x"]), 1);
    expectOk(await run(["EMQ.SCHEDULE", "2", q.row(b), q.schedule, b, "1", "x"]), 1);
    expectOk(await run(["EMQ.SCHEDULE", "2", q.row(c), q.schedule, c, far, "x"]), 1);
    expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "1"]), 1);
    expect(await lrange(q.pending)).toEqual([b]);
    expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]), 1);
    expect(await lrange(q.pending)).toEqual([a, b]);
    expect((await row(db, q.row(a))).state).toBe("pending");
    expect(await zscore(q.schedule, c)).toBe(Number(far));
    expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]), 0);
  });

  test("CLAIM pops the tail into active and counts the attempt; nil when empty", async () => {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "pay-a"]), 1);
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(b), q.pending, b, "pay-b"]), 1);
    const t0 = Date.now();
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]), [a, "pay-a", 1]);
    const r = await row(db, q.row(a));
    expect(r).toMatchObject({ state: "active", attempts: "1" });
    const deadline = await zscore(q.active, a);
    expect(Number(r.deadline_ms)).toBe(deadline!);
    expect(Math.abs(deadline! - (t0 + 60000))).toBeLessThan(5000);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]), [b, "pay-b", 1]);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]), null);
  });

  test("CLAIM drops tail ids whose row is missing; only orphans → nil, list emptied", async () => {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "pay-a"]), 1);
    expectOk(await run(["RPUSH", q.pending, jobId(90), jobId(91)]));
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "1000"]), [a, "pay-a", 1]);
    expect(expectOk(await run(["EXISTS", q.pending]))).toBe(0);
    expectOk(await run(["RPUSH", q.pending, jobId(92), jobId(93)]));
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "1000"]), null);
    expect(expectOk(await run(["EXISTS", q.pending]))).toBe(0);
  });

  test("ACK removes the id from active and deletes the row", async () => {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "p"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
    expectOk(await run(["EMQ.ACK", "2", q.row(a), q.active, a]), 1);
    expect(expectOk(await run(["EXISTS", q.row(a), q.active, q.pending]))).toBe(0);
  });

  test("RETRY → schedule at now+delay with the reason; PROMOTE and CLAIM again count attempts", async () => {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "p"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
    const t0 = Date.now();
    expectOk(await run(["EMQ.RETRY", "3", q.row(a), q.active, q.schedule, a, "5", "boom"]), 1);
    const r = await row(db, q.row(a));
    expect(r).toMatchObject({ state: "scheduled", reason: "boom", attempts: "1" });
    expect(Number(r.due_ms)).toBe((await zscore(q.schedule, a))!);
    expect(Math.abs(Number(r.due_ms) - (t0 + 5))).toBeLessThan(5000);
    expect(await zscore(q.active, a)).toBeNull();
    await sleep(20);
    expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]), [a, "p", 2]);
  });

  test("BURY → dead at now with reason and buried_ms", async () => {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "p"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
    expectOk(await run(["EMQ.BURY", "3", q.row(a), q.active, q.dead, a, "gave up"]), 1);
    const r = await row(db, q.row(a));
    expect(r).toMatchObject({ state: "dead", reason: "gave up" });
    expect(Number(r.buried_ms)).toBe((await zscore(q.dead, a))!);
    expect(expectOk(await run(["EXISTS", q.active]))).toBe(0);
  });

  test("REAP returns expired leases to the tail of pending (claimed next)", async () => {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "pa"]), 1);
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(b), q.pending, b, "pb"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "1"]), [a, "pa", 1]);
    await sleep(20);
    expectOk(await run(["EMQ.REAP", "3", q.active, q.pending, q.base, "10"]), 1);
    expect(await lrange(q.pending)).toEqual([b, a]);
    expect((await row(db, q.row(a))).state).toBe("pending");
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]), [a, "pa", 2]);
    expectOk(await run(["EMQ.REAP", "3", q.active, q.pending, q.base, "10"]), 0);
  });

  test("PROMOTE/REAP of ids whose row is missing still move the id", async () => {
    expectOk(await run(["ZADD", q.schedule, "1", jobId(50)]));
    expectOk(await run(["EMQ.PROMOTE", "3", q.schedule, q.pending, q.base, "10"]), 1);
    expect(await lrange(q.pending)).toEqual([jobId(50)]);
    expect(expectOk(await run(["EXISTS", q.row(jobId(50))]))).toBe(0);
  });
});

describe("refusals write nothing", () => {
  const q = queue("orders");
  const other = queue("other");
  const [a, b] = [jobId(1), jobId(2)];

  /** A populated keyspace: a pending job, an active job, a scheduled one. */
  async function populate(): Promise<void> {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "pa"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(b), q.pending, b, "pb"]), 1);
    expectOk(await run(["EMQ.SCHEDULE", "2", q.row(jobId(3)), q.schedule, jobId(3), "1", "ps"]), 1);
  }

  test("the exact case: empty queue name on ENQUEUE", async () => {
    await populate();
    await refuses(
      ["EMQ.ENQUEUE", "2", "emq:{}:job:JOB0Nb1VTbfnu4", "emq:{}:pending", "JOB0Nb1VTbfnu4", "x"],
      "ERR EMQ.ENQUEUE keys do not match the wire-4 layout",
    );
    expect(expectOk(await run(["EXISTS", "emq:{}:job:JOB0Nb1VTbfnu4", "emq:{}:pending"]))).toBe(0);
  });

  for (const verb of VERBS) {
    test(`${verb}: shape`, async () => {
      await populate();
      const good = wellFormed(verb, q, a);
      const arity = `ERR wrong number of arguments for 'EMQ.${verb}' command`;
      const n = Number(good[1]);
      await refuses([good[0]!, String(n + 1), ...good.slice(2)], arity);
      await refuses([good[0]!, String(n - 1), ...good.slice(2)], arity);
      await refuses([good[0]!, `0${n}`, ...good.slice(2)], arity);
      await refuses([good[0]!, "x", ...good.slice(2)], arity);
      await refuses([...good, "extra"], arity);
      await refuses(good.slice(0, -1), arity);
      await refuses(good.slice(0, 2), arity);
    });

    test(`${verb}: layout`, async () => {
      await populate();
      const layout = `ERR EMQ.${verb} keys do not match the wire-4 layout`;
      const good = wellFormed(verb, q, a);
      const n = Number(good[1]);
      for (let i = 0; i < n; i++) {
        // key i of another queue
        const mixed = [...good];
        mixed[2 + i] = wellFormed(verb, other, a)[2 + i]!;
        await refuses(mixed, layout);
        // key i with one byte more
        const longer = [...good];
        longer[2 + i] = `${good[2 + i]}x`;
        await refuses(longer, layout);
      }
      // keys swapped
      const swapped = [...good];
      [swapped[2], swapped[3]] = [good[3]!, good[2]!];
      await refuses(swapped, layout);
      // the empty name, and names the grammar refuses
      for (const bad of ["", "a}b", "a{b"]) await refuses(wellFormed(verb, queue(bad), a), layout);
      await refuses(wellFormed(verb, queue("a\u0000b"), a), layout);
      // a foreign key shape
      const foreign = [...good];
      foreign[2] = "bull:orders:wait";
      await refuses(foreign, layout);
      if (["ENQUEUE", "SCHEDULE", "ACK", "RETRY", "BURY"].includes(verb)) {
        // the row of another id than the argument
        const otherRow = [...good];
        otherRow[2] = q.row(b);
        await refuses(otherRow, layout);
      }
    });

    if (["ENQUEUE", "SCHEDULE", "ACK", "RETRY", "BURY"].includes(verb)) {
      test(`${verb}: id gate`, async () => {
        await populate();
        for (const id of ["ABC0Nb1VTbfnu4", "job0Nb1VTbfnu4", "JO", ""]) {
          await refuses(wellFormed(verb, q, id), `ERR EMQ.${verb} id must be a JOB id`);
        }
      });
    }
  }

  const numberCases: Array<[VerbName, number, string, boolean]> = [
    ["SCHEDULE", 5, "due_ms", false],
    ["CLAIM", 5, "lease_ms", true],
    ["RETRY", 6, "delay_ms", true],
    ["PROMOTE", 5, "limit", true],
    ["REAP", 5, "limit", true],
  ];
  for (const [verb, pos, field, positive] of numberCases) {
    test(`${verb}: malformed ${field}`, async () => {
      await populate();
      const text = `ERR EMQ.${verb} ${field} must be a ${positive ? "positive" : "non-negative"} integer`;
      const bad = ["-1", "+1", " 1", "1 ", "1.5", "1e3", "abc", "", "1000000000000000", "0x1"];
      if (positive) bad.push("0", "000");
      for (const value of bad) {
        const args = wellFormed(verb, q, a);
        args[pos] = value;
        await refuses(args, text);
      }
      const ok = wellFormed(verb, q, verb === "SCHEDULE" ? jobId(40) : a);
      ok[pos] = "999999999999999";
      expect("err" in (await run(ok))).toBe(false);
    });
  }

  test("payload over emq.max-payload (default and configured)", async () => {
    await populate();
    const big = "x".repeat(1048577);
    await refuses(["EMQ.ENQUEUE", "2", q.row(jobId(9)), q.pending, jobId(9), big], "ERR EMQ.ENQUEUE payload exceeds 1048576 bytes");
    await refuses(
      ["EMQ.SCHEDULE", "2", q.row(jobId(9)), q.schedule, jobId(9), "5", big],
      "ERR EMQ.SCHEDULE payload exceeds 1048576 bytes",
    );
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(jobId(10)), q.pending, jobId(10), "x".repeat(1048576)]), 1);
    expectOk(await run(["CONFIG", "SET", "emq.max-payload", "10"]));
    try {
      await refuses(["EMQ.ENQUEUE", "2", q.row(jobId(11)), q.pending, jobId(11), "x".repeat(11)], "ERR EMQ.ENQUEUE payload exceeds 10 bytes");
      expectOk(await run(["EMQ.ENQUEUE", "2", q.row(jobId(11)), q.pending, jobId(11), "x".repeat(10)]), 1);
    } finally {
      expectOk(await run(["CONFIG", "SET", "emq.max-payload", "1048576"]));
    }
  });

  test("reason over 4096 bytes", async () => {
    await populate();
    const long = "r".repeat(4097);
    await refuses(["EMQ.RETRY", "3", q.row(a), q.active, q.schedule, a, "5", long], "ERR EMQ.RETRY reason exceeds 4096 bytes");
    await refuses(["EMQ.BURY", "3", q.row(a), q.active, q.dead, a, long], "ERR EMQ.BURY reason exceeds 4096 bytes");
    expectOk(await run(["EMQ.BURY", "3", q.row(a), q.active, q.dead, a, "r".repeat(4096)]), 1);
  });

  test("duplicate id", async () => {
    await populate();
    await refuses(["EMQ.ENQUEUE", "2", q.row(b), q.pending, b, "again"], "ERR EMQ.ENQUEUE duplicate id");
    await refuses(["EMQ.SCHEDULE", "2", q.row(b), q.schedule, b, "1", "again"], "ERR EMQ.SCHEDULE duplicate id");
    await refuses(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "again"], "ERR EMQ.ENQUEUE duplicate id");
  });

  test("job not in active", async () => {
    await populate();
    for (const id of [b, jobId(77)]) {
      await refuses(["EMQ.ACK", "2", q.row(id), q.active, id], "ERR EMQ.ACK job is not active");
      await refuses(["EMQ.RETRY", "3", q.row(id), q.active, q.schedule, id, "5", "r"], "ERR EMQ.RETRY job is not active");
      await refuses(["EMQ.BURY", "3", q.row(id), q.active, q.dead, id, "r"], "ERR EMQ.BURY job is not active");
    }
    // in active but its row is gone
    expectOk(await run(["ZADD", q.active, "1", jobId(78)]));
    await refuses(["EMQ.ACK", "2", q.row(jobId(78)), q.active, jobId(78)], "ERR EMQ.ACK job is not active");
  });

  test("wrong Valkey type of each declared key, and of the rows CLAIM/PROMOTE/REAP touch", async () => {
    const WT = "WRONGTYPE Operation against a key holding the wrong kind of value";
    for (const verb of VERBS) {
      const good = wellFormed(verb, q, a);
      const n = Number(good[1]);
      for (let i = 0; i < n; i++) {
        const key = good[2 + i]!;
        if (key === q.base) continue; // the base is never opened
        expectOk(await run(["FLUSHALL"]));
        await populate();
        expectOk(await run(["DEL", key]));
        expectOk(await run(["SET", key, "not-mine"]));
        await refuses(good, WT);
      }
    }
    // an existing row (hash) with a pending key of the wrong type is WRONGTYPE, not duplicate
    expectOk(await run(["FLUSHALL"]));
    await populate();
    expectOk(await run(["DEL", q.pending]));
    expectOk(await run(["SADD", q.pending, "x"]));
    await refuses(["EMQ.ENQUEUE", "2", q.row(b), q.pending, b, "p"], WT);
    // CLAIM: the first existing row from the tail is not a hash (orphans before it are not dropped)
    expectOk(await run(["FLUSHALL"]));
    expectOk(await run(["RPUSH", q.pending, jobId(5), jobId(6)]));
    expectOk(await run(["SET", q.row(jobId(5)), "x"]));
    await refuses(wellFormed("CLAIM", q, a), WT);
    // PROMOTE / REAP: a due id whose row is not a hash
    expectOk(await run(["FLUSHALL"]));
    expectOk(await run(["ZADD", q.schedule, "1", jobId(5), "2", jobId(6)]));
    expectOk(await run(["ZADD", q.active, "1", jobId(5), "2", jobId(6)]));
    expectOk(await run(["SET", q.row(jobId(6)), "x"]));
    await refuses(wellFormed("PROMOTE", q, a), WT);
    await refuses(wellFormed("REAP", q, a), WT);
  });

  test("CLAIM of a row whose attempts is not an integer", async () => {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(a), q.pending, a, "p"]), 1);
    expectOk(await run(["HSET", q.row(a), "attempts", "many"]));
    await refuses(wellFormed("CLAIM", q, a), "ERR hash value is not an integer");
  });

  test("steps run in order: shape, layout, fence, gates, domain", async () => {
    await populate();
    // shape before layout
    await refuses(["EMQ.ACK", "3", "nope", q.active, a], "ERR wrong number of arguments for 'EMQ.ACK' command");
    // layout before gates
    await refuses(["EMQ.ACK", "2", "nope", q.active, "bad"], "ERR EMQ.ACK keys do not match the wire-4 layout");
    // gates before domain: a not-active id that also fails the gate
    await refuses(["EMQ.ACK", "2", q.row("bad"), q.active, "bad"], "ERR EMQ.ACK id must be a JOB id");
    expectOk(await run(["SET", "{emq}:version", "3"]));
    try {
      // layout before fence
      await refuses(["EMQ.ACK", "2", "nope", q.active, a], "ERR EMQ.ACK keys do not match the wire-4 layout");
      // fence before gates
      await refuses(["EMQ.ACK", "2", q.row("bad"), q.active, "bad"], "ERR EMQ.ACK fenced: this server speaks wire 3, not wire 4");
    } finally {
      expectOk(await run(["DEL", "{emq}:version"]));
    }
  });
});

describe("fence", () => {
  const q = queue("fenced");
  const id = jobId(1);

  /** A call of `verb` that would succeed unfenced (given the state set up below). */
  function callOf(verb: VerbName): string[] {
    return wellFormed(verb, q, verb === "ENQUEUE" || verb === "SCHEDULE" ? jobId(2) : id);
  }

  async function setup(): Promise<void> {
    expectOk(await run(["EMQ.ENQUEUE", "2", q.row(id), q.pending, id, "p"]), 1);
    expectOk(await run(["EMQ.CLAIM", "3", q.pending, q.active, q.base, "60000"]));
  }

  test("{emq}:version = 3 refuses every verb and writes nothing", async () => {
    await setup();
    expectOk(await run(["SET", "{emq}:version", "3"]));
    for (const verb of VERBS) {
      await refuses(callOf(verb), `ERR EMQ.${verb} fenced: this server speaks wire 3, not wire 4`);
    }
  });

  test("emq.wire = 3 refuses every verb and writes nothing", async () => {
    await setup();
    expectOk(await run(["CONFIG", "SET", "emq.wire", "3"]));
    try {
      for (const verb of VERBS) {
        await refuses(callOf(verb), `ERR EMQ.${verb} fenced: this server speaks wire 3, not wire 4`);
      }
    } finally {
      expectOk(await run(["CONFIG", "SET", "emq.wire", "4"]));
    }
  });

  test("{emq}:version = 4, absent, or not a string: unfenced", async () => {
    await setup();
    expectOk(await run(["SET", "{emq}:version", "4"]));
    expectOk(await run(callOf("ENQUEUE")), 1);
    expectOk(await run(["DEL", "{emq}:version"]));
    expectOk(await run(callOf("PROMOTE")), 0);
    expectOk(await run(["HSET", "{emq}:version", "wire", "3"]));
    expectOk(await run(callOf("ACK")), 1);
  });

  test("the fence value is reported as found", async () => {
    expectOk(await run(["SET", "{emq}:version", "5-beta"]));
    await refuses(callOf("ENQUEUE"), "ERR EMQ.ENQUEUE fenced: this server speaks wire 5-beta, not wire 4");
  });
});

describe("registration", () => {
  test("configs, flags, key specs and ACL categories", async () => {
    const cfg = expectOk(await run(["CONFIG", "GET", "emq.*"]));
    const flat = JSON.stringify(cfg);
    expect(flat).toContain("emq.wire");
    expect(flat).toContain("emq.max-payload");
    for (const verb of VERBS) {
      const info = JSON.stringify(expectOk(await run(["COMMAND", "INFO", `emq.${verb.toLowerCase()}`])));
      expect(info).toContain("write");
      expect(info).toContain("denyoom");
      expect(info).toContain("movablekeys");
      expect(info).toContain("@emq");
      expect(info).toContain("keynum");
      expect(info).toContain("-2");
    }
  });

  test("COMMAND GETKEYS lists each verb's declared keys", async () => {
    const q = queue("orders");
    for (const verb of VERBS) {
      const args = wellFormed(verb, q, jobId(1));
      const keys = expectOk(await run(["COMMAND", "GETKEYS", ...args])) as unknown[];
      expect(keys.map(String)).toEqual(args.slice(2, 2 + Number(args[1])));
    }
  });
});
