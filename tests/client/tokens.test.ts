/**
 * Lease tokens never repeat in a queue, across DROP and re-creation too (issue 18 #5), for each
 * backend × topology: a job with an explicit id claimed six times (the leases reaped), the queue
 * dropped, the same id enqueued again and claimed six times: every new token is above every old
 * one, and the stale holder's ack is refused (lease-lost, nothing written). Tokens start above the
 * server's now × TOKENS_PER_MS and stay within the token gate (≤ 2^53 − 1).
 */
import { describe, expect, test } from "bun:test";
import { type JobId, keyspace } from "../../mod.ts";
import { type Job, LeaseLostError } from "../../client.ts";
import { MAX_TOKEN, TOKENS_PER_MS } from "../../lib/wire/mod.ts";
import { COMBOS, digest, sleep, useClient, useSites } from "./_harness.ts";

const servers = useSites();
const ID = "JOBexplicit001" as JobId;

for (const combo of COMBOS) {
  const { backend } = combo;
  describe(combo.name, () => {
    const ctx = useClient<number>(servers, combo, { newId: () => ID });

    /** Six claims of the one job, each lease run out and reaped before the next. */
    async function sixClaims(q: string): Promise<Array<Job<number>>> {
      const claims: Array<Job<number>> = [];
      for (let i = 0; i < 6; i++) {
        const job = (await ctx.mq.claim(q, { leaseMs: 100 }))!;
        expect(job.id).toBe(ID);
        claims.push(job);
        await sleep(120);
        expect(await ctx.mq.reap(q)).toBe(1);
      }
      return claims;
    }

    test("drop and the same id enqueued again: no token of the earlier life comes back", async () => {
      const q = `tok-${backend}`;
      const K = keyspace(q);
      const time = (await ctx.raw.command(["TIME"], K.meta)) as unknown[];
      const serverNow = Number(time[0]) * 1000;
      expect(await ctx.mq.enqueue(q, 1)).toBe(ID);
      const before = await sixClaims(q);
      const stale = before.at(-1)!;
      expect(await ctx.mq.drop(q)).toBe(1);
      expect(await ctx.raw.command(["EXISTS", K.meta], K.meta)).toBe(0);
      expect(await ctx.mq.enqueue(q, 2)).toBe(ID);
      const after = await sixClaims(q);
      const job = (await ctx.mq.claim(q, { leaseMs: 60_000 }))!;
      const tokens = [...before, ...after, job].map((j) => j.token);
      for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
      expect(tokens[0]!).toBeGreaterThan(serverNow * TOKENS_PER_MS);
      expect(tokens.at(-1)!).toBeLessThanOrEqual(MAX_TOKEN);
      // the stale holder of the earlier life is refused, and writes nothing
      const d0 = await digest(ctx.raw, K.meta);
      await expect(ctx.mq.ack(stale)).rejects.toBeInstanceOf(LeaseLostError);
      for (const old of [...before, ...after]) {
        await expect(ctx.mq.ack({ ...old, token: old.token })).rejects.toBeInstanceOf(LeaseLostError);
      }
      expect(await digest(ctx.raw, K.meta)).toBe(d0);
      await ctx.mq.ack(job);
      expect(await ctx.mq.counts(q)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0, completed: 1, waitingChildren: 0 });
    }, 60_000);
  });
}
