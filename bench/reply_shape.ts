/**
 * What a claimed job's reply shape costs the client (glide builds a value per reply element):
 * one Lua script returns K jobs as wire 11 did (an array of five per job: id, payload, attempts,
 * token, opts) and as wire 12 does (one bulk string per job, `<attempts> <token> <id_len> <opts_len>
 * <payload_len>\n<id><opts><payload>`, parsed by the client's `claimedEntry`), beside a PING; 4
 * calls in flight, client CPU per call and per job (this process: glide's threads included). The
 * server's work is not counted. Why wire 12 packs the jobs: bench/RESULTS.md, section 13.
 *
 * Run: node_modules/.bin/bun bench/reply_shape.ts [--calls 4000]
 */
import { Decoder, GlideClient, type GlideReturnType } from "@valkey/valkey-glide";
import { startServer } from "../tools/embedded/mod.ts";
import { claimedEntry } from "../lib/client/claimed_entry.ts";
import { cliOptions } from "./_util.ts";

const { calls: CALLS } = cliOptions({ calls: 4000 });
const IN_FLIGHT = 4;
const server = await startServer({});
const g = await GlideClient.createClient({ addresses: [{ host: server.host, port: server.port }], requestTimeout: 10_000 });

/** A script returning `k` jobs of one shape: `packed` false as wire 11, true as wire 12. */
async function load(k: number, packed: boolean): Promise<string> {
  const job = packed
    ? `local id, p = 'JOB0000000000' .. (i % 10), '{"a":' .. i .. ',"b":"xxxxxxxxxx"}'
       out[i] = '1 ' .. string.format('%d', 1700000000000000 + i) .. ' ' .. #id .. ' 0 ' .. #p .. '\\n' .. id .. p`
    : `out[i] = {'JOB0000000000' .. (i % 10), '{"a":' .. i .. ',"b":"xxxxxxxxxx"}', 1, 1700000000000000 + i, ''}`;
  return String(await g.customCommand(["SCRIPT", "LOAD", `local out = {} for i = 1, ${k} do ${job} end return out`]));
}

/** Client CPU µs per call of `call`, IN_FLIGHT at a time. */
async function cpuPerCall(call: () => Promise<unknown>): Promise<number> {
  const c0 = process.cpuUsage();
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    for (let r = 0; r < CALLS / IN_FLIGHT; r++) await call();
  }));
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / CALLS;
}

const rows: string[] = [];
for (const k of [4, 50]) {
  const arrays = await load(k, false);
  const packed = await load(k, true);
  // a warm-up round first (the JIT), not reported
  for (let round = -1; round < 3; round++) {
    const ping = await cpuPerCall(() => g.customCommand(["PING"]));
    const five = await cpuPerCall(async () => {
      const reply = (await g.customCommand(["EVALSHA", arrays, "0"], { decoder: Decoder.Bytes })) as GlideReturnType[][];
      for (const j of reply) if (Number(j[3]) <= 0) throw new Error("bad token");
    });
    const one = await cpuPerCall(async () => {
      const reply = (await g.customCommand(["EVALSHA", packed, "0"], { decoder: Decoder.Bytes })) as Uint8Array[];
      for (const e of reply) if (claimedEntry(e)!.token <= 0) throw new Error("bad token");
    });
    const perJob = (x: number): string => ((x - ping) / k).toFixed(2);
    if (round < 0) continue;
    rows.push(
      `| ${k} | ${round + 1} | ${ping.toFixed(1)} | ${five.toFixed(1)} | ${one.toFixed(1)} | ${perJob(five)} | ${perJob(one)} | ${
        ((five - ping) / (one - ping)).toFixed(2)
      }× |`,
    );
  }
}
console.log(
  "| jobs per reply | round | PING µs/call | five per job µs/call | one per job µs/call | five: µs/job over PING | one: µs/job over PING | five ÷ one |",
);
console.log("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of rows) console.log(r);
g.close();
await server.stop();
