/**
 * The behavioural suite: every verb, happy paths and every refusal, for each backend (scripts, and
 * the native module when libemq.so is built) on each topology (standalone, 3-primary cluster).
 * Replies and resulting keyspaces must be identical across backends; refusals must leave
 * DEBUG DIGEST unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type JobId, KeyspaceError, keyspace } from "../../mod.ts";
import { EchoMQ, EchoMQError, type Job, WireError } from "../../client.ts";
import type { Connection } from "../../lib/client/connection.ts";
import type { Verb } from "../../lib/wire/mod.ts";
import {
  BACKENDS,
  type BackendKind,
  comboName,
  counterIds,
  digest,
  dump,
  type Outcome,
  sleep,
  type Topology,
  TOPOLOGIES,
  wire,
  useSites,
} from "./_harness.ts";

const { sites, raws } = useSites();
const transcripts = new Map<string, Array<[string, unknown]>>();
const dumps = new Map<string, unknown>();

function summary(job: Job<unknown> | null): unknown {
  return job === null ? null : { id: job.id, payload: job.payload, attempts: job.attempts };
}

/** The exact text docs/WIRE.md prescribes for a refusal case, inferred from its label. */
function expectedRefusal(label: string, verb: Verb, topology: Topology): string {
  const V = `EMQ.${verb}`;
  if (/numkeys|argc/.test(label)) return `ERR wrong number of arguments for '${V}' command`;
  if (/counter/.test(label)) return "ERR hash value is not an integer";
  if (/wrongtype/.test(label)) return "WRONGTYPE Operation against a key holding the wrong kind of value";
  if (/duplicate/.test(label)) return `ERR ${V} duplicate id`;
  if (/not active/.test(label)) return `ERR ${V} job is not active`;
  if (/id not JOB|id before due/.test(label)) return `ERR ${V} id must be a JOB id`;
  if (/due/.test(label)) return `ERR ${V} due_ms must be a non-negative integer`;
  if (/lease/.test(label)) return `ERR ${V} lease_ms must be a positive integer`;
  if (/delay/.test(label)) return `ERR ${V} delay_ms must be a positive integer`;
  if (/limit/.test(label)) return `ERR ${V} limit must be a positive integer`;
  if (/payload/.test(label)) return `ERR ${V} payload exceeds 1048576 bytes`;
  if (/reason/.test(label)) return `ERR ${V} reason exceeds 4096 bytes`;
  // keys of another queue hash elsewhere: the cluster refuses them before the verb runs
  if (/other queue/.test(label) && topology === "cluster") return "CROSSSLOT Keys in request don't hash to the same slot";
  return `ERR ${V} keys do not match the wire-4 layout`;
}

/** A queue name as a plain `string`: skips the compile-time check so the run-time one is tested. */
const widen = (name: string): string => name;

const N = "JOB99999999999" as JobId;
const BIG = "x".repeat(1048577);
const LONG_REASON = "r".repeat(4097);

for (const topology of TOPOLOGIES) {
  for (const backend of BACKENDS) {
    const combo = comboName(backend, topology);
    describe(combo, () => {
      let mq: EchoMQ<unknown>;
      let raw: Connection;
      const log: Array<[string, unknown]> = [];
      transcripts.set(combo, log);
      const note = (label: string, value: unknown): void => void log.push([label, value]);

      beforeAll(async () => {
        const site = sites.get(topology)!;
        raw = raws.get(topology)!;
        mq = await EchoMQ.connect({
          addresses: site.addresses,
          cluster: site.cluster,
          backend,
          newId: counterIds(1),
          requestTimeout: 10_000,
        });
        expect(mq.backend).toBe(backend);
      });
      afterAll(async () => {
        await mq.close();
      });

      test("every verb, happy paths", async () => {
        const q = `hp-${backend}`;
        const K = keyspace(q);
        const before = Date.now();
        const a = await mq.enqueue(q, { n: "a" });
        const b = await mq.enqueue(q, { n: "b" });
        const c = await mq.enqueue(q, { n: "c" });
        note("enqueue", [a, b, c]);
        note("counts after enqueue", await mq.counts(q));
        const rowA = (await raw.command(["HGET", K.job(a), "created_ms"], K.pending)) as string;
        expect(Number(rowA)).toBeGreaterThanOrEqual(before - 1000);
        expect(Number(rowA)).toBeLessThanOrEqual(Date.now() + 1000);

        const ja = await mq.claim(q, { leaseMs: 60_000 });
        note("claim a", summary(ja));
        expect(ja?.id).toBe(a);
        await mq.ack(ja!);
        const jb = await mq.claim(q, { leaseMs: 60_000 });
        note("claim b", summary(jb));
        await mq.retry(jb!, { delayMs: 1, reason: "boom" });
        const jc = await mq.claim(q, { leaseMs: 60_000 });
        note("claim c", summary(jc));
        await mq.bury(jc!, "bad input");
        note("counts after settle", await mq.counts(q));

        await sleep(15);
        note("promote", await mq.promote(q));
        const jb2 = await mq.claim(q, { leaseMs: 1 });
        note("claim b again (short lease)", summary(jb2));
        await sleep(15);
        note("reap", await mq.reap(q));
        const jb3 = await mq.claim(q, { leaseMs: 60_000 });
        note("claim b after reap", summary(jb3));
        expect(jb3?.attempts).toBe(3);
        note("claim empty", await mq.claim(q, { leaseMs: 1000 }));
        note("reap none", await mq.reap(q, 5));

        const d = await mq.schedule(q, { n: "d" }, { at: 1000 });
        const e = await mq.schedule(q, { n: "e" }, { at: 900_000_000_000_000 });
        const f = await mq.schedule(q, { n: "f" }, { at: new Date(2000) });
        note("schedule", [d, e, f]);
        note("promote limit 1", await mq.promote(q, 1));
        note("promote rest", await mq.promote(q));
        note("claim d", summary(await mq.claim(q, { leaseMs: 60_000 })));

        // Raw replies: CLAIM's array, the numbers the wire writes canonically (007 → 7).
        note("raw schedule 007", await wire(raw, backend, "SCHEDULE", [K.job(N), K.schedule], [N, "007", '"p7"']));
        note("raw claim", await wire(raw, backend, "CLAIM", [K.pending, K.active, K.base], ["60000"]));
        // Ids without rows: PROMOTE and REAP move them, CLAIM drops them.
        await raw.command(["ZADD", K.schedule, "5", "JOBghost00001"], K.pending);
        await raw.command(["ZADD", K.active, "6", "JOBghost00002"], K.pending);
        await raw.command(["RPUSH", K.pending, "JOBghost00003"], K.pending);
        note("promote ghosts", await mq.promote(q));
        note("reap ghosts", await mq.reap(q));
        note("claim past ghosts", summary(await mq.claim(q, { leaseMs: 60_000 })));
        note("claim only ghosts", await wire(raw, backend, "CLAIM", [K.pending, K.active, K.base], ["60000"]));

        const many = await mq.enqueueMany(q, [1, 2, 3, 4, 5].map((n) => ({ n })));
        note("enqueueMany", many);
        note("counts final", await mq.counts(q));
        const snapshot = await dump(raw, q);
        dumps.set(combo, snapshot);
        expect(Object.keys(snapshot).length).toBeGreaterThan(3);
      });

      test("refusals: exact texts, nothing written", async () => {
        const q = `rf-${backend}`;
        const K = keyspace(q);
        const J = await mq.enqueue(q, { n: "active" });
        await mq.claim(q, { leaseMs: 600_000 });
        const W = (i: number) => keyspace(`wt${i}-${backend}`);
        // Wrong-type fixtures, one queue each.
        await raw.command(["SET", W(1).pending, "x"], W(1).pending);
        await raw.command(["SET", W(2).job(N), "x"], W(2).pending);
        await raw.command(["SET", W(3).schedule, "x"], W(3).pending);
        await raw.command(["SET", W(4).active, "x"], W(4).pending);
        await raw.command(["SET", W(5).dead, "x"], W(5).pending);
        await raw.command(["ZADD", W(6).schedule, "1", N], W(6).pending);
        await raw.command(["SET", W(6).job(N), "x"], W(6).pending);
        await raw.command(["ZADD", W(7).active, "1", N], W(7).pending);
        await raw.command(["SET", W(7).job(N), "x"], W(7).pending);
        await raw.command(["RPUSH", W(8).pending, N, "JOBghost00009"], W(8).pending);
        await raw.command(["SET", W(8).job(N), "x"], W(8).pending);
        await raw.command(["ZADD", W(9).active, "1", N], W(9).pending);
        await raw.command(["HSET", W(9).job(N), "state", "active"], W(9).pending);
        await raw.command(["SET", W(9).dead, "x"], W(9).pending);
        await raw.command(["SET", W(9).schedule, "x"], W(9).pending);
        await raw.command(["HSET", W(10).job(N), "state", "pending"], W(10).pending); // row, not active
        await raw.command(["ZADD", W(11).active, "1", N], W(11).pending); // active, no row
        await raw.command(["HSET", W(12).job(N), "state", "pending"], W(12).pending); // duplicate row …
        await raw.command(["SET", W(12).pending, "x"], W(12).pending); // … and a pending of the wrong type
        await raw.command(["RPUSH", W(13).pending, N, "JOBghost00013"], W(13).pending); // ghost at the tail …
        await raw.command(["HSET", W(13).job(N), "payload", "p", "attempts", "01"], W(13).pending); // … bad counter
        await raw.command(["RPUSH", W(14).pending, N], W(14).pending);
        await raw.command(["HSET", W(14).job(N), "payload", "p", "attempts", "9223372036854775807"], W(14).pending);

        type Case = [string, Verb, string[], string[], number?];
        const row = K.job(N);
        const cases: Case[] = [
          // ENQUEUE
          ["enqueue numkeys 1", "ENQUEUE", [row, K.pending], [N, "p"], 1],
          ["enqueue numkeys 3", "ENQUEUE", [row, K.pending, K.active], [N, "p"]],
          ["enqueue argc 1", "ENQUEUE", [row, K.pending], [N]],
          ["enqueue argc 3", "ENQUEUE", [row, K.pending], [N, "p", "x"]],
          ["enqueue first key not a row", "ENQUEUE", [K.pending, K.pending], [N, "p"]],
          ["enqueue row of another id", "ENQUEUE", [K.job(J), K.pending], [N, "p"]],
          ["enqueue other queue", "ENQUEUE", [row, "emq:{other}:pending"], [N, "p"]],
          ["enqueue not emq", "ENQUEUE", [`emx:{${q}}:job:${N}`, K.pending], [N, "p"]],
          ["enqueue brace in name", "ENQUEUE", [`emq:{a{b}:job:${N}`, "emq:{a{b}:pending"], [N, "p"]],
          ["enqueue no colon", "ENQUEUE", [`emq:{${q}}job:${N}`, K.pending], [N, "p"]],
          ["enqueue second key type", "ENQUEUE", [row, K.active], [N, "p"]],
          ["enqueue id not JOB", "ENQUEUE", [`${K.base}job:XOB00000000001`, K.pending], ["XOB00000000001", "p"]],
          ["enqueue payload too big", "ENQUEUE", [row, K.pending], [N, BIG]],
          ["enqueue wrongtype pending", "ENQUEUE", [W(1).job(N), W(1).pending], [N, "p"]],
          ["enqueue wrongtype row", "ENQUEUE", [W(2).job(N), W(2).pending], [N, "p"]],
          ["enqueue duplicate", "ENQUEUE", [K.job(J), K.pending], [J, "p"]],
          ["enqueue wrongtype before duplicate", "ENQUEUE", [W(12).job(N), W(12).pending], [N, "p"]],
          // SCHEDULE
          ["schedule argc", "SCHEDULE", [row, K.schedule], [N, "5"]],
          ["schedule layout", "SCHEDULE", [row, K.pending], [N, "5", "p"]],
          ["schedule id before due", "SCHEDULE", [`${K.base}job:XOB00000000001`, K.schedule], ["XOB00000000001", "-1", "p"]],
          ["schedule due empty", "SCHEDULE", [row, K.schedule], [N, "", "p"]],
          ["schedule due negative", "SCHEDULE", [row, K.schedule], [N, "-1", "p"]],
          ["schedule due fraction", "SCHEDULE", [row, K.schedule], [N, "1.5", "p"]],
          ["schedule due space", "SCHEDULE", [row, K.schedule], [N, " 1", "p"]],
          ["schedule due plus", "SCHEDULE", [row, K.schedule], [N, "+1", "p"]],
          ["schedule due exponent", "SCHEDULE", [row, K.schedule], [N, "1e3", "p"]],
          ["schedule due 16 digits", "SCHEDULE", [row, K.schedule], [N, "1000000000000000", "p"]],
          ["schedule due before payload", "SCHEDULE", [row, K.schedule], [N, "x", BIG]],
          ["schedule payload too big", "SCHEDULE", [row, K.schedule], [N, "5", BIG]],
          ["schedule wrongtype", "SCHEDULE", [W(3).job(N), W(3).schedule], [N, "5", "p"]],
          ["schedule duplicate", "SCHEDULE", [K.job(J), K.schedule], [J, "5", "p"]],
          // PROMOTE
          ["promote argc", "PROMOTE", [K.schedule, K.pending, K.base], []],
          ["promote numkeys", "PROMOTE", [K.schedule, K.pending], ["1"]],
          ["promote first key", "PROMOTE", [K.pending, K.pending, K.base], ["1"]],
          ["promote base without colon", "PROMOTE", [K.schedule, K.pending, `emq:{${q}}`], ["1"]],
          ["promote base with type", "PROMOTE", [K.schedule, K.pending, `${K.base}x`], ["1"]],
          ["promote limit 0", "PROMOTE", [K.schedule, K.pending, K.base], ["0"]],
          ["promote limit negative", "PROMOTE", [K.schedule, K.pending, K.base], ["-3"]],
          ["promote limit word", "PROMOTE", [K.schedule, K.pending, K.base], ["ten"]],
          ["promote wrongtype schedule", "PROMOTE", [W(3).schedule, W(3).pending, W(3).base], ["1"]],
          ["promote wrongtype pending", "PROMOTE", [W(1).schedule, W(1).pending, W(1).base], ["1"]],
          ["promote wrongtype row", "PROMOTE", [W(6).schedule, W(6).pending, W(6).base], ["1"]],
          // CLAIM
          ["claim argc", "CLAIM", [K.pending, K.active, K.base], ["1", "2"]],
          ["claim layout", "CLAIM", [K.pending, K.schedule, K.base], ["1"]],
          ["claim lease 0", "CLAIM", [K.pending, K.active, K.base], ["0"]],
          ["claim lease word", "CLAIM", [K.pending, K.active, K.base], ["soon"]],
          ["claim wrongtype pending", "CLAIM", [W(1).pending, W(1).active, W(1).base], ["10"]],
          ["claim wrongtype active", "CLAIM", [W(4).pending, W(4).active, W(4).base], ["10"]],
          ["claim wrongtype tail row", "CLAIM", [W(8).pending, W(8).active, W(8).base], ["10"]],
          ["claim counter not an integer", "CLAIM", [W(13).pending, W(13).active, W(13).base], ["10"]],
          ["claim counter would overflow", "CLAIM", [W(14).pending, W(14).active, W(14).base], ["10"]],
          // ACK
          ["ack argc", "ACK", [K.job(J), K.active], []],
          ["ack layout", "ACK", [K.job(J), K.pending], [J]],
          ["ack row of another id", "ACK", [K.job(J), K.active], [N]],
          ["ack id not JOB", "ACK", [`${K.base}job:XOB00000000001`, K.active], ["XOB00000000001"]],
          ["ack wrongtype row", "ACK", [W(2).job(N), W(2).active], [N]],
          ["ack wrongtype active", "ACK", [W(4).job(N), W(4).active], [N]],
          ["ack not active (unknown)", "ACK", [row, K.active], [N]],
          ["ack not active (row only)", "ACK", [W(10).job(N), W(10).active], [N]],
          ["ack not active (no row)", "ACK", [W(11).job(N), W(11).active], [N]],
          // RETRY
          ["retry argc", "RETRY", [K.job(J), K.active, K.schedule], [J, "1"]],
          ["retry layout", "RETRY", [K.job(J), K.active, K.dead], [J, "1", "r"]],
          ["retry id not JOB", "RETRY", [`${K.base}job:XOB00000000001`, K.active, K.schedule], ["XOB00000000001", "1", "r"]],
          ["retry delay 0", "RETRY", [K.job(J), K.active, K.schedule], [J, "0", "r"]],
          ["retry delay word", "RETRY", [K.job(J), K.active, K.schedule], [J, "later", "r"]],
          ["retry reason too long", "RETRY", [K.job(J), K.active, K.schedule], [J, "1", LONG_REASON]],
          ["retry wrongtype schedule", "RETRY", [W(9).job(N), W(9).active, W(9).schedule], [N, "1", "r"]],
          ["retry not active", "RETRY", [row, K.active, K.schedule], [N, "1", "r"]],
          // BURY
          ["bury argc", "BURY", [K.job(J), K.active, K.dead], [J]],
          ["bury layout", "BURY", [K.job(J), K.active, K.schedule], [J, "r"]],
          ["bury id not JOB", "BURY", [`${K.base}job:XOB00000000001`, K.active, K.dead], ["XOB00000000001", "r"]],
          ["bury reason too long", "BURY", [K.job(J), K.active, K.dead], [J, LONG_REASON]],
          ["bury wrongtype dead", "BURY", [W(9).job(N), W(9).active, W(9).dead], [N, "r"]],
          ["bury not active", "BURY", [row, K.active, K.dead], [N, "r"]],
          // REAP
          ["reap argc", "REAP", [K.active, K.pending, K.base], ["1", "1"]],
          ["reap layout", "REAP", [K.active, K.pending, K.pending], ["1"]],
          ["reap limit 0", "REAP", [K.active, K.pending, K.base], ["0"]],
          ["reap limit 16 digits", "REAP", [K.active, K.pending, K.base], ["1234567890123456"]],
          ["reap wrongtype active", "REAP", [W(4).active, W(4).pending, W(4).base], ["1"]],
          ["reap wrongtype pending", "REAP", [W(1).active, W(1).pending, W(1).base], ["1"]],
          ["reap wrongtype row", "REAP", [W(7).active, W(7).pending, W(7).base], ["1"]],
        ];
        for (const [label, verb, keys, args, numkeys] of cases) {
          const route = keys[0]!;
          const d0 = await digest(raw, route);
          const out: Outcome = await wire(raw, backend, verb, keys, args, numkeys);
          const d1 = await digest(raw, route);
          // (no asymmetric matchers on `out`: Bun's toMatchObject writes them into the received object)
          expect({ label, refused: "err" in out && typeof out.err === "string", same: d1 === d0 }).toEqual({
            label,
            refused: true,
            same: true,
          });
          expect({ label, out }).toEqual({ label, out: { err: expectedRefusal(label, verb, topology) } });
          note(label, out);
        }
        // The job is still active and intact after all of that.
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 1, schedule: 0, dead: 0 });
      });

      test.skipIf(topology !== "standalone")("fence: {emq}:version other than 4 refuses every verb", async () => {
        const q = `fe-${backend}`;
        const K = keyspace(q);
        await raw.command(["SET", "{emq}:version", "3"], "{emq}:version");
        try {
          const calls: Array<[Verb, string[], string[]]> = [
            ["ENQUEUE", [K.job(N), K.pending], [N, "p"]],
            ["SCHEDULE", [K.job(N), K.schedule], [N, "1", "p"]],
            ["PROMOTE", [K.schedule, K.pending, K.base], ["1"]],
            ["CLAIM", [K.pending, K.active, K.base], ["1"]],
            ["ACK", [K.job(N), K.active], [N]],
            ["RETRY", [K.job(N), K.active, K.schedule], [N, "1", "r"]],
            ["BURY", [K.job(N), K.active, K.dead], [N, "r"]],
            ["REAP", [K.active, K.pending, K.base], ["1"]],
            // fence comes after layout and before the gates
            ["ENQUEUE", [K.job(N), K.active], [N, "p"]],
            ["CLAIM", [K.pending, K.active, K.base], ["0"]],
          ];
          for (const [verb, keys, args] of calls) {
            const d0 = await digest(raw, keys[0]!);
            const out = await wire(raw, backend, verb, keys, args);
            expect(await digest(raw, keys[0]!)).toBe(d0);
            note(`fenced ${verb}`, out);
          }
          await expect(mq.enqueue(q, 1)).rejects.toMatchObject({ name: "FencedError", rule: "fence" });
          await raw.command(["SET", "{emq}:version", "4"], "{emq}:version");
          note("wire 4 unfenced", await wire(raw, backend, "PROMOTE", [K.schedule, K.pending, K.base], ["1"]));
          await raw.command(["DEL", "{emq}:version"], "{emq}:version");
          await raw.command(["HSET", "{emq}:version", "v", "3"], "{emq}:version");
          note("non-string identity unfenced", await wire(raw, backend, "PROMOTE", [K.schedule, K.pending, K.base], ["1"]));
        } finally {
          await raw.command(["DEL", "{emq}:version"], "{emq}:version");
        }
      });

      test.skipIf(topology !== "cluster")("fence in cluster mode: module config emq.wire; scripts unfenced", async () => {
        const q = `fc-${backend}`;
        const K = keyspace(q);
        const call = (): Promise<Outcome> => wire(raw, backend, "PROMOTE", [K.schedule, K.pending, K.base], ["1"]);
        if (backend === "module") {
          await raw.everyPrimary(["CONFIG", "SET", "emq.wire", "3"]);
          try {
            expect(await call()).toEqual({ err: "ERR EMQ.PROMOTE fenced: this server speaks wire 3, not wire 4" });
          } finally {
            await raw.everyPrimary(["CONFIG", "SET", "emq.wire", "4"]);
          }
          expect(await call()).toEqual({ ok: 0 });
        } else {
          // `{emq}:version` lives in another slot: the script's read fails there and counts as unfenced.
          await raw.command(["SET", "{emq}:version", "3"], "{emq}:version");
          try {
            expect(await call()).toEqual({ ok: 0 });
          } finally {
            await raw.command(["DEL", "{emq}:version"], "{emq}:version");
          }
        }
      });

      test("the empty queue name: scripts on standalone only", async () => {
        const outcome = await mq.enqueue("", { n: "empty" }).then(
          (id) => ({ ok: id }),
          (e: unknown) => ({ err: e instanceof WireError ? e.rule : String(e) }),
        );
        if (backend === "scripts" && topology === "standalone") {
          expect(outcome).toHaveProperty("ok");
          const job = await mq.claim("", { leaseMs: 1000 });
          expect(job?.payload).toEqual({ n: "empty" });
          await mq.ack(job!);
          expect(await mq.counts("")).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
        } else if (topology === "standalone") {
          expect(outcome).toEqual({ err: "layout" }); // the module refuses an empty hashtag
        } else {
          expect(outcome).toHaveProperty("err"); // keys of `{}` spread over slots: CROSSSLOT or layout
        }
      });

      test("client-side checks raise before any wire", async () => {
        const key = keyspace("cs").pending;
        const d0 = await digest(raw, key);
        await expect(mq.enqueue(widen("a}b"), 1)).rejects.toBeInstanceOf(KeyspaceError);
        await expect(mq.enqueue(widen("a{b"), 1)).rejects.toBeInstanceOf(KeyspaceError);
        await expect(mq.enqueue(widen("a\0b"), 1)).rejects.toBeInstanceOf(KeyspaceError);
        await expect(mq.enqueueMany(widen("a\0b"), [1])).rejects.toBeInstanceOf(KeyspaceError);
        await expect(mq.schedule(widen("a}b"), 1, { delayMs: 1 })).rejects.toBeInstanceOf(KeyspaceError);
        expect(() => mq.work(widen("a}b"), () => {})).toThrow(KeyspaceError);
        await expect(mq.claim("cs", { leaseMs: 0 })).rejects.toBeInstanceOf(EchoMQError);
        await expect(mq.claim(widen("a}b"), { leaseMs: 10 })).rejects.toBeInstanceOf(KeyspaceError);
        await expect(mq.promote("cs", 0)).rejects.toMatchObject({ rule: "limit" });
        await expect(mq.reap("cs", 1.5)).rejects.toMatchObject({ rule: "limit" });
        await expect(mq.ack({ id: "JOBnope" as JobId, queue: "cs" })).rejects.toBeInstanceOf(KeyspaceError);
        await expect(mq.retry({ id: N, queue: "cs" }, { delayMs: 0 })).rejects.toMatchObject({ rule: "delay-ms" });
        await expect(mq.bury({ id: N, queue: "cs" }, "r".repeat(4097))).rejects.toMatchObject({ rule: "reason" });
        await expect(mq.schedule("cs", 1, { at: -5 })).rejects.toBeInstanceOf(EchoMQError);
        expect(await digest(raw, key)).toBe(d0);
        // Refusals that pass the client's checks surface as typed wire errors.
        await expect(mq.ack({ id: N, queue: "cs" })).rejects.toMatchObject({ name: "JobNotActiveError" });
        const id = await mq.enqueue("cs", 1);
        await expect(mq.enqueue("cs", 2, { id })).rejects.toMatchObject({ name: "DuplicateIdError" });
      });
    });
  }
}

describe("identical across backends", () => {
  afterAll(async () => {
    // EMQ_TRANSCRIPT=<file> writes every combo's transcript and dump for inspection.
    const out = process.env["EMQ_TRANSCRIPT"];
    if (out) {
      const { writeFileSync } = await import("node:fs");
      const trim = (v: unknown): unknown => (typeof v === "string" && v.length > 200 ? `${v.slice(0, 40)}…(${v.length})` : v);
      const json = JSON.stringify({ transcripts: Object.fromEntries(transcripts), dumps: Object.fromEntries(dumps) }, (_k, v) => trim(v), 1);
      writeFileSync(out, json);
    }
  });
  for (const topology of TOPOLOGIES) {
    test.skipIf(BACKENDS.length < 2)(`${topology}: replies and keyspaces`, () => {
      const [first, ...rest] = BACKENDS as [BackendKind, ...BackendKind[]];
      const base = comboName(first, topology);
      for (const other of rest) {
        const combo = comboName(other, topology);
        const a = transcripts.get(base)!;
        const b = transcripts.get(combo)!;
        expect(b.map(([l]) => l)).toEqual(a.map(([l]) => l));
        for (let i = 0; i < a.length; i++) expect({ step: b[i]![0], value: b[i]![1] }).toEqual({ step: a[i]![0], value: a[i]![1] });
        expect(dumps.get(combo)).toEqual(dumps.get(base));
      }
    });
  }
});
