/**
 * Trust at the edges of the batch calls, for each backend × topology:
 * - an input that fails on the client's side — a payload the JSON codec cannot encode (a BigInt,
 *   `undefined`) at item 2,500 of 5,000, or an async source that throws after 2,500 — rejects
 *   with the same `BatchError` as a failure on the wire: its `cause` the original error, its lists
 *   complete (the server holds exactly `landed`), so the recipe lands every input once;
 * - the `bytes` codec copies each payload as it is read: a generator that rewrites one
 *   `Uint8Array` before each yield stores 3,000 distinct payloads;
 * - `settleMany` with one settlement given twice settles the others and refuses the repeat alone
 *   (`DuplicateIdError` naming the id), and a stale claim beside the current claim of the same
 *   job is refused alone (`LeaseLostError`) while the current one settles.
 */
import { describe, expect, test } from "bun:test";
import { BatchError, bytes, DuplicateIdError, type EchoMQ, type EchoMQOptions, LeaseLostError, type Settlement } from "../../client.ts";
import { type JobId } from "../../mod.ts";
import { renderRefusal } from "../../lib/wire/mod.ts";
import { COMBOS, connector, sleep, useSites } from "./_harness.ts";

const servers = useSites();

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const connect = connector(servers, combo);
    /** `body` with a client of its own (`extra` its options) on queue `q`; then `q` dropped, the client closed. */
    async function onQueue<P>(q: string, body: (mq: EchoMQ<P>) => Promise<void>, extra: Partial<EchoMQOptions<P>> = {}): Promise<void> {
      const mq = await connect<P>(extra);
      try {
        await body(mq);
      } finally {
        await mq.drop(q);
        await mq.close();
      }
    }

    const inputFailures: Array<[string, (i: number) => unknown, boolean]> = [
      ["a BigInt at item 2,500 (the JSON codec throws)", (i) => (i === 2500 ? 10n : i), true],
      ["undefined at item 2,500 (the JSON codec throws)", (i) => (i === 2500 ? undefined : i), true],
    ];
    for (const [n, [name, item, read]] of inputFailures.entries()) {
      test(`enqueueMany of 5,000 with ${name}: a BatchError with complete lists`, async () => {
        const q = `edge-codec-${n}-${backend}`;
        await onQueue<unknown>(q, async (mq) => {
          // deliberately not JSON: the payload types refuse these at compile time, so cast past them
          const inputs = Array.from({ length: 5000 }, (_, i) => item(i)) as never[];
          const e = await mq.enqueueMany(q, inputs).catch((x: unknown) => x);
          const pending = (await mq.counts(q)).pending;
          console.log(
            `[edges ${combo.name}] ${name}: ${e instanceof Error ? e.name : typeof e}; pending ${pending}` +
              (e instanceof BatchError ? `, landed ${e.landed.length}, unsent ${e.unsent.length}, unreadFrom ${e.unreadFrom}` : ""),
          );
          expect(e).toBeInstanceOf(BatchError);
          const b = e as BatchError<unknown>;
          // the codec's refusal, as the client reports it (rule payload), the codec's TypeError its cause
          expect(b.cause).toMatchObject({ name: "EchoMQError", rule: "payload" });
          expect((b.cause as Error).cause).toBeInstanceOf(TypeError);
          expect(b.unreadFrom).toBe(read ? 2501 : 2500);
          expect(b.landed.length + b.unsent.length + b.unconfirmed.length).toBe(b.unreadFrom);
          expect(b.unconfirmed).toEqual([]);
          expect(b.unsentAt).toContain(2500); // the item itself: read, refused by the client
          expect(pending).toBe(b.landed.length);
          // the recipe, with the bad item mended: every input once
          for (const [i, id] of b.unsent.entries()) {
            const at = b.unsentAt[i]!;
            await mq.enqueue(q, (at === 2500 ? 2500 : b.payloads.get(id)) as never, { id: id as JobId });
          }
          await mq.enqueueMany(q, inputs.slice(b.unreadFrom));
          const stored: unknown[] = [];
          for (let offset = 0; offset < 5000; offset += 1000) {
            stored.push(...(await mq.jobs(q, "pending", { offset, limit: 1000 })).map((j) => j.payload));
          }
          expect((stored as number[]).sort((x, y) => x - y)).toEqual(Array.from({ length: 5000 }, (_, i) => i));
        });
      });
    }

    test("enqueueMany of an async source that throws after 2,500: a BatchError, its cause the source's error", async () => {
      const q = `edge-source-${backend}`;
      const thrown = new Error("the source broke");
      async function* source(): AsyncGenerator<number> {
        for (let i = 0; i < 5000; i++) {
          if (i === 2500) throw thrown;
          yield i;
        }
      }
      await onQueue<number>(q, async (mq) => {
        const e = await mq.enqueueMany(q, source()).catch((x: unknown) => x);
        const pending = (await mq.counts(q)).pending;
        console.log(
          `[edges ${combo.name}] a source throwing after 2,500: ${e instanceof Error ? e.name : typeof e}; ` +
            `pending ${pending}`,
        );
        expect(e).toBeInstanceOf(BatchError);
        const b = e as BatchError<number>;
        expect(b.cause).toBe(thrown);
        expect(b.unreadFrom).toBe(2500);
        expect(b.landed.length + b.unsent.length + b.unconfirmed.length).toBe(2500);
        expect(pending).toBe(b.landed.length);
        expect(b.message).toContain("the source broke");
        expect(b.message).toContain("inputs from index 2500 on were not read");
      });
    });

    test("the bytes codec copies what it reads: one Uint8Array rewritten before each yield, 3,000 distinct payloads", async () => {
      const q = `edge-bytes-${backend}`;
      const buffer = new Uint8Array(4);
      function* reused(): Generator<Uint8Array> {
        for (let i = 0; i < 3000; i++) {
          new DataView(buffer.buffer).setUint32(0, i);
          yield buffer;
        }
      }
      await onQueue<Uint8Array>(q, async (mq) => {
        await mq.enqueueMany(q, reused());
        const seen = new Set<string>();
        for (let offset = 0; offset < 3000; offset += 1000) {
          for (const job of await mq.jobs(q, "pending", { offset, limit: 1000 })) seen.add([...job.payload!].join(","));
        }
        console.log(`[edges ${combo.name}] bytes codec, one buffer reused: ${seen.size} distinct payloads of 3000`);
        expect(seen.size).toBe(3000);
      }, { codec: bytes });
    });

    test("settleMany with one settlement twice: the others settle, the repeat alone is refused", async () => {
      const q = `edge-settle-${backend}`;
      await onQueue<number>(q, async (mq) => {
        await mq.enqueueMany(q, Array.from({ length: 10 }, (_, i) => i));
        const jobs = (await mq.claimMany(q, 10, { leaseMs: 60_000 })) as Array<Settlement["job"]>;
        const settlements: Settlement[] = [
          ...jobs.map((job): Settlement => ({ kind: "ack", job })),
          { kind: "ack", job: jobs[3]! },
        ];
        const results = await mq.settleMany(settlements);
        const stats = await mq.stats(q);
        console.log(
          `[edges ${combo.name}] settleMany of 11, one job twice: ${results.filter((r) => r === null).length} ` +
            `settled, acked ${stats.acked}, active ${stats.active}`,
        );
        expect(results.slice(0, 10)).toEqual(Array(10).fill(null));
        expect(results[10]).toBeInstanceOf(DuplicateIdError);
        expect((results[10] as DuplicateIdError).id).toBe(jobs[3]!.id);
        expect((results[10] as DuplicateIdError).text).toBe(renderRefusal("repeated", "EMQ.ACK", { id: jobs[3]!.id }));
        expect(stats.acked).toBe(10);
        expect(stats.active).toBe(0);
      });
    });

    test("settleMany with a stale claim and the current claim of one job: the stale one refused, the current one settled", async () => {
      const q = `edge-stale-${backend}`;
      await onQueue<number>(q, async (mq) => {
        await mq.enqueue(q, 1);
        const stale = (await mq.claim(q, { leaseMs: 1 }))!;
        await sleep(5);
        expect(await mq.reap(q)).toBe(1);
        const current = (await mq.claim(q, { leaseMs: 60_000 }))!;
        expect(current.id).toBe(stale.id);
        const results = await mq.settleMany([{ kind: "ack", job: stale }, { kind: "ack", job: current }]);
        expect(results[0]).toBeInstanceOf(LeaseLostError);
        expect(results[1]).toBeNull();
        expect(await mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 1, waitingChildren: 0 });
      });
    });
  });
}
