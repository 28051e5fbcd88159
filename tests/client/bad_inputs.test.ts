/**
 * Every bad input a client call can be given is refused with an error that is `instanceof
 * EchoMQError` (README and PACKAGE.md promise it; a `KeyspaceError` is a `TypeError` too), and
 * nothing is written: the server's `DEBUG DIGEST` is the same after each refusal as before it.
 *
 * The walk: every call that takes a queue, with each kind of bad queue name; every call that takes
 * a job id or a job reference, with each kind of bad id; and the bad options and payloads of each
 * call — on both backends. A case that resolves (or starts something) fails: it was not refused.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EchoMQ, EchoMQError } from "../../client.ts";
import { command, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { BACKENDS } from "./_harness.ts";

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer({ module: moduleIfBuilt() });
}, 60_000);

afterAll(async () => {
  await server.stop();
});

/** A client with its types set aside: the walk passes what untyped code could. */
// deno-lint-ignore no-explicit-any
type Loose = any;

const Q = "bad-inputs";
const ID = "JOB00000000001";
const BAD_QUEUES: Record<string, unknown> = {
  "a close brace": "a}b",
  "an open brace": "a{b",
  "a NUL": "a\0b",
  "a lone surrogate": "\uD800",
  "the empty name": "",
  "a number": 42,
};
const BAD_IDS: Record<string, unknown> = {
  "a short id": "nope",
  "a lower-case namespace": "job00000000001",
  "an id one too long": "JOB000000000012",
  "a payload character outside Base62": "JOB0000000000-",
  "a number": 42,
};

/** Calls taking a queue first, each with otherwise good arguments. */
function byQueue(mq: Loose, q: unknown): Record<string, () => unknown> {
  return {
    enqueue: () => mq.enqueue(q, 1),
    submit: () => mq.submit(q, 1),
    enqueueMany: () => mq.enqueueMany(q, [1, 2]),
    schedule: () => mq.schedule(q, 1, { delayMs: 60_000 }),
    claim: () => mq.claim(q, { leaseMs: 1000 }),
    claimMany: () => mq.claimMany(q, { leaseMs: 1000, count: 2 }),
    promote: () => mq.promote(q),
    reap: () => mq.reap(q),
    counts: () => mq.counts(q),
    getJob: () => mq.getJob(q, ID),
    jobs: () => mq.jobs(q, "pending"),
    flowOf: () => mq.flowOf(q, ID),
    children: () => mq.children(q, ID),
    metrics: () => mq.metrics(q),
    cancel: () => mq.cancel(q, ID),
    remove: () => mq.remove(q, ID),
    removeMany: () => mq.removeMany(q, [ID]),
    runNow: () => mq.runNow(q, [ID]),
    requeueDead: () => mq.requeueDead(q),
    pause: () => mq.pause(q),
    resume: () => mq.resume(q),
    lanes: () => mq.lanes(q),
    isPaused: () => mq.isPaused(q),
    limit: () => mq.limit(q, { concurrency: 1 }),
    limits: () => mq.limits(q),
    penalize: () => mq.penalize(q, 100),
    findJobs: () => mq.findJobs(q, { name: "x" }),
    jobLogs: () => mq.jobLogs(q, ID),
    retain: () => mq.retain(q, { completedMax: 5 }),
    retention: () => mq.retention(q),
    drop: () => mq.drop(q),
    upsertScheduler: () => mq.upsertScheduler(q, "n", { everyMs: 60_000 }, { payload: 1 }),
    schedulers: () => mq.schedulers(q),
    removeScheduler: () => mq.removeScheduler(q, "n"),
    stats: () => mq.stats(q),
    workers: () => mq.workers(q),
    events: () => mq.events(q),
    recentEvents: () => mq.recentEvents(q),
    jobEvents: () => mq.jobEvents(q, ID),
    result: () => mq.result(q, ID, { timeoutMs: 100 }),
    queue: () => mq.queue(q),
    work: () => mq.work(q, () => {}),
    relay: () => mq.relay([q]),
    relayOnce: () => mq.relayOnce([q]),
    flow: () => mq.flow({ queue: q, payload: 1, children: [] }),
  };
}

/** Calls taking a job id or a job reference, with the id `id`. */
function byId(mq: Loose, id: unknown): Record<string, () => unknown> {
  const job = { id, queue: Q, token: 1 };
  return {
    getJob: () => mq.getJob(Q, id),
    flowOf: () => mq.flowOf(Q, id),
    children: () => mq.children(Q, id),
    cancel: () => mq.cancel(Q, id),
    remove: () => mq.remove(Q, id),
    removeMany: () => mq.removeMany(Q, [ID, id]),
    runNow: () => mq.runNow(Q, [id]),
    "requeueDead({ ids })": () => mq.requeueDead(Q, { ids: [id] }),
    jobLogs: () => mq.jobLogs(Q, id),
    jobEvents: () => mq.jobEvents(Q, id),
    result: () => mq.result(Q, id, { timeoutMs: 100 }),
    "enqueue({ id })": () => mq.enqueue(Q, 1, { id }),
    ack: () => mq.ack(job),
    retry: () => mq.retry(job, { delayMs: 0 }),
    bury: () => mq.bury(job, "r"),
    release: () => mq.release(job),
    extend: () => mq.extend(job, 1000),
    progress: () => mq.progress(job, 1),
    log: () => mq.log(job, "line"),
  };
}

/** Bad options and payloads, each call with one wrong thing. */
function byOption(mq: Loose): Record<string, () => unknown> {
  const job = { id: ID, queue: Q, token: 1 };
  return {
    "enqueue: a BigInt payload": () => mq.enqueue(Q, 1n),
    "enqueue: undefined": () => mq.enqueue(Q, undefined),
    "enqueue: options not an object": () => mq.enqueue(Q, 1, 5),
    "enqueue: a negative priority": () => mq.enqueue(Q, 1, { priority: -1 }),
    "enqueue: a fractional priority": () => mq.enqueue(Q, 1, { priority: 1.5 }),
    "enqueue: a lane with a brace": () => mq.enqueue(Q, 1, { lane: "a}b" }),
    "enqueue: a lane not a string": () => mq.enqueue(Q, 1, { lane: 7 }),
    "enqueue: a negative timeoutMs": () => mq.enqueue(Q, 1, { timeoutMs: -1 }),
    "enqueue: a dedup key with a NUL": () => mq.enqueue(Q, 1, { dedup: { key: "a\0b" } }),
    "enqueue: a dedup mode unknown": () => mq.enqueue(Q, 1, { dedup: { key: "k", mode: "merge" } }),
    "enqueue: a name not a string": () => mq.enqueue(Q, 1, { name: 5 }),
    "enqueueMany: a BigInt among payloads": () => mq.enqueueMany(Q, [1, 2n]),
    "enqueueMany: payloads not iterable": () => mq.enqueueMany(Q, 5),
    "schedule: a NaN delay": () => mq.schedule(Q, 1, { delayMs: NaN }),
    "schedule: an invalid date": () => mq.schedule(Q, 1, { at: new Date(NaN) }),
    "schedule: no when": () => mq.schedule(Q, 1, {}),
    "submit: a negative delay": () => mq.submit(Q, 1, { delayMs: -5 }),
    "claim: leaseMs 0": () => mq.claim(Q, { leaseMs: 0 }),
    "claim: no options": () => mq.claim(Q),
    "claimMany: count 0": () => mq.claimMany(Q, { leaseMs: 1000, count: 0 }),
    "claimMany: a negative blockMs": () => mq.claimMany(Q, { leaseMs: 1000, count: 1, blockMs: -1 }),
    "promote: limit 0": () => mq.promote(Q, 0),
    "reap: a fractional limit": () => mq.reap(Q, 1.5),
    "jobs: an unknown state": () => mq.jobs(Q, "sleeping"),
    "jobs: a negative offset": () => mq.jobs(Q, "pending", { offset: -1 }),
    "lanes: limit 0": () => mq.lanes(Q, { limit: 0 }),
    "pause: a lane with a brace": () => mq.pause(Q, { lane: "a{b" }),
    "limit: a negative concurrency": () => mq.limit(Q, { concurrency: -1 }),
    "limit: a rate without perMs": () => mq.limit(Q, { rate: { max: 1 } }),
    "limit: options not an object": () => mq.limit(Q, 3),
    "penalize: a negative time": () => mq.penalize(Q, -1),
    "retain: a negative completedMax": () => mq.retain(Q, { completedMax: -1 }),
    "requeueDead: ids without { ids }": () => mq.requeueDead(Q, [ID]),
    "requeueDead: limit 0": () => mq.requeueDead(Q, { limit: 0 }),
    "upsertScheduler: a BigInt payload": () => mq.upsertScheduler(Q, "n", { everyMs: 1000 }, { payload: 1n }),
    "upsertScheduler: a bad cron": () => mq.upsertScheduler(Q, "n", { cron: "not cron" }, { payload: 1 }),
    "upsertScheduler: everyMs 0": () => mq.upsertScheduler(Q, "n", { everyMs: 0 }, { payload: 1 }),
    "upsertScheduler: an unknown time zone": () => mq.upsertScheduler(Q, "n", { cron: "* * * * *", tz: "Mars/Base" }, { payload: 1 }),
    "upsertScheduler: an empty name": () => mq.upsertScheduler(Q, "", { everyMs: 1000 }, { payload: 1 }),
    "removeScheduler: a name not a string": () => mq.removeScheduler(Q, 5),
    "events: a bad from": () => mq.events(Q, { from: "yesterday" }),
    "events: a signal not an AbortSignal": () => mq.events(Q, { signal: {} }),
    "recentEvents: limit 0": () => mq.recentEvents(Q, { limit: 0 }),
    "result: a negative timeout": () => mq.result(Q, ID, { timeoutMs: -1 }),
    "metrics: options not an object": () => mq.metrics(Q, 4),
    "findJobs: query not an object": () => mq.findJobs(Q, 4),
    "ack: a BigInt result": () => mq.ack(job, 1n),
    "retry: a negative delay": () => mq.retry(job, { delayMs: -1 }),
    "bury: a reason not a string": () => mq.bury(job, 5),
    "extend: leaseMs 0": () => mq.extend(job, 0),
    "progress: a BigInt value": () => mq.progress(job, 1n),
    "log: a line not a string": () => mq.log(job, 5),
    // settleMany answers per settlement: its error is the one to check
    "settleMany: an unknown kind": () => firstError(mq.settleMany([{ kind: "zap", job }])),
    "settleMany: a settlement with a bad id": () => firstError(mq.settleMany([{ kind: "ack", job: { ...job, id: "nope" } }])),
    "settleMany: not an array": () => mq.settleMany(5),
    "work: a handler not a function": () => mq.work(Q, 5),
    "work: concurrency 0": () => mq.work(Q, () => {}, { concurrency: 0 }),
    "relay: queues not an array": () => mq.relay("q"),
    "flow: a child without a queue": () => mq.flow({ queue: Q, payload: 1, children: [{ payload: 2 }] }),
    "flow: a child's opts not an object": () => mq.flow({ queue: Q, payload: 1, children: [{ queue: Q, payload: 2, opts: "lane=a" }] }),
    "flow: a child's lane with a brace": () => mq.flow({ queue: Q, payload: 1, children: [{ queue: Q, payload: 2, opts: { lane: "a{b" } }] }),
    "flow: a child's priority past the last": () => mq.flow({ queue: Q, payload: 1, children: [{ queue: Q, payload: 2, opts: { priority: 2_097_152 } }] }),
    "flow: a child's attempts 0": () => mq.flow({ queue: Q, payload: 1, children: [{ queue: Q, payload: 2, opts: { attempts: 0 } }] }),
    "flow: a child's empty name": () => mq.flow({ queue: Q, payload: 1, children: [{ queue: Q, payload: 2, opts: { name: "" } }] }),
    "flow: a child's dedup (no option of a flow step)": () =>
      mq.flow({ queue: Q, payload: 1, children: [{ queue: Q, payload: 2, opts: { dedup: { key: "k" } } }] }),
    "flow: a grandchild's bad priority": () =>
      mq.flow({ queue: Q, payload: 1, children: [{ queue: Q, payload: 2, children: [{ queue: Q, payload: 3, opts: { priority: -1 } }] }] }),
    "flow: the parent's timeoutMs 0": () => mq.flow({ queue: Q, payload: 1, opts: { timeoutMs: 0 }, children: [{ queue: Q, payload: 2 }] }),
    "flow: the parent's opts null": () => mq.flow({ queue: Q, payload: 1, opts: null, children: [{ queue: Q, payload: 2 }] }),
    "addChildren: a child's lane with a brace": () => mq.addChildren({ queue: Q, id: ID }, [{ queue: Q, payload: 1, opts: { lane: "}" } }]),
    "addChildren: a parent with a bad id": () => mq.addChildren({ queue: Q, id: "nope" }, [{ queue: Q, payload: 1 }]),
    "seal: a parent with a bad id": () => mq.seal({ queue: Q, id: "nope" }),
    "queue(): a number": () => mq.queue(7),
  };
}

/** The first error of a per-item answer (`settleMany`'s), thrown; none: resolves. */
async function firstError(answers: Promise<Array<Error | null>>): Promise<void> {
  const e = (await answers).find((a) => a !== null);
  if (e !== undefined) throw e;
}

/** What one call did: the error it raised (thrown or rejected), or "resolved" (it was not refused). */
async function outcome(run: () => unknown): Promise<unknown> {
  let value: unknown;
  try {
    value = run();
    if (value instanceof Promise) value = await value;
    // an iterable of events: its first step (the refusal may come at the first read)
    const it = value as { [Symbol.asyncIterator]?: () => AsyncIterator<unknown> } | null;
    if (it !== null && typeof it === "object" && typeof it[Symbol.asyncIterator] === "function") {
      const iterator = it[Symbol.asyncIterator]!();
      const first = iterator.next();
      const timer = new Promise((done) => setTimeout(done, 200, "waiting"));
      const step = await Promise.race([first, timer]);
      await iterator.return?.();
      if (step !== "waiting") return "resolved";
    }
  } catch (e) {
    return e;
  }
  // something started (a worker, a relay): stop it
  const started = value as { close?: () => Promise<void>; stop?: () => Promise<void> } | null;
  if (started !== null && typeof started === "object") {
    if (typeof started.close === "function") await started.close();
    else if (typeof started.stop === "function") await started.stop();
  }
  return "resolved";
}

/** An outcome as a comparable record: every error an `EchoMQError` with a rule, a keyspace one a `TypeError` too. */
function shape(e: unknown): unknown {
  if (!(e instanceof Error)) return { refused: false, got: String(e) };
  return {
    refused: true,
    echomq: e instanceof EchoMQError,
    rule: typeof (e as EchoMQError).rule === "string",
    typeError: e instanceof TypeError,
  };
}

test("every bad connect option is refused with an EchoMQError, before any connection", async () => {
  const at = [{ host: server.host, port: server.port }];
  const cases: Record<string, unknown> = {
    "options not an object": 5,
    "a url of another scheme": { url: `http://127.0.0.1:${server.port}` },
    "a url with a port out of range": { url: "valkey://127.0.0.1:99999" },
    "a url that is not one": { url: "::not a url::" },
    "a host holding a port": { addresses: [{ host: `127.0.0.1:${server.port}` }] },
    "a port out of range": { addresses: [{ host: "127.0.0.1", port: 0 }] },
    "addresses not an array": { addresses: "127.0.0.1" },
    "a negative requestTimeout": { addresses: at, requestTimeout: -1 },
    "an unknown backend": { addresses: at, backend: "lua" },
    "a codec without encode": { addresses: at, codec: { name: "x" } },
    "a newId not a function": { addresses: at, newId: 5 },
    "a warn not a function": { addresses: at, warn: "console" },
  };
  const failed: Array<{ name: string; got: unknown }> = [];
  for (const [name, options] of Object.entries(cases)) {
    const e = await outcome(() => EchoMQ.connect(options as never));
    const got = shape(e);
    if (JSON.stringify(got) !== JSON.stringify({ refused: true, echomq: true, rule: true, typeError: false })) {
      failed.push({ name, got: { got, error: e instanceof Error ? `${e.name}: ${e.message}` : e } });
    }
  }
  expect(failed).toEqual([]);
}, 60_000);

for (const backend of BACKENDS) {
  describe(`bad inputs (${backend})`, () => {
    test("every bad input is refused with an EchoMQError, and nothing is written", async () => {
      const mq: Loose = await EchoMQ.connect({ addresses: [{ host: server.host, port: server.port }], backend });
      const cases: Array<[string, () => unknown]> = [];
      for (const [what, q] of Object.entries(BAD_QUEUES)) {
        for (const [call, run] of Object.entries(byQueue(mq, q))) cases.push([`${call}: ${what} for the queue`, run]);
      }
      for (const [what, id] of Object.entries(BAD_IDS)) {
        for (const [call, run] of Object.entries(byId(mq, id))) cases.push([`${call}: ${what}`, run]);
      }
      cases.push(...Object.entries(byOption(mq)));
      const failed: Array<{ name: string; got: unknown }> = [];
      try {
        for (const [name, run] of cases) {
          const before = await command(server.port, ["DEBUG", "DIGEST"]);
          const e = await outcome(run);
          const after = await command(server.port, ["DEBUG", "DIGEST"]);
          const keyspaceError = e instanceof Error && e.name === "KeyspaceError";
          const want = { refused: true, echomq: true, rule: true, typeError: keyspaceError, written: false };
          const got = { ...(shape(e) as object), written: after !== before };
          if (JSON.stringify(got) !== JSON.stringify(want)) {
            failed.push({ name, got: { ...got, error: e instanceof Error ? `${e.name}: ${e.message}` : e } });
          }
        }
      } finally {
        await mq.close();
      }
      console.log(`[bad inputs ${backend}] ${cases.length} cases, ${failed.length} not refused with an EchoMQError or wrote`);
      expect(failed).toEqual([]);
      expect(cases.length).toBeGreaterThan(300);
    }, 120_000);
  });
}
