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
      // every step runs through the shared helpers, in the wire's order: in the verb's own body,
      // or in the shared PROMOTE/REAP mover the body delegates to
      const body = source.slice(source.indexOf(PRELUDE) + PRELUDE.length);
      const steps = body.includes("emq_move_due(")
        ? PRELUDE.slice(PRELUDE.indexOf("local function emq_move_due"))
        : body;
      const order = ["emq_shape(", "emq_layout(", "emq_fence()", "emq_type("].map((h) => steps.lastIndexOf(h));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      // writes come after the last check
      const firstWrite = Math.min(
        ...["'HSET'", "'LPUSH'", "'RPUSH'", "'RPOP'", "'ZADD'", "'ZREM'", "'DEL'", "'HINCRBY'", "push"]
          .map((w) => steps.indexOf(`redis.call(${w}`))
          .filter((i) => i >= 0),
      );
      expect(firstWrite).toBeGreaterThan(order[3]!);
    });
  }
});
