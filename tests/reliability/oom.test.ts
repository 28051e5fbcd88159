/**
 * A full server, per backend: `maxmemory` set just above the server's usage with a queue of 3,000
 * jobs in it, policy `noeviction`. Admissions fill it until ENQUEUE is refused with the server's OOM
 * error (SCHEDULE and enqueueMany too); the limit is then lowered to the empty server's usage, so the
 * server stays full for the whole drain, and a worker drains the queue to zero — claims, acks,
 * retries (and the promotions of retried jobs), buries and lease extensions all work — while every
 * enqueue tried meanwhile is refused with OOM.
 *
 * And `EchoMQ.connect` warns (options.warn, once, naming maxmemory-policy) when the policy may
 * evict (allkeys-lru), not when it is noeviction.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { BatchError, COMPLETED_MAX_DEFAULT, EchoMQ, type EchoMQOptions, LeaseLostError, Worker } from "../../client.ts";
import { command, infoFields, moduleIfBuilt, type ServerHandle, startServer } from "../../tools/embedded/mod.ts";
import { Recorder, sleep } from "./_recorder.ts";
import { BACKENDS } from "./_server.ts";

const JOBS = 3000;
const PAYLOAD = "x".repeat(500);
const FAIL_EVERY = 10; // fail every attempt: retried once, then buried
const SLOW_EVERY = 250; // outlive their lease: the heartbeat extends it
const LEASE_MS = 600;
type P = { seq: number; pad: string };

const servers: ServerHandle[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function memory(port: number): Promise<number> {
  return Number(infoFields(await command(port, ["INFO", "memory"]))["used_memory"]);
}

function describeError(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message.split("\n")[0]}` : String(e);
}

for (const backend of BACKENDS) {
  describe(`oom (${backend})`, () => {
    test("maxmemory + noeviction: enqueue refused with OOM while a worker drains the queue to zero", async () => {
      const server = await startServer({ module: moduleIfBuilt() });
      servers.push(server);
      const port = server.port;
      const warnings: string[] = [];
      const options: EchoMQOptions<P> = {
        addresses: [{ host: "127.0.0.1", port }],
        requestTimeout: 10_000,
        backend,
        warn: (m) => warnings.push(m),
      };
      const mq = await EchoMQ.connect<P>(options);
      const q = `oom-${backend}`;
      try {
        expect(String(await command(port, ["CONFIG", "GET", "maxmemory-policy"]))).toContain("noeviction");
        const empty = await memory(port);
        await mq.enqueueMany(q, Array.from({ length: JOBS }, (_, seq) => ({ seq, pad: PAYLOAD })));
        const filled = await memory(port);
        const limit = filled + 256 * 1024;
        await command(port, ["CONFIG", "SET", "maxmemory", String(limit)]);

        // admissions fill the rest, until refused
        let admitted = 0;
        let refusal: unknown = null;
        for (let seq = JOBS; seq < JOBS + 10_000 && refusal === null; seq++) {
          try {
            await mq.enqueue(q, { seq, pad: PAYLOAD });
            admitted++;
          } catch (e) {
            refusal = e;
          }
        }
        const atRefusal = await memory(port);

        // the server stays full for the whole drain: the limit at the empty server's usage
        await command(port, ["CONFIG", "SET", "maxmemory", String(empty)]);
        const schedule = await mq.schedule(q, { seq: -1, pad: "" }, { delayMs: 1 }).then(() => null, (e: unknown) => e);
        const many = await mq.enqueueMany(q, [{ seq: -2, pad: "" }]).then(() => null, (e: unknown) => e);
        const total = JOBS + admitted;
        const errors: string[] = [];
        let raced = 0; // EXTENDs refused for jobs this worker had just settled (a client race of its own)
        const extended = { slowRuns: 0 };
        const recorder = new Recorder<P>();
        const worker = new Worker<P>(recorder.client(mq, 0), q, async (job) => {
          if (job.payload.seq % FAIL_EVERY === 0) throw new Error("fails every time");
          if (job.payload.seq % SLOW_EVERY === 1) {
            extended.slowRuns++;
            await sleep(2 * LEASE_MS);
          }
        }, {
          concurrency: 20,
          leaseMs: LEASE_MS,
          maxAttempts: 2,
          backoff: 1,
          blockMs: 500,
          onError: (e) => {
            if (e instanceof LeaseLostError && e.verb === "EMQ.EXTEND") {
              // judged once the settles' outcomes are known
              setTimeout(() => (recorder.raced(0, e.ids) ? raced++ : errors.push(describeError(e))), 200);
            } else errors.push(describeError(e));
          },
        }, () => {});
        const tries = { refused: 0, accepted: 0, other: [] as string[] };
        const t0 = Date.now();
        let drained = false;
        while (!drained && Date.now() - t0 < 60_000) {
          try {
            await mq.enqueue(q, { seq: -3, pad: "" });
            tries.accepted++;
          } catch (e) {
            if (/\bOOM\b/.test(describeError(e))) tries.refused++;
            else tries.other.push(describeError(e));
          }
          const c = await mq.counts(q);
          drained = c.pending + c.active + c.schedule === 0;
          if (!drained) await sleep(50);
        }
        const elapsed = Date.now() - t0;
        await worker.stop();
        await sleep(300);
        recorder.close();
        const meta = (await command(port, ["HMGET", `emq:{${q}}:meta`, "acked", "retried", "buried"])) as string[];
        const [acked, retried, buried] = meta.map(Number) as [number, number, number];
        const counts = await mq.counts(q);
        const end = await memory(port);
        const failing = Array.from({ length: total }, (_, seq) => seq).filter((seq) => seq % FAIL_EVERY === 0).length;
        console.log(
          `[oom ${backend}] used_memory empty ${empty}, with ${JOBS} jobs ${filled}; maxmemory ${limit}: ${admitted} more ` +
            `admitted, then refused at ${atRefusal} (${describeError(refusal)}); limit lowered to ${empty}: drained ` +
            `${drained ? "to zero" : "NOT"} in ${elapsed} ms (acked ${acked}, retried ${retried}, buried ${buried}, slow ` +
            `runs extended ${extended.slowRuns}), used_memory at the end ${end}; enqueues tried meanwhile: refused ` +
            `${tries.refused}, accepted ${tries.accepted}, other ${tries.other.length}; worker errors ${errors.length} (heartbeat/settle races ${raced}); ` +
            `warnings ${warnings.length}`,
        );
        expect(refusal).not.toBeNull();
        expect(describeError(refusal)).toMatch(/\bOOM\b/);
        expect(describeError(schedule)).toMatch(/\bOOM\b/);
        expect(many).toBeInstanceOf(BatchError);
        expect(describeError((many as BatchError).cause)).toMatch(/\bOOM\b/);
        expect(drained).toBe(true);
        expect(counts).toEqual({ pending: 0, active: 0, schedule: 0, dead: failing, completed: Math.min(COMPLETED_MAX_DEFAULT, acked), waitingChildren: 0 });
        expect(acked).toBe(total - failing);
        expect(retried).toBe(failing);
        expect(buried).toBe(failing);
        expect(worker.completed).toBe(total - failing);
        expect(extended.slowRuns).toBeGreaterThan(0);
        expect([...new Set(errors)]).toEqual([]);
        expect(tries.accepted).toBe(0);
        expect(tries.other).toEqual([]);
        expect(tries.refused).toBeGreaterThan(0);
        expect(warnings).toEqual([]); // noeviction: no warning
      } finally {
        await mq.close();
        await server.stop();
      }
    }, 120_000);
  });
}

test("connect warns once when maxmemory-policy may evict (allkeys-lru), not under noeviction", async () => {
  const lru = await startServer({ module: false, args: ["--maxmemory-policy", "allkeys-lru"] });
  const safe = await startServer({ module: false });
  servers.push(lru, safe);
  const connect = async (port: number, warn: (m: string) => void): Promise<void> => {
    const mq = await EchoMQ.connect({ addresses: [{ host: "127.0.0.1", port }], backend: "scripts", warn });
    await mq.close();
  };
  const onLru: string[] = [];
  const onLruAgain: string[] = [];
  const onSafe: string[] = [];
  await connect(lru.port, (m) => onLru.push(m));
  await connect(lru.port, (m) => onLruAgain.push(m));
  await connect(safe.port, (m) => onSafe.push(m));
  console.log(`[oom warn] allkeys-lru: ${onLru.length} warning(s) (${onLru[0]}); again: ${onLruAgain.length}; noeviction: ${onSafe.length}`);
  expect(onLru.length).toBe(1);
  expect(onLru[0]).toContain("maxmemory-policy");
  expect(onLru[0]).toContain("allkeys-lru");
  expect(onLruAgain).toEqual([]); // once per server and process
  expect(onSafe).toEqual([]);
}, 60_000);
