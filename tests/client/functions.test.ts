/**
 * The Lua twin as function libraries (issue 39.1), on each topology: the scripts backend calls
 * FCALL (no EVALSHA) where the server and the user allow functions; a call's state does not leak
 * into the next call of the same library; a library of EchoMQ's name holding other code is
 * replaced before it runs; a client connecting where every primary holds this release's libraries
 * loads none; a user who may call but not load functions calls the libraries loaded
 * for it; a user without FCALL runs every verb by EVALSHA.
 */
import { describe, expect, test } from "bun:test";
import { keyspace, slot } from "../../mod.ts";
import { EchoMQ } from "../../client.ts";
import type { Connection } from "../../lib/client/connection.ts";
import { luaLibrary, SCRIPTS } from "../../lib/lua/mod.ts";
import { TOPOLOGIES, type Topology, useSites } from "./_harness.ts";

const sites = useSites();

/** Calls so far of each of `names` (commandstats) on the node of queue `q`. */
async function calls(raw: Connection, q: string, ...names: string[]): Promise<number[]> {
  const info = String(await raw.command(["INFO", "commandstats"], keyspace(q).meta));
  return names.map((n) => Number(new RegExp(`^cmdstat_${n.replace("|", "\\|")}:calls=(\\d+)`, "m").exec(info)?.[1] ?? 0));
}

/** Enqueues, claims and acks one job of `q` through `mq`: the FCALL and EVALSHA calls that took. */
async function oneJob(raw: Connection, mq: EchoMQ<{ n: number }>, q: string): Promise<{ fcall: number; evalsha: number }> {
  const [fcall0, evalsha0] = await calls(raw, q, "fcall", "evalsha");
  await mq.enqueue(q, { n: 1 });
  await mq.ack((await mq.claim(q, { leaseMs: 60_000 }))!);
  const [fcall1, evalsha1] = await calls(raw, q, "fcall", "evalsha");
  return { fcall: fcall1! - fcall0!, evalsha: evalsha1! - evalsha0! };
}

/** Entries of queue `q`'s events stream. */
async function events(raw: Connection, q: string): Promise<number> {
  return Number(await raw.command(["XLEN", keyspace(q).events], keyspace(q).meta));
}

for (const topology of TOPOLOGIES as Topology[]) {
  describe(`scripts/${topology}`, () => {
    const connect = (extra: Record<string, unknown> = {}) => {
      const site = sites.sites.get(topology)!;
      return EchoMQ.connect<{ n: number }>({ addresses: site.addresses, cluster: site.cluster, backend: "scripts", ...extra });
    };

    test("the verbs go as FCALL of their libraries, not EVALSHA", async () => {
      const raw = sites.raws.get(topology)!;
      const q = `fn-fcall-${topology}`;
      const mq = await connect();
      try {
        expect(await oneJob(raw, mq, q)).toEqual({ fcall: 3, evalsha: 0 });
      } finally {
        await mq.close();
      }
    });

    test("a client connecting where every primary holds this release's libraries loads none, and calls them", async () => {
      const raw = sites.raws.get(topology)!;
      const q = `fn-held-${topology}`;
      await (await connect()).close(); // the libraries are on every primary now
      const [loads0] = await calls(raw, q, "function|load");
      const mq = await connect();
      try {
        const [loads1] = await calls(raw, q, "function|load");
        expect(loads1! - loads0!).toBe(0);
        expect(await oneJob(raw, mq, q)).toEqual({ fcall: 3, evalsha: 0 });
      } finally {
        await mq.close();
      }
    });

    test("a call's state starts afresh: a queue writing no events, then one that does, in one library", async () => {
      const raw = sites.raws.get(topology)!;
      // both queues in one slot, so on one node (one library) of the cluster too
      const quiet = `fn-state-${topology}`;
      let k = 0;
      while (slot(`fn-loud-${k}`) !== slot(quiet)) k++;
      const loud = `fn-loud-${k}`;
      const mq = await connect();
      try {
        await mq.retain(quiet, { eventsMax: 0 });
        await mq.enqueue(loud, { n: 0 }); // meta made, library loaded on loud's node
        const before = await events(raw, loud);
        for (let i = 0; i < 5; i++) {
          await mq.enqueue(quiet, { n: i }); // caches events_max 0 in the call
          await mq.enqueue(loud, { n: i }); // must read its own events_max
        }
        expect(await events(raw, quiet)).toBe(0);
        expect((await events(raw, loud)) - before).toBe(5);
      } finally {
        await mq.close();
      }
    });

    test("a library of EchoMQ's name holding other code is replaced by EchoMQ's before its first call", async () => {
      const raw = sites.raws.get(topology)!;
      const q = `fn-foreign-${topology}`;
      const lib = luaLibrary("ENQUEUE", SCRIPTS.ENQUEUE);
      const foreign =
        `#!lua name=${lib.name}\nredis.register_function('${lib.name}', function(keys, args) return redis.error_reply('ERR foreign code ran') end)`;
      await raw.everyPrimary(["FUNCTION", "LOAD", "REPLACE", foreign]);
      const mq = await connect();
      try {
        const id = await mq.enqueue(q, { n: 1 });
        expect((await mq.getJob(q, id))?.state).toBe("pending");
        const listed = JSON.stringify(await raw.command(["FUNCTION", "LIST", "LIBRARYNAME", lib.name, "WITHCODE"], keyspace(q).meta));
        expect(listed).not.toContain("foreign code ran");
      } finally {
        await mq.close();
      }
    });

    test("a user who may call functions but not load them calls the libraries loaded for it", async () => {
      const raw = sites.raws.get(topology)!;
      const q = `fn-callonly-${topology}`;
      const user = `fn-caller-${topology}`;
      const acl = ["ACL", "SETUSER", user, "on", ">pw", "resetkeys", `~emq:{${q}}:*`, "%R~{emq}:version", "+@all", "-function"];
      await raw.everyPrimary(acl);
      const loader = await connect(); // the operator's client loads every verb it uses
      const mq = await connect({ credentials: { username: user, password: "pw" } });
      try {
        await loader.enqueue(q, { n: 0 });
        await loader.ack((await loader.claim(q, { leaseMs: 60_000 }))!);
        expect(await oneJob(raw, mq, q)).toEqual({ fcall: 3, evalsha: 0 });
      } finally {
        await mq.close();
        await loader.close();
      }
    });

    test("a client that meets a full server (maxmemory) before loading its libraries drains it by EVALSHA", async () => {
      if (topology !== "standalone") return; // one server's maxmemory is enough to show it
      const raw = sites.raws.get(topology)!;
      const q = `fn-oom-${topology}`;
      const K = keyspace(q);
      const loader = await connect();
      await loader.enqueueMany(q, [{ n: 1 }, { n: 2 }]);
      await loader.close();
      await raw.command(["FUNCTION", "FLUSH"], K.meta);
      await raw.command(["CONFIG", "SET", "maxmemory", "1"], K.meta);
      const mq = await connect();
      try {
        const refused = await mq.enqueue(q, { n: 3 }).then(() => null, (e: Error) => e.message);
        expect(refused).toContain("OOM");
        for (let i = 0; i < 2; i++) await mq.ack((await mq.claim(q, { leaseMs: 60_000 }))!);
        expect((await mq.counts(q)).pending).toBe(0);
      } finally {
        await raw.command(["CONFIG", "SET", "maxmemory", "0"], K.meta);
        await mq.close();
      }
    });

    test("a user without FUNCTION (EVALSHA and SCRIPT LOAD only) runs every verb by EVALSHA", async () => {
      const raw = sites.raws.get(topology)!;
      const q = `fn-acl-${topology}`;
      const user = `fn-user-${topology}`;
      const acl = ["ACL", "SETUSER", user, "on", ">pw", "resetkeys", `~emq:{${q}}:*`, "%R~{emq}:version", "+@all", "-function", "-fcall", "-fcall_ro"];
      await raw.everyPrimary(acl);
      const mq = await connect({ credentials: { username: user, password: "pw" } });
      try {
        const took = await oneJob(raw, mq, q);
        expect(took.fcall).toBe(0);
        expect(took.evalsha).toBeGreaterThanOrEqual(3);
        expect((await mq.counts(q)).completed).toBe(1);
      } finally {
        await mq.close();
      }
    });
  });
}
