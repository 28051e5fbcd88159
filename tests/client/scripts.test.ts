/** The Lua sources themselves: shebang, one shared prelude composed once per script, verb names. */
import { describe, expect, test } from "bun:test";
import { PRELUDE } from "../../lib/scripts/_lua.ts";
import { SCRIPTS, type Verb } from "../../lib/scripts/mod.ts";

describe("lib/scripts", () => {
  const entries = Object.entries(SCRIPTS) as Array<[Verb, string]>;

  test("one script per wire-4 verb", () => {
    expect(entries.map(([v]) => v).sort()).toEqual(
      ["ACK", "BURY", "CLAIM", "ENQUEUE", "PROMOTE", "REAP", "RETRY", "SCHEDULE"],
    );
  });

  for (const [verb, source] of entries) {
    test(`${verb}: #!lua shebang (no flags), its own verb name, the shared prelude exactly once`, () => {
      expect(source.startsWith("#!lua\n")).toBe(true);
      expect(source.split("\n")[1]).toBe(`local VERB = 'EMQ.${verb}'`);
      expect(source.split(PRELUDE).length).toBe(2);
      // every step runs through the shared helpers, in the wire's order
      const order = ["emq_shape(", "emq_layout(", "emq_fence()", "emq_type("].map((h) => source.lastIndexOf(h));
      expect(order.every((i) => i > source.indexOf(PRELUDE) + PRELUDE.length)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      // writes come after the last check
      const firstWrite = Math.min(
        ...["'HSET'", "'LPUSH'", "'RPUSH'", "'RPOP'", "'ZADD'", "'ZREM'", "'DEL'", "'HINCRBY'"]
          .map((w) => source.indexOf(`redis.call(${w}`))
          .filter((i) => i >= 0),
      );
      expect(firstWrite).toBeGreaterThan(order[3]!);
    });
  }
});
