/**
 * Differential test: random sequences of wire calls (valid and malformed arguments alike) run
 * against the Lua twin and the native module side by side, on twin queues of one server. Every
 * reply and the resulting keyspaces must be identical (time fields normalised). Runs only when
 * libemq.so is built and registers its commands.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { keyspace } from "../../mod.ts";
import { type Verb, wireCall } from "../../lib/wire/mod.ts";
import {
  type BackendKind,
  dump,
  MODULE_WORKS,
  type Outcome,
  sleep,
  TOPOLOGIES,
  wire,
  useSites,
  wireArgv,
  wireBatch,
} from "./_harness.ts";

const IDS = ["JOB00000000001", "JOB00000000002", "JOB00000000003", "JOB00000000004", "XOB00000000001"];
const JUNK = ["0", "-1", "", "1.5", "abc", " 1", "+1", "1000000000000000"];
/** Tokens: the first claims' tokens, and junk. */
const TOKENS = ["1", "2", "3", "4", "5", "6", "007", ...JUNK];
/** Limits and counts: any value is deterministic. */
const LIMITS = ["1", "2", "007", "999999999999999", ...JUNK];
/**
 * Leases and delays: 30 ms expires only across a SLEEP step (40 ms), never between the two twins'
 * calls of one step, so both twins see the same expiries.
 */
const DURATIONS = ["030", "60000", "999999999999999", ...JUNK];
const DUES = ["1000", "007", "900000000000000", ...JUNK];
const TEXTS = ["", "p", "héllo", "r".repeat(4096), "r".repeat(4097)];
/** Scheduler names (the name rule), specs and missed-run bounds, valid and not. */
const NAMES = ["s", "t", "a{b", "", "n".repeat(1025)];
const SPECS = ["every 100", "every 200", "cron * * * * *", "x".repeat(1025)];
const MAXES = ["0", "1", "5", "10001", ...JUNK];

/** One job's group of a step: an id, and the rest by verb. */
const job = fc.record({
  id: fc.constantFrom(...IDS),
  token: fc.constantFrom(...TOKENS),
  num: fc.constantFrom(...DURATIONS),
  due: fc.constantFrom(...DUES),
  text: fc.constantFrom(...TEXTS),
});
type JobStep = { id: string; token: string; num: string; due: string; text: string };

/** One step: a verb with argument choices; keys are built per queue so both twins get the same shape. */
type Step =
  | { verb: "ENQUEUE" | "SCHEDULE" | "ACK" | "RETRY" | "BURY"; jobs: JobStep[] }
  | { verb: "EXTEND"; num: string; jobs: JobStep[] }
  | { verb: "PROMOTE" | "REAP"; num: string }
  | { verb: "CLAIM"; num: string; count: string }
  | { verb: "SCHEDULER"; name: string; spec: string; due: string; max: string; text: string }
  | { verb: "UNSCHEDULE"; name: string }
  | { verb: "TICK"; name: string; due: string; num: string; jobs: JobStep[] }
  | { verb: "SLEEP" };

const jobs = fc.array(job, { minLength: 1, maxLength: 3 });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ verb: fc.constantFrom("ENQUEUE" as const, "SCHEDULE" as const, "ACK" as const, "RETRY" as const, "BURY" as const), jobs }),
  fc.record({ verb: fc.constant("EXTEND" as const), num: fc.constantFrom(...DURATIONS), jobs }),
  fc.record({ verb: fc.constantFrom("PROMOTE" as const, "REAP" as const), num: fc.constantFrom(...LIMITS) }),
  fc.record({ verb: fc.constant("CLAIM" as const), num: fc.constantFrom(...DURATIONS), count: fc.constantFrom(...LIMITS) }),
  fc.record({
    verb: fc.constant("SCHEDULER" as const),
    name: fc.constantFrom(...NAMES),
    spec: fc.constantFrom(...SPECS),
    due: fc.constantFrom(...DUES),
    max: fc.constantFrom(...MAXES),
    text: fc.constantFrom(...TEXTS),
  }),
  fc.record({ verb: fc.constant("UNSCHEDULE" as const), name: fc.constantFrom(...NAMES) }),
  fc.record({
    verb: fc.constant("TICK" as const),
    name: fc.constantFrom(...NAMES),
    due: fc.constantFrom(...DUES),
    num: fc.constantFrom(...DUES),
    jobs: fc.array(job, { maxLength: 3 }),
  }),
  fc.record({ verb: fc.constant("SLEEP" as const) }),
);

/** The step as a wire call built from the spec (the queue's meta, fixed args, one group per job). */
function call(queue: string, s: Exclude<Step, { verb: "SLEEP" }>): [Verb, string[], string[]] {
  const K = keyspace(queue);
  const c = (() => {
    switch (s.verb) {
      case "ENQUEUE":
        return wireCall("ENQUEUE", K, {}, s.jobs.map((j) => ({ id: j.id, payload: j.text })));
      case "SCHEDULE":
        return wireCall("SCHEDULE", K, {}, s.jobs.map((j) => ({ id: j.id, due_ms: j.due, payload: j.text })));
      case "ACK":
        return wireCall("ACK", K, {}, s.jobs.map((j) => ({ id: j.id, token: j.token })));
      case "RETRY":
        return wireCall("RETRY", K, {}, s.jobs.map((j) => ({ id: j.id, token: j.token, delay_ms: j.num, reason: j.text })));
      case "BURY":
        return wireCall("BURY", K, {}, s.jobs.map((j) => ({ id: j.id, token: j.token, reason: j.text })));
      case "EXTEND":
        return wireCall("EXTEND", K, { lease_ms: s.num }, s.jobs.map((j) => ({ id: j.id, token: j.token })));
      case "PROMOTE":
      case "REAP":
        return wireCall(s.verb, K, { limit: s.num });
      case "CLAIM":
        return wireCall("CLAIM", K, { lease_ms: s.num, count: s.count, block_ms: "0" });
      case "SCHEDULER":
        return wireCall("SCHEDULER", K, { name: s.name, spec: s.spec, next_ms: s.due, max_missed: s.max, payload: s.text });
      case "UNSCHEDULE":
        return wireCall("UNSCHEDULE", K, { name: s.name });
      case "TICK":
        return wireCall("TICK", K, { name: s.name, expected_ms: s.due, next_ms: s.num }, s.jobs.map((j) => ({ id: j.id, tick_ms: j.due })));
    }
  })();
  return [c.verb, c.keys, c.args.map(String)];
}

/** Twin queue names in one cluster slot: the scripts' `<stem>-s`, the module's `<stem>-m<k>`. */
function twins(stem: string): Record<BackendKind, string> {
  const scripts = `${stem}-s`;
  const target = keyspace(scripts).slot;
  for (let k = 0;; k++) {
    const module = `${stem}-m${k}`;
    if (keyspace(module).slot === target) return { scripts, module };
  }
}

/** A CLAIM reply's next_ms is a time: it compares as "<now>" (≥ 2001) or as itself. */
function timeless(o: Outcome): Outcome {
  if (!("ok" in o) || !Array.isArray(o.ok)) return o;
  const [next, ...rest] = o.ok as unknown[];
  return { ok: [typeof next === "number" && next >= 1e12 ? "<now>" : next, ...rest] };
}

describe.skipIf(!MODULE_WORKS)("differential: scripts vs module on random call sequences", () => {
  const { raws } = useSites();

  test("known differences before the verb runs (docs/WIRE.md): EVALSHA parses numkeys itself", async () => {
    const raw = raws.get("standalone")!;
    const K = keyspace("kd");
    const keys = [K.meta];
    const args = [IDS[0]!, "p"];
    const shape = { err: "ERR wrong number of arguments for 'EMQ.ENQUEUE' command" };
    expect(await wire(raw, "module", "ENQUEUE", keys, args, 9)).toEqual(shape);
    expect(await wire(raw, "scripts", "ENQUEUE", keys, args, 9)).toEqual({
      err: "ERR Number of keys can't be greater than number of args",
    });
    expect(await wire(raw, "module", "ENQUEUE", keys, args, -1)).toEqual(shape);
    expect(await wire(raw, "scripts", "ENQUEUE", keys, args, -1)).toEqual({ err: "ERR Number of keys can't be negative" });
  });

  for (const topology of TOPOLOGIES) {
    test(`${topology}: identical replies and keyspaces`, async () => {
      const raw = raws.get(topology)!;
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
          run++;
          const queues = twins(`d${run}`);
          for (const s of steps) {
            if (s.verb === "SLEEP") {
              await sleep(40); // lets 30 ms leases and delays expire, the same for both twins
              continue;
            }
            // both twins' calls in one batch, so that they read the same side of every expiry
            const argvs = (["scripts", "module"] as const).map((backend) => {
              const [verb, keys, args] = call(queues[backend], s);
              return wireArgv(backend, verb, keys, args);
            });
            const outs = (await wireBatch(raw, keyspace(queues.module).meta, argvs)).map(timeless);
            expect({ step: s.verb, module: outs[1] }).toEqual({ step: s.verb, module: outs[0]! });
          }
          expect(await dump(raw, queues.module)).toEqual(await dump(raw, queues.scripts));
        }),
        { numRuns: 30 },
      );
    });
  }
});
