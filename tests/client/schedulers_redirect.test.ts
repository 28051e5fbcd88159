/**
 * The scheduler step (`fireDue`, a worker's maintenance) during a failover: a non-atomic batch
 * gives each command's error as a value, and glide's own redirection of a pipeline does not cover a
 * failover — a worker's `onError` got `ZRANGE refused (other): MOVED …`. Its reads are sent again
 * while a reply is a redirection (MOVED, CLUSTERDOWN …), a few times with a short backoff; a real
 * refusal is reported at once, and a redirection that does not end is reported after the last try.
 *
 * A MOVED cannot be produced on demand, so the batch runner here is a stand-in: the client context
 * `fireDue` takes, with a `conn.batch` that answers from a script (each error built as
 * `Connection.batch` builds it from glide's, by `callError`) and an `impl.call` that records TICKs.
 */
import { describe, expect, test } from "bun:test";
import { RequestError } from "@valkey/valkey-glide";
import type { BatchReply } from "../../lib/client/connection.ts";
import type { ClientContext } from "../../lib/client/context.ts";
import { callError } from "../../lib/client/glide_errors.ts";
import { READ_BATCH_TRIES, readBatch } from "../../lib/client/read_batch.ts";
import { fireDue } from "../../lib/client/schedulers.ts";
import type { WireCall } from "../../lib/wire/mod.ts";
import { WireError } from "../../client.ts";
import { Keyspace } from "../../mod.ts";

/** A command's error as `Connection.batch` gives it: glide's server error, typed by `callError`. */
const refused = (command: string, server: string): Error =>
  callError(new RequestError(`An error was signalled by the server: - ${server}`), command, { where: "127.0.0.1:7000", secret: undefined }, 5000) as Error;

const MOVED = (): Error => refused("ZRANGE", "Moved: 3999 127.0.0.1:7001");
const TIME = ["1000", "500000"]; // 1_000_500 ms

/** A context whose batches answer `script` in turn (the last one again once it runs out). */
function scripted(script: BatchReply[]): { c: ClientContext<unknown>; sent: string[][]; ticks: WireCall[] } {
  const sent: string[][] = [];
  const ticks: WireCall[] = [];
  let n = 0;
  const c = {
    conn: {
      batch: (commands: string[][]): Promise<BatchReply> => {
        sent.push(commands.map((cmd) => cmd[0]!));
        return Promise.resolve(script[Math.min(n++, script.length - 1)]!);
      },
    },
    id: () => "JOB00000000001",
    impl: {
      call: (call: WireCall): Promise<number> => {
        ticks.push(call);
        return Promise.resolve(1);
      },
    },
  } as unknown as ClientContext<unknown>;
  return { c, sent, ticks };
}

const ks = new Keyspace("reports");

describe("fireDue during a failover", () => {
  test("a MOVED reply to its read is sent again, not reported", async () => {
    expect(MOVED().message).toBe("ZRANGE refused (other): MOVED 3999 127.0.0.1:7001");
    const { c, sent } = scripted([[TIME, MOVED()], [TIME, []]]);
    expect(await fireDue(c, ks, 1234)).toBe(1234); // no scheduler: the idle cadence
    expect(sent).toEqual([["TIME", "ZRANGE"], ["TIME", "ZRANGE"]]);
  });

  test("both reads: the due list after a CLUSTERDOWN, the rows after a MOVED; then the TICK", async () => {
    const row = ["next_ms", "999000", "spec", "every 100", "max_missed", "1"];
    const { c, sent, ticks } = scripted([
      [TIME, refused("ZRANGE", "ClusterDown: The cluster is down")],
      [TIME, ["nightly", "999000"]],
      [refused("HGETALL", "Moved: 3999 127.0.0.1:7001")],
      [row],
    ]);
    await fireDue(c, ks, 1234);
    expect(sent).toEqual([["TIME", "ZRANGE"], ["TIME", "ZRANGE"], ["HGETALL"], ["HGETALL"]]);
    expect(ticks.map((t) => t.verb)).toEqual(["TICK"]);
  });

  test("a refusal that is not a redirection is reported at once", async () => {
    const wrong = refused("ZRANGE", "WRONGTYPE Operation against a key holding the wrong kind of value");
    const { c, sent } = scripted([[TIME, wrong]]);
    await expect(fireDue(c, ks, 1234)).rejects.toBe(wrong);
    expect(sent).toHaveLength(1);
  });

  test(`a redirection that does not end is reported after ${READ_BATCH_TRIES} tries`, async () => {
    const { c, sent } = scripted([[TIME, MOVED()]]);
    const e = await fireDue(c, ks, 1234).then(() => null, (e: unknown) => e);
    expect(e).toBeInstanceOf(WireError);
    expect((e as WireError).text).toStartWith("MOVED ");
    expect(sent).toHaveLength(READ_BATCH_TRIES);
  });
});

describe("readBatch", () => {
  test("returns at the first batch without a redirection; never resends one without", async () => {
    let n = 0;
    const replies = await readBatch(() => Promise.resolve(n++ < 2 ? [MOVED(), "x"] : ["ok", "x"]));
    expect(replies).toEqual(["ok", "x"]);
    expect(n).toBe(3);
    let once = 0;
    expect(await readBatch(() => Promise.resolve([`${++once}`]))).toEqual(["1"]);
  });
});
