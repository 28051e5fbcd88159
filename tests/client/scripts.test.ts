/** The Lua sources themselves: shebang, one shared prelude composed once per script, verb names, step order. */
import { describe, expect, test } from "bun:test";
import { luaHead, PRELUDE, SCRIPTS } from "../../lib/lua/mod.ts";
import { ADMIT_LUA } from "../../lib/lua/admit.ts";
import { LEASES_LUA } from "../../lib/lua/leases.ts";
import { MOVE_DUE_LUA } from "../../lib/lua/move_due.ts";
import { REFUSALS, renderRefusal, VERB_NAMES, type Verb, VERBS } from "../../lib/wire/mod.ts";

const WRITES = ["'HSET'", "'LPUSH'", "'RPUSH'", "'RPOP'", "'ZADD'", "'ZREM'", "'DEL'", "'HINCRBY'"]
  .map((w) => `redis.call(${w}`)
  .concat(["emq_each(", "emq_move(", "emq_admitted(", "emq_pushed("]);
const CHECKS = ["emq_type(", "emq_types(", "emq_admit(", "emq_leases(", "emq_due(", "emq_local(", "emq_counter("];

/** Where the first write of `lua` is (-1: none). */
function firstWrite(lua: string): number {
  const at = WRITES.map((w) => lua.indexOf(w)).filter((i) => i >= 0);
  return at.length === 0 ? -1 : Math.min(...at);
}

/** The body of the Lua function `name` in `lua`. */
function fn(lua: string, name: string): string {
  const from = lua.indexOf(`local function ${name}(`);
  return lua.slice(from, lua.indexOf("\nend\n", from));
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
    expect(renderRefusal("positive", "EMQ.CLAIM", { arg: "lease_ms" })).toBe("ERR EMQ.CLAIM lease_ms must be a positive integer");
  });

  test("the shared check helpers write nothing", () => {
    for (const [lua, name] of [[ADMIT_LUA, "emq_admit"], [LEASES_LUA, "emq_leases"], [MOVE_DUE_LUA, "emq_due"]] as const) {
      expect(fn(lua, name).length).toBeGreaterThan(50);
      expect(firstWrite(fn(lua, name))).toBe(-1);
    }
  });

  for (const [verb, source] of entries) {
    test(`${verb}: shebang, its own verb name, the shared prelude once, steps in order`, () => {
      // admissions are refused under maxmemory; everything else drains (allow-oom)
      expect(source.split("\n")[0]).toBe(VERBS[verb].admits ? "#!lua" : "#!lua flags=allow-oom");
      expect(source.split("\n")[1]).toBe(`local VERB = 'EMQ.${verb}'`);
      expect(source.split(PRELUDE).length).toBe(2);
      // steps 1–4 are the generated head, once, after the prelude, writing nothing
      const head = luaHead(verb);
      expect(source.split(head).length).toBe(2);
      const order = ["emq_shape(", "emq_layout(", "emq_fence()"].map((h) => head.indexOf(h));
      expect(order.every((i) => i >= 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      expect(firstWrite(head)).toBe(-1);
      // steps 5–6: in the verb's body, the last check comes before the first write
      const body = source.slice(source.indexOf(head) + head.length);
      const lastCheck = Math.max(...CHECKS.map((c) => body.lastIndexOf(c)));
      expect(lastCheck).toBeGreaterThanOrEqual(0);
      expect(firstWrite(body)).toBeGreaterThan(lastCheck);
    });
  }
});
