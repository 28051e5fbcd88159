/**
 * Results without a server: how a result is encoded for ACK (`encodeResult`: JSON, `undefined`
 * none, the byte limit, no JSON form), how a completed row reads back (`jobInfo`), how the server's
 * `result` refusal is typed, and what a worker sends for its handlers' outcomes (a fake worker
 * client): the return value with the ack, a result too large as a failed attempt in the same
 * settle batch as the others' acks.
 */
import { describe, expect, test } from "bun:test";
import { EncodedResult, encodeResult } from "../../lib/client/batch.ts";
import { wireError } from "../../lib/client/errors.ts";
import { jobInfo } from "../../lib/client/info.ts";
import { json } from "../../lib/client/codec.ts";
import { EchoMQError, type Job, MAX_PAYLOAD_BYTES, ResultTooLargeError, type Settlement, WireError, Worker, type WorkerClient } from "../../client.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import type { JobId } from "../../mod.ts";

const ID = "JOB00000000001";

describe("encodeResult", () => {
  test("JSON of the value; undefined (or a value JSON has no text for) is the empty result", () => {
    expect(encodeResult(ID, undefined)).toBe("");
    expect(encodeResult(ID, () => 1)).toBe("");
    expect(encodeResult(ID, Symbol("s"))).toBe("");
    expect(encodeResult(ID, null)).toBe("null");
    expect(encodeResult(ID, 0)).toBe("0");
    expect(encodeResult(ID, "")).toBe('""');
    expect(encodeResult(ID, { a: [1, "é"], d: new Date(0) })).toBe('{"a":[1,"é"],"d":"1970-01-01T00:00:00.000Z"}');
    expect(encodeResult(ID, new EncodedResult('{"as":"sent"}'))).toBe('{"as":"sent"}');
  });

  test("at most MAX_PAYLOAD_BYTES of UTF-8: past it a ResultTooLargeError naming the job, the size and the limit", () => {
    expect(encodeResult(ID, "x".repeat(MAX_PAYLOAD_BYTES - 2))).toHaveLength(MAX_PAYLOAD_BYTES);
    const e = (() => {
      try {
        encodeResult(ID, "x".repeat(MAX_PAYLOAD_BYTES - 1));
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(ResultTooLargeError);
    expect(e).toBeInstanceOf(EchoMQError);
    expect(e).toMatchObject({ name: "ResultTooLargeError", rule: "result", id: ID, bytes: MAX_PAYLOAD_BYTES + 1, limit: MAX_PAYLOAD_BYTES });
    expect((e as Error).message).toBe(`result of ${ID}: ${MAX_PAYLOAD_BYTES + 1} bytes of JSON, more than the ${MAX_PAYLOAD_BYTES} a result may have`);
    // bytes, not characters: "é" is two
    expect(() => encodeResult(ID, "é".repeat(MAX_PAYLOAD_BYTES / 2))).toThrow(ResultTooLargeError);
  });

  test("a value JSON cannot encode: an EchoMQError of rule result", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const v of [1n, cycle]) {
      expect(() => encodeResult(ID, v)).toThrow(EchoMQError);
      try {
        encodeResult(ID, v);
      } catch (e) {
        expect(e).toMatchObject({ rule: "result" });
        expect((e as Error).message).toStartWith(`result of ${ID}: no JSON form: `);
      }
    }
  });
});

test("the server's result refusal is a gate WireError", () => {
  const text = renderRefusal("result", "EMQ.ACK", { limit: String(MAX_PAYLOAD_BYTES) });
  expect(text).toBe(`ERR EMQ.ACK result exceeds ${MAX_PAYLOAD_BYTES} bytes`);
  const e = wireError("EMQ.ACK", new Error(`An error was signalled by the server: - ResponseError: ${text.slice(4)}`));
  expect(e).toBeInstanceOf(WireError);
  expect(e).toMatchObject({ rule: "gate", verb: "EMQ.ACK", text });
});

describe("jobInfo of a completed row", () => {
  const enc = new TextEncoder();
  const row = (fields: Record<string, string>) => new Map(Object.entries(fields).map(([k, v]) => [k, enc.encode(v)]));
  const base = { payload: '{"n":1}', attempts: "2", created_ms: "1000", reason: "Error: once" };

  test("state completed, the result decoded, finishedAt; no lease", () => {
    const info = jobInfo("q", ID as JobId, row({ ...base, state: "completed", finished_ms: "2000", result: '{"ok":[1,2]}' }), json<{ n: number }>())!;
    expect(info as unknown).toEqual({
      id: ID,
      queue: "q",
      state: "completed",
      attempts: 2,
      payload: { n: 1 },
      createdAt: 1000,
      reason: "Error: once",
      finishedAt: 2000,
      result: { ok: [1, 2] },
    });
  });

  test("no result field: no result; null is a result; text that is not JSON comes back as text", () => {
    const none = jobInfo("q", ID as JobId, row({ ...base, state: "completed", finished_ms: "2000" }), json())!;
    expect(none).not.toHaveProperty("result");
    expect(jobInfo("q", ID as JobId, row({ ...base, state: "completed", result: "null" }), json())).toHaveProperty("result", null);
    expect(jobInfo("q", ID as JobId, row({ ...base, state: "completed", result: "not json {" }), json())!.result).toBe("not json {");
  });

  test("a result or finish time on a row in another state is not shown", () => {
    const other = jobInfo("q", ID as JobId, row({ ...base, state: "pending", finished_ms: "2000", result: "1" }), json())!;
    expect(other).not.toHaveProperty("result");
    expect(other).not.toHaveProperty("finishedAt");
  });
});

describe("a worker's settles", () => {
  type P = { n: number };
  /** A fake worker client: hands out `jobs` once, records every settle batch. */
  function fake(jobs: Array<Job<P>>, batches: Settlement[][]): WorkerClient<P> {
    let given = false;
    return {
      backend: "scripts",
      dedicated: () =>
        Promise.resolve({
          claim: () => {
            const out = given ? [] : jobs;
            given = true;
            return Promise.resolve({ nextMs: 0, jobs: out });
          },
          wake: () => new Promise((r) => setTimeout(r, 20)),
          unblock: () => Promise.resolve(),
          close: () => {},
        }),
      settleMany: (s) => {
        batches.push([...s]);
        return Promise.resolve(s.map(() => null));
      },
      extend: () => Promise.resolve(),
      progress: () => Promise.resolve(),
      reap: () => Promise.resolve(0),
    };
  }
  const job = (n: number): Job<P> => ({ id: `JOB0000000000${n}` as JobId, queue: "q", token: n, attempts: 1, payload: { n } });

  test("the return value rides with the ack; a result too large fails its attempt in the same batch; undefined sends none", async () => {
    const batches: Settlement[][] = [];
    let release!: () => void;
    const barrier = new Promise<void>((r) => (release = r));
    let started = 0;
    const errors: unknown[] = [];
    const worker = new Worker<P>(
      fake([job(1), job(2), job(3), job(4)], batches),
      "q",
      async (j) => {
        started++;
        await barrier;
        if (j.payload.n === 1) return { doubled: 2 };
        if (j.payload.n === 2) return "x".repeat(MAX_PAYLOAD_BYTES);
        if (j.payload.n === 3) return undefined;
        return 1n; // no JSON form: a failed attempt too
      },
      { concurrency: 4, maxAttempts: 3, backoff: 7, blockMs: 50, onError: (e) => errors.push(e) },
      () => {},
    );
    try {
      while (started < 4) await new Promise((r) => setTimeout(r, 5));
      release();
      while (batches.length === 0) await new Promise((r) => setTimeout(r, 5));
    } finally {
      await worker.stop();
    }
    expect(errors).toEqual([]);
    expect(batches).toHaveLength(1);
    const byId = new Map(batches[0]!.map((s) => [s.job.id, s]));
    const first = byId.get(job(1).id)!;
    expect(first.kind).toBe("ack");
    expect(encodeResult(first.job.id, (first as { result?: unknown }).result)).toBe('{"doubled":2}');
    const big = byId.get(job(2).id)!;
    expect(big).toMatchObject({ kind: "retry", delayMs: 7 });
    expect((big as { reason: string }).reason).toStartWith(`ResultTooLargeError: result of ${job(2).id}: ${MAX_PAYLOAD_BYTES + 2} bytes of JSON`);
    const none = byId.get(job(3).id)!;
    expect(none.kind).toBe("ack");
    expect(none).not.toHaveProperty("result");
    const bigint = byId.get(job(4).id)!;
    expect(bigint.kind).toBe("retry");
    expect((bigint as { reason: string }).reason).toStartWith(`EchoMQError: result of ${job(4).id}: no JSON form: `);
    expect([worker.completed, worker.failed]).toEqual([2, 2]);
  });
});
