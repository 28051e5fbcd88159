/** The Lua sources themselves: shebang, one shared prelude composed once per script, verb names. */
import { describe, expect, test } from "bun:test";
import { luaHead, PRELUDE, SCRIPTS } from "../../lib/lua/mod.ts";
import { MOVE_DUE_LUA } from "../../lib/lua/move_due.ts";
import { REFUSALS, renderRefusal, VERB_NAMES, type Verb } from "../../lib/wire/mod.ts";

const WRITES = ["'HSET'", "'LPUSH'", "'RPUSH'", "'RPOP'", "'ZADD'", "'ZREM'", "'DEL'", "'HINCRBY'", "push"];

/** Where the first write of `lua` is (-1: none). */
function firstWrite(lua: string): number {
  const at = WRITES.map((w) => lua.indexOf(`redis.call(${w}`)).filter((i) => i >= 0);
  return at.length === 0 ? -1 : Math.min(...at);
}

describe("lib/lua", () => {
  const entries = Object.entries(SCRIPTS) as Array<[Verb, string]>;

  test("one script per wire verb, in the spec's order", () => {
    expect(entries.map(([v]) => v)).toEqual([...VERB_NAMES]);
  });

  test("every refusal text of the prelude is the spec's", () => {
    for (const name of Object.keys(REFUSALS) as Array<keyof typeof REFUSALS>) {
      expect(PRELUDE).toContain(`emq_refuse['${name}'] = function(p)`);
    }
    // a rendered template and the Lua concatenation agree on one sample
    expect(renderRefusal("positive", "EMQ.CLAIM", { arg: "lease_ms" })).toBe("ERR EMQ.CLAIM lease_ms must be a positive integer");
  });

  for (const [verb, source] of entries) {
    test(`${verb}: #!lua shebang (no flags), its own verb name, the shared prelude exactly once, steps in order`, () => {
      expect(source.startsWith("#!lua\n")).toBe(true);
      expect(source.split("\n")[1]).toBe(`local VERB = 'EMQ.${verb}'`);
      expect(source.split(PRELUDE).length).toBe(2);
      // steps 1–4 are the generated head, once, after the prelude
      const head = luaHead(verb);
      expect(source.split(head).length).toBe(2);
      const afterHead = source.slice(source.indexOf(head) + head.length);
      const order = ["emq_shape(", "emq_layout(", "emq_fence()"].map((h) => head.indexOf(h));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(firstWrite(head)).toBe(-1);
      // steps 5–6: the domain checks (in the verb's body, or in the shared PROMOTE/REAP mover)
      // come before the first write
      const domain = afterHead.includes("emq_move_due(") ? MOVE_DUE_LUA : afterHead;
      const lastCheck = domain.lastIndexOf("emq_type(");
      expect(lastCheck).toBeGreaterThanOrEqual(0);
      expect(firstWrite(domain)).toBeGreaterThan(lastCheck);
    });
  }
});
