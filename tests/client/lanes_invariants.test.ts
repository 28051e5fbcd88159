/**
 * Lanes' bookkeeping, for each backend × topology, under random sequences of raw wire calls
 * (fast-check): admissions into three lanes (the default one included) at two priorities, claims
 * (some with leases that run out), every settle, lane pauses, lane and per-lane-default limits,
 * lane parks and removals. After every call the lane state must agree with the lists it summarises:
 * - each lane's score in `lanes` is its ready jobs, and `meta.prioritized` counts every ready job
 *   outside `pending`; `levels:<L>` holds exactly the priorities whose list is non-empty;
 * - the ring holds each lane at most once, exactly the lanes flagged `ring`, each with a ready job,
 *   and every lane with a ready job is in it unless it is paused, parked or at its concurrency limit
 *   (no lane forgotten, a raised per-lane default included);
 * - a lane's `active` is its held jobs counted since the queue became laned;
 * and at the end, with every lane resumed and every limit removed, claims drain every ready job.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { keyspace } from "../../mod.ts";
import { COMBOS, useClient, useSites, wire } from "./_harness.ts";
import { claimedTuple } from "../native/_native.ts";

const LANES = ["", "a", "b"] as const;
type Lane = (typeof LANES)[number];

type Step =
  | { kind: "enqueue"; lane: Lane; priority: 0 | 2; k: number }
  | { kind: "claim"; count: number; shortLease: boolean }
  | { kind: "settle"; pick: number; op: "ack" | "retry0" | "retry" | "release" | "bury" }
  | { kind: "pause" | "resume"; lane: "a" | "b" }
  | { kind: "limit"; scope: 1 | 2; lane: Lane; concurrency: 0 | 1 | 2 }
  | { kind: "penalize"; lane: "a" | "b" }
  | { kind: "remove"; pick: number }
  | { kind: "sleep" };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("enqueue" as const),
      lane: fc.constantFrom(...LANES),
      priority: fc.constantFrom(0 as const, 2 as const),
      k: fc.integer({ min: 1, max: 3 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("claim" as const),
      count: fc.integer({ min: 1, max: 3 }),
      shortLease: fc.constantFrom(false, false, false, false, true),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("settle" as const),
      pick: fc.nat(),
      op: fc.constantFrom<Array<"ack" | "retry0" | "retry" | "release" | "bury">>("ack", "retry0", "retry", "release", "bury"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("pause" as const, "resume" as const), lane: fc.constantFrom("a" as const, "b" as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("limit" as const),
      scope: fc.constantFrom(1 as const, 2 as const),
      lane: fc.constantFrom(...LANES),
      concurrency: fc.constantFrom(0 as const, 1 as const, 2 as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("penalize" as const), lane: fc.constantFrom("a" as const, "b" as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("remove" as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "sleep" as const }) },
) as fc.Arbitrary<Step>;

const steps: fc.Arbitrary<Step[]> = process.env["LANES_STEPS"]
  ? fc.constant(JSON.parse(process.env["LANES_STEPS"]) as Step[])
  : fc.array(step, { minLength: 10, maxLength: 50 });

const sites = useSites();

for (const combo of COMBOS) {
  describe(combo.name, () => {
    const ctx = useClient<unknown>(sites, combo);

    test("the lanes' state agrees with their lists after every call, and claims drain every lane", async () => {
      let run = 0;
      await fc.assert(
        // LANES_STEPS (a counterexample's steps, JSON) replays one sequence
        fc.asyncProperty(steps, async (steps) => {
          const ks = keyspace(`inv-${combo.backend}-${run++}`);
          const raw = ctx.raw;
          const r = (args: string[]): Promise<unknown> => raw.command(args, ks.meta);
          const call = async (verb: Parameters<typeof wire>[2], args: string[]): Promise<unknown> => {
            const out = await wire(raw, combo.backend, verb, [ks.meta], args);
            if ("err" in out) throw new Error(`${verb} ${JSON.stringify(args)}: ${out.err}`);
            return out.ok;
          };
          let n = 0;
          const ids: string[] = [];
          const held = new Map<string, string>(); // id → token
          const claim = async (count: number, lease: number): Promise<void> => {
            const reply = (await call("CLAIM", [String(lease), String(count), "0"])) as unknown[];
            for (const j of reply.slice(1).map(claimedTuple)) held.set(j[0], String(j[3]));
          };
          // a hash as { field: value }, whatever shape the connection gives HGETALL's reply
          const hash = async (key: string): Promise<Record<string, string>> => {
            const out: Record<string, string> = {};
            for (const f of ["ring", "active", "paused", "concurrency", "parked", "prioritized", "lane_concurrency", "laned"]) {
              const v = await r(["HGET", key, f]);
              if (v !== null && v !== undefined) out[f] = String(v);
            }
            return out;
          };
          const invariants = async (label: string): Promise<void> => {
            const ring = ((await r(["LRANGE", ks.ring, "0", "-1"])) as unknown[]).map(String);
            const meta = await hash(ks.meta);
            const laned = meta.laned ?? null;
            // the held jobs each lane counts: in active, of that lane, claimed after the queue became laned
            const counted = new Map<string, number>();
            for (const id of ((await r(["ZRANGE", ks.active, "0", "-1"])) as unknown[]).map(String)) {
              const row = String((await r(["HGET", ks.job(id as never), "lane"])) ?? "");
              const token = Number(await r(["HGET", ks.job(id as never), "token"]));
              if (laned !== null && token > Number(laned)) counted.set(row, (counted.get(row) ?? 0) + 1);
            }
            let outside = 0;
            for (const L of LANES) {
              const levels = ((await r(["ZRANGE", ks.levels(L), "0", "-1"])) as unknown[]).map(Number);
              let ready = 0;
              for (const p of [0, 2]) {
                const len = Number(await r(["LLEN", ks.ready(L, p)]));
                ready += len;
                if (ks.ready(L, p) !== ks.pending) outside += len;
                if (p > 0) expect({ label, L, p, inLevels: levels.includes(p) }).toEqual({ label, L, p, inLevels: len > 0 });
              }
              const lane = await hash(ks.lane(L));
              if (laned === null) continue;
              expect({ label, L, backlog: Number((await r(["ZSCORE", ks.lanes, L])) ?? 0) }).toEqual({ label, L, backlog: ready });
              expect({ label, L, flagged: lane.ring === "1" }).toEqual({ label, L, flagged: ring.includes(L) });
              const conc = Number(lane.concurrency ?? meta.lane_concurrency ?? 0);
              const active = Number(lane.active ?? 0);
              // parked: until a claim ends the park (its field goes then); a raised per-lane default
              // reaches a lane evicted at the old one at once (LIMIT scope 2 visits every lane)
              const waiting = lane.paused === "1" || lane.parked !== undefined || (conc > 0 && active >= conc);
              if (ready > 0 && !waiting) expect({ label, L, inRing: ring.includes(L) }).toEqual({ label, L, inRing: true });
              // no lane waits in the ring without a ready job (a claim evicts the lane it empties, a
              // REMOVE of a lane's last ready job takes it out)
              if (ring.includes(L)) expect({ label, L, readyInRing: ready > 0 }).toEqual({ label, L, readyInRing: true });
              expect({ label, L, active }).toEqual({ label, L, active: counted.get(L) ?? 0 });
            }
            expect({ label, ringUnique: new Set(ring).size }).toEqual({ label, ringUnique: ring.length });
            expect({ label, prioritized: Number(meta.prioritized ?? 0) }).toEqual({ label, prioritized: outside });
          };
          // laned from the first call on
          const enqueue = async (lane: Lane, priority: number, k: number): Promise<void> => {
            const args: string[] = [];
            for (let i = 0; i < k; i++) {
              const id = `JOB${String(++n).padStart(11, "0")}`;
              ids.push(id);
              args.push(id, [lane === "" ? "" : `lane=${lane}`, priority ? `priority=${priority}` : ""].filter(Boolean).join("\0"), "p");
            }
            await call("ENQUEUE", args);
          };
          await enqueue("a", 0, 1);
          for (const [i, s] of steps.entries()) {
            // expired leases are taken back by the next claim: forget them once they may have been
            if (s.kind === "enqueue") await enqueue(s.lane, s.priority, s.k);
            else if (s.kind === "claim") {
              // a lease that may have run out is held no more (its next claim or a reap takes it back)
              for (const [id] of held) if (Number(await r(["ZSCORE", ks.active, id])) <= Date.now() + 5) held.delete(id);
              await claim(s.count, s.shortLease ? 1 : 600_000);
            } else if (s.kind === "settle" && held.size > 0) {
              const [id, token] = [...held][s.pick % held.size]!;
              if (Number(await r(["ZSCORE", ks.active, id])) > Date.now() + 5) {
                held.delete(id);
                const verb = s.op === "ack" ? "ACK" : s.op === "bury" ? "BURY" : s.op === "release" ? "RELEASE" : "RETRY";
                const args = verb === "ACK"
                  ? [id, token, ""]
                  : verb === "RELEASE"
                  ? [id, token]
                  : verb === "BURY"
                  ? [id, token, "x", ""]
                  : [id, token, s.op === "retry0" ? "0" : "3", "x", ""];
                await call(verb, args);
              }
            } else if (s.kind === "pause" || s.kind === "resume") await call(s.kind === "pause" ? "PAUSE" : "RESUME", [s.lane]);
            else if (s.kind === "limit") {
              await call("LIMIT", [String(s.scope), s.scope === 1 ? s.lane : "", String(s.concurrency), "0", "1", "1"]);
            } else if (s.kind === "penalize") await call("PENALIZE", [s.lane, "4"]);
            else if (s.kind === "remove" && ids.length > 0) {
              const id = ids[s.pick % ids.length]!;
              if (!held.has(id) && (await r(["ZSCORE", ks.active, id])) === null) await call("REMOVE", ["0", id]);
            } else if (s.kind === "sleep") await new Promise((res) => setTimeout(res, 6));
            // a lease of 1 ms may run out between the call and the reads: drop those from the held
            for (const [id] of held) if (Number(await r(["ZSCORE", ks.active, id])) <= Date.now() + 50) held.delete(id);
            if (![...held.keys()].every(Boolean)) throw new Error("unreachable");
            await invariants(`step ${i} ${JSON.stringify(s)}`).catch((e) => {
              throw new Error(`${(e as Error).message}\nsteps: ${JSON.stringify(steps.slice(0, i + 1))}`);
            });
          }
          // liveness: everything resumed and unlimited and every held job settled, every ready job is
          // claimed
          for (const id of ((await r(["ZRANGE", ks.active, "0", "-1"])) as unknown[]).map(String)) {
            await call("ACK", [id, String(await r(["HGET", ks.job(id as never), "token"])), ""]);
          }
          for (const L of ["a", "b"]) await call("RESUME", [L]);
          for (const L of LANES) await call("LIMIT", ["1", L, "0", "0", "1", "1"]);
          await call("LIMIT", ["2", "", "0", "0", "1", "1"]);
          await new Promise((res) => setTimeout(res, 10));
          const readyLeft = async (): Promise<number> => {
            let left = 0;
            for (const L of LANES) for (const p of [0, 2]) left += Number(await r(["LLEN", ks.ready(L, p)]));
            return left;
          };
          for (let i = 0; i < 200; i++) {
            const reply = (await call("CLAIM", ["600000", "3", "0"])) as unknown[];
            if (reply.length === 1 && (await readyLeft()) === 0) break;
            if (reply.length === 1) await new Promise((res) => setTimeout(res, 5));
          }
          expect({ left: await readyLeft() }).toEqual({ left: 0 });
          await call("DROP", ["100000"]).catch(() => {}); // refused while jobs are active: the names differ per run anyway
        }),
        { numRuns: 25 },
      );
    }, 600_000);
  });
}
