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
} from "./_harness.ts";

const IDS = ["JOB00000000001", "JOB00000000002", "JOB00000000003", "JOB00000000004", "XOB00000000001"];
const JUNK = ["0", "-1", "", "1.5", "abc", " 1", "+1", "1000000000000000"];
/** Limits: any value is deterministic. */
const LIMITS = ["1", "007", "999999999999999", ...JUNK];
/**
 * Leases and delays: 30 ms expires only across a SLEEP step (40 ms), never between the two twins'
 * calls of one step, so both twins see the same expiries.
 */
const DURATIONS = ["030", "60000", "999999999999999", ...JUNK];
const DUES = ["1000", "007", "900000000000000", ...JUNK];
const TEXTS = ["", "p", "héllo", "r".repeat(4096), "r".repeat(4097)];

/** One step: a verb with argument choices; keys are built per queue so both twins get the same shape. */
type Step =
  | { verb: "ENQUEUE" | "ACK"; id: string; text: string }
  | { verb: "SCHEDULE"; id: string; due: string; text: string }
  | { verb: "RETRY"; id: string; num: string; text: string }
  | { verb: "BURY"; id: string; text: string }
  | { verb: "PROMOTE" | "REAP" | "CLAIM"; num: string }
  | { verb: "SLEEP" };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ verb: fc.constant("ENQUEUE" as const), id: fc.constantFrom(...IDS), text: fc.constantFrom(...TEXTS) }),
  fc.record({
    verb: fc.constant("SCHEDULE" as const),
    id: fc.constantFrom(...IDS),
    due: fc.constantFrom(...DUES),
    text: fc.constantFrom(...TEXTS),
  }),
  fc.record({ verb: fc.constant("ACK" as const), id: fc.constantFrom(...IDS), text: fc.constant("") }),
  fc.record({
    verb: fc.constant("RETRY" as const),
    id: fc.constantFrom(...IDS),
    num: fc.constantFrom(...DURATIONS),
    text: fc.constantFrom(...TEXTS),
  }),
  fc.record({ verb: fc.constant("BURY" as const), id: fc.constantFrom(...IDS), text: fc.constantFrom(...TEXTS) }),
  fc.record({ verb: fc.constantFrom("PROMOTE" as const, "REAP" as const), num: fc.constantFrom(...LIMITS) }),
  fc.record({ verb: fc.constant("CLAIM" as const), num: fc.constantFrom(...DURATIONS) }),
  fc.record({ verb: fc.constant("SLEEP" as const) }),
);

/** The step as a wire call built from the spec (keys by role, arguments by name). */
function call(queue: string, s: Exclude<Step, { verb: "SLEEP" }>): [Verb, string[], string[]] {
  const K = keyspace(queue);
  const c = (() => {
    switch (s.verb) {
      case "ENQUEUE":
        return wireCall("ENQUEUE", K, { id: s.id, payload: s.text });
      case "SCHEDULE":
        return wireCall("SCHEDULE", K, { id: s.id, due_ms: s.due, payload: s.text });
      case "ACK":
        return wireCall("ACK", K, { id: s.id });
      case "RETRY":
        return wireCall("RETRY", K, { id: s.id, delay_ms: s.num, reason: s.text });
      case "BURY":
        return wireCall("BURY", K, { id: s.id, reason: s.text });
      case "PROMOTE":
      case "REAP":
        return wireCall(s.verb, K, { limit: s.num });
      case "CLAIM":
        return wireCall("CLAIM", K, { lease_ms: s.num });
    }
  })();
  return [c.verb, c.keys, c.args.map(String)];
}

describe.skipIf(!MODULE_WORKS)("differential: scripts vs module on random call sequences", () => {
  const { raws } = useSites();

  test("known differences before the verb runs (docs/WIRE.md): EVALSHA parses numkeys itself", async () => {
    const raw = raws.get("standalone")!;
    const K = keyspace("kd");
    const keys = [K.job(IDS[0]!), K.pending];
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
          const queues: Record<BackendKind, string> = { scripts: `d${run}-s`, module: `d${run}-m` };
          for (const s of steps) {
            if (s.verb === "SLEEP") {
              await sleep(40); // lets 30 ms leases and delays expire, the same for both twins
              continue;
            }
            const outs: Outcome[] = [];
            for (const backend of ["scripts", "module"] as const) {
              const [verb, keys, args] = call(queues[backend], s);
              outs.push(await wire(raw, backend, verb, keys, args));
            }
            expect({ step: s.verb, module: outs[1] }).toEqual({ step: s.verb, module: outs[0]! });
          }
          expect(await dump(raw, queues.module)).toEqual(await dump(raw, queues.scripts));
        }),
        { numRuns: 30 },
      );
    });
  }
});
