/**
 * Pure pieces of the client: the limiter, glide error texts, wire error mapping, glide's errors in
 * the client's taxonomy (with passwords redacted), the CLI's `--url`, small helpers.
 */
import { describe, expect, test } from "bun:test";
import { ConnectionError as GlideConnectionError, RequestError, TimeoutError } from "@valkey/valkey-glide";
import { Limiter } from "../../lib/client/limiter.ts";
import { isNoScript, redact, serverText, wireError } from "../../lib/client/errors.ts";
import { callError } from "../../lib/client/glide_errors.ts";
import { parseUrl } from "../../lib/cli/address.ts";
import { ConnectionError, DuplicateIdError, exponentialBackoff, FencedError, json, LeaseLostError, RequestTimeoutError, WireError } from "../../client.ts";
import { WIRE } from "../../lib/wire/mod.ts";
import { truncateUtf8 } from "../../lib/client/worker/worker.ts";

describe("Limiter", () => {
  test("never runs more than its permits at once; throws and rejections free their slot", async () => {
    const limiter = new Limiter(3);
    let running = 0;
    let peak = 0;
    const task = async (i: number): Promise<number> => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 1));
      running--;
      if (i % 5 === 0) throw new Error(`fail ${i}`);
      return i;
    };
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => limiter.run(() => task(i))));
    expect(peak).toBe(3);
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(8);
    await expect(limiter.run(() => {
      throw new Error("sync");
    })).rejects.toThrow("sync");
    // all permits are back: three tasks run together
    running = 0;
    peak = 0;
    await Promise.all([1, 2, 3].map((i) => limiter.run(() => task(i))));
    expect(peak).toBe(3);
  });
});

describe("server error texts", () => {
  test("glide's wording is undone", () => {
    expect(serverText(new Error("An error was signalled by the server: - ResponseError: EMQ.ACK lease lost: JOB00000000001")))
      .toBe("ERR EMQ.ACK lease lost: JOB00000000001");
    expect(serverText(new Error("WRONGTYPE: Operation against a key holding the wrong kind of value")))
      .toBe("WRONGTYPE Operation against a key holding the wrong kind of value");
    expect(serverText(new Error("An error was signalled by the server: - NoScriptError: No matching script.")))
      .toBe("NOSCRIPT No matching script.");
    expect(serverText(new Error("An error was signalled by the server: - CrossSlot: Keys in request don't hash to the same slot")))
      .toBe("CROSSSLOT Keys in request don't hash to the same slot");
    expect(serverText(new Error("timed out"))).toBeNull();
    expect(isNoScript(new Error("An error was signalled by the server: - NoScriptError: No matching script."))).toBe(true);
  });

  test("refusals map to typed errors naming the refusal, with their parameters", () => {
    const glide = (t: string): Error => new Error(`An error was signalled by the server: - ResponseError: ${t}`);
    const dup = wireError("EMQ.ENQUEUE", glide("EMQ.ENQUEUE duplicate id JOB00000000007"));
    expect(dup).toBeInstanceOf(DuplicateIdError);
    expect((dup as DuplicateIdError).id).toBe("JOB00000000007");
    const twice = wireError("EMQ.ACK", glide("EMQ.ACK id JOB00000000008 appears twice"));
    expect(twice).toMatchObject({ name: "DuplicateIdError", id: "JOB00000000008" });
    const lost = wireError("EMQ.ACK", glide("EMQ.ACK lease lost: JOB00000000001 JOB00000000002"));
    expect(lost).toBeInstanceOf(LeaseLostError);
    expect((lost as LeaseLostError).ids).toEqual(["JOB00000000001", "JOB00000000002"]);
    expect(wireError("EMQ.ACK", glide(`EMQ.ACK fenced: this server speaks wire 4, not wire ${WIRE}`))).toBeInstanceOf(FencedError);
    const rules = [
      [`ERR EMQ.ACK keys do not match the wire-${WIRE} layout`, "EMQ.ACK", "layout"],
      ["ERR EMQ.CLAIM lease_ms must be a positive integer", "EMQ.CLAIM", "gate"],
      ["ERR EMQ.CLAIM count must be at most 10000", "EMQ.CLAIM", "gate"],
      ["ERR EMQ.ENQUEUE payload exceeds 1048576 bytes", "EMQ.ENQUEUE", "gate"],
      ["ERR wrong number of arguments for 'EMQ.ACK' command", "EMQ.ACK", "shape"],
      ["ERR EMQ.ACK at most 10000 jobs per call", "EMQ.ACK", "shape"],
      ["ERR hash value is not an integer", "EMQ.CLAIM", "counter"],
      ["NOPERM No permissions to access a key", "EMQ.CLAIM", "noperm"],
      ["TRYAGAIN Multiple keys request during rehashing of slot", "EMQ.CLAIM", "migrating"],
      ["ERR EMQ.ACK something new", "EMQ.ACK", "other"],
    ] as const;
    for (const [text, verb, rule] of rules) {
      const e = wireError(
        verb,
        new Error(text.startsWith("ERR ") ? `An error was signalled by the server: - ResponseError: ${text.slice(4)}` : text.replace(" ", ": ")),
      );
      expect(e).toBeInstanceOf(WireError);
      expect({ text, rule: (e as WireError).rule, wire: (e as WireError).text }).toEqual({ text, rule, wire: text });
    }
    const timeout = new Error("timed out");
    expect(wireError("EMQ.ACK", timeout)).toBe(timeout);
    // another verb's refusal is not this verb's
    const other = glide("EMQ.ACK lease lost: JOB00000000001");
    expect(wireError("EMQ.RETRY", other)).toBe(other);
  });
});

describe("glide's errors in the client's taxonomy", () => {
  const site = { where: "127.0.0.1:6379", secret: "hunter2-secret" };

  test("a server refusal is a WireError by its code, a timeout a RequestTimeoutError, a lost connection a ConnectionError", () => {
    const oom = callError(new RequestError("OOM: command not allowed when used memory > 'maxmemory'."), "LLEN", site, 500);
    expect(oom).toMatchObject({ name: "WireError", verb: "LLEN", rule: "oom", text: "OOM command not allowed when used memory > 'maxmemory'." });
    expect(callError(new RequestError("NOPERM: No permissions to access a key"), "HGET", site, 500)).toMatchObject({ rule: "noperm" });
    const late = callError(new TimeoutError("timed out"), "EVALSHA", site, 500);
    expect(late).toBeInstanceOf(RequestTimeoutError);
    expect((late as Error).message).toBe("EVALSHA: no reply from 127.0.0.1:6379 within 500 ms (request timeout): it may or may not have run");
    // the verb it carried renames it
    expect((wireError("EMQ.ACK", late) as Error).message).toStartWith("EMQ.ACK: no reply");
    const lost = callError(new GlideConnectionError("Received connection error `Broken pipe`. Will attempt to reconnect"), "EVALSHA", site, 500);
    expect(lost).toBeInstanceOf(ConnectionError);
    expect((lost as ConnectionError).reason).toBe("lost");
    // a lost connection is not a server refusal under any verb
    expect(wireError("EMQ.ENQUEUE", lost)).toBe(lost);
    expect(serverText(lost)).toBeNull();
    const mine = new Error("not glide's");
    expect(callError(mine, "GET", site, 500)).toBe(mine);
  });

  test("a password never shows", () => {
    expect(redact("AUTH hunter2-secret failed: hunter2-secret", "hunter2-secret")).toBe("AUTH *** failed: ***");
    expect(redact("nothing to hide", undefined)).toBe("nothing to hide");
    const e = callError(new RequestError("WRONGPASS: hunter2-secret is wrong"), "AUTH", site, 500);
    expect((e as WireError).text).toBe("WRONGPASS *** is wrong");
    expect((e as Error).message).not.toContain("hunter2-secret");
  });

  test("the CLI's --url: credentials percent-decoded, a refused address shown without its password", () => {
    expect(parseUrl("valkey://127.0.0.1:7000")).toEqual({ host: "127.0.0.1", port: 7000, tls: false });
    expect(parseUrl("redis://ops:p%40ss@db.local")).toEqual({ host: "db.local", port: 6379, tls: false, credentials: { username: "ops", password: "p@ss" } });
    expect(parseUrl("valkey://:pw@[::1]:7001")).toEqual({ host: "::1", port: 7001, tls: false, credentials: { password: "pw" } });
    expect(parseUrl("valkey://ops:p@ss@db")).toEqual({ host: "db", port: 6379, tls: false, credentials: { username: "ops", password: "p@ss" } });
    expect(parseUrl("valkeys://ops:pw@db:6380")).toEqual({ host: "db", port: 6380, tls: true, credentials: { username: "ops", password: "pw" } });
    expect(parseUrl("rediss://db")).toEqual({ host: "db", port: 6379, tls: true });
    expect(() => parseUrl("valkey://ops:hunter2@db:port")).toThrow('cannot read the address "valkey://ops:***@db:port"');
    expect(() => parseUrl("valkey://ops:hun@ter2@db:port")).toThrow('cannot read the address "valkey://ops:***@db:port"');
  });
});

describe("helpers", () => {
  test("truncateUtf8 never splits a character", () => {
    expect(truncateUtf8("abc", 4096)).toBe("abc");
    expect(truncateUtf8("é".repeat(3000), 4096)).toBe("é".repeat(2048));
    expect(truncateUtf8("a" + "€".repeat(2000), 4096)).toBe("a" + "€".repeat(1365));
    expect(new TextEncoder().encode(truncateUtf8("✓".repeat(5000), 4096)).length).toBeLessThanOrEqual(4096);
  });

  test("exponential backoff: 1 s doubling, capped at one hour", () => {
    expect([1, 2, 3, 4].map(exponentialBackoff)).toEqual([1000, 2000, 4000, 8000]);
    expect(exponentialBackoff(40)).toBe(3_600_000);
  });

  test("the JSON codec refuses values without a JSON form", () => {
    expect(() => json().encode(undefined)).toThrow(TypeError);
    expect(json<number[]>().decode(new TextEncoder().encode("[1,2]"))).toEqual([1, 2]);
  });
});
